#include "geometry/sat.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hp {

namespace {
// Separated along `axis` when the triangle's projection interval misses [-r, r].
inline bool separated(const Vec3d& axis, const Vec3d& v0, const Vec3d& v1, const Vec3d& v2, const Vec3d& half) {
    double p0 = dot(axis, v0), p1 = dot(axis, v1), p2 = dot(axis, v2);
    double r = half.x * std::abs(axis.x) + half.y * std::abs(axis.y) + half.z * std::abs(axis.z);
    double lo = std::min({p0, p1, p2}), hi = std::max({p0, p1, p2});
    return lo > r || hi < -r;
}
}  // namespace

bool triangle_box_overlap(const Vec3d& center, const Vec3d& box_half, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    // Closed boxes, with the half extents widened by a few rounding units of the coordinates: a
    // box centre computed as origin + (i + 1/2) s and the shift of the vertices to it each round,
    // so a triangle lying exactly on a face shared by two voxels could otherwise miss both (a
    // flat cap on a voxel boundary would get no surface voxels at all).
    const double scale = std::max({std::abs(center.x), std::abs(center.y), std::abs(center.z), box_half.x, box_half.y, box_half.z});
    const double slack = 16 * std::numeric_limits<double>::epsilon() * scale;
    const Vec3d half{box_half.x + slack, box_half.y + slack, box_half.z + slack};
    const Vec3d v0 = a - center, v1 = b - center, v2 = c - center;
    // Box normals: the triangle's bounding box against the box.
    for (int k = 0; k < 3; ++k) {
        double lo = std::min({v0[k], v1[k], v2[k]}), hi = std::max({v0[k], v1[k], v2[k]});
        if (lo > half[k] || hi < -half[k]) return false;
    }
    const Vec3d e0 = v1 - v0, e1 = v2 - v1, e2 = v0 - v2;
    // Edge x box-axis cross products (9 axes).
    const Vec3d edges[3] = {e0, e1, e2};
    for (const Vec3d& e : edges) {
        if (separated(Vec3d{0, -e.z, e.y}, v0, v1, v2, half)) return false;  // x_axis x e
        if (separated(Vec3d{e.z, 0, -e.x}, v0, v1, v2, half)) return false;  // y_axis x e
        if (separated(Vec3d{-e.y, e.x, 0}, v0, v1, v2, half)) return false;  // z_axis x e
    }
    // Triangle normal: the plane against the box.
    const Vec3d n = cross(e0, e1);
    const double r = half.x * std::abs(n.x) + half.y * std::abs(n.y) + half.z * std::abs(n.z);
    return std::abs(dot(n, v0)) <= r;
}

}  // namespace hp
