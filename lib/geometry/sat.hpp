#pragma once
// Triangle / axis-aligned box overlap by the separating axis theorem (Akenine-Möller 2001): the
// 3 box normals, the triangle normal and the 9 cross products of triangle edges with box axes.
// Boxes are closed: a triangle that only touches the box (a face, edge or corner) overlaps it,
// within a slack of 16 rounding units of the coordinates (so a face exactly on a boundary shared
// by two voxels touches both, whatever the rounding of their centres).
// Degenerate triangles (segments, points) are handled: zero axes never separate.
// Cost: at most 13 projections, no allocation.
#include "math/vec.hpp"

namespace hp {

// True when triangle (a, b, c) and the box with centre `center` and half sizes `half` overlap.
bool triangle_box_overlap(const Vec3d& center, const Vec3d& half, const Vec3d& a, const Vec3d& b, const Vec3d& c);

}  // namespace hp
