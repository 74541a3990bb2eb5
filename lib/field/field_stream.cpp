// A dense field's sampler made while it is written out (field_stream.hpp): bricks a layer at a
// time, the pyramid's level 0 from the field's rows.
#include "field/field_stream.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/error.hpp"
#include "field/field_pyramid.hpp"
#include "math/float_round.hpp"

namespace hp {

namespace {

constexpr int kBlock = 4;  // cells per block edge at level 0 and samples per brick edge (dense)

// Per voxel column of a row of cells: its y and z edges' squared differences and its largest
// sample, then per cell its largest squared corner gradient (times s^2) and largest corner.
struct RowScratch {
    std::vector<double> x2[4], y2[2], z2[2], top, g2_cell, top_cell;
    explicit RowScratch(int d0) {
        for (auto* v : {&x2[0], &x2[1], &x2[2], &x2[3], &y2[0], &y2[1], &z2[0], &z2[1], &top, &g2_cell, &top_cell})
            v->resize(static_cast<std::size_t>(d0));
    }
};

// Level 0 over one row of cells: r[b + 2 c] is voxel row (j + b, k + c) of the cells' row (j, k),
// d0 >= 2 voxels long. Per block of 4 cells along x, the largest squared corner gradient and the
// largest corner are merged into g2_row[bx] and top_row[bx]. The arithmetic is dense_slab's
// (field_bounds.cpp) cell by cell: each corner's squared edge differences summed x, y, z, in
// double; the maxima of the corners folded in its order (a maximum of equal values keeps the
// first, so +0 and -0 stay where they were): the same bits. The columns and the cells are
// independent, in vector lanes; only the blocks' folds are sequential.
// std::max by value (the same choice: the first of equal values): a maximum through references
// is a load from a selected address, which the vectorizer does not take.
inline double vmax(double a, double b) { return a < b ? b : a; }

template <class V>
inline __attribute__((always_inline)) void row_level0(const V* const* r, int d0, RowScratch& s, double* g2_row, double* top_row) {
    double* __restrict y2lo = s.y2[0].data();
    double* __restrict y2hi = s.y2[1].data();
    double* __restrict z2lo = s.z2[0].data();
    double* __restrict z2hi = s.z2[1].data();
    double* __restrict top = s.top.data();
    for (int i = 0; i < d0; ++i) {
        const double v0 = static_cast<double>(r[0][i]), v1 = static_cast<double>(r[1][i]), v2 = static_cast<double>(r[2][i]),
                     v3 = static_cast<double>(r[3][i]);
        y2lo[i] = (v1 - v0) * (v1 - v0);  // edge (a, ., c = 0)
        y2hi[i] = (v3 - v2) * (v3 - v2);  // c = 1
        z2lo[i] = (v2 - v0) * (v2 - v0);  // edge (a, b = 0, .)
        z2hi[i] = (v3 - v1) * (v3 - v1);  // b = 1
        top[i] = vmax(vmax(v0, v1), vmax(v2, v3));
    }
    const int cells = d0 - 1;
    double* __restrict g2_cell = s.g2_cell.data();
    double* __restrict top_cell = s.top_cell.data();
    // Edge (., b, c) of row b + 2 c, per cell.
    double* __restrict x2[4] = {s.x2[0].data(), s.x2[1].data(), s.x2[2].data(), s.x2[3].data()};
    for (int m = 0; m < 4; ++m) {
        const V* __restrict row = r[m];
        double* __restrict out = x2[m];
        for (int i = 0; i < cells; ++i) {
            const double d = static_cast<double>(row[i + 1]) - static_cast<double>(row[i]);
            out[i] = d * d;
        }
    }
    const double* __restrict x00 = x2[0];
    const double* __restrict x10 = x2[1];
    const double* __restrict x01 = x2[2];
    const double* __restrict x11 = x2[3];
#pragma GCC ivdep  // the scratch rows are distinct arrays
    for (int i = 0; i < cells; ++i) {
        // Corner (a, b, c): x2[b, c] + y2[c] + z2[b] of column i + a.
        const double c0 = x00[i] + y2lo[i] + z2lo[i], c1 = x00[i] + y2lo[i + 1] + z2lo[i + 1];
        const double c2 = x10[i] + y2lo[i] + z2hi[i], c3 = x10[i] + y2lo[i + 1] + z2hi[i + 1];
        const double c4 = x01[i] + y2hi[i] + z2lo[i], c5 = x01[i] + y2hi[i + 1] + z2lo[i + 1];
        const double c6 = x11[i] + y2hi[i] + z2hi[i], c7 = x11[i] + y2hi[i + 1] + z2hi[i + 1];
        g2_cell[i] = vmax(vmax(vmax(c0, c1), vmax(c2, c3)), vmax(vmax(c4, c5), vmax(c6, c7)));
        top_cell[i] = vmax(top[i], top[i + 1]);
    }
    for (int i0 = 0; i0 < cells; i0 += kBlock) {
        double g2_block = 0, top_block = -std::numeric_limits<double>::infinity();
        for (int i = i0; i < std::min(cells, i0 + kBlock); ++i) {
            g2_block = vmax(g2_block, g2_cell[i]);
            top_block = vmax(top_block, top_cell[i]);
        }
        const std::size_t bx = static_cast<std::size_t>(i0 / kBlock);
        g2_row[bx] = vmax(g2_row[bx], g2_block);
        top_row[bx] = vmax(top_row[bx], top_block);
    }
}

__attribute__((target_clones("avx2", "default"))) void row_level0_f(const float* const* r, int d0, RowScratch& s, double* g2_row,
                                                                     double* top_row) {
    row_level0(r, d0, s, g2_row, top_row);
}
__attribute__((target_clones("avx2", "default"))) void row_level0_d(const double* const* r, int d0, RowScratch& s, double* g2_row,
                                                                     double* top_row) {
    row_level0(r, d0, s, g2_row, top_row);
}

template <class V>
struct Streamer {
    const GridSpec& grid;
    const V* values;
    std::array<int, 3> d, bricks, bd;  // voxels, bricks of 4^3 samples, level-0 blocks per axis
    std::size_t plane;
    Streamer(const GridSpec& g, const V* v) : grid(g), values(v), d(g.dims) {
        plane = static_cast<std::size_t>(d[0]) * static_cast<std::size_t>(d[1]);
        for (int a = 0; a < 3; ++a) bricks[a] = (d[a] + kBlock - 1) / kBlock, bd[a] = (d[a] - 1 + kBlock - 1) / kBlock;
    }
    const V* row(int j, int k) const { return values + static_cast<std::size_t>(k) * plane + static_cast<std::size_t>(j) * d[0]; }

