#pragma once
// lib/exact/predicates — exact static tests on double coordinates: the sign of the 3D and 2D
// orientation determinants (a floating-point filter, then exact expansion arithmetic: two-sum and
// two-product with FMA, Shewchuk 1997), and whether two closed triangles intersect.
//
// These are the reference the continuous tests (exact.hpp) are checked against: a bisection over
// triangles_intersect() on the moved coordinates finds the first contact independently of the
// Plücker formulas. Exact means the sign is that of the real determinant of the given doubles;
// the moved coordinates themselves are rounded when the caller computes them.
#include <array>

#include "math/vec.hpp"

namespace hp::exact {

// Sign (-1, 0, +1) of dot(cross(b - a, c - a), d - a): +1 when d lies on the side of the plane
// (a, b, c) that its normal (counter-clockwise a, b, c) points to.
int orient3d(const Vec3d& a, const Vec3d& b, const Vec3d& c, const Vec3d& d);

// Sign of cross(b - a, c - a) in the plane of axes (i, j): +1 counter-clockwise.
int orient2d(double ax, double ay, double bx, double by, double cx, double cy);

using Triangle = std::array<Vec3d, 3>;

// Whether the two closed triangles share a point (touching counts). Non-degenerate triangles;
// coplanar pairs are decided in the plane.
bool triangles_intersect(const Triangle& p, const Triangle& q);

}  // namespace hp::exact
