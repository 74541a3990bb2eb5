#include "octree/ist.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace hp::octree {

namespace {

constexpr double kRelSlack = 1e-9;

Vec3d rotate(const Placement& p, Vec3d v) { return {dot(p.rows[0], v), dot(p.rows[1], v), dot(p.rows[2], v)}; }

// Per query and object: the axes scaled per level (the paper's "primary axes ... scaled
// appropriately each time we descend the tree").
struct Frame {
    std::array<std::array<Vec3d, 3>, kMaxLevels + 1> axis_side;    // [l][a] = axis a * side(l)
    std::array<std::array<Vec3d, 8>, kMaxLevels + 1> child_offset; // [l][b]: parent (level l) centre -> child b's centre
    Vec3d root_center;
};

void make_frame(const Octree& t, const Placement& p, Frame& f) {
    const Vec3d axes[3] = {{p.rows[0].x, p.rows[1].x, p.rows[2].x},
                           {p.rows[0].y, p.rows[1].y, p.rows[2].y},
                           {p.rows[0].z, p.rows[1].z, p.rows[2].z}};
    for (int l = 0; l <= t.levels; ++l) {
        const double s = t.side(l);
        for (int a = 0; a < 3; ++a) f.axis_side[l][a] = axes[a] * s;
        if (l == 0) continue;
        const double h = 0.5 * t.side(l - 1);  // from the parent's centre to a child's, per axis
        for (int b = 0; b < 8; ++b)
            f.child_offset[l][b] = axes[0] * ((b & 1) ? h : -h) + axes[1] * ((b & 2) ? h : -h) + axes[2] * ((b & 4) ? h : -h);
    }
    const double half = 0.5 * t.side(t.levels);
    f.root_center = rotate(p, t.origin + Vec3d{half, half, half}) + p.translation;
}

// The world centre of a voxel: the one formula of ist and ist-brute (voxel_center).
inline Vec3d center_of(const Octree& t, const Placement& p, int i, int j, int k) {
    const double s = t.voxel_size;
    return rotate(p, t.origin + Vec3d{(i + 0.5) * s, (j + 0.5) * s, (k + 0.5) * s}) + p.translation;
}

inline bool voxel_overlap(const Vec3d& ca, const Vec3d& cb, double rsum, double& d) {
    const double d2 = length2(ca - cb);
    if (!(d2 < rsum * rsum)) return false;
    d = std::sqrt(d2);
    return true;
}

}  // namespace

struct IstFrames {
    Frame a, b;
};

Vec3d voxel_center(const Octree& t, const Placement& p, int i, int j, int k) { return center_of(t, p, i, j, k); }

std::vector<double> sphere_radii(const Octree& t, bool side) {
    std::vector<double> r(static_cast<std::size_t>(t.levels + 1) * 256, 0.0);
    const double s = t.voxel_size, rv = kCubeRadius * s;
    for (int l = 1; l <= t.levels; ++l) {
        const double full = kCubeRadius * t.side(l);
        for (int m = 1; m < 256; ++m) {
            double v = full;
            if (side) {
                // Every voxel's corners lie in the ball (centre C, radius R), so its centre v has
                // |v - C|^2 = mean over corners |corner - C|^2 - 3 s^2 / 4 <= R^2 - 3 s^2 / 4.
                const double big = tight_spheres()[m].scale * t.side(l);
                v = std::min(full, std::sqrt(std::max(0.0, big * big - 0.75 * s * s)) + rv);
            }
            r[static_cast<std::size_t>(l) * 256 + m] = v;
        }
    }
    return r;
}

IstQuery::IstQuery(const Octree& moving, const Octree& fixed, const IstOptions& options)
    : a_(moving), b_(fixed), options_(options), radii_a_(sphere_radii(moving, options.side)),
      radii_b_(sphere_radii(fixed, options.side)), frames_(std::make_unique<IstFrames>()) {}

IstQuery::~IstQuery() = default;
IstQuery::IstQuery(IstQuery&&) noexcept = default;

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;

