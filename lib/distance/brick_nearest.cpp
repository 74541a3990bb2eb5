// Nearest triangles brick by brick (distance/brick_nearest.hpp).
#include "distance/brick_nearest.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace hp {

NearestIndex::NearestIndex(const TriangleBvh& b, const GridSpec& g, bool ties) : bvh(b), grid(g), bvh_ties(ties) {
    if (bvh_ties) slots = bvh.slot_ranges();
}

NearestSign::NearestSign(const TriMesh& mesh) : normals_(mesh) {
    double volume = 0;
    for (const auto& t : mesh.triangles)
        volume += dot(mesh.vertices[t[0]], cross(mesh.vertices[t[1]], mesh.vertices[t[2]]));
    orient_ = volume < 0 ? -1.0 : 1.0;
}

template <class L>
void require_band_bricks(const BrickField<L>& layers, int band) {
    for (std::size_t b = 0; b < layers.block_count(); ++b)
        if (layers.index[b] == BrickField<L>::kTile && std::abs(static_cast<int>(layers.tile[b])) < band)
            fail_input("", "the voxelmap has a constant block of layer " + std::to_string(layers.tile[b]) + " inside the band of " +
                               std::to_string(band) + " voxels; make it with haptic-voxelize --band " + std::to_string(band));
}
template void require_band_bricks<std::int16_t>(const BrickField<std::int16_t>&, int);
template void require_band_bricks<std::int32_t>(const BrickField<std::int32_t>&, int);

bool NearestIndex::before(const Vec3d& x, std::uint32_t a, std::uint32_t b) const {
    const auto& nodes = bvh.nodes();
    std::uint32_t n = 0;
    for (;;) {
        const auto& node = nodes[n];
        if (node.leaf()) return a < b;  // one leaf: scanned in slot order
        const std::uint32_t l = node.first, r = l + 1;
        const bool al = a >= slots.begin[l] && a < slots.end[l], bl = b >= slots.begin[l] && b < slots.end[l];
        if (al == bl) {
            n = al ? l : r;
            continue;
        }
        // The query descends into the nearer child first (the left one on equal distances).
        const bool left_first = box_distance2(nodes[l].box, x) <= box_distance2(nodes[r].box, x);
        return al == left_first;
    }
}

void BrickNearest::begin(int x0, int y0, int z0) {
    x0_ = x0, y0_ = y0, z0_ = z0;
    for (auto& v : voxels_) v.clear();
    for (int q = 0; q < 9; ++q)
        for (int a = 0; a < 3; ++a) lo_[q][a] = kBrickDim, hi_[q][a] = -1;
}

void BrickNearest::add(int dx, int dy, int dz) {
    const int q = (dx >> 2) | ((dy >> 2) << 1) | ((dz >> 2) << 2);
    voxels_[static_cast<std::size_t>(q)].push_back(static_cast<std::uint16_t>(dx | (dy << 3) | (dz << 6)));
    const int d[3] = {dx, dy, dz};
    for (int qq : {q, 8})
        for (int a = 0; a < 3; ++a) lo_[qq][a] = std::min(lo_[qq][a], d[a]), hi_[qq][a] = std::max(hi_[qq][a], d[a]);
}

void BrickNearest::gather(const Vec3d& c, double reach) {
    const TriangleBvh& bvh = ix_.bvh;
    sorted_.clear();
    const double reach2 = reach * reach;
    const auto& nodes = bvh.nodes();
    std::uint32_t stack[TriangleBvh::kMaxDepth + 2];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const auto& node = nodes[stack[--top]];
        if (box_distance2(node.box, c) > reach2) continue;
        if (!node.leaf()) {
            stack[top++] = node.first;
            stack[top++] = node.first + 1;
            continue;
        }
        for (std::uint32_t s = node.first; s < node.first + node.count; ++s) {
            const auto& t = bvh.corners_at(s);
            const double d2 = closest_point_on_triangle(c, t[0], t[1], t[2]).distance2;
            if (d2 <= reach2) sorted_.emplace_back(std::sqrt(d2), s);
        }
    }
    std::sort(sorted_.begin(), sorted_.end());
    slot_.resize(sorted_.size());
    box_.resize(sorted_.size());
    for (std::size_t n = 0; n < sorted_.size(); ++n) {
        slot_[n] = sorted_[n].second;
        Aabb b;
        for (const auto& p : bvh.corners_at(sorted_[n].second)) b.extend(p);
        box_[n] = b;
    }
}

