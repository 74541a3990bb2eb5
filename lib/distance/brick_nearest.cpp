// Nearest triangles brick by brick (distance/brick_nearest.hpp).
#include "distance/brick_nearest.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "geometry/closest_point4.hpp"

namespace hp {

// closest_points_on_triangles4's vectors never cross a call (it is inlined into run()'s clones).
#pragma GCC diagnostic ignored "-Wpsabi"

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
}

void BrickNearest::add(int dx, int dy, int dz) {
    const int q = (dx >> 2) | ((dy >> 2) << 1) | ((dz >> 2) << 2);
    voxels_[static_cast<std::size_t>(q)].push_back(static_cast<std::uint16_t>(dx | (dy << 3) | (dz << 6)));
}

void BrickNearest::boxes() {
    for (int a = 0; a < 3; ++a) lo_[8][a] = kBrickDim, hi_[8][a] = -1;
    for (int q = 0; q < 8; ++q) {
        int lx = kBrickDim, ly = kBrickDim, lz = kBrickDim, hx = -1, hy = -1, hz = -1;
        for (const std::uint16_t o : voxels_[static_cast<std::size_t>(q)]) {
            const int dx = o & 7, dy = (o >> 3) & 7, dz = o >> 6;
            lx = std::min(lx, dx), ly = std::min(ly, dy), lz = std::min(lz, dz);
            hx = std::max(hx, dx), hy = std::max(hy, dy), hz = std::max(hz, dz);
        }
        const int lo[3] = {lx, ly, lz}, hi[3] = {hx, hy, hz};
        for (int a = 0; a < 3; ++a) {
            lo_[q][a] = lo[a], hi_[q][a] = hi[a];
            lo_[8][a] = std::min(lo_[8][a], lo[a]), hi_[8][a] = std::max(hi_[8][a], hi[a]);
        }
    }
}