    // Level 0's blocks of slab q (cells k in [4 q, 4 q + 4)) into `level`; returns the largest
    // cell slope and raises `largest` to the largest sample of the slab's cells.
    double level0_slab(int q, RowScratch& s, std::vector<double>& g2max, std::vector<double>& topmax, DistanceSampler::BlockBound* level,
                       double& largest) const {
        std::fill(g2max.begin(), g2max.end(), 0.0);
        std::fill(topmax.begin(), topmax.end(), -std::numeric_limits<double>::infinity());
        const std::size_t row_blocks = static_cast<std::size_t>(bd[0]);
        for (int k = q * kBlock; k < std::min(d[2] - 1, (q + 1) * kBlock); ++k)
            for (int j = 0; j < d[1] - 1; ++j) {
                const V* r[4] = {row(j, k), row(j + 1, k), row(j, k + 1), row(j + 1, k + 1)};
                double* g2_row = &g2max[static_cast<std::size_t>(j / kBlock) * row_blocks];
                double* top_row = &topmax[static_cast<std::size_t>(j / kBlock) * row_blocks];
                if constexpr (std::is_same_v<V, float>) row_level0_f(r, d[0], s, g2_row, top_row);
                else row_level0_d(r, d[0], s, g2_row, top_row);
            }
        double inside = 0;
        for (std::size_t n = 0; n < g2max.size(); ++n) {
            const double lc = std::sqrt(g2max[n]) / grid.voxel_size;
            inside = std::max(inside, lc);
            DistanceSampler::BlockBound& m = level[static_cast<std::size_t>(q) * g2max.size() + n];
            m.lipschitz = std::max(m.lipschitz, float_above(lc * (1 + 1e-9)));
            m.max_value = std::max(m.max_value, float_above(topmax[n]));
            largest = std::max(largest, topmax[n]);
        }
        return inside;
    }

    // The bricks of voxel planes [4 q, 4 q + 4) into `layer` (bricks[0] x bricks[1] bricks);
    // slots beyond the grid keep their 0.
    template <class T>
    void brick_layer(int q, std::vector<T>& layer) const {
        const std::size_t bx = static_cast<std::size_t>(bricks[0]);
        for (int k = q * kBlock; k < std::min(d[2], (q + 1) * kBlock); ++k)
            for (int j = 0; j < d[1]; ++j) {
                const V* in = row(j, k);
                T* out = layer.data() + static_cast<std::size_t>(j / kBlock) * bx * 64 + static_cast<std::size_t>(k % kBlock) * 16 +
                         static_cast<std::size_t>(j % kBlock) * 4;
                int i = 0;
                for (; i + kBlock <= d[0]; i += kBlock, out += 64)
                    for (int x = 0; x < kBlock; ++x) out[x] = static_cast<T>(in[i + x]);
                for (int x = 0; i + x < d[0]; ++x) out[x] = static_cast<T>(in[i + x]);
            }
    }

