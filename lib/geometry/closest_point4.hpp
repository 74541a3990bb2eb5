#pragma once
// Four closest-point queries at once: closest_point_on_triangle for four (point, triangle) pairs,
// with the same results bit for bit. Every lane evaluates all of Ericson's region tests and the
// candidate points of every region with the same operations in the same order as the scalar
// function (four doubles per vector; no fused multiply-add, as the build's targets have none),
// then takes, per lane, the first region in the scalar function's order. Lanes whose triangle is
// badly conditioned, or whose face sums cancelled (the scalar function's edge fall-back), are
// computed by the scalar function. Inline, so that a caller's target clone (e.g. AVX2) compiles it
// with its own vector width.
#include <array>

#include "geometry/closest_point.hpp"

namespace hp {

// The vectors below never cross a call (everything is inlined): their ABI does not matter.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace closest4_detail {
typedef double D4 __attribute__((vector_size(32)));
typedef long long M4 __attribute__((vector_size(32)));
struct V3 {
    D4 x, y, z;
};
using Tri3 = std::array<Vec3d, 3>;
// Lane l of each coordinate from point l (always inlined: no vector crosses a call).
[[gnu::always_inline]] inline V3 gather(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d) {
    return {D4{a.x, b.x, c.x, d.x}, D4{a.y, b.y, c.y, d.y}, D4{a.z, b.z, c.z, d.z}};
}
[[gnu::always_inline]] inline V3 sub(const V3& a, const V3& b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
[[gnu::always_inline]] inline D4 dot(const V3& a, const V3& b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
[[gnu::always_inline]] inline V3 along(const V3& from, const V3& dir, const D4& t) {
    return {from.x + dir.x * t, from.y + dir.y * t, from.z + dir.z * t};
}
[[gnu::always_inline]] inline V3 pick(const M4& m, const V3& a, const V3& b) {
    return {m ? a.x : b.x, m ? a.y : b.y, m ? a.z : b.z};
}

// The four queries past the relative area test (lanes `degenerate` and those whose face sums
// cancelled take scalar(l), the scalar function).
template <class Scalar>
[[gnu::always_inline]] inline void closest4(const V3& P, const V3& A, const V3& B, const V3& C, const M4& degenerate,
                                            Scalar&& scalar, ClosestPoint out[4]) {
    const V3 ab = sub(B, A), ac = sub(C, A), ap = sub(P, A);
    const D4 d1 = dot(ab, ap), d2 = dot(ac, ap);
    const V3 bp = sub(P, B);
    const D4 d3 = dot(ab, bp), d4 = dot(ac, bp);
    const D4 vc = d1 * d4 - d3 * d2;
    const V3 cp = sub(P, C);
    const D4 d5 = dot(ab, cp), d6 = dot(ac, cp);
    const D4 vb = d5 * d2 - d1 * d6;
    const D4 va = d3 * d6 - d5 * d4;
    const D4 e43 = d4 - d3, e56 = d5 - d6;
    const D4 zero{};
    // The regions in the scalar function's order: vertex a, vertex b, edge ab, vertex c, edge ca
    // (index 2), edge bc (index 1), then the face.
    const M4 in_a = (d1 <= zero) & (d2 <= zero);
    const M4 in_b = (d3 >= zero) & (d4 <= d3);
    const M4 in_ab = (vc <= zero) & (d1 >= zero) & (d3 <= zero);
    const M4 in_c = (d6 >= zero) & (d5 <= d6);
    const M4 in_ac = (vb <= zero) & (d2 >= zero) & (d6 <= zero);
    const M4 in_bc = (va <= zero) & (e43 >= zero) & (e56 >= zero);
    const D4 sum = va + vb + vc;
    const M4 in_face = sum > zero;
    // Every region's point (lanes outside a region compute values that are never taken).
    const D4 v = vb / sum, w = vc / sum;
    V3 q = along(along(A, ab, v), ac, w);
    q = pick(in_bc, along(B, sub(C, B), e43 / (e43 + e56)), q);
    q = pick(in_ac, along(A, ac, d2 / (d2 - d6)), q);
    q = pick(in_c, C, q);
    q = pick(in_ab, along(A, ab, d1 / (d1 - d3)), q);
    q = pick(in_b, B, q);
    q = pick(in_a, A, q);
    const V3 r = sub(P, q);
    const D4 dist2 = dot(r, r);
    for (int l = 0; l < 4; ++l) {
        ClosestPoint& o = out[l];
        const bool use_scalar = degenerate[l] || !(in_a[l] || in_b[l] || in_ab[l] || in_c[l] || in_ac[l] || in_bc[l] || in_face[l]);
        if (use_scalar) {
            o = scalar(l);
            continue;
        }
        o.point = {q.x[l], q.y[l], q.z[l]};
        o.distance2 = dist2[l];
        if (in_a[l]) o.type = FeatureType::vertex, o.index = 0;
        else if (in_b[l]) o.type = FeatureType::vertex, o.index = 1;
        else if (in_ab[l]) o.type = FeatureType::edge, o.index = 0;
        else if (in_c[l]) o.type = FeatureType::vertex, o.index = 2;
        else if (in_ac[l]) o.type = FeatureType::edge, o.index = 2;
        else if (in_bc[l]) o.type = FeatureType::edge, o.index = 1;
        else o.type = FeatureType::face, o.index = 0;
    }
}
}  // namespace closest4_detail

// out[l] = closest_point_on_triangle(p[l], t[l][0], t[l][1], t[l][2]) for l = 0..3.
[[gnu::always_inline]] inline void closest_points_on_triangles4(const Vec3d* const p[4], const std::array<Vec3d, 3>* const t[4],
                                                                ClosestPoint out[4]) {
    using namespace closest4_detail;
    const Tri3& t0 = *t[0], &t1 = *t[1], &t2 = *t[2], &t3 = *t[3];
    const V3 A = gather(t0[0], t1[0], t2[0], t3[0]);
    const V3 B = gather(t0[1], t1[1], t2[1], t3[1]);
    const V3 C = gather(t0[2], t1[2], t2[2], t3[2]);
    const V3 ab = sub(B, A), ac = sub(C, A);
    // The relative area test of closest_point_on_triangle: such lanes take the scalar function.
    const V3 n{ab.y * ac.z - ab.z * ac.y, ab.z * ac.x - ab.x * ac.z, ab.x * ac.y - ab.y * ac.x};
    const M4 degenerate = dot(n, n) <= 1e-14 * dot(ab, ab) * dot(ac, ac);
    closest4(gather(*p[0], *p[1], *p[2], *p[3]), A, B, C, degenerate,
             [&](int l) { return closest_point_on_triangle(*p[l], (*t[l])[0], (*t[l])[1], (*t[l])[2]); }, out);
}

// out[l] = closest_point_on_triangle(p[l], *t[l]) for l = 0..3 (prepared triangles: no relative
// area test per query).
[[gnu::always_inline]] inline void closest_points_on_triangles4(const Vec3d* const p[4], const PreparedTriangle* const t[4],
                                                                ClosestPoint out[4]) {
    using namespace closest4_detail;
    const PreparedTriangle &t0 = *t[0], &t1 = *t[1], &t2 = *t[2], &t3 = *t[3];
    const M4 degenerate{-static_cast<long long>(t0.degenerate), -static_cast<long long>(t1.degenerate),
                        -static_cast<long long>(t2.degenerate), -static_cast<long long>(t3.degenerate)};
    closest4(gather(*p[0], *p[1], *p[2], *p[3]), gather(t0.a, t1.a, t2.a, t3.a), gather(t0.b, t1.b, t2.b, t3.b),
             gather(t0.c, t1.c, t2.c, t3.c), degenerate, [&](int l) { return closest_point_on_triangle(*p[l], *t[l]); }, out);
}

#pragma GCC diagnostic pop

}  // namespace hp
