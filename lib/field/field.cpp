#include "field/field.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>

#include <tbb/parallel_for.h>

#include <sys/mman.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/error.hpp"
#include "core/prefetch.hpp"

namespace hp {

namespace detail {

template <class T>
T* HugePageAllocator<T>::allocate(std::size_t n) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T) - kHuge) throw std::bad_alloc();
    if (n * sizeof(T) < kHuge) {
        // Small arrays (the pyramid's upper levels) stay on ordinary pages.
        constexpr std::size_t kLine = 64;
        void* p = std::aligned_alloc(kLine, (n * sizeof(T) + kLine - 1) / kLine * kLine);
        if (!p) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    // Fresh pages straight from the kernel, advised before they are touched: memory the heap
    // recycles (glibc serves even large blocks from the heap once big blocks have been freed) is
    // already mapped with 4 KiB pages that the advice does not change.
    const std::size_t bytes = (n * sizeof(T) + kHuge - 1) / kHuge * kHuge;
    void* raw = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    // 2 MiB aligned: trim the head and the tail of the over-sized mapping.
    const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t aligned = (start + kHuge - 1) / kHuge * kHuge, end = start + bytes + kHuge;
    if (aligned > start) munmap(raw, aligned - start);
    if (end > aligned + bytes) munmap(reinterpret_cast<void*>(aligned + bytes), end - (aligned + bytes));
    void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
    // Advice only: without transparent huge pages the field works the same, a little slower.
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return static_cast<T*>(p);
}

template <class T>
void HugePageAllocator<T>::deallocate(T* p, std::size_t n) noexcept {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    if (n * sizeof(T) < kHuge)
        std::free(p);
    else
        munmap(p, (n * sizeof(T) + kHuge - 1) / kHuge * kHuge);
}

template struct HugePageAllocator<float>;
template struct HugePageAllocator<double>;
template struct HugePageAllocator<DistanceSampler::PyramidEntry>;

}  // namespace detail

DistanceSampler::DistanceSampler(const GridSpec& grid, std::span<const double> values) : grid_(grid) {
    if (values.size() != grid_.count() || grid_.count() == 0)
        fail_input("", "distance field size does not match its grid");
    const auto& d = grid_.dims;
    set_axes();
    std::array<std::size_t, 3> bricks{};  // bricks of 4^3 samples per axis
    for (int a = 0; a < 3; ++a) bricks[a] = static_cast<std::size_t>(d[a] + 3) / 4;
    brick_stride_ = {64, 64 * bricks[0], 64 * bricks[0] * bricks[1]};
    for (int a = 0; a < 3; ++a) {
        axis_table_[a].resize(static_cast<std::size_t>(d[a]) + 1);
        for (int i = 0; i <= d[a]; ++i) axis_table_[a][static_cast<std::size_t>(i)] = axis_offset(a, std::min(i, d[a] - 1));
    }
    bool as_float = true;
    max_value_ = 0;
    for (double v : values) {
        as_float = as_float && static_cast<double>(static_cast<float>(v)) == v;
        max_value_ = std::max(max_value_, v);
    }
    auto fill = [&](auto& out) {
        // The last bricks' slots beyond the grid stay unread (reads clamp to the grid).
        out.resize(bricks[0] * bricks[1] * bricks[2] * 64);
        using T = typename std::decay_t<decltype(out)>::value_type;
        for (int k = 0; k < d[2]; ++k)
            for (int j = 0; j < d[1]; ++j)
                for (int i = 0; i < d[0]; ++i) out[offset(i, j, k)] = static_cast<T>(values[grid_.index(i, j, k)]);
    };
    if (as_float)
        fill(samples_f_);
    else
        fill(samples_d_);
    build_local_bounds();
}

