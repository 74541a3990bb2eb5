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
// closest_point_on_triangle(p, t.a, t.b, t.c), the same bits, without the triangle's test.
ClosestPoint closest_point_on_triangle(const Vec3d& p, const PreparedTriangle& t);

// Closest point on the segment from v_ia = s to v_ib = t (edge `edge` of a triangle): the edge
// feature inside, vertex ia or ib at the ends (a zero-length segment gives vertex ia).
ClosestPoint closest_point_on_segment(const Vec3d& p, const Vec3d& s, const Vec3d& t, int ia, int ib, int edge);

}  // namespace hp
