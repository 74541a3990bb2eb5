#pragma once
// BrickField<T>: a field over a GridSpec stored sparsely in blocks of 8^3 voxels (the leaves of
// an OpenVDB tree): a dense table over the coarse grid of blocks gives each block either a brick
// (512 values, offset x + 8 y + 64 z inside the block) or a constant (a tile). Memory: one index
// and one tile value per block, 512 values per brick; nothing per voxel of a tiled block.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "core/memory.hpp"
#include "voxel/grid.hpp"

namespace hp {

inline constexpr int kBrickDim = 8;
inline constexpr int kBrickVoxels = 512;

template <class T>
struct BrickField {
    static constexpr std::uint32_t kTile = UINT32_MAX;

    GridSpec grid;
    std::array<int, 3> blocks{0, 0, 0};  // ceil(dims / 8)
    std::vector<std::uint32_t> index;    // per block (x fastest): brick number or kTile
    std::vector<T> tile;                 // per block: its value when tiled
    std::vector<T, LargeArrayAllocator<T>> bricks;  // 512 per brick (large arrays faulted in on all threads)

    void reset(const GridSpec& g, T fill) {
        grid = g;
        for (int a = 0; a < 3; ++a) blocks[static_cast<std::size_t>(a)] = (g.dims[static_cast<std::size_t>(a)] + kBrickDim - 1) / kBrickDim;
        index.assign(block_count(), kTile);
        tile.assign(block_count(), fill);
        // Storage of lazy pages is let go: resize() after clear() would keep its old values.
        if (bricks.get_allocator().pages == Pages::lazy) bricks = std::vector<T, LargeArrayAllocator<T>>();
        else bricks.clear();
    }
    // Storage for `count` bricks of zeros whose pages are faulted in as the bricks are first
    // written, not all at once: for a producer that writes the bricks in order while it gives back
    // the memory of what it consumes (release_bricks_before on its input), so that the two are
    // not both resident.
    void size_bricks_lazily(std::size_t count) {
        bricks = std::vector<T, LargeArrayAllocator<T>>(LargeArrayAllocator<T>(Pages::lazy));
        bricks.resize(count * kBrickVoxels);
    }
    std::size_t block_count() const {
        return static_cast<std::size_t>(blocks[0]) * static_cast<std::size_t>(blocks[1]) * static_cast<std::size_t>(blocks[2]);
    }
    std::size_t brick_count() const { return bricks.size() / kBrickVoxels; }
    std::size_t block_of(int i, int j, int k) const {
        return (static_cast<std::size_t>(k >> 3) * static_cast<std::size_t>(blocks[1]) + static_cast<std::size_t>(j >> 3)) *
                   static_cast<std::size_t>(blocks[0]) +
               static_cast<std::size_t>(i >> 3);
    }
    static std::size_t offset_in(int i, int j, int k) {
        return static_cast<std::size_t>((i & 7) | ((j & 7) << 3) | ((k & 7) << 6));
    }
    // Value of voxel (i, j, k) (inside the grid).
    T at(int i, int j, int k) const {
        const std::size_t b = block_of(i, j, k);
        const std::uint32_t n = index[b];
        return n == kTile ? tile[b] : bricks[static_cast<std::size_t>(n) * kBrickVoxels + offset_in(i, j, k)];
    }
    // The brick's values, or nullptr for a tiled block.
    const T* brick(std::size_t block) const {
        const std::uint32_t n = index[block];
        return n == kTile ? nullptr : bricks.data() + static_cast<std::size_t>(n) * kBrickVoxels;
    }
    T* brick(std::size_t block) {
        const std::uint32_t n = index[block];
        return n == kTile ? nullptr : bricks.data() + static_cast<std::size_t>(n) * kBrickVoxels;
    }
    // Hands the memory of bricks [0, n) back to the system while keeping the storage: for a
    // consumer that reads the bricks once, in order (e.g. a writer copying them into its tree), so
    // that they and the copy are not both held. Their values are unspecified afterwards (whole
    // pages only; the pages read as zeros when touched again).
    void release_bricks_before(std::size_t n) {
        const auto start = reinterpret_cast<std::uintptr_t>(bricks.data());
        release_whole_pages(start, start + std::min(n, brick_count()) * kBrickVoxels * sizeof(T));
    }
    // Hands the whole pages between the bricks in use and the storage's capacity back to the
    // system (after the bricks shrank): the memory of shrink_to_fit() without its copy.
    void release_spare_capacity() {
        const auto start = reinterpret_cast<std::uintptr_t>(bricks.data());
        release_whole_pages(start + bricks.size() * sizeof(T), start + bricks.capacity() * sizeof(T));
    }
    // Block coordinates of block number b.
    std::array<int, 3> block_coords(std::size_t b) const {
        const std::size_t bx = static_cast<std::size_t>(blocks[0]), by = static_cast<std::size_t>(blocks[1]);
        return {static_cast<int>(b % bx), static_cast<int>((b / bx) % by), static_cast<int>(b / (bx * by))};
    }

private:
    // The whole pages within [begin, end) back to the system (they read as zeros when touched again).
    static void release_whole_pages(std::uintptr_t begin, std::uintptr_t end) {
        static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        const std::uintptr_t a = (begin + page - 1) / page * page, z = end / page * page;
        if (z > a) ::madvise(reinterpret_cast<void*>(a), z - a, MADV_DONTNEED);
    }
};

}  // namespace hp
