#include "geometry/closest_point.hpp"

#include <algorithm>

namespace hp {

namespace {
// Closest point on segment [a, b]: feature edge `edge`, or a vertex at an end.
ClosestPoint on_segment(const Vec3d& p, const Vec3d& a, const Vec3d& b, int ia, int ib, int edge) {
    Vec3d ab = b - a;
    double len2 = length2(ab);
    double t = len2 > 0 ? std::clamp(dot(p - a, ab) / len2, 0.0, 1.0) : 0.0;
    ClosestPoint r;
    r.point = a + ab * t;
    r.distance2 = length2(p - r.point);
    if (t <= 0) r.type = FeatureType::vertex, r.index = ia;
    else if (t >= 1) r.type = FeatureType::vertex, r.index = ib;
    else r.type = FeatureType::edge, r.index = edge;
    return r;
}
}  // namespace

ClosestPoint closest_point_on_triangle(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const Vec3d ab = b - a, ac = c - a, ap = p - a;
    if (length2(cross(ab, ac)) == 0) {
        // Degenerate: the best of the three edges.
        ClosestPoint best = on_segment(p, a, b, 0, 1, 0);
        for (ClosestPoint e : {on_segment(p, b, c, 1, 2, 1), on_segment(p, c, a, 2, 0, 2)})
            if (e.distance2 < best.distance2) best = e;
        return best;
    }
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
    double d1 = dot(ab, ap), d2 = dot(ac, ap);
    if (d1 <= 0 && d2 <= 0) return vertex(a, 0);
    const Vec3d bp = p - b;
    double d3 = dot(ab, bp), d4 = dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) return vertex(b, 1);
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) return edge(a, ab, d1 / (d1 - d3), 0);
    const Vec3d cp = p - c;
    double d5 = dot(ab, cp), d6 = dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) return vertex(c, 2);
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) return edge(a, ac, d2 / (d2 - d6), 2);
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) return edge(b, c - b, (d4 - d3) / ((d4 - d3) + (d5 - d6)), 1);
    double denom = 1.0 / (va + vb + vc);
    double v = vb * denom, w = vc * denom;
    r.point = a + ab * v + ac * w;
    r.type = FeatureType::face;
    r.index = 0;
    r.distance2 = length2(p - r.point);
    return r;
}

}  // namespace hp
