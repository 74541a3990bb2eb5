#include "geometry/winding.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <numbers>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/cpu.hpp"
#include "math/solid_angle.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hp {

double winding_number(const TriMesh& mesh, const Vec3d& p) {
    double total = 0;
    for (const auto& t : mesh.triangles) total += solid_angle(p, mesh.vertices[t[0]], mesh.vertices[t[1]], mesh.vertices[t[2]]);
    return total / (4 * std::numbers::pi);
}

FastWinding::FastWinding(const TriangleBvh& bvh, double beta) : bvh_(bvh), beta_(beta) {
    assert(beta > 1);
    const auto& nodes = bvh.nodes();
    clusters_.resize(nodes.size());
    if (nodes.empty()) return;
    const auto ranges = bvh.slot_ranges();
    const auto &begin = ranges.begin, &end = ranges.end;
    // Every node from its own triangles (O(n log n) in all, independent per node).
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nodes.size(), 64), [&](const tbb::blocked_range<std::size_t>& range) {
        for (std::size_t n = range.begin(); n != range.end(); ++n) {
            // Centroid relative to the box centre, for precision far from the origin.
            const Vec3d o = nodes[n].box.center();
            Vec3d dipole, weighted;
            double area = 0;
            for (std::uint32_t s = begin[n]; s < end[n]; ++s) {
                const auto& c = bvh.corners_at(s);
                const Vec3d av = cross(c[1] - c[0], c[2] - c[0]) * 0.5;
                const double ta = length(av);
                dipole += av;
                area += ta;
                weighted += ((c[0] - o) + (c[1] - o) + (c[2] - o)) * (ta / 3);
            }
            const Vec3d centre = o + (area > 0 ? weighted / area : Vec3d{});
            double radius2 = 0, m[3][3] = {};
            for (std::uint32_t s = begin[n]; s < end[n]; ++s) {
                const auto& c = bvh.corners_at(s);
                const Vec3d av = cross(c[1] - c[0], c[2] - c[0]) * 0.5;
                const Vec3d d = ((c[0] - centre) + (c[1] - centre) + (c[2] - centre)) / 3.0;
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j) m[i][j] += av[i] * d[j];
                for (const Vec3d& v : c) radius2 = std::max(radius2, length2(v - centre));
            }
            Cluster& cl = clusters_[n];
            cl.centre = centre;
            cl.accept2 = beta * beta * radius2;
            cl.dipole = dipole;
            cl.trace = m[0][0] + m[1][1] + m[2][2];
            cl.m[0] = m[0][0], cl.m[1] = m[1][1], cl.m[2] = m[2][2];
            cl.m[3] = 0.5 * (m[0][1] + m[1][0]), cl.m[4] = 0.5 * (m[1][2] + m[2][1]), cl.m[5] = 0.5 * (m[2][0] + m[0][2]);
        }
    });
}

[[gnu::always_inline]] inline double FastWinding::far_term(const Cluster& c, const Vec3d& r, double rho2) {
    const double inv2 = 1 / rho2, inv3 = inv2 / std::sqrt(rho2);
    const double rmr = c.m[0] * r.x * r.x + c.m[1] * r.y * r.y + c.m[2] * r.z * r.z +
                       2 * (c.m[3] * r.x * r.y + c.m[4] * r.y * r.z + c.m[5] * r.z * r.x);
    return (dot(c.dipole, r) + c.trace) * inv3 - 3 * rmr * inv3 * inv2;
}

template <bool kCount>
double FastWinding::evaluate(const Vec3d& q, Stats* stats) const {
    const auto& nodes = bvh_.nodes();
    if (nodes.empty()) return 0;
    double sum = 0;
    std::uint32_t stack[TriangleBvh::kMaxDepth + 2];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const std::uint32_t n = stack[--top];
        const Cluster& c = clusters_[n];
        const Vec3d r = c.centre - q;
        const double rho2 = length2(r);
        if (rho2 >= c.accept2 && rho2 > 0) {
            sum += far_term(c, r, rho2);
            if constexpr (kCount) ++stats->far_clusters;
            continue;
        }
        const TriangleBvh::Node& node = nodes[n];
        if (node.leaf()) {
            for (std::uint32_t s = node.first; s < node.first + node.count; ++s) {
                const auto& t = bvh_.corners_at(s);
                sum += solid_angle_fast(q, t[0], t[1], t[2]);
            }
            if constexpr (kCount) stats->exact_triangles += node.count;
            continue;
        }
        stack[top++] = node.first + 1;
        stack[top++] = node.first;
    }
    return sum / (4 * std::numbers::pi);
}

