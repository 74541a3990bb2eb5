// DistanceSampler (field.hpp): building it from a dense field or a band (samples in bricks of 4^3,
// float where every value is one), its memory; the block bounds are in field_bounds.cpp, the
// lookups in field_lookup.cpp.
#include "field/field.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <new>
#include <type_traits>

#include <sys/mman.h>

#include "core/error.hpp"

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
    bool as_float = true;
    max_value_ = 0;
    for (double v : values) {
        as_float = as_float && static_cast<double>(static_cast<float>(v)) == v;
        max_value_ = std::max(max_value_, v);
    }
    if (as_float)
        build_dense<float>(values);
    else
        build_dense<double>(values);
}

DistanceSampler::DistanceSampler(const GridSpec& grid, std::span<const float> values) : grid_(grid) {
    max_value_ = 0;
    for (float v : values) max_value_ = std::max(max_value_, static_cast<double>(v));
    build_dense<float>(values);
}

// The constructors set max_value_ in the pass over the values they already make.
template <class T, class V>
void DistanceSampler::build_dense(std::span<const V> values) {
    if (values.size() != grid_.count() || grid_.count() == 0)
        fail_input("", "distance field size does not match its grid");
    const auto& d = grid_.dims;
    set_axes();
    set_axis_tables();
    auto own = std::make_shared<Owned>();
    auto& out = [&own]() -> auto& {
        if constexpr (std::is_same_v<T, float>) return own->samples_f;
        else return own->samples_d;
    }();
    // The last bricks' slots beyond the grid stay unread (reads clamp to the grid).
    out.resize(brick_stride_[2] * static_cast<std::size_t>((d[2] + 3) / 4));
    for (int k = 0; k < d[2]; ++k)
        for (int j = 0; j < d[1]; ++j)
            for (int i = 0; i < d[0]; ++i) out[offset(i, j, k)] = static_cast<T>(values[grid_.index(i, j, k)]);
    samples_f_ = own->samples_f;
    samples_d_ = own->samples_d;
    build_local_bounds(*own);
    storage_ = std::move(own);
}

