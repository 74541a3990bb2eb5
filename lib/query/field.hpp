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
// Local Lipschitz bounds: one bad spot (an open mesh's hole, where inside voxels meet outside
// ones across the opening, makes the field jump by tens of voxels) would make a global bound
// useless for pruning. `lipschitz(center, radius)` bounds |V(P) - V(Q)| / |P - Q| for P, Q in the
// ball only: inside one cell the interpolant's partial derivative along an axis is a bilinear
// blend of the cell's four edge differences along that axis, so |grad V| <= sqrt(gx^2 + gy^2 +
// gz^2) / s with g_a the largest |edge difference| along a; a segment inside the ball's box
// crosses only cells that meet the box, so the largest cell bound over those cells holds along
// it. The cell bounds are kept as maxima over blocks of 4^3 cells in a pyramid (each level
// halves the blocks per axis); a ball reads at most 8 blocks of the level where its box spans
// at most two blocks per axis. When the ball leaves the grid's centre box the extension's
// slope combines as below (sqrt(L^2 + 1), the projection of the ball lies in the clamped box).
//
// Global bound: `lipschitz()` is a bound L on |V(P) - V(Q)| / |P - Q| over all space, computed
// once from the samples (per cell, the gradient of a trilinear interpolant is bounded by the
// largest difference along each axis; combined with the slope 1 of the extension outside the grid
// as sqrt(L_in^2 + 1), see field.cpp). The query's
// sphere test uses it, which is what makes the hierarchical traversal find exactly the colliding
// points that brute force finds.
#include <array>
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
    // grad V at p: the interpolant's gradient (central differences of value() over +-s/1000, exact
    // inside a cell where V is linear along each axis); points towards increasing V (into the
    // static object). Six value() calls on the cell of p; defined in field_gradient.cpp.
    Vec3d gradient(const Vec3d& p) const;
    double lipschitz() const { return lipschitz_; }
    // A bound on |V(P) - V(Q)| / |P - Q| for P and Q in the ball (center, radius); never above
    // lipschitz().
    double lipschitz(const Vec3d& center, double radius) const;
    double max_value() const { return max_value_; }
    // The largest value on the grid's six border faces of voxels. Negative when the static object
    // stays inside the grid, which makes the extension outside the grid safe (never a contact).
    double border_max_value() const;
    const std::vector<double>& values() const { return values_; }

private:
    double at(int i, int j, int k) const { return values_[grid_.index(i, j, k)]; }

    void build_local_bounds();

    GridSpec grid_;
    std::vector<double> values_;
    // Pyramid of per-block maxima of the cell gradient bounds (already divided by s): level m
    // has blocks of (4 * 2^m)^3 cells, dims `pyramid_dims_[m]`, x fastest.
    std::vector<std::vector<float>> pyramid_;
    std::vector<std::array<int, 3>> pyramid_dims_;
    double lipschitz_ = 1;
    double max_value_ = 0;
};

}  // namespace hp
