#pragma once
// The voxels a triangle marks as surface (internal to lib/voxel; used by the dense voxelizer,
// surface.cpp, and the narrow band, band.cpp): those whose closed cube overlaps the triangle by
// the 13-axis SAT (geometry/sat.hpp), among the voxels of the triangle's bounding box.
// Method: the SAT's plane axis only passes voxels whose centre lies within r = (s/2)(|n_x| + |n_y|
// + |n_z|) of the triangle's plane (n its normal); along the normal's dominant axis that is a
// short run of each row of the box, found by one division. The run is widened by a millionth of
// the magnitudes involved (the SAT's rounding and slack are some 1e-15 of them), so every voxel
// left out would fail the SAT's plane test. Rows whose cross-section misses the triangle's projection (the SAT's
// three edge axes across the row's direction, the same for the whole row) are skipped whole.
// The same voxels as testing the whole box, with a fraction of the tests.
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
    // The SAT's three axes (axis d) x (edge) do not involve the centre's d coordinate: a row along
    // d whose square [x_u +- s/2] x [x_v +- s/2] is separated from the triangle's projection on the
    // (u, v) plane by one of them, by a margin far beyond the SAT's rounding and slack, holds no
    // surface voxel. Per edge: the axis (au, av) across it, the vertices' projections on it.
    const double pu[3] = {a[u], b[u], c[u]}, pv[3] = {a[v], b[v], c[v]};
    double ext = s;
    for (int i = 0; i < 3; ++i) ext = std::max({ext, std::abs(pu[i]), std::abs(pv[i])});
    ext += std::max(std::abs(g.origin[u]), std::abs(g.origin[v])) + s * std::max(g.dims[u], g.dims[v]);
    double au[3], av[3], pmin[3], pmax[3], reach[3];
    for (int e = 0; e < 3; ++e) {
        const int f = (e + 1) % 3;
        au[e] = pv[e] - pv[f], av[e] = pu[f] - pu[e];
        const double p0 = au[e] * pu[0] + av[e] * pv[0], p1 = au[e] * pu[1] + av[e] * pv[1], p2 = au[e] * pu[2] + av[e] * pv[2];
        pmin[e] = std::min({p0, p1, p2}), pmax[e] = std::max({p0, p1, p2});
        const double w = std::abs(au[e]) + std::abs(av[e]);
        reach[e] = half.x * w + 1e-7 * w * ext;
    }
    // The plane: n . (x - a) = q + n_d x_d over a row's centres x, q = n_u x_u + n_v x_v - n . a;
    // |.| <= r only for x_d within [(-r - q) / n_d, (r - q) / n_d], widened by a millionth of the
    // terms' magnitudes.
    const double na = dot(n, a);
    const double xd_max = std::max(std::abs(g.origin[d]), std::abs(g.origin[d] + g.dims[d] * s));
    const double pad0 =
        1e-6 * (std::abs(n[u] * a[u]) + std::abs(n[v] * a[v]) + std::abs(nd * a[d]) + r + std::abs(nd) * (xd_max + s));
    const double inv_nd = 1.0 / nd, inv_s = 1.0 / s;
    int idx[3];
    for (idx[v] = lo[v]; idx[v] <= hi[v]; ++idx[v])
        for (idx[u] = lo[u]; idx[u] <= hi[u]; ++idx[u]) {
            const double xu = g.origin[u] + (idx[u] + 0.5) * s, xv = g.origin[v] + (idx[v] + 0.5) * s;
            bool misses = false;
            for (int e = 0; e < 3; ++e) {
                const double t = au[e] * xu + av[e] * xv;
                misses |= pmin[e] - t > reach[e] || pmax[e] - t < -reach[e];
            }
            if (misses) continue;
            int first = lo[d], last = hi[d];
            if (plane) {
                const double q = n[u] * xu + n[v] * xv - na;
                const double pad = pad0 + 1e-6 * (std::abs(n[u] * xu) + std::abs(n[v] * xv));
                double t0 = (-r - pad - q) * inv_nd, t1 = (r + pad - q) * inv_nd;
                if (t0 > t1) std::swap(t0, t1);
                // Centre x_d = o_d + (i + 1/2) s.
                const double i0 = std::floor((t0 - g.origin[d]) * inv_s - 0.5), i1 = std::ceil((t1 - g.origin[d]) * inv_s - 0.5);
                if (i0 > static_cast<double>(first)) first = i0 > static_cast<double>(last) ? last + 1 : static_cast<int>(i0);
                if (i1 < static_cast<double>(last)) last = i1 < static_cast<double>(first) ? first - 1 : static_cast<int>(i1);
            }
            for (idx[d] = first; idx[d] <= last; ++idx[d])
                if (!skip(idx[0], idx[1], idx[2]) && triangle_box_overlap(g.center(idx[0], idx[1], idx[2]), half, a, b, c))
                    f(idx[0], idx[1], idx[2]);
        }
}

}  // namespace hp::voxel_detail
