#include "query/field.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace hp {

DistanceSampler::DistanceSampler(const GridSpec& grid, std::vector<double> values)
    : grid_(grid), values_(std::move(values)) {
    if (values_.size() != grid_.count() || grid_.count() == 0)
        fail_input("", "distance field size does not match its grid");
    const double s = grid_.voxel_size;
    // Per-axis maximum of |difference between neighbouring centres| / s over the whole grid.
    double g[3] = {0, 0, 0};
    const auto& d = grid_.dims;
    for (int k = 0; k < d[2]; ++k)
        for (int j = 0; j < d[1]; ++j)
            for (int i = 0; i < d[0]; ++i) {
                double v = at(i, j, k);
                max_value_ = std::max(max_value_, v);
                if (i + 1 < d[0]) g[0] = std::max(g[0], std::abs(at(i + 1, j, k) - v));
                if (j + 1 < d[1]) g[1] = std::max(g[1], std::abs(at(i, j + 1, k) - v));
                if (k + 1 < d[2]) g[2] = std::max(g[2], std::abs(at(i, j, k + 1) - v));
            }
    // Inside the centre box the interpolant's gradient has components bounded by g[a]/s, so it is
    // L_in-Lipschitz with L_in = |g| / s. Outside, V(P) = V(c(P)) - |P - c(P)| with c the projection
    // onto the box; projections onto convex sets are firmly nonexpansive:
    // |c(P) - c(Q)|^2 + |(P - c(P)) - (Q - c(Q))|^2 <= |P - Q|^2, so by Cauchy-Schwarz
    // |V(P) - V(Q)| <= L_in a + b <= sqrt(L_in^2 + 1) |P - Q|. A small relative margin absorbs
    // rounding in value().
    const double inside = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) / s;
    lipschitz_ = std::sqrt(inside * inside + 1.0) * (1 + 1e-9);
}

double DistanceSampler::value(const Vec3d& p) const {
    const double s = grid_.voxel_size;
    // Continuous index coordinates of p relative to voxel centres.
    double u[3];
    int base[3];
    double frac[3];
    double outside2 = 0;
    for (int a = 0; a < 3; ++a) {
        u[a] = (p[a] - grid_.origin[a]) / s - 0.5;
        double hi = grid_.dims[a] - 1;
        double c = std::clamp(u[a], 0.0, hi);
        outside2 += (u[a] - c) * (u[a] - c);
        int b = static_cast<int>(std::floor(c));
        if (b >= grid_.dims[a] - 1) b = std::max(0, grid_.dims[a] - 2);
        base[a] = b;
        frac[a] = grid_.dims[a] > 1 ? c - b : 0.0;
    }
    auto sample = [&](int di, int dj, int dk) {
        int i = std::min(base[0] + di, grid_.dims[0] - 1);
        int j = std::min(base[1] + dj, grid_.dims[1] - 1);
        int k = std::min(base[2] + dk, grid_.dims[2] - 1);
        return at(i, j, k);
    };
    double c00 = sample(0, 0, 0) * (1 - frac[0]) + sample(1, 0, 0) * frac[0];
    double c10 = sample(0, 1, 0) * (1 - frac[0]) + sample(1, 1, 0) * frac[0];
    double c01 = sample(0, 0, 1) * (1 - frac[0]) + sample(1, 0, 1) * frac[0];
    double c11 = sample(0, 1, 1) * (1 - frac[0]) + sample(1, 1, 1) * frac[0];
    double c0 = c00 * (1 - frac[1]) + c10 * frac[1];
    double c1 = c01 * (1 - frac[1]) + c11 * frac[1];
    double v = c0 * (1 - frac[2]) + c1 * frac[2];
    return outside2 > 0 ? v - std::sqrt(outside2) * s : v;
}

double DistanceSampler::border_max_value() const {
    const auto& d = grid_.dims;
    double best = -std::numeric_limits<double>::infinity();
    for (int k = 0; k < d[2]; ++k)
        for (int j = 0; j < d[1]; ++j) {
            const bool face = k == 0 || k == d[2] - 1 || j == 0 || j == d[1] - 1;
            for (int i = 0; i < d[0]; i += face ? 1 : std::max(1, d[0] - 1)) best = std::max(best, at(i, j, k));
        }
    return best;
}

double DistanceSampler::gradient_value(const Vec3d& p) const {
    const double s = grid_.voxel_size;
    int idx[3];
    for (int a = 0; a < 3; ++a) {
        int i = static_cast<int>(std::floor((p[a] - grid_.origin[a]) / s));
        idx[a] = std::clamp(i, 0, grid_.dims[a] - 1);
    }
    Vec3d c = grid_.center(idx[0], idx[1], idx[2]);
    Vec3d grad;
    for (int a = 0; a < 3; ++a) {
        int lo[3] = {idx[0], idx[1], idx[2]}, hi[3] = {idx[0], idx[1], idx[2]};
        lo[a] = std::max(0, idx[a] - 1);
        hi[a] = std::min(grid_.dims[a] - 1, idx[a] + 1);
        int span = hi[a] - lo[a];
        grad[a] = span > 0 ? (at(hi[0], hi[1], hi[2]) - at(lo[0], lo[1], lo[2])) / (span * s) : 0.0;
    }
    return at(idx[0], idx[1], idx[2]) + dot(grad, p - c);
}

}  // namespace hp
