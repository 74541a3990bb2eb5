#include "geometry/closest_point.hpp"

#include <algorithm>

namespace hp {

ClosestPoint closest_point_on_segment(const Vec3d& p, const Vec3d& s, const Vec3d& t, int ia, int ib, int edge) {
    const Vec3d st = t - s;
    const double len2 = length2(st);
    const double u = len2 > 0 ? std::clamp(dot(p - s, st) / len2, 0.0, 1.0) : 0.0;
    ClosestPoint r;
    if (u <= 0) {
        r.point = s, r.type = FeatureType::vertex, r.index = ia;
    } else if (u >= 1) {
        r.point = t, r.type = FeatureType::vertex, r.index = ib;
    } else {
        r.point = s + st * u, r.type = FeatureType::edge, r.index = edge;
    }
    r.distance2 = length2(p - r.point);
    return r;
}

namespace {
// The closest of the three edges (exact for any triangle, used for degenerate ones).
ClosestPoint on_edges(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    ClosestPoint best = closest_point_on_segment(p, a, b, 0, 1, 0);
    for (ClosestPoint e : {closest_point_on_segment(p, b, c, 1, 2, 1), closest_point_on_segment(p, c, a, 2, 0, 2)})
        if (e.distance2 < best.distance2) best = e;
    return best;
}

// closest_point_on_triangle past the badly-conditioned test.
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
    if (!(sum > 0)) return on_edges(p, a, b, c);  // cancellation in the region tests
    const double v = vb / sum, w = vc / sum;
    r.point = a + ab * v + ac * w;
    r.type = FeatureType::face;
    r.index = 0;
    r.distance2 = length2(p - r.point);
    return r;
}
}  // namespace

PreparedTriangle prepare_triangle(const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const Vec3d ab = b - a, ac = c - a;
    return {a, b, c, length2(cross(ab, ac)) <= 1e-14 * length2(ab) * length2(ac)};
}

ClosestPoint closest_point_on_triangle(const Vec3d& p, const PreparedTriangle& t) {
    return t.degenerate ? on_edges(p, t.a, t.b, t.c) : closest_conditioned(p, t.a, t.b, t.c);
}

ClosestPoint closest_point_on_triangle(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const Vec3d ab = b - a, ac = c - a;
    // Relative area test: sin^2 of the angle at a below 1e-14 (a few hundred ulps of the
    // products below) means the barycentric solve has no significant digits left.
    if (length2(cross(ab, ac)) <= 1e-14 * length2(ab) * length2(ac)) return on_edges(p, a, b, c);
    return closest_conditioned(p, a, b, c);
}

}  // namespace hp
