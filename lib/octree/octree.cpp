#include "octree/octree.hpp"

#include <algorithm>
#include <bit>
#include <set>
#include <string>

#include "core/error.hpp"
#include "spheretree/miniball.hpp"

namespace hp::octree {

namespace {

constexpr double kSnap = 1e-12;  // radii this close to the full node's count as the full node's

// Child b's cube inside a node of side 1 centred at the origin: [lo, lo + 1/2] per axis.
Vec3d child_lo(int b) { return {(b & 1) ? 0.0 : -0.5, (b & 2) ? 0.0 : -0.5, (b & 4) ? 0.0 : -0.5}; }

Ball ball_of_cubes(int mask) {
    std::vector<Vec3d> corners;
    std::set<std::array<int, 3>> seen;  // corners on the half-unit lattice, once each
    for (int b = 0; b < 8; ++b) {
        if (!(mask >> b & 1)) continue;
        for (int c = 0; c < 8; ++c) {
            const std::array<int, 3> q{(b & 1) + (c & 1), ((b >> 1) & 1) + ((c >> 1) & 1), ((b >> 2) & 1) + ((c >> 2) & 1)};
            if (seen.insert(q).second) corners.push_back({q[0] * 0.5 - 0.5, q[1] * 0.5 - 0.5, q[2] * 0.5 - 0.5});
        }
    }
    return minimal_enclosing_ball(corners);
}

Ball ball_of_centres(int mask) {
    std::vector<Vec3d> centres;
    for (int b = 0; b < 8; ++b)
        if (mask >> b & 1) centres.push_back(child_lo(b) + Vec3d{0.25, 0.25, 0.25});
    return minimal_enclosing_ball(centres);
}

std::array<TightSphere, 256> make_table() {
    std::array<TightSphere, 256> t{};
    for (int m = 1; m < 256; ++m) {
        const Ball b = ball_of_cubes(m);
        if (b.radius >= kCubeRadius - kSnap) t[m] = {Vec3d{}, kCubeRadius};
        else t[m] = {b.center, b.radius};
    }
    return t;
}

std::uint64_t spread(std::uint64_t v) {  // 21 bits -> every third bit
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffffULL;
    v = (v | v << 16) & 0x1f0000ff0000ffULL;
    v = (v | v << 8) & 0x100f00f00f00f00fULL;
    v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
    v = (v | v << 2) & 0x1249249249249249ULL;
    return v;
}

std::uint64_t morton(const std::array<int, 3>& c) {
    return spread(static_cast<std::uint64_t>(c[0])) | spread(static_cast<std::uint64_t>(c[1])) << 1 |
           spread(static_cast<std::uint64_t>(c[2])) << 2;
}

}  // namespace

const std::array<TightSphere, 256>& tight_spheres() {
    static const std::array<TightSphere, 256> table = make_table();
    return table;
}

TableCounts table_counts() {
    TableCounts c;
    const auto& t = tight_spheres();
    std::vector<double> radii;
    const double full_centres = ball_of_centres(255).radius;
    for (int m = 1; m < 256; ++m) {
        if (t[m].scale < kCubeRadius) {
            ++c.cubes;
            radii.push_back(t[m].scale);
        }
        // A ball around equal balls of radius r is the ball of their centres grown by r.
        const double centres = ball_of_centres(m).radius;
        if (centres + 0.5 * kCubeRadius < kCubeRadius - kSnap) ++c.child_spheres;
        if (centres < full_centres - kSnap) ++c.child_centres;
    }
    std::sort(radii.begin(), radii.end());
    for (std::size_t i = 0; i < radii.size(); ++i)
        if (i == 0 || radii[i] - radii[i - 1] > 1e-9) ++c.distinct_cube_radii;
    return c;
}

int Octree::level_of(std::uint32_t node) const {
    const auto it = std::upper_bound(level_begin.begin(), level_begin.end(), node);
    return levels - static_cast<int>(it - level_begin.begin() - 1);
}

std::string finalize(Octree& t) {
    t.first_child.clear();
    t.level_begin.clear();
    t.voxels = 0;
    if (t.levels < 1 || t.levels > kMaxLevels)
        return "root level " + std::to_string(t.levels) + " outside 1.." + std::to_string(kMaxLevels);
    if (!(t.voxel_size > 0) || !std::isfinite(t.voxel_size)) return "voxel size is not a finite number > 0";
    if (!is_finite(t.origin)) return "origin is not finite";
    t.first_child.resize(t.masks.size());
    std::size_t begin = 0, count = 1;  // nodes of the current depth
    for (int d = 0; d < t.levels; ++d) {
        if (begin + count > t.masks.size())
            return "depth " + std::to_string(d) + " needs " + std::to_string(count) + " nodes from node " +
                   std::to_string(begin) + ", the tree has " + std::to_string(t.masks.size());
        t.level_begin.push_back(static_cast<std::uint32_t>(begin));
        std::size_t next = 0;
        for (std::size_t i = begin; i < begin + count; ++i) {
            if (t.masks[i] == 0) return "node " + std::to_string(i) + " has no child";
            t.first_child[i] = static_cast<std::uint32_t>((d + 1 < t.levels ? begin + count : 0) + next);
            next += static_cast<std::size_t>(std::popcount(t.masks[i]));
        }
        begin += count;
        count = next;
    }
    if (begin != t.masks.size())
        return std::to_string(t.masks.size() - begin) + " nodes more than the masks of the " + std::to_string(t.levels) +
               " levels address";
    t.level_begin.push_back(static_cast<std::uint32_t>(begin));
    t.voxels = count;
    if (t.voxels > 0xffffffffu) return "more than 2^32 voxels";
    return "";
}

Octree build(std::vector<std::array<int, 3>> voxels, Vec3d origin, double voxel_size, bool surface_only) {
    if (voxels.empty()) fail_input("", "no voxels to build an octree from");
    int top = 0;
    for (const auto& v : voxels)
        for (int a = 0; a < 3; ++a) {
            if (v[a] < 0 || v[a] >= (1 << kMaxLevels)) fail_input("", "voxel coordinate out of the octree's range");
            top = std::max(top, v[a]);
        }
    Octree t;
    t.levels = 1;
    while ((1 << t.levels) <= top) ++t.levels;
    t.origin = origin;
    t.voxel_size = voxel_size;
    t.surface_only = surface_only;

    std::vector<std::uint64_t> codes(voxels.size());
    for (std::size_t i = 0; i < voxels.size(); ++i) codes[i] = morton(voxels[i]);
    std::sort(codes.begin(), codes.end());
    codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
    // Bottom-up: the masks of level l from the (sorted, unique) codes of level l - 1.
    std::vector<std::vector<std::uint8_t>> per_level;  // [l - 1]
    for (int l = 1; l <= t.levels; ++l) {
        std::vector<std::uint8_t> masks;
        std::vector<std::uint64_t> parents;
        for (std::uint64_t c : codes) {
            const std::uint64_t p = c >> 3;
            if (parents.empty() || parents.back() != p) {
                parents.push_back(p);
                masks.push_back(0);
            }
            masks.back() |= static_cast<std::uint8_t>(1u << (c & 7));
        }
        per_level.push_back(std::move(masks));
        codes = std::move(parents);
    }
    for (int l = t.levels; l >= 1; --l) t.masks.insert(t.masks.end(), per_level[l - 1].begin(), per_level[l - 1].end());
    const std::string bad = finalize(t);
    if (!bad.empty()) fail_input("", "octree build: " + bad);  // cannot happen for a built tree
    return t;
}

namespace {

// The integer coordinates of the nodes `depth` levels below the root, in breadth-first order
// (each level expanded from the one above through its masks).
std::vector<std::array<int, 3>> coords_at_depth(const Octree& t, int depth) {
    std::vector<std::array<int, 3>> cur{{0, 0, 0}}, next;
    for (int d = 0; d < depth; ++d) {
        next.clear();
        for (std::size_t i = 0; i < cur.size(); ++i) {
            const std::uint8_t m = t.masks[t.level_begin[d] + i];
            for (int b = 0; b < 8; ++b)
                if (m >> b & 1) next.push_back({2 * cur[i][0] + (b & 1), 2 * cur[i][1] + ((b >> 1) & 1), 2 * cur[i][2] + ((b >> 2) & 1)});
        }
        std::swap(cur, next);
    }
    return cur;
}

}  // namespace

std::vector<std::array<int, 3>> voxel_coords(const Octree& t) { return coords_at_depth(t, t.levels); }

std::vector<std::size_t> nodes_per_level(const Octree& t) {
    std::vector<std::size_t> n;
    for (int d = 0; d < t.levels; ++d) n.push_back(t.level_begin[d + 1] - t.level_begin[d]);
    n.push_back(t.voxels);
    return n;
}

std::vector<NodeSphere> level_spheres(const Octree& t, int level, bool side) {
    std::vector<NodeSphere> out;
    if (level < 0 || level > t.levels) return out;
    const auto& table = tight_spheres();
    const int depth = t.levels - level;
    const std::vector<std::array<int, 3>> cur = coords_at_depth(t, depth);
    const double s = t.side(level);
    for (std::size_t i = 0; i < cur.size(); ++i) {
        const Vec3d c = t.origin + Vec3d{(cur[i][0] + 0.5) * s, (cur[i][1] + 0.5) * s, (cur[i][2] + 0.5) * s};
        if (level == 0 || !side) {
            out.push_back({c, kCubeRadius * s});
        } else {
            const TightSphere& ts = table[t.masks[t.level_begin[depth] + i]];
            out.push_back({c + ts.offset * s, ts.scale * s});
        }
    }
    return out;
}

}  // namespace hp::octree
