#pragma once
// The voxels a triangle marks as surface (internal to lib/voxel; used by the dense voxelizer,
// surface.cpp, and the narrow band, band.cpp): those whose closed cube overlaps the triangle by
// the 13-axis SAT (geometry/sat.hpp), among the voxels of the triangle's bounding box.
// Method: the SAT's plane axis only passes voxels whose centre lies within r = (s/2)(|n_x| + |n_y|
// + |n_z|) of the triangle's plane (n its normal); along the normal's dominant axis that is a
// short run of each row of the box, found by one division. The run is widened by a whole voxel
// on either side (far beyond the SAT's rounding and slack), so every voxel left out would fail
// the SAT's plane test: the same voxels as testing the whole box, with a fraction of the tests.
#include <algorithm>
#include <cmath>

#include "geometry/sat.hpp"
#include "voxel/grid.hpp"

namespace hp::voxel_detail {

// Calls f(i, j, k) for every voxel of `g` whose closed cube overlaps triangle (a, b, c), except
// those for which skip(i, j, k) (asked first, to spare the SAT test) is true.
template <class Skip, class F>
void for_each_surface_voxel(const GridSpec& g, const Vec3d& a, const Vec3d& b, const Vec3d& c, Skip&& skip, F&& f) {
    const double s = g.voxel_size;
    const Vec3d half{s / 2, s / 2, s / 2};
    int lo[3], hi[3];
    {
        const Vec3d bl = cwise_min(a, cwise_min(b, c)), bh = cwise_max(a, cwise_max(b, c));
        for (int axis = 0; axis < 3; ++axis) {
            // Voxels whose closed extent [o + i s, o + (i+1) s] meets [lo, hi].
            lo[axis] = std::max(0, static_cast<int>(std::ceil((bl[axis] - g.origin[axis]) / s)) - 1);
            hi[axis] = std::min(g.dims[axis] - 1, static_cast<int>(std::floor((bh[axis] - g.origin[axis]) / s)));
        }
    }
    const Vec3d n = cross(b - a, c - a);
    int d = 0;
    for (int axis = 1; axis < 3; ++axis)
        if (std::abs(n[axis]) > std::abs(n[d])) d = axis;
    const double nd = n[d];
    const double r = half.x * (std::abs(n.x) + std::abs(n.y) + std::abs(n.z));
    // A degenerate or non-finite plane: the whole box.
    const bool plane = std::isfinite(r) && std::isfinite(dot(n, a)) && std::abs(nd) > 0 && r > 0;
    const int u = (d + 1) % 3, v = (d + 2) % 3;
    int idx[3];
    for (idx[v] = lo[v]; idx[v] <= hi[v]; ++idx[v])
        for (idx[u] = lo[u]; idx[u] <= hi[u]; ++idx[u]) {
            int first = lo[d], last = hi[d];
            idx[d] = first;
            if (plane) {
                // n . (x - a) = q + n_d x_d over the row's centres x; |.| <= r only for x_d within
                // [(-r - q) / n_d, (r - q) / n_d], widened by one voxel.
                const Vec3d x0 = g.center(idx[0], idx[1], idx[2]);
                const double q = n[u] * (x0[u] - a[u]) + n[v] * (x0[v] - a[v]) - nd * a[d];
                const double pad = std::abs(nd) * s + 1e-9 * (std::abs(q) + r);
                double t0 = (-r - pad - q) / nd, t1 = (r + pad - q) / nd;
                if (t0 > t1) std::swap(t0, t1);
                // Centre x_d = o_d + (i + 1/2) s.
                const double i0 = std::floor((t0 - g.origin[d]) / s - 0.5), i1 = std::ceil((t1 - g.origin[d]) / s - 0.5);
                if (i0 > static_cast<double>(first)) first = i0 > static_cast<double>(last) ? last + 1 : static_cast<int>(i0);
                if (i1 < static_cast<double>(last)) last = i1 < static_cast<double>(first) ? first - 1 : static_cast<int>(i1);
            }
            for (idx[d] = first; idx[d] <= last; ++idx[d])
                if (!skip(idx[0], idx[1], idx[2]) && triangle_box_overlap(g.center(idx[0], idx[1], idx[2]), half, a, b, c))
                    f(idx[0], idx[1], idx[2]);
        }
}

}  // namespace hp::voxel_detail
