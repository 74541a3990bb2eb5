// DistanceSampler::gradient (field.hpp): the analytic gradient of the interpolant, kept apart from
// the hot paths of field.cpp.
#include "field/field.hpp"

#include <cmath>

namespace hp {

Vec3d DistanceSampler::gradient(const Vec3d& p) const {
    Cell cell;
    read_cell(p, cell);
    const double* c = cell.corner;
    const double* f = cell.ref.frac;
    // Inside a cell V is trilinear: dV/du is the bilinear blend of the four cell-edge differences
    // along u over the other two fractions (per cell unit; times 1/s per world unit).
    auto blend = [](double e00, double e10, double e01, double e11, double s, double t) {
        return (e00 * (1 - s) + e10 * s) * (1 - t) + (e01 * (1 - s) + e11 * s) * t;
    };
    const double d[3] = {
        blend(c[1] - c[0], c[3] - c[2], c[5] - c[4], c[7] - c[6], f[1], f[2]),
        blend(c[2] - c[0], c[3] - c[1], c[6] - c[4], c[7] - c[5], f[0], f[2]),
        blend(c[4] - c[0], c[5] - c[1], c[6] - c[2], c[7] - c[3], f[0], f[1]),
    };
    // Outside the centre box V(P) = V(c(P)) - |P - c(P)|: along an axis where P lies beyond the
    // box, c(P) does not move and the distance term gives -(P - c(P))_a / |P - c(P)|.
    const double* o = cell.ref.out;
    const double out = std::sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
    Vec3d g;
    for (int a = 0; a < 3; ++a) g[a] = o[a] != 0 ? -o[a] / out : d[a] * inv_s_;
    return g;
}

}  // namespace hp
