#pragma once
// Generalized winding number (Jacobson et al. 2013): the sum over triangles of the signed solid
// angle they subtend at a point, divided by 4 pi. 1 inside a closed outward-wound surface, 0
// outside, -1 inside an inward-wound one; for open surfaces a smooth value in between, so
// |w| > 0.5 classifies "inside" where a person would.
// Solid angle of a triangle: Van Oosterom & Strackee (1983). Cost: O(triangles) per point.
#include "geometry/vec.hpp"
#include "mesh/mesh.hpp"

namespace hp {

double winding_number(const TriMesh& mesh, const Vec3d& p);

}  // namespace hp