DistanceSampler::DistanceSampler(const BrickField<double>& band) : grid_(band.grid), sparse_(true) {
    const auto& d = grid_.dims;
    if (grid_.count() == 0 || band.index.size() != band.block_count() || band.tile.size() != band.block_count() ||
        band.bricks.size() % kBrickVoxels != 0)
        fail_input("", "narrow-band distance field does not match its grid");
    for (int a = 0; a < 3; ++a)
        if (band.blocks[static_cast<std::size_t>(a)] != (d[a] + kBrickDim - 1) / kBrickDim)
            fail_input("", "narrow-band distance field does not match its grid");
    set_axes();
    base_shift_ = 3;
    const std::size_t bricks = band.brick_count();
    for (std::uint32_t n : band.index)
        if (n != BrickField<double>::kTile && n >= bricks) fail_input("", "narrow-band distance field names a brick it does not hold");
    // Axis terms: the block's number times 512 (block number, high bits) plus the place in the
    // block (low 9 bits); the three places sum to at most 511, so the parts never mix.
    const std::size_t block_stride[3] = {1, static_cast<std::size_t>(band.blocks[0]),
                                         static_cast<std::size_t>(band.blocks[0]) * static_cast<std::size_t>(band.blocks[1])};
    for (int a = 0; a < 3; ++a) {
        axis_table_[a].resize(static_cast<std::size_t>(d[a]) + 1);
        for (int i = 0; i <= d[a]; ++i) {
            const int c = std::min(i, d[a] - 1);
            axis_table_[a][static_cast<std::size_t>(i)] =
                ((static_cast<std::size_t>(c >> 3) * block_stride[a]) << 9) + (static_cast<std::size_t>(c & 7) << (3 * a));
        }
    }
    // Tiles: one shared brick per distinct value (compared bit for bit), after the band's bricks.
    std::vector<double> tile_values;
    block_brick_.resize(band.block_count());
    bool as_float = true;
    max_value_ = 0;
    floor_sample_ = std::numeric_limits<double>::infinity();
    auto see = [&](double v) {
        as_float = as_float && static_cast<double>(static_cast<float>(v)) == v;
        max_value_ = std::max(max_value_, v);
    };
    for (double v : band.bricks) see(v);
    first_tile_brick_ = static_cast<std::uint32_t>(bricks);
    for (std::size_t b = 0; b < band.block_count(); ++b) {
        if (band.index[b] != BrickField<double>::kTile) {
            block_brick_[b] = band.index[b];
            continue;
        }
        const double v = band.tile[b];
        std::size_t t = 0;
        while (t < tile_values.size() && std::memcmp(&tile_values[t], &v, sizeof v) != 0) ++t;
        if (t == tile_values.size()) {
            if (tile_values.size() >= 64) fail_input("", "narrow-band distance field has more than 64 distinct tile values");
            tile_values.push_back(v);
            see(v);
            floor_sample_ = std::min(floor_sample_, v);  // the far tiles' value (band voxels may lie below it)
        }
        block_brick_[b] = static_cast<std::uint32_t>(bricks + t);
    }
    // Samples above the floor by the rounding of an interpolation of equal corners stay below
    // floor_ (a few ulps; the same margin as the blocks' largest samples, merge_block).
    floor_ = floor_sample_ + std::abs(floor_sample_) * 1e-12;  // no tiles: +inf, no cell above it, no bound
    auto fill = [&](auto& out) {
        using T = typename std::decay_t<decltype(out)>::value_type;
        out.resize((bricks + tile_values.size()) * kBrickVoxels);
        // Band voxels beyond the tiles' values read the nearest of them: the band is exact to B
        // voxel sizes and reads -B s outside and +B s inside beyond, as the tiles do (a voxel of
        // the band's last layers may lie up to sqrt(3) B voxel sizes away). Next to a tile such a
        // voxel made cells with steps of several voxel sizes per voxel, whose slope bounds then
        // spread to every ball reaching them through the pyramid. Contacts do not change: the
        // band's exact distances change by at most sqrt(3) s over a cell, so only cells whose
        // corners are all deeper than (B - sqrt 3) s, or all farther outside, read other values.
        const double inf = std::numeric_limits<double>::infinity();
        const double low = !tile_values.empty() && floor_sample_ < 0 ? floor_sample_ : -inf;
        double high = -inf;
        for (double t : tile_values) high = std::max(high, t);
        if (!(high > 0)) high = inf;
        for (std::size_t i = 0; i < band.bricks.size(); ++i) out[i] = static_cast<T>(std::min(std::max(band.bricks[i], low), high));
        for (std::size_t t = 0; t < tile_values.size(); ++t)
            std::fill_n(out.begin() + static_cast<std::ptrdiff_t>((bricks + t) * kBrickVoxels), kBrickVoxels, static_cast<T>(tile_values[t]));
    };
    if (as_float)
        fill(samples_f_);
    else
        fill(samples_d_);
    build_local_bounds();
}

