#pragma once
// lib/query/field — the static object's distance function V(P) for queries (paper 000 eq. 4/5).
//
// V is the trilinear interpolation of the signed distances stored at voxel centres (inside
// positive, world units). We interpolate instead of the paper's "voxel value + local term"
// (eq. 4) or gradient extrapolation (eq. 5) because trilinear interpolation is continuous across
// voxels (no force jumps at voxel faces) and exact for planes; eq. 5 is kept for comparison in
// `gradient_value`. Outside the grid's centre box, V(P) = V(clamp(P)) - |P - clamp(P)|, a
// continuous extension that keeps decreasing away from the object.
//
// Lipschitz bound: `lipschitz()` is a bound L on |V(P) - V(Q)| / |P - Q| over all space, computed
// once from the samples (per cell, the gradient of a trilinear interpolant is bounded by the
// largest difference along each axis; combined with the slope 1 of the extension outside the grid
// as sqrt(L_in^2 + 1), see field.cpp). The query's
// sphere test uses it, which is what makes the hierarchical traversal find exactly the colliding
// points that brute force finds.
#include <span>
#include <vector>

#include "geometry/vec.hpp"
#include "voxel/grid.hpp"

namespace hp {

class DistanceSampler {
public:
    DistanceSampler() = default;
    // `values`: one signed distance per voxel of `grid` (x fastest), inside positive.
    DistanceSampler(const GridSpec& grid, std::vector<double> values);

    const GridSpec& grid() const { return grid_; }
    double value(const Vec3d& p) const;
    // Paper eq. 5: V(C) + grad(C) . (P - C) at the nearest voxel centre C, with the gradient
    // by central differences; defined inside the grid only (clamped outside).
    double gradient_value(const Vec3d& p) const;
    double lipschitz() const { return lipschitz_; }
    double max_value() const { return max_value_; }
    // The largest value on the grid's six border faces of voxels. Negative when the static object
    // stays inside the grid, which makes the extension outside the grid safe (never a contact).
    double border_max_value() const;
    const std::vector<double>& values() const { return values_; }

private:
    double at(int i, int j, int k) const { return values_[grid_.index(i, j, k)]; }

    GridSpec grid_;
    std::vector<double> values_;
    double lipschitz_ = 1;
    double max_value_ = 0;
};

}  // namespace hp