// Fills what the tests of node `n` need (centre, level, coordinates, index set; one-child
// optimization applied by the caller): its mask, test sphere and, for a voxel, the voxel test's centre.
inline void prepare(IstQuery::Node& n, const Octree& t, const Frame& f, const Placement& p, bool side,
                    const double* radii, const TightSphere* table) {
    n.carried = kNone;
    n.first = kNone;
    n.children = 0;
    if (n.level == 0) {
        n.mask = 0;
        n.sphere = n.center;
        n.radius = kCubeRadius * t.voxel_size;
        n.voxel = center_of(t, p, n.x, n.y, n.z);
        return;
    }
    const std::uint8_t m = t.masks[n.index];
    n.mask = m;
    n.radius = radii[n.level * 256 + m];
    if (!side) {
        n.sphere = n.center;
        return;
    }
    const TightSphere& ts = table[m];
    const auto& ax = f.axis_side[n.level];
    n.sphere = n.center + ax[0] * ts.offset.x + ax[1] * ts.offset.y + ax[2] * ts.offset.z;
}

// One-child optimization: a node with a single child is replaced by that child at once (its
// sphere holds no more than the child's), down the chain; returns the nodes passed.
inline int collapse(IstQuery::Node& n, const Octree& t, const Frame& f) {
    int k = 0;
    while (n.level > 0) {
        const unsigned m = t.masks[n.index];
        if (m & (m - 1)) break;  // more than one child
        const int b = std::countr_zero(m);
        n.center = n.center + f.child_offset[n.level][b];
        n.x = 2 * n.x + (b & 1);
        n.y = 2 * n.y + ((b >> 1) & 1);
        n.z = 2 * n.z + ((b >> 2) & 1);
        n.index = t.first_child[n.index];
        n.level = static_cast<std::int8_t>(n.level - 1);
        ++k;
    }
    return k;
}

// Each object's tree, frame, placement, radius table and next round's nodes, with the options its
// new nodes are made ready under.
struct Object {
    const Octree& tree;
    const Frame& frame;
    const Placement& placement;
    const double* radii;
    std::vector<IstQuery::Node>& next;
    bool side, one_child;
    const TightSphere* table;
};

// A new node (centre, level, coordinates and index set): collapsed (one-child optimization)
// and made ready for its tests.
inline void enter(IstQuery::Node& n, const Object& o) {
    n.skips = o.one_child ? static_cast<std::uint8_t>(collapse(n, o.tree, o.frame)) : 0;
    prepare(n, o.tree, o.frame, o.placement, o.side, o.radii, o.table);
}

// The node's children into the next round (once per round, whichever pairs it is in).
inline void split(IstQuery::Node& n, const Object& o) {
    if (n.first != kNone) return;
    std::vector<IstQuery::Node>& out = o.next;
    n.first = static_cast<std::uint32_t>(out.size());
    const unsigned m = n.mask;
    std::uint32_t idx = o.tree.first_child[n.index];
    const Vec3d* off = o.frame.child_offset[n.level].data();
    for (unsigned bits = m; bits != 0; bits &= bits - 1) {
        const int b = std::countr_zero(bits);
        IstQuery::Node& c = out.emplace_back();
        c.center = n.center + off[b];
        c.x = 2 * n.x + (b & 1);
        c.y = 2 * n.y + ((b >> 1) & 1);
        c.z = 2 * n.z + ((b >> 2) & 1);
        c.index = idx++;
        c.level = static_cast<std::int8_t>(n.level - 1);
        enter(c, o);
    }
    n.children = static_cast<std::uint8_t>(out.size() - n.first);
    int low = n.level, steps = 0;
    for (std::uint32_t i = n.first; i < out.size(); ++i) low = std::min<int>(low, out[i].level), steps += out[i].skips;
    n.child_level = static_cast<std::int8_t>(low);
    n.child_skips = static_cast<std::uint8_t>(steps);
}

// The node itself into the next round (once per round).
inline void carry(IstQuery::Node& n, std::vector<IstQuery::Node>& out) {
    if (n.carried != kNone) return;
    n.carried = static_cast<std::uint32_t>(out.size());
    IstQuery::Node& c = out.emplace_back(n);
    c.carried = kNone, c.first = kNone, c.children = 0, c.skips = 0;
}

