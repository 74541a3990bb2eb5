#pragma once
// Dense distance fields given in closed form, for tests whose static object is a ball, a plane or
// another function sampled at the voxel centres.

#include <cmath>
#include <utility>
#include <vector>

#include "field/field.hpp"

namespace hp::test {

// The grid over [lo, hi]^3 with voxels of size s: round((hi - lo) / s) voxels per axis.
inline GridSpec cube_grid(double lo, double hi, double s) {
    GridSpec g;
    g.voxel_size = s;
    g.origin = {lo, lo, lo};
    const int n = static_cast<int>(std::lround((hi - lo) / s));
    g.dims = {n, n, n};
    return g;
}

// A dense field holding f at every voxel centre of g.
template <class F>
DistanceSampler sampled(const GridSpec& g, F f) {
    std::vector<double> v(g.count());
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) v[g.index(i, j, k)] = f(g.center(i, j, k));
    return DistanceSampler(g, std::move(v));
}

}  // namespace hp::test