void DistanceSampler::set_axes() {
    if (!(grid_.voxel_size > 0) || !std::isfinite(grid_.voxel_size)) fail_input("", "distance field has no valid voxel size");
    inv_s_ = 1.0 / grid_.voxel_size;
    for (int a = 0; a < 3; ++a) {
        top_[a] = grid_.dims[a] - 1;
        last_cell_[a] = std::max(0, grid_.dims[a] - 2);
        origin_[a] = grid_.origin[a];
    }
}

std::size_t DistanceSampler::memory_bytes() const {
    std::size_t n = samples_f_.size() * sizeof(float) + samples_d_.size() * sizeof(double) + pyramid_.size() * sizeof(PyramidEntry) +
                    block_brick_.size() * sizeof(std::uint32_t) + gap_.size() * sizeof(float);
    for (const auto& t : axis_table_) n += t.size() * sizeof(std::size_t);
    return n;
}

namespace {
// The float nearest above or at v (block bounds must never fall below what they bound).
float round_up(double v) {
    float f = static_cast<float>(v);
    if (static_cast<double>(f) < v) f = std::nextafter(f, std::numeric_limits<float>::infinity());
    return f;
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
    double g2 = 0, top = c[0];
    for (int n = 0; n < 8; ++n) {
        const double dx = c[n | 1] - c[n & ~1];
        const double dy = c[n | 2] - c[n & ~2];
        const double dz = c[n | 4] - c[n & ~4];
        g2 = std::max(g2, dx * dx + dy * dy + dz * dz);
        top = std::max(top, c[n]);
    }
    const double lc = std::sqrt(g2) / grid_.voxel_size;
    inside = std::max(inside, lc);
    // Rounded up to float so the stored bound never falls below the double one.
    m.lipschitz = std::max(m.lipschitz, round_up(lc * (1 + 1e-9)));
    m.max_value = std::max(m.max_value, round_up(top));
    return top;
}

double DistanceSampler::dense_level0(std::vector<BlockBound>& level, const std::array<int, 3>& bd) const {
    const std::array<int, 3> cells = cell_counts();
    return max_over_slabs(bd[2], [&](int q, double& inside) {
        for (int k = q * kBlock; k < std::min(cells[2], (q + 1) * kBlock); ++k)
            for (int j = 0; j < cells[1]; ++j)
                for (int i = 0; i < cells[0]; ++i)
                    add_cell(i, j, k, level[(static_cast<std::size_t>(q) * bd[1] + j / kBlock) * bd[0] + i / kBlock], inside);
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
                    m.max_value = round_up(value);
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

void DistanceSampler::build_gaps(const std::vector<RaisedBox>& raised, const std::array<int, 3>& bd) {
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
    gap_.assign(static_cast<std::size_t>(gap_dims_[0]) * gap_dims_[1] * gap_dims_[2], 0.0f);
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
                gap_[(static_cast<std::size_t>(qz) * gap_dims_[1] + qy) * gap_dims_[0] + qx] = f;
            }
    });
}

void DistanceSampler::build_local_bounds() {
    const int block = 1 << base_shift_;
    const std::array<int, 3> cells = cell_counts();
    std::array<int, 3> bd{(cells[0] + block - 1) / block, (cells[1] + block - 1) / block, (cells[2] + block - 1) / block};
    const float lowest = -std::numeric_limits<float>::infinity();
    std::vector<BlockBound> level(static_cast<std::size_t>(bd[0]) * bd[1] * bd[2], BlockBound{0.0f, lowest});
    double inside = 0;
    if (sparse_) {
        std::vector<RaisedBox> raised(level.size());
        inside = sparse_level0(level, bd, raised);
        build_gaps(raised, bd);
    } else {
        inside = dense_level0(level, bd);
    }

    // Outside the centre box V(P) = V(c(P)) - |P - c(P)| with c the projection onto the box;
    // projections onto convex sets are firmly nonexpansive: |c(P) - c(Q)|^2 + |(P - c(P)) -
    // (Q - c(Q))|^2 <= |P - Q|^2, so by Cauchy-Schwarz |V(P) - V(Q)| <= L_in a + b <=
    // sqrt(L_in^2 + 1) |P - Q|. A small relative margin absorbs rounding in value().
    lipschitz_ = std::sqrt(inside * inside + 1.0) * (1 + 1e-9);
    auto merge = [](BlockBound& m, const BlockBound& n) {
        m.lipschitz = std::max(m.lipschitz, n.lipschitz);
        m.max_value = std::max(m.max_value, n.max_value);
    };
    // The levels' sizes first (each halves the blocks per axis, up to one block), so that the
    // pyramid is one array allocated once.
    for (std::array<int, 3> dims = bd;;) {
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
    pyramid_.resize(levels_.back().first + 1);
    top_shift_ = base_shift_ + static_cast<int>(levels_.size()) - 1;
    // Each level's entries: per axis mask, the bound of the blocks from this one upwards along
    // the mask's axes (mask 0: the block alone).
    auto add_level = [&](const std::vector<BlockBound>& blocks, const PyramidLevel& lv) {
        const auto& dims = lv.dims;
        auto at_block = [&](int i, int j, int k) -> const BlockBound& {
            return blocks[(static_cast<std::size_t>(k) * dims[1] + j) * dims[0] + i];
        };
        for (int k = 0; k < dims[2]; ++k)
            for (int j = 0; j < dims[1]; ++j)
                for (int i = 0; i < dims[0]; ++i) {
                    PyramidEntry& e = pyramid_[lv.first + (static_cast<std::size_t>(k) * dims[1] + j) * dims[0] + i];
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
    };
    add_level(level, levels_[0]);
    for (std::size_t m = 1; m < levels_.size(); ++m) {
        const std::array<int, 3> nd = levels_[m].dims;
        std::vector<BlockBound> up(static_cast<std::size_t>(nd[0]) * nd[1] * nd[2], BlockBound{0.0f, lowest});
        for (int k = 0; k < bd[2]; ++k)
            for (int j = 0; j < bd[1]; ++j)
                for (int i = 0; i < bd[0]; ++i)
                    merge(up[(static_cast<std::size_t>(k / 2) * nd[1] + j / 2) * nd[0] + i / 2],
                          level[(static_cast<std::size_t>(k) * bd[1] + j) * bd[0] + i]);
        level = std::move(up);
        bd = nd;
        add_level(level, levels_[m]);
    }
}

// The hot paths work on the three axes at once: x and y in the two lanes of one 16-byte vector,
// z in another (its second lane unused). GCC/Clang vector extensions; on x86-64 each operation on
// a pair is one packed SSE2 instruction.
namespace detail {
using Pair = double __attribute__((vector_size(16)));
using IntPair = int __attribute__((vector_size(8)));
struct AxisLanes {
    Pair xy, zw;
    double operator[](int a) const { return a < 2 ? xy[a] : zw[a - 2]; }
};
struct IntAxisLanes {
    IntPair xy, zw;
    int operator[](int a) const { return a < 2 ? xy[a] : zw[a - 2]; }
};
inline AxisLanes lanes(const std::array<double, 4>& a) {
    AxisLanes v;
    std::memcpy(&v, a.data(), sizeof v);
    return v;
}
inline AxisLanes operator-(const AxisLanes& a, const AxisLanes& b) { return {a.xy - b.xy, a.zw - b.zw}; }
inline AxisLanes operator*(const AxisLanes& a, double s) { return {a.xy * s, a.zw * s}; }
inline AxisLanes operator+(const AxisLanes& a, double s) { return {a.xy + s, a.zw + s}; }
inline AxisLanes operator-(const AxisLanes& a, double s) { return {a.xy - s, a.zw - s}; }
// Lane by lane std::min(a, b) and std::max(0.0, a): the operand they choose, in every lane (a
// NaN one too).
inline Pair min_pair(const Pair& a, const Pair& b) { return b < a ? b : a; }
inline Pair max0_pair(const Pair& a) {
    const Pair zero{};
    return zero < a ? a : zero;
}
inline AxisLanes min_lanes(const AxisLanes& a, const AxisLanes& b) { return {min_pair(a.xy, b.xy), min_pair(a.zw, b.zw)}; }
// Lane by lane max(0, min(x, top)): x clamped to [0, top], NaN to 0; a truncation of it is its
// floor.
inline AxisLanes clamp_lanes(const AxisLanes& x, const AxisLanes& top) {
    return {max0_pair(min_pair(x.xy, top.xy)), max0_pair(min_pair(x.zw, top.zw))};
}
inline IntAxisLanes truncate(const AxisLanes& a) {
    return {__builtin_convertvector(a.xy, IntPair), __builtin_convertvector(a.zw, IntPair)};
}
inline AxisLanes to_double(const IntAxisLanes& a) {
    return {__builtin_convertvector(a.xy, Pair), __builtin_convertvector(a.zw, Pair)};
}
}  // namespace detail

namespace {
// std::max(0.0, x) (0 for a NaN x) without a branch: compilers branch on it, and where a branch
// predictor cannot learn the outcome a wrong guess costs more.
inline double max0(double x) {
#if defined(__SSE2__)
    return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(x), _mm_setzero_pd()));  // x > 0 ? x : 0
#else
    return std::max(0.0, x);
#endif
}
}  // namespace

inline detail::AxisLanes DistanceSampler::to_cells(const Vec3d& p) const {
    return (detail::AxisLanes{detail::Pair{p.x, p.y}, detail::Pair{p.z, 0.0}} - detail::lanes(origin_)) * inv_s_ - 0.5;
}

BallBound DistanceSampler::merge_block(const BlockBound& b, bool leaves) const {
    BallBound out;
    const double ld = b.lipschitz;
    out.interior_lipschitz = std::min(ld * (1 + 1e-9), lipschitz_);
    // sqrt(L_in^2 + 1) when the ball leaves the centre box, else L_in, without a branch (the
    // sphere test's, upper_bound): ld is a float, so ld * ld is exact and its root is ld again.
    out.lipschitz = std::min(std::sqrt(ld * ld + static_cast<double>(leaves)) * (1 + 1e-9), lipschitz_);
    // V at a point of the ball is a convex combination of the samples of the cell holding it (or,
    // outside the centre box, of the cell holding its projection, minus a distance): at most the
    // largest sample of the cells the clamped box meets, up to the rounding of the interpolation.
    const double top = b.max_value;
    out.max_value = top + std::abs(top) * 1e-12;
    return out;
}

inline void DistanceSampler::locate_cell_at(const detail::AxisLanes& u, CellRef& ref) const {
    using namespace detail;  // the lanes and their operations
    // u: continuous cell coordinates (voxel centres at integers). Clamped to the centre box
    // (NaN to 0), then to the last cell: the cell's lower corner b is the truncation (the floor
    // of a non-negative number), and clamping to an integer bound before truncating is the same
    // as after. A one-voxel axis has top 0: base 0, frac 0 (reads its only sample twice).
    const AxisLanes c = clamp_lanes(u, lanes(top_));
    const IntAxisLanes b = truncate(min_lanes(c, lanes(last_cell_)));
    const AxisLanes frac = c - to_double(b), out = u - c;
    for (int a = 0; a < 3; ++a) {
        ref.out[a] = out[a];
        ref.frac[a] = frac[a];
        // The brick offset is a sum of one term per axis, so the eight corners need two terms
        // per axis; the upper neighbour is clamped to the grid (axis_table_).
        const std::size_t* t = axis_table_[a].data() + b[a];
        ref.offset[a][0] = t[0];
        ref.offset[a][1] = t[1];
    }
}

inline void DistanceSampler::locate_cell(const Vec3d& p, CellRef& out) const { locate_cell_at(to_cells(p), out); }

inline const DistanceSampler::BlockBound& DistanceSampler::locate(const detail::AxisLanes& u, double rc, bool& leaves) const {
    using namespace detail;  // the lanes and their operations
    // The ball's box in cell coordinates (cell i spans centre coordinates i .. i + 1), clamped to
    // the cells first: floor then commutes with the clamp (integer bounds) and a truncation is
    // the floor of a non-negative number. The clamp also maps NaN to 0; an axis with a NaN bound
    // (a NaN centre or radius) takes all its cells.
    const AxisLanes lo = u - rc, hi = u + rc, top = lanes(top_), last = lanes(last_cell_);
    // The box leaves the centre box when a lower end is below 0 or an upper end above the top
    // (or is NaN).
    const auto inside_xy = (lo.xy >= 0.0) & (hi.xy - top.xy <= 0.0);
    const auto inside_z = (lo.zw >= 0.0) & (hi.zw - top.zw <= 0.0);
    leaves = !(inside_xy[0] & inside_xy[1] & inside_z[0]);
    IntAxisLanes l = truncate(clamp_lanes(lo, last)), h = truncate(clamp_lanes(hi, last));
    const auto ordered_xy = hi.xy >= lo.xy;
    const auto ordered_z = hi.zw >= lo.zw;
    if (!(ordered_xy[0] & ordered_xy[1] & ordered_z[0])) [[unlikely]] {
        for (int a = 0; a < 2; ++a)
            if (!ordered_xy[a]) l.xy[a] = 0, h.xy[a] = static_cast<int>(last_cell_[a]);
        if (!ordered_z[0]) l.zw[0] = 0, h.zw[0] = static_cast<int>(last_cell_[2]);
    }
    // The finest level m where the box spans at most two blocks (of 4 << m cells) per axis. A box
    // whose extent (hi - lo) reaches 8 << m never fits at level m, so start at the finest level
    // where every extent is below 8 << m; there an extent is below 4 << (m + 1), so the next
    // level always fits (two floors of numbers less than a block apart differ by at most one).
    const IntPair ext_xy = h.xy - l.xy, ext_z = h.zw - l.zw;
    const int extent = std::max(std::max(ext_xy[0], ext_xy[1]), ext_z[0]);
    int shift = std::max(base_shift_, extent < 8 ? 2 : static_cast<int>(std::bit_width(static_cast<unsigned>(extent))) - 1);
    // The blocks spanned per axis less one: 0 or 1 when the level fits (any is 2 or more when the
    // bitwise or of the three is). The step up is chosen without a branch: it is taken about as
    // often as not, and a branch predictor guesses wrong too often.
    const IntPair try_xy = (h.xy >> shift) - (l.xy >> shift), try_z = (h.zw >> shift) - (l.zw >> shift);
    shift += static_cast<int>((try_xy[0] | try_xy[1] | try_z[0]) > 1) & static_cast<int>(shift < top_shift_);
    const IntPair bxy = l.xy >> shift, bz = l.zw >> shift;
    const IntPair sxy = (h.xy >> shift) - bxy, sz = (h.zw >> shift) - bz;
    const int mask = sxy[0] | (sxy[1] << 1) | (sz[0] << 2);  // bit a: the box spans two blocks along axis a
    const PyramidLevel& lv = levels_[static_cast<std::size_t>(shift - base_shift_)];
    return pyramid_[lv.first + static_cast<std::size_t>(bz[0]) * lv.dxy + static_cast<std::size_t>(bxy[1]) * lv.dx +
                    static_cast<std::size_t>(bxy[0])]
        .by_mask[mask];
}

template <class F>
inline decltype(auto) DistanceSampler::with_samples(F&& f) const {
    if (sparse_) return float_samples() ? f(std::true_type{}, samples_f_.data()) : f(std::true_type{}, samples_d_.data());
    return float_samples() ? f(std::false_type{}, samples_f_.data()) : f(std::false_type{}, samples_d_.data());
}

template <bool Sparse, class T>
inline void DistanceSampler::prefetch_in(const T* base, const CellRef& c) const {
    // The eight samples lie on two z layers of a brick or of two bricks; per layer, one cache
    // line, or two or four when the cell crosses a line (a brick) along x or y. All eight are
    // asked for: a second request for a line already on its way costs one instruction, and
    // working out which lines are distinct cost more, with branches no predictor learns.
    // Sparse, each place goes through the block table first (a small table, mostly cached).
    const auto& o = c.offset;
    for (int dk = 0; dk < 2; ++dk)
        for (int dj = 0; dj < 2; ++dj) {
            const std::size_t row = o[2][dk] + o[1][dj];
            prefetch_line(base + resolve<Sparse>(row + o[0][0]));
            prefetch_line(base + resolve<Sparse>(row + o[0][1]));
        }
}

inline void DistanceSampler::prefetch(const CellRef& c) const {
    if (sparse_) {
        if (float_samples())
            prefetch_in<true>(samples_f_.data(), c);
        else
            prefetch_in<true>(samples_d_.data(), c);
    } else if (float_samples()) {
        prefetch_in<false>(samples_f_.data(), c);
    } else {
        prefetch_in<false>(samples_d_.data(), c);
    }
}

template <bool Sparse, class T>
inline double DistanceSampler::trilinear_in(const T* samples, const CellRef& ref) const {
    // The corners as named values read where they are used (an array of eight here made the
    // compiler pack the conversions into vectors and spill them to the stack).
    const auto& o = ref.offset;
    const double* f = ref.frac;
    auto lerp_x = [&](std::size_t yz) {
        const double a = samples[resolve<Sparse>(yz + o[0][0])], b = samples[resolve<Sparse>(yz + o[0][1])];
        return a * (1 - f[0]) + b * f[0];
    };
    const double c00 = lerp_x(o[1][0] + o[2][0]), c10 = lerp_x(o[1][1] + o[2][0]);
    const double c01 = lerp_x(o[1][0] + o[2][1]), c11 = lerp_x(o[1][1] + o[2][1]);
    const double c0 = c00 * (1 - f[1]) + c10 * f[1];
    const double c1 = c01 * (1 - f[1]) + c11 * f[1];
    return c0 * (1 - f[2]) + c1 * f[2];
}

inline double DistanceSampler::trilinear(const CellRef& ref) const {
    if (sparse_) return float_samples() ? trilinear_in<true>(samples_f_.data(), ref) : trilinear_in<true>(samples_d_.data(), ref);
    return float_samples() ? trilinear_in<false>(samples_f_.data(), ref) : trilinear_in<false>(samples_d_.data(), ref);
}

inline double DistanceSampler::outside_distance(const CellRef& ref) const {
    const double* d = ref.out;  // the point minus its projection, per axis (cell units)
    const double out2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    return max0(std::sqrt(out2) * grid_.voxel_size);  // 0 inside (and for a NaN point)
}

void DistanceSampler::probe_value(const Vec3d& p, CellRef& out) const {
    locate_cell(p, out);
    prefetch(out);
}

void DistanceSampler::locate_sphere(const Vec3d& center, double radius, SphereProbe& out) const {
    const detail::AxisLanes u = to_cells(center);
    locate_cell_at(u, out.cell);
    out.radius = radius;
    out.block = &locate(u, radius_in_cells(radius), out.leaves);
    if (sparse_) {
        // The sub-block of the centre cell (of c(X)) and the distance from c(X) to the
        // sub-block's centre, whose bound gap_ holds (read at the test: probe_sphere prefetches it).
        using namespace detail;
        const AxisLanes c = clamp_lanes(u, lanes(top_));
        const IntAxisLanes q = truncate(min_lanes(c, lanes(last_cell_)));
        const IntAxisLanes sub{q.xy >> 2, q.zw >> 2};
        const AxisLanes e = c - (to_double(sub) * 4.0 + 2.0);
        const double d2 = e.xy[0] * e.xy[0] + e.xy[1] * e.xy[1] + e.zw[0] * e.zw[0];
        out.gap_entry = gap_.data() + (static_cast<std::size_t>(sub.zw[0]) * static_cast<std::size_t>(gap_dims_[1]) +
                                       static_cast<std::size_t>(sub.xy[1])) * static_cast<std::size_t>(gap_dims_[0]) +
                        static_cast<std::size_t>(sub.xy[0]);
        out.centre_offset = std::sqrt(d2);
    }
}

void DistanceSampler::probe_sphere(const Vec3d& center, double radius, SphereProbe& out) const {
    locate_sphere(center, radius, out);
    prefetch_line(out.block);
    if (sparse_) prefetch_line(out.gap_entry);
    prefetch(out.cell);
}

template <bool Lazy>
inline double DistanceSampler::probe_bound(const SphereProbe& probe) const {
    const double radius = probe.radius;
    // For P in the ball, V(P) = V(c(P)) - |P - c(P)| (c: projection onto the centre box) and
    // |P - c(P)| is P's distance to the box, at least `away` = (X's distance to it) - r. So every
    // bound of V(c(P)) below is lowered by `away`: a ball far outside the grid is pruned even
    // where the grid's border cells are steep (an open mesh's hole, slope tens of voxels per
    // voxel, would otherwise let V(c(X)) + L_in r reach zero from a hundred voxels away). X's
    // distance to the box needs no read of the field; a NaN centre gives away = 0.
    const double outside = outside_distance(probe.cell);  // |X - c(X)|
    const double away = max0(outside - radius);
    const BallBound b = merge_block(*probe.block, probe.leaves);
    // The blocks' largest sample alone, when that is negative (no need of the cell). Sparse,
    // also the floor's bound: the segment from c(X) to c(P) stays at the floor until it meets a
    // cell above it, at least `gap` from c(X), and rises by at most L_in per unit from there.
    double alone = b.max_value - away;
    // No positive gap: c(X) may lie in a cell above the floor, no such bound.
    if (sparse_) {
        const double gap = (static_cast<double>(*probe.gap_entry) - probe.centre_offset) * grid_.voxel_size * (1 - 1e-9);
        if (gap > 0) alone = std::min(alone, floor_ + b.interior_lipschitz * max0(radius - gap) - away);
    }
    if constexpr (Lazy) {
        if (alone < 0) return alone;
    }
    // V(c(P)) <= V(c(X)) + L_in r: |c(P) - c(X)| <= |P - X| <= r (projections do not expand) and
    // the segment c(X)..c(P) lies in the clamped box whose cells gave L_in. No sqrt(L^2 + 1)
    // factor for balls that leave the grid.
    // When the centre lies far outside, V(X) + L r (with L = sqrt(L_in^2 + 1)) may be the tighter.
    const double inner = trilinear(probe.cell);
    const double full = std::min(std::min(alone, inner + b.interior_lipschitz * radius - away), inner - outside + b.lipschitz * radius);
    return alone < 0 ? alone : full;
}

double DistanceSampler::upper_bound(const SphereProbe& probe) const { return probe_bound<false>(probe); }

double DistanceSampler::upper_bound_lazy(const SphereProbe& probe) const { return probe_bound<true>(probe); }

double DistanceSampler::value(const CellRef& c) const {
    return trilinear(c) - outside_distance(c);  // less 0 inside the centre box: the same value
}

BallBound DistanceSampler::ball_bound(const Vec3d& center, double radius) const {
    bool leaves = false;
    const BlockBound& b = locate(to_cells(center), radius_in_cells(radius), leaves);
    return merge_block(b, leaves);  // after locate has set `leaves`
}

double DistanceSampler::upper_bound(const Vec3d& center, double radius) const {
    SphereProbe probe;
    locate_sphere(center, radius, probe);
    return upper_bound_lazy(probe);
}

double DistanceSampler::value(const Vec3d& p) const {
    CellRef cell;
    locate_cell(p, cell);
    return value(cell);
}

void DistanceSampler::read_corners(const CellRef& ref, double (&corner)[8]) const {
    const auto& o = ref.offset;
    with_samples([&](auto sparse, const auto* samples) {
        for (int n = 0; n < 8; ++n) corner[n] = samples[resolve<decltype(sparse)::value>(o[0][n & 1] + o[1][(n >> 1) & 1] + o[2][n >> 2])];
    });
}

void DistanceSampler::read_cell(const Vec3d& p, Cell& cell) const {
    locate_cell(p, cell.ref);
    read_corners(cell.ref, cell.corner);
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