double FastWinding::at(const Vec3d& q) const { return evaluate<false>(q, nullptr); }

double FastWinding::at(const Vec3d& q, Stats& stats) const { return evaluate<true>(q, &stats); }

void FastWinding::at(std::span<const Vec3d> points, std::span<double> out) const {
    assert(out.size() == points.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, points.size(), 256), [&](const tbb::blocked_range<std::size_t>& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) out[i] = evaluate<false>(points[i], nullptr);
    });
}

#if defined(__x86_64__)
#define HP_WINDING_AVX 1
// at_packet's walk on CPUs with AVX: four points at a time, each lane doing the very operations
// of far_term() and solid_angle_fast() in their order (packed IEEE add, mul, div and sqrt round as
// the scalar ones; no fused multiply-add; fast_atan2_avx is fast_atan2 lane by lane), so each
// lane's value is the scalar one bit for bit.
#pragma GCC push_options
#pragma GCC target("avx")
namespace {
struct AvxLanes {
    static constexpr int kWidth = 4;
    using V = __m256d;
    [[gnu::always_inline]] static V set1(double x) { return _mm256_set1_pd(x); }
    [[gnu::always_inline]] static V gather(const double* p, const std::uint8_t* i) {
        return _mm256_set_pd(p[i[3]], p[i[2]], p[i[1]], p[i[0]]);
    }
    [[gnu::always_inline]] static V add(V a, V b) { return _mm256_add_pd(a, b); }
    [[gnu::always_inline]] static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
    [[gnu::always_inline]] static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
    [[gnu::always_inline]] static V div(V a, V b) { return _mm256_div_pd(a, b); }
    [[gnu::always_inline]] static V sqrt(V a) { return _mm256_sqrt_pd(a); }
    [[gnu::always_inline]] static V atan2(V y, V x) { return fast_atan2_avx(y, x); }
    [[gnu::always_inline]] static int far(V rho2, V accept2) {
        return _mm256_movemask_pd(
            _mm256_and_pd(_mm256_cmp_pd(rho2, accept2, _CMP_GE_OQ), _mm256_cmp_pd(rho2, _mm256_setzero_pd(), _CMP_GT_OQ)));
    }
    [[gnu::always_inline]] static V load(const double* p) { return _mm256_loadu_pd(p); }
    [[gnu::always_inline]] static void store(double* out, V a) { _mm256_storeu_pd(out, a); }
    [[gnu::always_inline]] static V dot(V x0, V y0, V z0, V x1, V y1, V z1) {
        return add(add(mul(x0, x1), mul(y0, y1)), mul(z0, z1));
    }
};
}  // namespace

