#pragma once
// lib/voxel — the narrow-band voxelizer's working cells and its steps in other files (band.cpp
// runs them in order; band.hpp is the contract). Internal to the voxel module.
#include <array>
#include <cstddef>
#include <cstdint>

#include "core/progress.hpp"
#include "mesh/mesh.hpp"
#include "voxel/brick.hpp"
#include "voxel/grid.hpp"
#include "voxel/voxelize.hpp"

namespace hp::voxel_detail {

// The working cells of the band (work.hpp's encoding: (distance << 1) | inside, surface 0): a
// brick per band block, tiles holding the block's inside bit (0 or 1).
struct BandCells {
    const GridSpec& g;
    BrickField<std::uint16_t> cells;
    explicit BandCells(const GridSpec& grid) : g(grid) {}

    std::uint16_t* cell(int i, int j, int k) {
        std::uint16_t* b = cells.brick(cells.block_of(i, j, k));
        return b ? b + BrickField<std::uint16_t>::offset_in(i, j, k) : nullptr;
    }
};

// Index of block (x, y, z) in a field of `bl` blocks per axis.
inline std::size_t block_index(const std::array<int, 3>& bl, int x, int y, int z) {
    return (static_cast<std::size_t>(z) * static_cast<std::size_t>(bl[1]) + static_cast<std::size_t>(y)) *
               static_cast<std::size_t>(bl[0]) +
           static_cast<std::size_t>(x);
}

// Step 3 (band_fill.cpp): the inside bit of every non-surface voxel of the bricks, and one voxel
// per tiled block, under `method` (scanline, winding or hybrid).
void fill_band_inside(const TriMesh& mesh, BandCells& w, FillMethod method);

// Step 4 (band_layers.cpp): the distance of every brick voxel within `band` of the surface, by a
// breadth-first search of `connectivity` (26 or 6) under the side rule; reports "layers" progress.
void grow_band_layers(BandCells& w, int band, int connectivity, const Progress& progress);

}  // namespace hp::voxel_detail