const std::vector<BrickNearest::Hit>& BrickNearest::run() {
    hits_.clear();
    if (hi_[8][0] < 0) return hits_;
    const TriangleBvh& bvh = ix_.bvh;
    const GridSpec& grid = ix_.grid;
    auto box_of = [&](int q, Vec3d& centre) {
        const Vec3d a = grid.center(x0_ + lo_[q][0], y0_ + lo_[q][1], z0_ + lo_[q][2]);
        const Vec3d z = grid.center(x0_ + hi_[q][0], y0_ + hi_[q][1], z0_ + hi_[q][2]);
        centre = (a + z) * 0.5;
        return 0.5 * length(z - a);
    };
    Vec3d c;
    const double h = box_of(8, c);
    const MeshHit hc = bvh.closest(c);
    // A margin far above the rounding of these sums keeps every possible closest triangle.
    const double slack = 1e-9 * (grid.voxel_size + std::sqrt(hc.closest.distance2));
    gather(c, std::sqrt(hc.closest.distance2) + 2 * h + slack);
    const std::size_t m = slot_.size();
    for (int q = 0; q < 8; ++q) {
        if (voxels_[static_cast<std::size_t>(q)].empty()) continue;
        // The sub-block's candidates: the brick's within d' + 2 h' of its centre c', where d' is the
        // distance from c' to the nearest of them (the mesh's nearest lies among them: c' is within
        // h of c), sorted by distance to c'.
        Vec3d cq;
        const double hq = box_of(q, cq);
        sub_.clear();
        double dq = INFINITY;
        for (std::size_t e = 0; e < m; ++e) {
            const auto& t = bvh.corners_at(slot_[e]);
            const double d = std::sqrt(closest_point_on_triangle(cq, t[0], t[1], t[2]).distance2);
            sub_.emplace_back(d, static_cast<std::uint32_t>(e));
            dq = std::min(dq, d);
        }
        const double reach = dq + 2 * hq + slack;
        sub_.erase(std::remove_if(sub_.begin(), sub_.end(), [&](const auto& e) { return e.first > reach; }), sub_.end());
        std::sort(sub_.begin(), sub_.end());
        const std::size_t ms = sub_.size();
        std::size_t seed = 0;  // the previous voxel's closest candidate (index into sub_)
        for (std::uint16_t o : voxels_[static_cast<std::size_t>(q)]) {
            const Vec3d x = grid.center(x0_ + (o & 7), y0_ + ((o >> 3) & 7), z0_ + (o >> 6));
            const double rx = length(x - cq);
            const auto& ts = bvh.corners_at(slot_[sub_[seed].second]);
            ClosestPoint best_cp = closest_point_on_triangle(x, ts[0], ts[1], ts[2]);
            double best2 = best_cp.distance2;
            std::size_t best = seed;
            double best_d = std::sqrt(best2);
            for (std::size_t e = 0; e < ms; ++e) {
                if (sub_[e].first - rx > best_d + slack) break;  // this and all later are farther
                const std::uint32_t ce = sub_[e].second;
                if (e == seed || box_distance2(box_[ce], x) > best2 * (1 + 1e-12)) continue;
                const auto& t = bvh.corners_at(slot_[ce]);
                const ClosestPoint cp = closest_point_on_triangle(x, t[0], t[1], t[2]);
                const double d2 = cp.distance2;
                if (d2 < best2 || (d2 == best2 && ix_.bvh_ties && ix_.before(x, slot_[ce], slot_[sub_[best].second])))
                    best2 = d2, best = e, best_d = std::sqrt(d2), best_cp = cp;
            }
            seed = best;
            hits_.push_back({o, slot_[sub_[best].second], best_d, best_cp});
        }
    }
    return hits_;
}

}  // namespace hp