struct FastWindingPackets {
    // at_packet's walk, sum[i] for the m points (coordinates by component in px, py, pz), with
    // kWidth lanes of points at a time.
    template <class L>
    static void walk(const FastWinding& fw, const double* px, const double* py, const double* pz,
                                                   std::size_t m, double* sum) {
        using V = typename L::V;
        constexpr int W = L::kWidth, kFull = (1 << W) - 1;
        const auto& nodes = fw.bvh_.nodes();
        // Depth first as evaluate(), each entry with the points that still need the node: every
        // point meets its clusters and triangles in evaluate()'s order, so its sum rounds alike.
        struct Entry {
            std::uint32_t node;
            std::uint64_t mask;
        };
        Entry stack[TriangleBvh::kMaxDepth + 2];
        int top = 0;
        stack[top++] = {0, m == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << m) - 1};
        // A node's points as a list of indices, padded to whole lanes with the last one (whose
        // extra lanes are dropped).
        std::uint8_t idx[FastWinding::kPacket + W];
        auto list = [&](std::uint64_t bits) {
            int k = 0;
            for (; bits != 0; bits &= bits - 1) idx[k++] = static_cast<std::uint8_t>(std::countr_zero(bits));
            for (int pad = 0; pad < W; ++pad) idx[k + pad] = idx[k - 1];
            return k;
        };
        while (top > 0) {
            const Entry e = stack[--top];
            const FastWinding::Cluster& c = fw.clusters_[e.node];
            const int k = list(e.mask);
            const V ccx = L::set1(c.centre.x), ccy = L::set1(c.centre.y), ccz = L::set1(c.centre.z), accept2 = L::set1(c.accept2);
            std::uint64_t open = 0;
            for (int h = 0; h < k; h += W) {
                const std::uint8_t* i = idx + h;
                const int valid = k - h >= W ? (1 << W) - 1 : (1 << (k - h)) - 1;
                // W consecutive points (the common case high in the tree): plain loads and stores.
                const bool run = valid == kFull && i[W - 1] - i[0] == W - 1;
                const V qx = run ? L::load(px + i[0]) : L::gather(px, i), qy = run ? L::load(py + i[0]) : L::gather(py, i),
                        qz = run ? L::load(pz + i[0]) : L::gather(pz, i);
                const V rx = L::sub(ccx, qx), ry = L::sub(ccy, qy), rz = L::sub(ccz, qz);
                const V rho2 = L::add(L::add(L::mul(rx, rx), L::mul(ry, ry)), L::mul(rz, rz));
                const int far = L::far(rho2, accept2) & valid;
                if (run) open |= static_cast<std::uint64_t>(kFull & ~far) << i[0];
                else
                    for (int l = 0; l < W; ++l)
                        if ((valid & ~far) >> l & 1) open |= std::uint64_t{1} << i[l];
                if (far == 0) continue;
                // far_term(c, r, rho2).
                const V inv2 = L::div(L::set1(1.0), rho2), inv3 = L::div(inv2, L::sqrt(rho2));
                const V diag = L::add(L::add(L::mul(L::mul(L::set1(c.m[0]), rx), rx), L::mul(L::mul(L::set1(c.m[1]), ry), ry)),
                                      L::mul(L::mul(L::set1(c.m[2]), rz), rz));
                const V offd = L::add(L::add(L::mul(L::mul(L::set1(c.m[3]), rx), ry), L::mul(L::mul(L::set1(c.m[4]), ry), rz)),
                                      L::mul(L::mul(L::set1(c.m[5]), rz), rx));
                const V rmr = L::add(diag, L::mul(L::set1(2.0), offd));
                const V dr = L::add(L::add(L::mul(L::set1(c.dipole.x), rx), L::mul(L::set1(c.dipole.y), ry)), L::mul(L::set1(c.dipole.z), rz));
                const V term = L::sub(L::mul(L::add(dr, L::set1(c.trace)), inv3), L::mul(L::mul(L::mul(L::set1(3.0), rmr), inv3), inv2));
                if (run && far == kFull) {
                    L::store(sum + i[0], L::add(L::load(sum + i[0]), term));  // each lane its own sum[i] += term
                    continue;
                }
                double t[W];
                L::store(t, term);
                for (int l = 0; l < W; ++l)
                    if (far >> l & 1) sum[i[l]] += t[l];
            }
            if (open == 0) continue;
            const TriangleBvh::Node& node = nodes[e.node];
            if (node.leaf()) {
                // solid_angle_fast(q, t0, t1, t2) for each open point, triangle after triangle.
                const int n = list(open);
                for (int h = 0; h < n; h += W) {
                    const std::uint8_t* i = idx + h;
                    const V qx = L::gather(px, i), qy = L::gather(py, i), qz = L::gather(pz, i);
                    const int lanes = std::min(W, n - h);
                    V acc = L::gather(sum, i);
                    for (std::uint32_t s = node.first; s < node.first + node.count; ++s) {
                        const auto& t = fw.bvh_.corners_at(s);
                        const V ax = L::sub(L::set1(t[0].x), qx), ay = L::sub(L::set1(t[0].y), qy), az = L::sub(L::set1(t[0].z), qz);
                        const V bx = L::sub(L::set1(t[1].x), qx), by = L::sub(L::set1(t[1].y), qy), bz = L::sub(L::set1(t[1].z), qz);
                        const V cx = L::sub(L::set1(t[2].x), qx), cy = L::sub(L::set1(t[2].y), qy), cz = L::sub(L::set1(t[2].z), qz);
                        const V la = L::sqrt(L::dot(ax, ay, az, ax, ay, az)), lb = L::sqrt(L::dot(bx, by, bz, bx, by, bz)),
                                lc = L::sqrt(L::dot(cx, cy, cz, cx, cy, cz));
                        const V ux = L::sub(L::mul(by, cz), L::mul(bz, cy)), uy = L::sub(L::mul(bz, cx), L::mul(bx, cz)),
                                uz = L::sub(L::mul(bx, cy), L::mul(by, cx));
                        const V det = L::dot(ax, ay, az, ux, uy, uz);
                        const V den = L::add(L::add(L::add(L::mul(L::mul(la, lb), lc), L::mul(L::dot(ax, ay, az, bx, by, bz), lc)),
                                                    L::mul(L::dot(bx, by, bz, cx, cy, cz), la)),
                                             L::mul(L::dot(cx, cy, cz, ax, ay, az), lb));
                        acc = L::add(acc, L::mul(L::set1(2.0), L::atan2(det, den)));  // each lane's sum += 2 atan2
                    }
                    double a[W];
                    L::store(a, acc);
                    for (int l = 0; l < lanes; ++l) sum[i[l]] = a[l];
                }
                continue;
            }
            stack[top++] = {node.first + 1, open};
            stack[top++] = {node.first, open};
        }
    }
};
#pragma GCC pop_options
#endif