// What a node of a pair puts into the next round, split or carried: the places [first, first +
// count) of the next round's nodes, their one-child steps and their lowest level.
struct Entered {
    std::uint32_t first, count, skips;
    int low;
};
inline Entered advance(IstQuery::Node& n, bool splits, const Object& o) {
    if (!splits) {
        carry(n, o.next);
        return {n.carried, 1, 0, n.level};
    }
    split(n, o);
    return {n.first, n.children, n.child_skips, n.child_level};
}

}  // namespace

const std::vector<IstContact>& IstQuery::operator()(const Placement& pa) {
    const Placement pb{};
    contacts_.clear();
    cur_.clear();
    next_.clear();
    a_cur_.clear(), a_next_.clear(), b_cur_.clear(), b_next_.clear();
    stats_ = {};
    Frame& fa = frames_->a;
    Frame& fb = frames_->b;
    const TightSphere* table = tight_spheres().data();
    make_frame(a_, pa, fa);
    make_frame(b_, pb, fb);
    const double abs_slack = 1e-12 * (1 + length(pa.translation) + length(a_.origin) + length(b_.origin) +
                                      a_.side(a_.levels) + b_.side(b_.levels));
    const double rv = kCubeRadius * (a_.voxel_size + b_.voxel_size);
    const bool side = options_.side, one_child = options_.one_child;

    auto coarse = [&](const Node& a, const Node& b) {
        const double d = length(a.sphere - b.sphere);
        contacts_.push_back({a.index, b.index, std::max<int>(a.level, b.level), a.sphere, b.sphere, a.radius + b.radius,
                             std::max(0.0, a.radius + b.radius - d)});
    };
    const Object oa{a_, fa, pa, radii_a_.data(), a_next_, side, one_child, table};
    const Object ob{b_, fb, pb, radii_b_.data(), b_next_, side, one_child, table};
    // Counters kept in registers during the descent, stored in stats_ at the end.
    std::size_t sphere_tests = 0, voxel_tests = 0, skipped = 0;
    int level_reached = std::max(a_.levels, b_.levels);
    // The new pairs of the nodes a_next_[a0, a0 + na) and b_next_[b0, b0 + nb): a voxel pair is
    // decided at once, a node pair tested and kept when its spheres overlap.
    // The kept pairs are written without a branch (whether two spheres overlap is close to a coin
    // toss near the contact): each pair is stored at next_[kept] and kept counts it when it overlaps.
    std::size_t kept = 0;
    auto offer = [&](std::uint32_t a0, std::uint32_t na, std::uint32_t b0, std::uint32_t nb) {
        const Node* A = a_next_.data() + a0;
        const Node* B = b_next_.data() + b0;
        if (next_.size() < kept + na * nb) next_.resize(2 * (kept + na * nb));
        Pair* out = next_.data();
        for (std::uint32_t i = 0; i < na; ++i) {
            const Node& x = A[i];
            for (std::uint32_t j = 0; j < nb; ++j) {
                const Node& y = B[j];
                if ((x.level | y.level) == 0) {
                    ++voxel_tests;
                    double d;
                    if (voxel_overlap(x.voxel, y.voxel, rv, d)) contacts_.push_back({x.index, y.index, 0, x.voxel, y.voxel, rv, rv - d});
                    continue;
                }
                ++sphere_tests;
                const double r = (x.radius + y.radius) * (1 + kRelSlack) + abs_slack;
                out[kept] = {a0 + i, b0 + j};
                kept += length2(x.sphere - y.sphere) <= r * r;
            }
        }
    };

    {
        // The roots enter as the children of nothing: new nodes, collapsed and tested.
        Node& ra = a_next_.emplace_back();
        ra.center = fa.root_center;
        ra.level = static_cast<std::int8_t>(a_.levels);
        enter(ra, oa);
        Node& rb = b_next_.emplace_back();
        rb.center = fb.root_center;
        rb.level = static_cast<std::int8_t>(b_.levels);
        enter(rb, ob);
        skipped += ra.skips + rb.skips;
        level_reached = std::min<int>(level_reached, std::max(ra.level, rb.level));
        offer(0, 1, 0, 1);
        next_.resize(kept);
    }
    while (!next_.empty()) {
        std::swap(cur_, next_);
        std::swap(a_cur_, a_next_);
        std::swap(b_cur_, b_next_);
        next_.clear();
        kept = 0;
        a_next_.clear();
        b_next_.clear();
        if (options_.max_contacts > 0 && cur_.size() >= options_.max_contacts) {
            for (const Pair& p : cur_) coarse(a_cur_[p.a], b_cur_[p.b]);
            stats_.interrupted = true;
            break;
        }
        ++stats_.rounds;
        for (const Pair& p : cur_) {
            Node& a = a_cur_[p.a];
            Node& b = b_cur_[p.b];
            const int la = a.level, lb = b.level;
            if (options_.stop_level > 0 && std::max(la, lb) <= options_.stop_level) {
                coarse(a, b);
                stats_.interrupted = true;
                continue;
            }
            const Entered ea = advance(a, la >= lb, oa), eb = advance(b, lb >= la, ob);
            // Each new node's one-child steps count once per pair it enters (the tests they saved).
            skipped += ea.skips * eb.count + eb.skips * ea.count;
            level_reached = std::min(level_reached, std::max(ea.low, eb.low));
            offer(ea.first, ea.count, eb.first, eb.count);
        }
        next_.resize(kept);
    }
    stats_.sphere_tests = sphere_tests;
    stats_.voxel_tests = voxel_tests;
    stats_.skipped = skipped;
    stats_.level_reached = level_reached;
    return contacts_;
}

