// DistanceSampler (field.hpp): the bounds over blocks of cells that the ball queries read (the
// pyramid of block bounds, the gaps to raised boxes, the local bounds), built once per field.
#include "field/field.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <tbb/parallel_for.h>

#include "field/field_pyramid.hpp"
#include "math/float_round.hpp"


namespace hp {

namespace {
// A cell's largest squared corner gradient (times s^2) and its largest corner; c: corner (a, b, c)
// at c[a + 2 b + 4 c].
inline void cell_extremes(const double (&c)[8], double& g2, double& top) {
    g2 = 0;
    top = c[0];
    for (int n = 0; n < 8; ++n) {
        const double dx = c[n | 1] - c[n & ~1];
        const double dy = c[n | 2] - c[n & ~2];
        const double dz = c[n | 4] - c[n & ~4];
        g2 = std::max(g2, dx * dx + dy * dy + dz * dz);
        top = std::max(top, c[n]);
    }
}
constexpr int kBlock = 4;  // cells per block edge at pyramid level 0, dense (a power of two: lookups shift by 2 + level)
// Runs slab(q, inside) for each slab q in [0, n) of level-0 blocks (a z layer of blocks) and
// returns the largest `inside` a slab left. Slabs write disjoint blocks, so they run in parallel;
// maxima do not depend on the order.
template <class Slab>
double max_over_slabs(int n, const Slab& slab) {
    std::vector<double> slab_max(static_cast<std::size_t>(n), 0.0);
    tbb::parallel_for(0, n, [&](int q) {
        double inside = 0;
        slab(q, inside);
        slab_max[static_cast<std::size_t>(q)] = inside;
    });
    return *std::max_element(slab_max.begin(), slab_max.end());
}
}

std::array<int, 3> DistanceSampler::cell_counts() const {
    const auto& d = grid_.dims;
    return {std::max(1, d[0] - 1), std::max(1, d[1] - 1), std::max(1, d[2] - 1)};
}

inline double DistanceSampler::at_clamped(int i, int j, int k) const {
    const auto& d = grid_.dims;
    return at(std::min(i, d[0] - 1), std::min(j, d[1] - 1), std::min(k, d[2] - 1));
}

inline double DistanceSampler::add_cell(int i, int j, int k, BlockBound& m, double& inside) const {
    // The interpolant's gradient at corner (a, b, c) of the cell is (1/s) times the differences
    // along the three cell edges that meet there. Inside the cell dV/dx is bilinear in (y, z) and
    // constant in x, and likewise for y and z, so along any axis line |grad V|^2 is a sum of
    // squares of affine functions, convex: its maximum over the cell is at a corner. So the
    // largest corner gradient is exactly the cell's largest slope (up to sqrt 3 tighter than
    // bounding each component by its largest edge difference).
    double c[8];  // corner (a, b, c) at c[a + 2 b + 4 c]
    for (int n = 0; n < 8; ++n) c[n] = at_clamped(i + (n & 1), j + ((n >> 1) & 1), k + (n >> 2));
    double g2 = 0, top = 0;
    cell_extremes(c, g2, top);
    const double lc = std::sqrt(g2) / grid_.voxel_size;
    inside = std::max(inside, lc);
    // Rounded up to float so the stored bound never falls below the double one.
    m.lipschitz = std::max(m.lipschitz, float_above(lc * (1 + 1e-9)));
    m.max_value = std::max(m.max_value, float_above(top));
    return top;
}

namespace {
// Level 0 of a dense field's pyramid from its samples (`table`: axis_table_, whose entry dims
// repeats the last sample, so the corner beyond a one-voxel axis needs no clamp). Per cell the
// largest squared corner gradient (times s^2) and the largest corner, as add_cell computes them;
// per block only their maxima are turned into bounds: sqrt, the division, the margin and the
// rounding up to float are nondecreasing, so the bound of the largest equals the largest bound,
// bit for bit, and each cell costs its four new corners (the row's previous four are kept).
// Returns the largest slope of the slab's cells.
template <class T>
double dense_slab(const T* samples, const std::array<std::vector<std::size_t>, 3>& table, const std::array<int, 3>& cells,
                  const std::array<int, 3>& bd, int q, double voxel_size, DistanceSampler::BlockBound* level) {
    const std::size_t row_blocks = static_cast<std::size_t>(bd[0]);
    std::vector<double> g2max(row_blocks * static_cast<std::size_t>(bd[1]), 0.0);
    std::vector<double> topmax(g2max.size(), -std::numeric_limits<double>::infinity());
    const std::vector<std::size_t>& tx = table[0];
    for (int k = q * kBlock; k < std::min(cells[2], (q + 1) * kBlock); ++k)
        for (int j = 0; j < cells[1]; ++j) {
            // The four rows of the cells' corners: (b, c) = (y step, z step) at b + 2 c.
            std::size_t row[4];
            for (int m = 0; m < 4; ++m)
                row[m] = table[1][static_cast<std::size_t>(j + (m & 1))] + table[2][static_cast<std::size_t>(k + (m >> 1))];
            // A cell's corners are two columns of four samples (x = a, rows m = b + 2 c): its x
            // edges join them; its y and z edges lie in a column, so each column's are computed
            // once and shared with the cell before. Squared differences as cell_extremes takes
            // them (dx * dx + dy * dy + dz * dz per corner, in that order): the same bits.
            double lo[4], hi[4];
            for (int m = 0; m < 4; ++m) lo[m] = static_cast<double>(samples[tx[0] + row[m]]);
            auto column = [](const double (&v)[4], double (&y2)[2], double (&z2)[2]) {
                for (int c = 0; c < 2; ++c) y2[c] = (v[1 + 2 * c] - v[2 * c]) * (v[1 + 2 * c] - v[2 * c]);  // edge (a, ., c)
                for (int b = 0; b < 2; ++b) z2[b] = (v[b + 2] - v[b]) * (v[b + 2] - v[b]);              // edge (a, b, .)
                return std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
            };
            double y2lo[2], z2lo[2], y2hi[2], z2hi[2];
            double top_lo = column(lo, y2lo, z2lo);
            double* g2_row = &g2max[static_cast<std::size_t>(j / kBlock) * row_blocks];
            double* top_row = &topmax[static_cast<std::size_t>(j / kBlock) * row_blocks];
            // Block after block along the row, each block's maxima kept in registers: the maxima of
            // the corners and cells are exact, so their order does not change them (no NaN in a
            // field), and a balanced order keeps the dependency chains short.
            for (int i0 = 0; i0 < cells[0]; i0 += kBlock) {
                double g2_block = 0, top_block = -std::numeric_limits<double>::infinity();
                for (int i = i0; i < std::min(cells[0], i0 + kBlock); ++i) {
                    const std::size_t x1 = tx[static_cast<std::size_t>(i + 1)];
                    for (int m = 0; m < 4; ++m) hi[m] = static_cast<double>(samples[x1 + row[m]]);
                    const double top_hi = column(hi, y2hi, z2hi);
                    double x2[4];  // edge (., b, c) at b + 2 c
                    for (int m = 0; m < 4; ++m) x2[m] = (hi[m] - lo[m]) * (hi[m] - lo[m]);
                    double corner[8];  // n = a + 2 b + 4 c
                    for (int n = 0; n < 8; ++n) {
                        const int a = n & 1, b = (n >> 1) & 1, c = n >> 2;
                        corner[n] = x2[b + 2 * c] + (a ? y2hi : y2lo)[c] + (a ? z2hi : z2lo)[b];
                    }
                    const double g2 = std::max(std::max(std::max(corner[0], corner[1]), std::max(corner[2], corner[3])),
                                               std::max(std::max(corner[4], corner[5]), std::max(corner[6], corner[7])));
                    g2_block = std::max(g2_block, g2);
                    top_block = std::max(top_block, std::max(top_lo, top_hi));
                    for (int m = 0; m < 4; ++m) lo[m] = hi[m];
                    y2lo[0] = y2hi[0], y2lo[1] = y2hi[1], z2lo[0] = z2hi[0], z2lo[1] = z2hi[1];
                    top_lo = top_hi;
                }
                const std::size_t bx = static_cast<std::size_t>(i0 / kBlock);
                g2_row[bx] = std::max(g2_row[bx], g2_block);
                top_row[bx] = std::max(top_row[bx], top_block);
            }
        }
    double inside = 0;
    for (std::size_t n = 0; n < g2max.size(); ++n) {
        const double lc = std::sqrt(g2max[n]) / voxel_size;
        inside = std::max(inside, lc);
        DistanceSampler::BlockBound& m = level[static_cast<std::size_t>(q) * g2max.size() + n];
        m.lipschitz = std::max(m.lipschitz, float_above(lc * (1 + 1e-9)));
        m.max_value = std::max(m.max_value, float_above(topmax[n]));
    }
    return inside;
}
}  // namespace

double DistanceSampler::dense_level0(std::vector<BlockBound>& level, const std::array<int, 3>& bd) const {
    const std::array<int, 3> cells = cell_counts();
    return max_over_slabs(bd[2], [&](int q, double& inside) {
        if (float_samples())
            inside = dense_slab(samples_f_.data(), axis_table_, cells, bd, q, grid_.voxel_size, level.data());
        else
            inside = dense_slab(samples_d_.data(), axis_table_, cells, bd, q, grid_.voxel_size, level.data());
    });
}

double DistanceSampler::sparse_level0(std::vector<BlockBound>& level, const std::array<int, 3>& bd,
                                      std::vector<RaisedBox>& raised) const {
    const auto& d = grid_.dims;
    const std::array<int, 3> cells = cell_counts();
    const int vb[3] = {(d[0] + 7) / 8, (d[1] + 7) / 8, (d[2] + 7) / 8};  // blocks of voxels (block_brick_'s grid)
    return max_over_slabs(bd[2], [&](int q, double& inside) {
        for (int bj = 0; bj < bd[1]; ++bj)
            for (int bi = 0; bi < bd[0]; ++bi) {
                const std::size_t out = (static_cast<std::size_t>(q) * bd[1] + bj) * bd[0] + bi;
                BlockBound& m = level[out];
                // The block's cells have their corners in voxel blocks (bi, bj, q) .. +1 per axis:
                // when all of them are tiles of one shared brick, every cell is flat at that value.
                std::uint32_t first = block_brick_[(static_cast<std::size_t>(q) * vb[1] + bj) * vb[0] + bi];
                bool flat = first >= first_tile_brick_;
                for (int n = 1; n < 8 && flat; ++n) {
                    const int a = std::min(bi + (n & 1), vb[0] - 1), b = std::min(bj + ((n >> 1) & 1), vb[1] - 1),
                              c = std::min(q + (n >> 2), vb[2] - 1);
                    flat = block_brick_[(static_cast<std::size_t>(c) * vb[1] + b) * vb[0] + a] == first;
                }
                RaisedBox& box = raised[out];
                if (flat) {
                    const double value = at_clamped(bi * 8, bj * 8, q * 8);
                    m.lipschitz = 0;
                    m.max_value = float_above(value);
                    if (value > floor_sample_) {
                        const int lo[3] = {bi * 8, bj * 8, q * 8};
                        for (int a = 0; a < 3; ++a) box.lo[a] = lo[a], box.hi[a] = std::min(cells[a], lo[a] + 8);
                    }
                    continue;
                }
                for (int k = q * 8; k < std::min(cells[2], (q + 1) * 8); ++k)
                    for (int j = bj * 8; j < std::min(cells[1], (bj + 1) * 8); ++j)
                        for (int i = bi * 8; i < std::min(cells[0], (bi + 1) * 8); ++i)
                            if (add_cell(i, j, k, m, inside) > floor_sample_) {
                                const int at[3] = {i, j, k};
                                for (int a = 0; a < 3; ++a) box.lo[a] = std::min(box.lo[a], at[a]), box.hi[a] = std::max(box.hi[a], at[a] + 1);
                            }
            }
    });
}

void DistanceSampler::build_gaps(const std::vector<RaisedBox>& raised, const std::array<int, 3>& bd, Owned& own) {
    // gap_[q]: a lower bound, in cells (voxel sizes), of the distance from the centre of
    // sub-block q of 4^3 cells (cell coordinates 4 q + 2) to the raised cells; a sphere test
    // subtracts the distance from its centre to that point. Two bounds, the larger kept:
    // - near: the least distance from the centre to the boxes of raised cells of the blocks at
    //   most kNear blocks away per axis (below);
    // - far: the cells of block b span [8 b, 8 b + 8] per axis, so from them to any cell of
    //   block h the gap along an axis is at least 8 max(0, |b - h| - 1): the squared distance is
    //   at least 64 times a sum of one term per axis, whose least value over the raised blocks is
    //   found axis after axis (a min-plus convolution per line), looking at most kWindow blocks
    //   away per axis (farther along any axis is at least kWindow^2 in those terms: the cap).
    constexpr int kNear = 2;
    constexpr int kWindow = 32;
    constexpr std::int32_t kCap = kWindow * kWindow;
    auto g = [](int delta) {
        const int t = std::max(0, std::abs(delta) - 1);
        return static_cast<std::int32_t>(t * t);
    };
    const std::size_t n = static_cast<std::size_t>(bd[0]) * bd[1] * bd[2];
    std::vector<std::int32_t> cur(n), next(n);
    std::vector<std::uint8_t> near(n), near_next(n);
    for (std::size_t b = 0; b < n; ++b) cur[b] = raised[b].empty() ? kCap : 0, near[b] = !raised[b].empty();
    const std::size_t stride[3] = {1, static_cast<std::size_t>(bd[0]), static_cast<std::size_t>(bd[0]) * bd[1]};
    for (int a = 0; a < 3; ++a) {
        const int len = bd[a];
        tbb::parallel_for(std::size_t{0}, n, [&](std::size_t b) {
            const int x = static_cast<int>((b / stride[a]) % static_cast<std::size_t>(len));
            const std::size_t line = b - static_cast<std::size_t>(x) * stride[a];
            std::int32_t best = kCap;
            for (int h = std::max(0, x - kWindow); h <= std::min(len - 1, x + kWindow); ++h)
                best = std::min(best, cur[line + static_cast<std::size_t>(h) * stride[a]] + g(x - h));
            next[b] = best;
            std::uint8_t any = 0;
            for (int h = std::max(0, x - kNear); h <= std::min(len - 1, x + kNear); ++h) any |= near[line + static_cast<std::size_t>(h) * stride[a]];
            near_next[b] = any;
        });
        cur.swap(next);
        near.swap(near_next);
    }
    // gap_ per sub-block of 4^3 cells (x fastest; gap_dims_), from its centre 4 q + 2: the near
    // bound over the raised boxes of the blocks at most kNear away (a raised cell farther along
    // an axis is at least 8 kNear + 2 cells from the centre: the cap), and the far bound of its
    // block. A centre inside a raised box gets 0: no bound.
    const std::array<int, 3> cells = cell_counts();
    for (int a = 0; a < 3; ++a) gap_dims_[a] = (cells[a] + 3) / 4;
    std::vector<float>& gap = own.gap;
    gap.assign(static_cast<std::size_t>(gap_dims_[0]) * gap_dims_[1] * gap_dims_[2], 0.0f);
    tbb::parallel_for(0, gap_dims_[2], [&](int qz) {
        for (int qy = 0; qy < gap_dims_[1]; ++qy)
            for (int qx = 0; qx < gap_dims_[0]; ++qx) {
                const int i = qx >> 1, j = qy >> 1, k = qz >> 1;  // its block
                const std::size_t b = (static_cast<std::size_t>(k) * bd[1] + j) * bd[0] + i;
                const double centre[3] = {4.0 * qx + 2, 4.0 * qy + 2, 4.0 * qz + 2};
                double near_cells = 8.0 * kNear + 2;
                if (near[b]) {
                    double best2 = near_cells * near_cells;
                    for (int z = std::max(0, k - kNear); z <= std::min(bd[2] - 1, k + kNear); ++z)
                        for (int y = std::max(0, j - kNear); y <= std::min(bd[1] - 1, j + kNear); ++y)
                            for (int x = std::max(0, i - kNear); x <= std::min(bd[0] - 1, i + kNear); ++x) {
                                const RaisedBox& r = raised[(static_cast<std::size_t>(z) * bd[1] + y) * bd[0] + x];
                                if (r.empty()) continue;
                                double d2 = 0;
                                for (int a = 0; a < 3; ++a) {
                                    const double e = std::max({0.0, r.lo[a] - centre[a], centre[a] - r.hi[a]});
                                    d2 += e * e;
                                }
                                best2 = std::min(best2, d2);
                            }
                    near_cells = std::sqrt(best2);
                }
                const double far_cells = 8 * std::sqrt(static_cast<double>(cur[b]));
                // Rounded down to float: the stored gap never exceeds the double one.
                const double t = std::max(near_cells, far_cells) * (1 - 1e-9);
                float f = static_cast<float>(t);
                if (static_cast<double>(f) > t) f = std::nextafter(f, 0.0f);
                gap[(static_cast<std::size_t>(qz) * gap_dims_[1] + qy) * gap_dims_[0] + qx] = f;
            }
    });
    gap_ = gap;
}

std::array<int, 3> DistanceSampler::level0_dims() const {
    const int block = 1 << base_shift_;
    const std::array<int, 3> cells = cell_counts();
    return {(cells[0] + block - 1) / block, (cells[1] + block - 1) / block, (cells[2] + block - 1) / block};
}

std::size_t DistanceSampler::set_levels(std::array<int, 3> dims) {
    // Each level halves the blocks per axis, up to one block.
    levels_.clear();
    for (;;) {
        PyramidLevel lv;
        lv.first = levels_.empty() ? 0 : levels_.back().first + static_cast<std::size_t>(levels_.back().dims[0]) *
                                                                   levels_.back().dims[1] * levels_.back().dims[2];
        lv.dims = dims;
        lv.dx = static_cast<std::size_t>(dims[0]);
        lv.dxy = lv.dx * static_cast<std::size_t>(dims[1]);
        levels_.push_back(lv);
        if (dims[0] == 1 && dims[1] == 1 && dims[2] == 1) break;
        dims = {(dims[0] + 1) / 2, (dims[1] + 1) / 2, (dims[2] + 1) / 2};
    }
    top_shift_ = base_shift_ + static_cast<int>(levels_.size()) - 1;
    return levels_.back().first + 1;
}

void DistanceSampler::build_local_bounds(Owned& own) {
    const std::array<int, 3> bd = level0_dims();
    std::vector<BlockBound> level = detail::empty_level0(bd);
    double inside = 0;
    if (sparse_) {
        std::vector<RaisedBox> raised(level.size());
        inside = sparse_level0(level, bd, raised);
        build_gaps(raised, bd, own);
    } else {
        inside = dense_level0(level, bd);
    }
    lipschitz_ = detail::slope_bound(inside);
    // The levels' sizes first, so that the pyramid is one array allocated once.
    own.pyramid.resize(set_levels(bd));
    detail::build_pyramid(std::move(level), bd, own.pyramid.data());
    pyramid_ = own.pyramid;
}

namespace detail {

std::vector<DistanceSampler::BlockBound> empty_level0(const std::array<int, 3>& bd) {
    return std::vector<DistanceSampler::BlockBound>(static_cast<std::size_t>(bd[0]) * bd[1] * bd[2],
                                                    {0.0f, -std::numeric_limits<float>::infinity()});
}

double slope_bound(double inside) {
    // Outside the centre box V(P) = V(c(P)) - |P - c(P)| with c the projection onto the box;
    // projections onto convex sets are firmly nonexpansive: |c(P) - c(Q)|^2 + |(P - c(P)) -
    // (Q - c(Q))|^2 <= |P - Q|^2, so by Cauchy-Schwarz |V(P) - V(Q)| <= L_in a + b <=
    // sqrt(L_in^2 + 1) |P - Q|. A small relative margin absorbs rounding in value().
    return std::sqrt(inside * inside + 1.0) * (1 + 1e-9);
}

std::size_t pyramid_entries(std::array<int, 3> dims) {
    std::size_t n = 0;
    for (;;) {
        n += static_cast<std::size_t>(dims[0]) * dims[1] * dims[2];
        if (dims[0] == 1 && dims[1] == 1 && dims[2] == 1) return n;
        dims = {(dims[0] + 1) / 2, (dims[1] + 1) / 2, (dims[2] + 1) / 2};
    }
}

void build_pyramid(std::vector<DistanceSampler::BlockBound> level, std::array<int, 3> bd, DistanceSampler::PyramidEntry* pyramid) {
    using BlockBound = DistanceSampler::BlockBound;
    auto merge = [](BlockBound& m, const BlockBound& n) {
        m.lipschitz = std::max(m.lipschitz, n.lipschitz);
        m.max_value = std::max(m.max_value, n.max_value);
    };
    // Each level's entries: per axis mask, the bound of the blocks from this one upwards along
    // the mask's axes (mask 0: the block alone). Levels halve the blocks per axis, up to one
    // block (DistanceSampler::set_levels).
    std::size_t first = 0;
    for (;;) {
        const std::array<int, 3>& dims = bd;
        auto at_block = [&](int i, int j, int k) -> const BlockBound& {
            return level[(static_cast<std::size_t>(k) * dims[1] + j) * dims[0] + i];
        };
        for (int k = 0; k < dims[2]; ++k)
            for (int j = 0; j < dims[1]; ++j)
                for (int i = 0; i < dims[0]; ++i) {
                    DistanceSampler::PyramidEntry& e = pyramid[first + (static_cast<std::size_t>(k) * dims[1] + j) * dims[0] + i];
                    for (int mask = 0; mask < 8; ++mask) {
                        BlockBound& b = e.by_mask[mask];
                        b = at_block(i, j, k);
                        for (int n = 1; n < 8; ++n) {
                            if ((n & mask) != n) continue;  // only steps along the mask's axes
                            const int a = i + (n & 1), bj = j + ((n >> 1) & 1), c = k + (n >> 2);
                            if (a < dims[0] && bj < dims[1] && c < dims[2]) merge(b, at_block(a, bj, c));
                        }
                    }
                }
        first += level.size();
        if (bd[0] == 1 && bd[1] == 1 && bd[2] == 1) return;
        const std::array<int, 3> nd = {(bd[0] + 1) / 2, (bd[1] + 1) / 2, (bd[2] + 1) / 2};
        std::vector<BlockBound> up = empty_level0(nd);
        for (int k = 0; k < bd[2]; ++k)
            for (int j = 0; j < bd[1]; ++j)
                for (int i = 0; i < bd[0]; ++i)
                    merge(up[(static_cast<std::size_t>(k / 2) * nd[1] + j / 2) * nd[0] + i / 2],
                          level[(static_cast<std::size_t>(k) * bd[1] + j) * bd[0] + i]);
        level = std::move(up);
        bd = nd;
    }
}

}  // namespace detail

}  // namespace hp