void FastWinding::at_packet(std::span<const Vec3d> points, std::span<double> out) const {
    assert(points.size() <= kPacket && out.size() == points.size());
    const std::size_t m = points.size();
    double sum[kPacket];
    std::fill(sum, sum + m, 0.0);
    const auto& nodes = bvh_.nodes();
    if (nodes.empty() || m == 0) {
#if defined(HP_WINDING_AVX)
    } else if (cpu_has_avx()) {
        double px[kPacket], py[kPacket], pz[kPacket];
        for (std::size_t i = 0; i < m; ++i) px[i] = points[i].x, py[i] = points[i].y, pz[i] = points[i].z;
        FastWindingPackets::walk<AvxLanes>(*this, px, py, pz, m, sum);
#endif
    } else {
        // Depth first as evaluate(), each entry with the points that still need the node: every
        // point meets its clusters and triangles in evaluate()'s order, so its sum rounds alike.
        struct Entry {
            std::uint32_t node;
            std::uint64_t mask;
        };
        Entry stack[TriangleBvh::kMaxDepth + 2];
        int top = 0;
        stack[top++] = {0, m == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << m) - 1};
        while (top > 0) {
            const Entry e = stack[--top];
            const Cluster& c = clusters_[e.node];
            std::uint64_t open = 0;
            for (std::uint64_t bits = e.mask; bits != 0; bits &= bits - 1) {
                const int i = std::countr_zero(bits);
                const Vec3d r = c.centre - points[static_cast<std::size_t>(i)];
                const double rho2 = length2(r);
                if (rho2 >= c.accept2 && rho2 > 0) sum[i] += far_term(c, r, rho2);
                else open |= std::uint64_t{1} << i;
            }
            if (open == 0) continue;
            const TriangleBvh::Node& node = nodes[e.node];
            if (node.leaf()) {
                for (std::uint32_t s = node.first; s < node.first + node.count; ++s) {
                    const auto& t = bvh_.corners_at(s);
                    for (std::uint64_t bits = open; bits != 0; bits &= bits - 1) {
                        const int i = std::countr_zero(bits);
                        sum[i] += solid_angle_fast(points[static_cast<std::size_t>(i)], t[0], t[1], t[2]);
                    }
                }
                continue;
            }
            stack[top++] = {node.first + 1, open};
            stack[top++] = {node.first, open};
        }
    }
    for (std::size_t i = 0; i < m; ++i) out[i] = sum[i] / (4 * std::numbers::pi);
}

bool inside_by_winding(const WindingTree& tree, const TriMesh& mesh, const Vec3d& p) {
    const double w = std::abs(tree(p));
    if (std::abs(w - 0.5) > kWindingTolerance) return w > 0.5;
    return std::abs(winding_number(mesh, p)) > 0.5;
}

namespace {
// Strictly outside, by a margin relative to the box, so that p never lies on the cap.
bool outside_box(const Aabb& b, const Vec3d& p) {
    const Vec3d size = b.size();
    const double margin = 1e-9 * (size.x + size.y + size.z) + 1e-300;
    for (int a = 0; a < 3; ++a)
        if (p[a] < b.min[a] - margin || p[a] > b.max[a] + margin) return true;
    return false;
}
}  // namespace