BruteQuery::BruteQuery(const Octree& moving, const Octree& fixed)
    : a_(moving), b_(fixed), a_coords_(voxel_coords(moving)), b_coords_(voxel_coords(fixed)) {
    b_index_.reserve(b_coords_.size());
    for (std::size_t i = 0; i < b_coords_.size(); ++i) {
        const auto& c = b_coords_[i];
        b_index_.emplace(static_cast<std::uint64_t>(c[0]) | static_cast<std::uint64_t>(c[1]) << 21 |
                             static_cast<std::uint64_t>(c[2]) << 42,
                         static_cast<std::uint32_t>(i));
    }
}

const std::vector<IstContact>& BruteQuery::operator()(const Placement& pa) {
    const Placement pb{};
    contacts_.clear();
    tests_ = 0;
    const double rv = kCubeRadius * (a_.voxel_size + b_.voxel_size);
    const double sb = b_.voxel_size;
    const int reach = static_cast<int>(std::ceil(rv / sb)) + 1;  // static voxels a moving centre can touch, per axis
    const int limit = 1 << b_.levels;
    for (std::size_t i = 0; i < a_coords_.size(); ++i) {
        const auto& c = a_coords_[i];
        const Vec3d ca = center_of(a_, pa, c[0], c[1], c[2]);
        const Vec3d u = (ca - b_.origin) / sb;  // continuous voxel coordinates in the static grid
        int lo[3], hi[3];
        bool outside = false;
        for (int a = 0; a < 3; ++a) {
            const double f = std::floor(u[a]);
            if (!(f + reach >= 0 && f - reach < limit)) { outside = true; break; }
            lo[a] = std::max(0, static_cast<int>(f) - reach);
            hi[a] = std::min(limit - 1, static_cast<int>(f) + reach);
        }
        if (outside) continue;
        for (int z = lo[2]; z <= hi[2]; ++z)
            for (int y = lo[1]; y <= hi[1]; ++y)
                for (int x = lo[0]; x <= hi[0]; ++x) {
                    const auto it = b_index_.find(static_cast<std::uint64_t>(x) | static_cast<std::uint64_t>(y) << 21 |
                                                  static_cast<std::uint64_t>(z) << 42);
                    if (it == b_index_.end()) continue;
                    ++tests_;
                    const Vec3d cb = center_of(b_, pb, x, y, z);
                    double d;
                    if (voxel_overlap(ca, cb, rv, d))
                        contacts_.push_back({static_cast<std::uint32_t>(i), it->second, 0, ca, cb, rv, rv - d});
                }
    }
    std::sort(contacts_.begin(), contacts_.end(),
              [](const IstContact& x, const IstContact& y) { return x.moving != y.moving ? x.moving < y.moving : x.fixed < y.fixed; });
    return contacts_;
}

}  // namespace hp::octree