namespace {

using Group = BrickNearest::Group;
constexpr std::size_t kL = BrickNearest::kLanes;
static_assert(BrickNearest::kLanes == 8);

// Field numbers of a candidate's float data (relative to the brick's centre c).
enum : int {
    kA = 0,       // vertex a (3)
    kAB = 3,      // b - a (3)
    kAC = 6,      // c - a (3)
    kBC = 9,      // c - b (3)
    kN = 12,      // unit normal of ab x ac (3)
    kE0 = 15,     // n x ab (3): the inside of edge ab is where (p - a) . e0 >= 0
    kE1 = 18,     // n x bc (3), with p - b
    kE2 = 21,     // n x ca (3), with p - a (e2 is orthogonal to ca)
    kInvAB = 24,  // 1 / |ab|^2 (0 for a zero-length edge)
    kInvBC = 25,
    kInvAC = 26,
    kPlane = 27,  // 1: the face region applies; 0: a degenerate triangle, edges only
    kSlack = 28,  // bound on the float result's error (squared distance), for points within the reach
};

// may_alias: a group's rows, written as floats, are read through these vector types.
typedef float Lanes4 __attribute__((vector_size(16), may_alias));
typedef float Lanes8 __attribute__((vector_size(32), may_alias));

// A group's fields for the V-wide lanes from lane0 on (Group: 32-byte aligned rows of kLanes floats).
template <class V>
struct Fields {
    const Group& g;
    int lane0;
    [[gnu::always_inline]] const V& operator[](int k) const { return *reinterpret_cast<const V*>(&g.f[k][lane0]); }
};

// The squared distance from (x, y, z) (relative to the edge's start) to edge e of the lanes, the
// parameter clamped to the edge (inv: its 1 / length^2 field).
// (Vectors pass by reference: no 32-byte vector crosses a call of the default target.)
template <class V>
[[gnu::always_inline]] inline void segment2(const V& x, const V& y, const V& z, const Fields<V>& f, int e, int inv, V& out) {
    const V &ex = f[e], &ey = f[e + 1], &ez = f[e + 2], &iv = f[inv];
    const V zero{}, one = zero + 1.0f;
    V t = (x * ex + y * ey + z * ez) * iv;
    t = t < 0.0f ? zero : t;
    t = t > 1.0f ? one : t;
    const V rx = x - ex * t, ry = y - ey * t, rz = z - ez * t;
    out = rx * rx + ry * ry + rz * rz;
}
// Lower bounds of the squared distances from p (relative to the brick's centre) to the V-wide
// lanes from lane0 of a group: the point-triangle distance in float (face region by the three
// edge tests, else the nearest of the three edges), less the candidate's error bound. Branch free
// over the lanes. Any valid lower bound gives the same results (bounds only skip candidates).
template <class V>
[[gnu::always_inline]] inline void lower_bounds(const Group& g, int lane0, float pxs, float pys, float pzs, float* out) {
    const Fields<V> f{g, lane0};
    const V zero{};
    const V px = zero + pxs, py = zero + pys, pz = zero + pzs;
    const V ax = px - f[kA], ay = py - f[kA + 1], az = pz - f[kA + 2];
    const V bx = ax - f[kAB], by = ay - f[kAB + 1], bz = az - f[kAB + 2];
    V d0, d1, d2;
    segment2(ax, ay, az, f, kAB, kInvAB, d0);
    segment2(bx, by, bz, f, kBC, kInvBC, d1);
    segment2(ax, ay, az, f, kAC, kInvAC, d2);
    V edges = d0 < d1 ? d0 : d1;
    edges = d2 < edges ? d2 : edges;
    const V s0 = ax * f[kE0] + ay * f[kE0 + 1] + az * f[kE0 + 2];
    const V s1 = bx * f[kE1] + by * f[kE1 + 1] + bz * f[kE1 + 2];
    const V s2 = ax * f[kE2] + ay * f[kE2 + 1] + az * f[kE2 + 2];
    const V h = ax * f[kN] + ay * f[kN + 1] + az * f[kN + 2];
    const auto inside = (s0 >= 0.0f) & (s1 >= 0.0f) & (s2 >= 0.0f) & (f[kPlane] > 0.5f);
    V low = (inside ? h * h : edges) - f[kSlack];
    low = low == low ? low : zero - std::numeric_limits<float>::infinity();  // NaN: no bound
    __builtin_memcpy(out, &low, sizeof low);
}

// The bounds of the first `count` candidates of `groups` at p, into low[0, count): whole groups
// of 8 lanes when `wide` (run()'s AVX2 clone), else halves of 4 (the default clone's; a group's
// second half is left as it was when no candidate lies in it).
[[gnu::always_inline]] inline void group_bounds(bool wide, const Group* groups, std::size_t count, float px, float py, float pz,
                                                float* low) {
    for (std::size_t g = 0; g * kL < count; ++g) {
        if (wide) {
            lower_bounds<Lanes8>(groups[g], 0, px, py, pz, low + g * kL);
        } else {
            lower_bounds<Lanes4>(groups[g], 0, px, py, pz, low + g * kL);
            if (g * kL + 4 < count) lower_bounds<Lanes4>(groups[g], 4, px, py, pz, low + g * kL + 4);
        }
    }
}

// A group's lane n: field k of candidate kLanes g + n.
inline void set_lane(Group& g, int n, const std::array<float, BrickNearest::kFields>& v) {
    for (int k = 0; k < BrickNearest::kFields; ++k) g.f[k][n] = v[static_cast<std::size_t>(k)];
}

// A lane that no point comes near (for the padding of the last group).
std::array<float, BrickNearest::kFields> far_lane() {
    std::array<float, BrickNearest::kFields> v{};
    v[kA] = v[kA + 1] = v[kA + 2] = 1e15f;  // squared distances about 3e30, finite in float
    return v;
}

}  // namespace

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
    for (std::size_t n = 0; n < sorted_.size(); ++n) slot_[n] = sorted_[n].second;
}

