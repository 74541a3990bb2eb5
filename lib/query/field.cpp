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
    for (double v : values_) max_value_ = std::max(max_value_, v);
    build_local_bounds();
}

namespace {
constexpr int kBlock = 4;  // cells per block edge at pyramid level 0 (a power of two: lookups shift by 2 + level)
}

void DistanceSampler::build_local_bounds() {
    const auto& d = grid_.dims;
    const double s = grid_.voxel_size;
    // Cells: between centres i..i+1 per axis; an axis with one centre has one degenerate cell.
    const int cells[3] = {std::max(1, d[0] - 1), std::max(1, d[1] - 1), std::max(1, d[2] - 1)};
    std::array<int, 3> bd{(cells[0] + kBlock - 1) / kBlock, (cells[1] + kBlock - 1) / kBlock, (cells[2] + kBlock - 1) / kBlock};
    std::vector<float> level(static_cast<std::size_t>(bd[0]) * bd[1] * bd[2], 0.0f);
    auto v = [&](int i, int j, int k) {
        return at(std::min(i, d[0] - 1), std::min(j, d[1] - 1), std::min(k, d[2] - 1));
    };
    double global[3] = {0, 0, 0};  // per axis, the largest |difference| over all cells
    for (int k = 0; k < cells[2]; ++k)
        for (int j = 0; j < cells[1]; ++j)
            for (int i = 0; i < cells[0]; ++i) {
                double g[3] = {0, 0, 0};
                for (int b = 0; b < 2; ++b)
                    for (int a = 0; a < 2; ++a) {
                        g[0] = std::max(g[0], std::abs(v(i + 1, j + a, k + b) - v(i, j + a, k + b)));
                        g[1] = std::max(g[1], std::abs(v(i + a, j + 1, k + b) - v(i + a, j, k + b)));
                        g[2] = std::max(g[2], std::abs(v(i + a, j + b, k + 1) - v(i + a, j + b, k)));
                    }
                for (int a = 0; a < 3; ++a) global[a] = std::max(global[a], g[a]);
                // Rounded up to float so the stored bound never falls below the double one.
                const double lc = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) / s * (1 + 1e-6);
                float& m = level[(static_cast<std::size_t>(k / kBlock) * bd[1] + j / kBlock) * bd[0] + i / kBlock];
                m = std::max(m, static_cast<float>(lc));
            }
    // Inside the centre box the interpolant's gradient has components bounded by g[a]/s, with
    // g[a] the largest |difference between neighbouring centres| along a (every such pair is an
    // edge of some cell), so it is L_in-Lipschitz with L_in = |g| / s. Outside, V(P) = V(c(P)) -
    // |P - c(P)| with c the projection onto the box; projections onto convex sets are firmly
    // nonexpansive: |c(P) - c(Q)|^2 + |(P - c(P)) - (Q - c(Q))|^2 <= |P - Q|^2, so by
    // Cauchy-Schwarz |V(P) - V(Q)| <= L_in a + b <= sqrt(L_in^2 + 1) |P - Q|. A small relative
    // margin absorbs rounding in value().
    const double inside = std::sqrt(global[0] * global[0] + global[1] * global[1] + global[2] * global[2]) / s;
    lipschitz_ = std::sqrt(inside * inside + 1.0) * (1 + 1e-9);
    pyramid_.push_back(std::move(level));
    pyramid_dims_.push_back(bd);
    while (bd[0] > 1 || bd[1] > 1 || bd[2] > 1) {
        const std::array<int, 3> nd{(bd[0] + 1) / 2, (bd[1] + 1) / 2, (bd[2] + 1) / 2};
        std::vector<float> up(static_cast<std::size_t>(nd[0]) * nd[1] * nd[2], 0.0f);
        const std::vector<float>& down = pyramid_.back();
        for (int k = 0; k < bd[2]; ++k)
            for (int j = 0; j < bd[1]; ++j)
                for (int i = 0; i < bd[0]; ++i) {
                    float& m = up[(static_cast<std::size_t>(k / 2) * nd[1] + j / 2) * nd[0] + i / 2];
                    m = std::max(m, down[(static_cast<std::size_t>(k) * bd[1] + j) * bd[0] + i]);
                }
        pyramid_.push_back(std::move(up));
        pyramid_dims_.push_back(nd);
        bd = nd;
    }
}

double DistanceSampler::lipschitz(const Vec3d& center, double radius) const {
    const double s = grid_.voxel_size;
    int lo[3], hi[3];
    bool leaves = false;
    for (int a = 0; a < 3; ++a) {
        // The ball's box in cell coordinates (cell i spans centre coordinates i .. i + 1).
        const double u0 = (center[a] - radius - grid_.origin[a]) / s - 0.5;
        const double u1 = (center[a] + radius - grid_.origin[a]) / s - 0.5;
        const double top = std::max(0, grid_.dims[a] - 1);
        if (!(u0 >= 0 && u1 <= top)) leaves = true;  // also catches NaN
        const int cells = std::max(1, grid_.dims[a] - 1);
        lo[a] = static_cast<int>(std::clamp(std::floor(u0), 0.0, static_cast<double>(cells - 1)));
        hi[a] = static_cast<int>(std::clamp(std::floor(u1), 0.0, static_cast<double>(cells - 1)));
        if (!(u1 >= u0)) lo[a] = 0, hi[a] = cells - 1;
    }
    // The finest level where the box spans at most two blocks per axis. A span of n cells needs
    // n <= 2 (4 << m) at least, so start there; one or two more levels suffice.
    int span = 1;
    for (int a = 0; a < 3; ++a) span = std::max(span, hi[a] - lo[a] + 1);
    std::size_t m = 0;
    while ((kBlock << (m + 1)) < span) ++m;
    int b0[3], b1[3];
    for (;; ++m) {
        if (m + 1 >= pyramid_.size()) {
            m = pyramid_.size() - 1;
            for (int a = 0; a < 3; ++a) b0[a] = 0, b1[a] = pyramid_dims_[m][a] - 1;
            break;
        }
        const int shift = 2 + static_cast<int>(m);  // log2(kBlock << m)
        bool fits = true;
        for (int a = 0; a < 3; ++a) {
            b0[a] = lo[a] >> shift;
            b1[a] = hi[a] >> shift;
            fits = fits && b1[a] - b0[a] <= 1;
        }
        if (fits) break;
    }
    const auto& dims = pyramid_dims_[m];
    const auto& level = pyramid_[m];
    double l = 0;
    for (int k = b0[2]; k <= b1[2]; ++k)
        for (int j = b0[1]; j <= b1[1]; ++j)
            for (int i = b0[0]; i <= b1[0]; ++i)
                l = std::max(l, static_cast<double>(level[(static_cast<std::size_t>(k) * dims[1] + j) * dims[0] + i]));
    l = leaves ? std::sqrt(l * l + 1.0) * (1 + 1e-9) : l * (1 + 1e-9);
    return std::min(l, lipschitz_);
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