void DistanceSampler::set_axis_tables() {
    const auto& d = grid_.dims;
    if (!sparse_) {
        std::array<std::size_t, 3> bricks{};  // bricks of 4^3 samples per axis
        for (int a = 0; a < 3; ++a) bricks[a] = static_cast<std::size_t>(d[a] + 3) / 4;
        brick_stride_ = {64, 64 * bricks[0], 64 * bricks[0] * bricks[1]};
        for (int a = 0; a < 3; ++a) {
            axis_table_[a].resize(static_cast<std::size_t>(d[a]) + 1);
            for (int i = 0; i <= d[a]; ++i) axis_table_[a][static_cast<std::size_t>(i)] = axis_offset(a, std::min(i, d[a] - 1));
        }
        return;
    }
    // Axis terms: the block's number times 512 (block number, high bits) plus the place in the
    // block (low 9 bits); the three places sum to at most 511, so the parts never mix.
    const std::size_t blocks[3] = {static_cast<std::size_t>(d[0] + kBrickDim - 1) / kBrickDim,
                                   static_cast<std::size_t>(d[1] + kBrickDim - 1) / kBrickDim, 0};
    const std::size_t block_stride[3] = {1, blocks[0], blocks[0] * blocks[1]};
    for (int a = 0; a < 3; ++a) {
        axis_table_[a].resize(static_cast<std::size_t>(d[a]) + 1);
        for (int i = 0; i <= d[a]; ++i) {
            const int c = std::min(i, d[a] - 1);
            axis_table_[a][static_cast<std::size_t>(i)] =
                ((static_cast<std::size_t>(c >> 3) * block_stride[a]) << 9) + (static_cast<std::size_t>(c & 7) << (3 * a));
        }
    }
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
    set_axis_tables();
    // Tiles: one shared brick per distinct value (compared bit for bit), after the band's bricks.
    std::vector<double> tile_values;
    auto own = std::make_shared<Owned>();
    std::vector<std::uint32_t>& block_brick = own->block_brick;
    block_brick.resize(band.block_count());
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
            block_brick[b] = band.index[b];
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
        block_brick[b] = static_cast<std::uint32_t>(bricks + t);
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
        fill(own->samples_f);
    else
        fill(own->samples_d);
    samples_f_ = own->samples_f;
    samples_d_ = own->samples_d;
    block_brick_ = own->block_brick;
    build_local_bounds(*own);
    storage_ = std::move(own);
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

DistanceSampler::Layout DistanceSampler::layout() const {
    Layout l;
    l.grid = grid_;
    l.sparse = sparse_;
    l.samples_f = samples_f_;
    l.samples_d = samples_d_;
    l.pyramid = pyramid_;
    l.block_brick = block_brick_;
    l.gap = gap_;
    l.lipschitz = lipschitz_;
    l.max_value = max_value_;
    l.floor_sample = floor_sample_;
    l.first_tile_brick = first_tile_brick_;
    return l;
}

namespace {
template <class T>
bool aligned(std::span<const T> s) {
    return reinterpret_cast<std::uintptr_t>(s.data()) % alignof(T) == 0;
}
}  // namespace

DistanceSampler::DistanceSampler(const Layout& l, std::shared_ptr<const void> keep) : grid_(l.grid), sparse_(l.sparse) {
    auto bad = [](const std::string& what) { fail_input("", "prepared sampler: " + what); };
    const auto& d = grid_.dims;
    for (int a = 0; a < 3; ++a)
        if (d[a] < 1 || d[a] > (1 << 20) || !std::isfinite(grid_.origin[a])) bad("the grid has an axis of no voxel, too many, or a non-finite origin");
    set_axes();
    base_shift_ = sparse_ ? 3 : 2;
    set_axis_tables();
    const bool as_float = !l.samples_f.empty();
    if (as_float == !l.samples_d.empty()) bad("it must hold its samples as float or as double, and only one of them");
    if (!aligned(l.samples_f) || !aligned(l.samples_d) || !aligned(l.pyramid) || !aligned(l.block_brick) || !aligned(l.gap))
        bad("an array is not aligned to its element size");
    const std::size_t n = as_float ? l.samples_f.size() : l.samples_d.size();
    if (!sparse_) {
        const std::size_t expected = brick_stride_[2] * static_cast<std::size_t>((d[2] + 3) / 4);
        if (n != expected) bad(std::to_string(n) + " samples where its grid has room for " + std::to_string(expected));
        if (!l.block_brick.empty() || !l.gap.empty()) bad("a dense sampler with a narrow band's tables");
    } else {
        const std::size_t blocks = static_cast<std::size_t>((d[0] + kBrickDim - 1) / kBrickDim) * static_cast<std::size_t>((d[1] + kBrickDim - 1) / kBrickDim) *
                                   static_cast<std::size_t>((d[2] + kBrickDim - 1) / kBrickDim);
        if (l.block_brick.size() != blocks) bad("its brick table does not have one entry per block of its grid");
        if (n == 0 || n % kBrickVoxels != 0) bad("its samples are not whole bricks");
        const std::size_t held = n / kBrickVoxels;
        if (l.first_tile_brick > held) bad("its first tile brick lies beyond its bricks");
        for (std::uint32_t b : l.block_brick)
            if (b >= held) bad("its brick table names a brick it does not hold");
        const std::array<int, 3> cells = cell_counts();
        for (int a = 0; a < 3; ++a) gap_dims_[a] = (cells[a] + 3) / 4;
        if (l.gap.size() != static_cast<std::size_t>(gap_dims_[0]) * gap_dims_[1] * gap_dims_[2])
            bad("its sub-block bounds do not have one entry per sub-block of its grid");
        if (std::isnan(l.floor_sample)) bad("its floor is not a number");
        floor_sample_ = l.floor_sample;
        floor_ = floor_sample_ + std::abs(floor_sample_) * 1e-12;
        first_tile_brick_ = l.first_tile_brick;
    }
    if (l.pyramid.size() != set_levels(level0_dims())) bad("its bound pyramid does not have the entries its grid gives");
    if (!(l.lipschitz >= 1) || std::isnan(l.max_value)) bad("its slope bound or largest value is not valid");
    lipschitz_ = l.lipschitz;
    max_value_ = l.max_value;
    samples_f_ = l.samples_f;
    samples_d_ = l.samples_d;
    pyramid_ = l.pyramid;
    block_brick_ = l.block_brick;
    gap_ = l.gap;
    storage_ = std::move(keep);
}

std::size_t DistanceSampler::memory_bytes() const {
    std::size_t n = samples_f_.size() * sizeof(float) + samples_d_.size() * sizeof(double) + pyramid_.size() * sizeof(PyramidEntry) +
                    block_brick_.size() * sizeof(std::uint32_t) + gap_.size() * sizeof(float);
    for (const auto& t : axis_table_) n += t.size() * sizeof(std::size_t);
    return n;
}

}  // namespace hp