// The candidates' float data relative to c, for points within reach_p of c. The float result
// differs from the exact squared distance by a few float roundings of the magnitudes involved
// (the point's and the vertices' offsets from c, at most L = reach_p + the farthest vertex); the
// bound kept per candidate, 2^-16 L^2, is about 250 times the worst sum of those roundings, so
// a lower bound stays below the true squared distance, and (with a term for the double query's
// own rounding of coordinates far from the origin) below the double result, which is that of a
// point on the triangle.
void BrickNearest::pack(const Vec3d& c, double reach_p) {
    const TriangleBvh& bvh = ix_.bvh;
    const std::size_t m = slot_.size();
    cand_.resize(m);
    for (std::size_t e = 0; e < m; ++e) {
        const auto& t = bvh.corners_at(slot_[e]);
        const Vec3d a = t[0] - c, b = t[1] - c, cc = t[2] - c;
        const Vec3d ab = t[1] - t[0], ac = t[2] - t[0], bc = t[2] - t[1];
        const Vec3d nn = cross(ab, ac);
        // The double query's degenerate case (closest_point_on_triangle): the edges only.
        const bool plane = !(length2(nn) <= 1e-14 * length2(ab) * length2(ac));
        const Vec3d n = plane ? normalized(nn) : Vec3d{};
        const Vec3d e0 = cross(n, ab), e1 = cross(n, bc), e2 = cross(n, t[0] - t[2]);
        auto inv = [](const Vec3d& v) {
            const double l2 = length2(v);
            const double i = l2 > 0 ? 1.0 / l2 : 0.0;
            return i < 1e30 ? i : 0.0;  // a shorter edge is a point at float precision
        };
        const double far = reach_p + std::sqrt(std::max({length2(a), length2(b), length2(cc)}));
        // The double query rounds coordinates of magnitude up to `coords`: its error on a squared
        // distance below far^2 is some 2^-50 far coords, far below the second term.
        const double coords = std::max({std::abs(c.x), std::abs(c.y), std::abs(c.z)}) + far;
        const double v[kFields] = {a.x,  a.y,  a.z,  ab.x, ab.y,    ab.z,    ac.x,    ac.y,  ac.z,  bc.x,
                                   bc.y, bc.z, n.x,  n.y,  n.z,     e0.x,    e0.y,    e0.z,  e1.x,  e1.y,
                                   e1.z, e2.x, e2.y, e2.z, inv(ab), inv(bc), inv(ac), plane ? 1.0 : 0.0,
                                   std::ldexp(far * far, -16) + std::ldexp(far * coords, -40)};
        bool finite = std::isfinite(far) && far < 1e15;
        for (int k = 0; k < kFields; ++k) {
            cand_[e][static_cast<std::size_t>(k)] = static_cast<float>(v[k]);
            finite = finite && std::isfinite(cand_[e][static_cast<std::size_t>(k)]);
        }
        if (!finite) {
            // Beyond float's range: a bound of -infinity, never skipped, always computed exactly.
            cand_[e].fill(0.0f);
            cand_[e][kSlack] = std::numeric_limits<float>::infinity();
        }
    }
    brick_groups_.resize((m + kL - 1) / kL);
    for (std::size_t e = 0; e < brick_groups_.size() * kL; ++e)
        set_lane(brick_groups_[e / kL], static_cast<int>(e % kL), e < m ? cand_[e] : far_lane());
}

