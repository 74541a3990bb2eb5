// DistanceSampler::gradient (field.hpp): central differences of the interpolant V. Kept apart from
// field.cpp because it needs nothing but value().
#include "query/field.hpp"

namespace hp {

Vec3d DistanceSampler::gradient(const Vec3d& p) const {
    // Half a voxel each way: the difference spans one voxel, so it blends the cells around p
    // instead of following one cell's bilinear slope; a linear V is reproduced exactly.
    const double h = 0.5 * grid_.voxel_size;
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