BoundaryWinding::BoundaryWinding(const TriMesh& mesh) : mesh_(mesh), bvh_(mesh) {
    const auto& nodes = bvh_.nodes();
    const auto ranges = bvh_.slot_ranges();
    const auto &begin = ranges.begin, &end = ranges.end;
    // Per inner node: its net boundary (directed edges a -> b with the multiplicity that
    // does not cancel inside the node), sorted, so that the result is deterministic.
    std::vector<std::vector<std::array<std::uint32_t, 2>>> edges(nodes.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nodes.size(), 16), [&](const tbb::blocked_range<std::size_t>& r) {
        std::vector<std::pair<std::uint64_t, int>> e;
        for (std::size_t n = r.begin(); n != r.end(); ++n) {
            if (nodes[n].leaf()) continue;
            e.clear();
            for (std::uint32_t sl = begin[n]; sl < end[n]; ++sl) {
                const auto& t = mesh_.triangles[bvh_.triangle_at(sl)];
                for (int c = 0; c < 3; ++c) {
                    const std::uint32_t a = t[static_cast<std::size_t>(c)], b = t[static_cast<std::size_t>((c + 1) % 3)];
                    if (a == b) continue;
                    e.push_back(a < b ? std::pair{(std::uint64_t{a} << 32) | b, 1} : std::pair{(std::uint64_t{b} << 32) | a, -1});
                }
            }
            std::sort(e.begin(), e.end());
            auto& out = edges[n];
            for (std::size_t x = 0; x < e.size();) {
                std::size_t y = x;
                int m = 0;
                for (; y < e.size() && e[y].first == e[x].first; ++y) m += e[y].second;
                const std::uint32_t lo = static_cast<std::uint32_t>(e[x].first >> 32), hi = static_cast<std::uint32_t>(e[x].first);
                for (int c = 0; c < std::abs(m); ++c) out.push_back(m > 0 ? std::array{lo, hi} : std::array{hi, lo});
                x = y;
            }
            if (out.size() >= end[n] - begin[n]) out.clear(), out.shrink_to_fit();  // cheaper by triangles
        }
    });
    first_.assign(nodes.size() + 1, 0);
    for (std::size_t n = 0; n < nodes.size(); ++n) first_[n + 1] = first_[n] + static_cast<std::uint32_t>(edges[n].size());
    edges_.reserve(first_.back());
    for (auto& v : edges) edges_.insert(edges_.end(), v.begin(), v.end());
    capped_.resize(nodes.size());
    for (std::size_t n = 0; n < nodes.size(); ++n) capped_[n] = !nodes[n].leaf() && first_[n + 1] > first_[n];
}

double BoundaryWinding::value(const Vec3d& p) const {
    const auto& nodes = bvh_.nodes();
    double total = 0;
    std::uint32_t stack[2 * TriangleBvh::kMaxDepth + 2];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const std::uint32_t n = stack[--top];
        const auto& node = nodes[n];
        if (node.leaf()) {
            for (std::uint32_t sl = node.first; sl < node.first + node.count; ++sl) {
                const auto& c = bvh_.corners_at(sl);
                total += solid_angle(p, c[0], c[1], c[2]);
            }
            continue;
        }
        if (capped_[n] && outside_box(node.box, p)) {
            const Vec3d o = node.box.center();
            for (std::uint32_t e = first_[n]; e < first_[n + 1]; ++e)
                total += solid_angle(p, o, mesh_.vertices[edges_[e][0]], mesh_.vertices[edges_[e][1]]);
            continue;
        }
        stack[top++] = node.first;
        stack[top++] = node.first + 1;
    }
    return total / (4 * std::numbers::pi);
}

bool BoundaryWinding::inside(const Vec3d& p) const {
    const double w = std::abs(value(p));
    if (std::abs(w - 0.5) < kRoundingGuard) return std::abs(winding_number(mesh_, p)) > 0.5;
    return w > 0.5;
}

bool inside_by_winding(const WindingTree& tree, const BoundaryWinding& exact, const Vec3d& p) {
    const double w = std::abs(tree(p));
    if (std::abs(w - 0.5) > kWindingTolerance) return w > 0.5;
    return exact.inside(p);
}

}  // namespace hp
