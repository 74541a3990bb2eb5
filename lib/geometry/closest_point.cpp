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

// The closest of the three edges (exact for any triangle, used for degenerate ones).
ClosestPoint closest_point_on_edges(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    ClosestPoint best = closest_point_on_segment(p, a, b, 0, 1, 0);
    for (ClosestPoint e : {closest_point_on_segment(p, b, c, 1, 2, 1), closest_point_on_segment(p, c, a, 2, 0, 2)})
        if (e.distance2 < best.distance2) best = e;
    return best;
}

PreparedTriangle prepare_triangle(const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const Vec3d ab = b - a, ac = c - a;
    // Relative area test: sin^2 of the angle at a below 1e-14 (a few hundred ulps of the
    // products of the solve) means the barycentric solve has no significant digits left.
    return {a, b, c, length2(cross(ab, ac)) <= 1e-14 * length2(ab) * length2(ac)};
}

ClosestPoint closest_point_on_triangle(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    return closest_point_on_triangle(p, prepare_triangle(a, b, c));
}

}  // namespace hp
