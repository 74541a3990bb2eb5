// DistanceSampler::gradient (field.hpp): central differences of the interpolant V. Kept apart from
// field.cpp because it needs nothing but value().
#include "query/field.hpp"

namespace hp {

Vec3d DistanceSampler::gradient(const Vec3d& p) const {
    // A thousandth of a voxel each way: inside a cell V is linear along each axis, so the central
    // difference is the interpolant's own partial derivative there (exact, not an approximation),
    // and all six values read the eight samples value(p) reads (already in cache after it). At a
    // cell face it averages the two cells' slopes.
    const double h = 1e-3 * grid_.voxel_size;
    Vec3d g;
    for (int a = 0; a < 3; ++a) {
        Vec3d lo = p, hi = p;
        lo[a] -= h;
        hi[a] += h;
        g[a] = (value(hi) - value(lo)) / (2 * h);
    }
    return g;
}

}  // namespace hp