    template <class T>
    StreamedSampler run(const BrickSink& sink) const {
        StreamedSampler out;
        out.grid = grid;
        out.float_samples = std::is_same_v<T, float>;
        const std::size_t layer_samples = static_cast<std::size_t>(bricks[0]) * static_cast<std::size_t>(bricks[1]) * 64;
        out.samples = layer_samples * static_cast<std::size_t>(bricks[2]);
        std::vector<DistanceSampler::BlockBound> level = detail::empty_level0(bd);
        std::vector<double> g2max(static_cast<std::size_t>(bd[0]) * bd[1]), topmax(g2max.size());
        RowScratch scratch(d[0]);
        std::vector<T> layer(layer_samples, T(0));
        double inside = 0, largest = 0;
        for (int q = 0; q < bricks[2]; ++q) {
            if (q < bd[2]) inside = std::max(inside, level0_slab(q, scratch, g2max, topmax, level.data(), largest));
            // The last layer of a grid whose planes are not a multiple of 4 keeps 0 beyond them.
            if ((q + 1) * kBlock > d[2]) std::fill(layer.begin(), layer.end(), T(0));
            brick_layer(q, layer);
            sink(layer.data(), layer.size() * sizeof(T));
        }
        out.lipschitz = detail::slope_bound(inside);
        // Every voxel is a corner of a cell: the largest sample, or 0 when none is positive
        // (DistanceSampler::max_value()).
        out.max_value = largest > 0 ? largest : 0.0;
        out.pyramid.resize(detail::pyramid_entries(bd));
        detail::build_pyramid(std::move(level), bd, out.pyramid.data());
        return out;
    }
};

// A grid with an axis of one voxel (its cells are degenerate): the sampler built whole, its
// samples handed out at once.
template <class V>
StreamedSampler stream_built(const GridSpec& grid, std::span<const V> values, const BrickSink& sink) {
    const DistanceSampler built(grid, values);
    const DistanceSampler::Layout l = built.layout();
    StreamedSampler out;
    out.grid = grid;
    out.float_samples = built.float_samples();
    out.samples = out.float_samples ? l.samples_f.size() : l.samples_d.size();
    if (out.float_samples) sink(l.samples_f.data(), l.samples_f.size_bytes());
    else sink(l.samples_d.data(), l.samples_d.size_bytes());
    out.lipschitz = l.lipschitz;
    out.max_value = l.max_value;
    out.pyramid.assign(l.pyramid.begin(), l.pyramid.end());
    return out;
}

template <class V>
StreamedSampler stream(const GridSpec& grid, std::span<const V> values, const BrickSink& sink) {
    if (values.size() != grid.count() || grid.count() == 0) fail_input("", "distance field size does not match its grid");
    if (!(grid.voxel_size > 0) || !std::isfinite(grid.voxel_size)) fail_input("", "distance field has no valid voxel size");
    if (grid.dims[0] < 2 || grid.dims[1] < 2 || grid.dims[2] < 2) return stream_built(grid, values, sink);
    const Streamer<V> s(grid, values.data());
    if constexpr (std::is_same_v<V, float>) {
        return s.template run<float>(sink);
    } else {
        // As the constructor: float samples when every value is a float.
        bool as_float = true;
        for (double v : values) as_float = as_float && static_cast<double>(static_cast<float>(v)) == v;
        return as_float ? s.template run<float>(sink) : s.template run<double>(sink);
    }
}

}  // namespace

DistanceSampler::Layout StreamedSampler::layout() const {
    DistanceSampler::Layout l;
    l.grid = grid;
    l.pyramid = pyramid;
    l.lipschitz = lipschitz;
    l.max_value = max_value;
    return l;
}

StreamedSampler stream_dense_sampler(const GridSpec& grid, std::span<const float> values, const BrickSink& bricks) {
    return stream(grid, values, bricks);
}

StreamedSampler stream_dense_sampler(const GridSpec& grid, std::span<const double> values, const BrickSink& bricks) {
    return stream(grid, values, bricks);
}

}  // namespace hp
