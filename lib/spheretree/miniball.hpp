#pragma once
// Smallest enclosing ball of a point set in 3D (the minimal bounding spheres of the
// point-sphere tree, Sagardia et al. 2014, section 2.1.2).
//
// Algorithm: Welzl's randomized recursion in Gärtner's move-to-front form with pivoting
// ("Fast and robust smallest enclosing balls", 1999): expected linear time, at most 4 support
// points. The circumsphere of a support set is solved in the affine hull of its points, so
// co-planar and co-linear supports are exact cases, not failures; a point that is (numerically)
// affinely dependent on the current support is never pushed (it already lies on the sphere).
// Duplicates are harmless.
//
// Guarantee: every input point lies inside the returned ball. The radius is finally set to the
// largest distance from the centre to an input point, so containment holds in floating point and
// the radius exceeds the exact minimum only by rounding (relative ~1e-12 on sane inputs).
// Deterministic: the result depends only on the input order.
#include <cstddef>
#include <span>

#include "math/vec.hpp"

namespace hp {

struct Ball {
    Vec3d center;
    double radius = -1;  // -1: the empty ball (no points)
};

// How far from its centre a point counts as inside a tree's ball: its radius with the rounding
// tolerance the tree loader checks (tree_covers_points) and VPS's sphere bounds rely on.
inline double covering_radius(const Ball& b) { return b.radius * (1 + 1e-9) + 1e-12; }

// Smallest ball enclosing `points`. O(n) expected; `points` is not modified.
Ball minimal_enclosing_ball(std::span<const Vec3d> points);

// Smallest ball whose boundary passes through the 1–4 given points and whose centre lies in
// their affine hull (the circumsphere within the hull). Returns radius -1 when the points are
// affinely dependent (e.g. 3 co-linear points) beyond what the hull dimension allows.
Ball circumsphere(std::span<const Vec3d> points);

}  // namespace hp
