#pragma once
// Closest point on a triangle to a point (Ericson, Real-Time Collision Detection, 5.1.5), with
// the feature it lies on: the face interior, an edge (i, i+1 mod 3) or a vertex i. Degenerate
// triangles (needles, points) fall back to the closest of their edges and vertices.
#include <cstdint>

#include "geometry/vec.hpp"

namespace hp {

enum class FeatureType : std::uint8_t { face = 0, edge = 1, vertex = 2 };

struct ClosestPoint {
    Vec3d point;
    double distance2 = 0;
    FeatureType type = FeatureType::face;
    int index = 0;  // edge i = (v_i, v_{i+1 mod 3}), or vertex i; 0 for the face
};

ClosestPoint closest_point_on_triangle(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c);

}  // namespace hp
