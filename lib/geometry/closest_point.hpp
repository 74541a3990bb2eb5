#pragma once
// Closest point on a triangle to a point (Ericson, Real-Time Collision Detection, 5.1.5: Voronoi
// region tests on dot products), with the feature it lies on: the face interior, edge i from
// v_i to v_{i+1 mod 3}, or vertex i.
//
// Robustness: a triangle that is badly conditioned at v_0 (|ab x ac|^2 <= 1e-14 |ab|^2 |ac|^2:
// needles, slivers, collapsed points, where the barycentric solve keeps no significant digits) is
// treated as the union of its three edges; so is a face result whose region sums cancelled. The
// edge answer is exact for the edges and off from the true one by at most the triangle's inradius
// (< 2.5e-8 times its shortest edge at v_0). Never NaN for finite input. Cost: a few dozen flops.
#include <cstdint>

#include "math/vec.hpp"

namespace hp {

enum class FeatureType : std::uint8_t { face = 0, edge = 1, vertex = 2 };

struct ClosestPoint {
    Vec3d point;
    double distance2 = 0;
    FeatureType type = FeatureType::face;
    int index = 0;  // edge i = (v_i, v_{i+1 mod 3}), or vertex i; 0 for the face
};

ClosestPoint closest_point_on_triangle(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c);

// A triangle's corners and its badly-conditioned test (the part of closest_point_on_triangle that
// does not depend on the point), for many queries against the same triangle.
struct PreparedTriangle {
    Vec3d a, b, c;
    bool degenerate = false;  // closest_point_on_triangle takes the union of the edges
};
PreparedTriangle prepare_triangle(const Vec3d& a, const Vec3d& b, const Vec3d& c);

// The closest of the three edges (closest_point_on_triangle's answer for a badly conditioned triangle).
ClosestPoint closest_point_on_edges(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c);

namespace detail {
// closest_point_on_triangle past the relative area test (inline: the dense field's passes call it
// per voxel).
[[gnu::always_inline]] inline ClosestPoint closest_conditioned(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const Vec3d ab = b - a, ac = c - a, ap = p - a;
    ClosestPoint r;
    auto vertex = [&](const Vec3d& v, int i) {
        r.point = v, r.type = FeatureType::vertex, r.index = i;
        r.distance2 = length2(p - v);
        return r;
    };
    auto edge = [&](const Vec3d& from, const Vec3d& dir, double t, int i) {
        r.point = from + dir * t, r.type = FeatureType::edge, r.index = i;
        r.distance2 = length2(p - r.point);
        return r;
    };
    const double d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0 && d2 <= 0) return vertex(a, 0);
    const Vec3d bp = p - b;
    const double d3 = dot(ab, bp), d4 = dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) return vertex(b, 1);
    const double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) return edge(a, ab, d1 / (d1 - d3), 0);
    const Vec3d cp = p - c;
    const double d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) return vertex(c, 2);
    const double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) return edge(a, ac, d2 / (d2 - d6), 2);
    const double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) return edge(b, c - b, (d4 - d3) / ((d4 - d3) + (d5 - d6)), 1);
    const double sum = va + vb + vc;
    if (!(sum > 0)) return closest_point_on_edges(p, a, b, c);  // cancellation in the region tests
    const double v = vb / sum, w = vc / sum;
    r.point = a + ab * v + ac * w;
    r.type = FeatureType::face;
    r.index = 0;
    r.distance2 = length2(p - r.point);
    return r;
}
}  // namespace detail

// closest_point_on_triangle(p, t.a, t.b, t.c), the same bits, without the triangle's test.
inline ClosestPoint closest_point_on_triangle(const Vec3d& p, const PreparedTriangle& t) {
    return t.degenerate ? closest_point_on_edges(p, t.a, t.b, t.c) : detail::closest_conditioned(p, t.a, t.b, t.c);
}

// Closest point on the segment from v_ia = s to v_ib = t (edge `edge` of a triangle): the edge
// feature inside, vertex ia or ib at the ends (a zero-length segment gives vertex ia).
ClosestPoint closest_point_on_segment(const Vec3d& p, const Vec3d& s, const Vec3d& t, int ia, int ib, int edge);

}  // namespace hp