// An AVX2 clone, chosen at run time, bounds a group's 8 lanes at once (the default one in two
// halves of 4); AVX2 without FMA keeps every double operation as it is, so both give the same hits.
__attribute__((target_clones("avx2", "default"))) const std::vector<BrickNearest::Hit>& BrickNearest::run() {
    hits_.clear();
    boxes();
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
    pack(c, h + grid.voxel_size);
    low_.resize(brick_groups_.size() * kL);
    exact_.resize(m);
    auto exact2 = [&](const Vec3d& x, std::size_t e) {
        const auto& t = bvh.corners_at(slot_[e]);
        return closest_point_on_triangle(x, t[0], t[1], t[2]);
    };
    const bool wide = wide_;
    auto bounds = [&](const std::vector<Group>& groups, std::size_t count, const Vec3d& x, float* out) __attribute__((always_inline)) {
        const Vec3d p = x - c;
        group_bounds(wide, groups.data(), count, static_cast<float>(p.x), static_cast<float>(p.y), static_cast<float>(p.z), out);
    };
    // Above these, a candidate is provably farther than `d2` (lower bound vs exact double).
    auto beyond = [](float low, double d2) { return static_cast<double>(low) > d2 * (1 + 1e-12); };
    for (int q = 0; q < 8; ++q) {
        if (voxels_[static_cast<std::size_t>(q)].empty()) continue;
        // The sub-block's candidates: the brick's within d' + 2 h' of its centre c', where d' is the
        // distance from c' to the nearest of them (the mesh's nearest lies among them: c' is within
        // h of c), sorted by distance to c'. Exact distances only where the float bounds leave
        // a candidate in question: the same d', the same list, the same order as computing all.
        Vec3d cq;
        const double hq = box_of(q, cq);
        bounds(brick_groups_, m, cq, low_.data());
        std::fill(exact_.begin(), exact_.end(), -1.0);
        std::size_t first = 0;
        for (std::size_t e = 1; e < m; ++e)
            if (low_[e] < low_[first]) first = e;
        double dq2 = exact_[first] = exact2(cq, first).distance2;
        for (std::size_t e = 0; e < m; ++e) {
            if (exact_[e] >= 0 || beyond(low_[e], dq2)) continue;
            exact_[e] = exact2(cq, e).distance2;
            dq2 = std::min(dq2, exact_[e]);
        }
        const double reach = std::sqrt(dq2) + 2 * hq + slack;
        const double reach2 = reach * reach;
        sub_.clear();
        for (std::size_t e = 0; e < m; ++e) {
            if (exact_[e] < 0) {
                if (beyond(low_[e], reach2)) continue;
                exact_[e] = exact2(cq, e).distance2;
            }
            const double d = std::sqrt(exact_[e]);
            if (d <= reach) sub_.emplace_back(d, static_cast<std::uint32_t>(e));
        }
        std::sort(sub_.begin(), sub_.end());
        const std::size_t ms = sub_.size();
        sub_d_.resize(ms);
        for (std::size_t e = 0; e < ms; ++e) sub_d_[e] = sub_[e].first;
        sub_groups_.resize((ms + kL - 1) / kL);
        for (std::size_t e = 0; e < sub_groups_.size() * kL; ++e)
            set_lane(sub_groups_[e / kL], static_cast<int>(e % kL), e < ms ? cand_[sub_[e].second] : far_lane());
        // Per voxel: the float bounds of the candidates that can be nearest (sub_ is sorted by
        // distance to c': a prefix), the exact distance to the one with the least bound (usually
        // the nearest), then to each other whose bound does not exceed the best exact distance so
        // far. Every candidate at the minimal distance is computed (its bound is below it), so the
        // tie rule below decides among all of them whatever the order of the computations.
        // In three passes over the sub-block's voxels (the results of the one pass per voxel
        // before): the bounds of each voxel's prefix and their least; the exact distances to
        // those least-bound candidates, four voxels at a time; then per voxel in order the others.
        const std::vector<std::uint16_t>& vox = voxels_[static_cast<std::size_t>(q)];
        const std::size_t nv = vox.size(), stride = sub_groups_.size() * kL;
        rows_.resize(nv * stride);
        at_.resize(nv);
        least_.resize(nv);
        prefix_.resize(nv);
        first_.resize(nv);
        for (std::size_t k = 0; k < nv; ++k) {
            const std::uint16_t o = vox[k];
            const Vec3d x = grid.center(x0_ + (o & 7), y0_ + ((o >> 3) & 7), z0_ + (o >> 6));
            const double rx = length(x - cq);
            // sub_'s first candidate is within sub_[0].first + rx of x; a candidate farther than
            // that from x by more than the rounding (its distance to c' less rx) is not nearest.
            const double cut = sub_[0].first + rx + slack;
            std::size_t w = 0;
            for (std::size_t e = 0; e < ms; ++e) w += !(sub_d_[e] - rx > cut);
            float* low = rows_.data() + k * stride;
            bounds(sub_groups_, w, x, low);
            std::size_t least = 0;
            float least_low = low[0];
            for (std::size_t e = 1; e < w; ++e) {
                const float v = low[e];
                least = v < least_low ? e : least;
                least_low = std::min(v, least_low);
            }
            at_[k] = x, least_[k] = static_cast<std::uint32_t>(least), prefix_[k] = static_cast<std::uint32_t>(w);
        }
        for (std::size_t k = 0; k < nv; k += 4) {
            const Vec3d* ps[4];
            const std::array<Vec3d, 3>* ts[4];
            for (std::size_t l = 0; l < 4; ++l) {
                const std::size_t kk = k + l < nv ? k + l : k;  // beyond the last voxel: repeat the first lane
                ps[l] = &at_[kk];
                ts[l] = &bvh.corners_at(slot_[sub_[least_[kk]].second]);
            }
            ClosestPoint four[4];
            closest_points_on_triangles4(ps, ts, four);
            for (std::size_t l = 0; l < 4 && k + l < nv; ++l) first_[k + l] = four[l];
        }
        std::size_t seed = 0;  // the previous voxel's closest candidate (index into sub_)
        for (std::size_t k = 0; k < nv; ++k) {
            const Vec3d& x = at_[k];
            float* low = rows_.data() + k * stride;
            const std::size_t w = prefix_[k], least = least_[k];
            ClosestPoint best_cp = first_[k];
            double best2 = best_cp.distance2;
            std::size_t best = least;
            // Equal distances: the previous voxel's closest (the seed) if it is among them, else the
            // first in sub_'s order; with bvh_ties the first in the BVH query's order.
            auto consider = [&](std::size_t e) {
                const ClosestPoint cp = exact2(x, sub_[e].second);
                const double d2 = cp.distance2;
                bool better = d2 < best2;
                if (d2 == best2) {
                    if (ix_.bvh_ties) better = ix_.before(x, slot_[sub_[e].second], slot_[sub_[best].second]);
                    else better = e == seed || (best != seed && e < best);
                }
                if (better) best2 = d2, best = e, best_cp = cp;
            };
            low[least] = std::numeric_limits<float>::infinity();
            for (std::size_t e = 0; e < w; ++e)
                if (!beyond(low[e], best2)) consider(e);
            seed = best;
            hits_.push_back({vox[k], slot_[sub_[best].second], std::sqrt(best2), best_cp});
        }
    }
    return hits_;
}

}  // namespace hp
