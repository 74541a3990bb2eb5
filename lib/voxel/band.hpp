#pragma once
// lib/voxel — narrow-band (sparse) voxelmaps.
//
// voxelize_band: the layered voxelmap within B voxels of the surface, in BrickField form. Layers
// are those of the dense voxelize clamped to +-B (exactly what voxelize with max_layers = B gives
// on every voxel, for the fills the band supports); blocks farther than B voxels (Chebyshev) from
// every surface voxel, and blocks whose every voxel reads +B (or -B), are tiles of +-B. The work scales with the band: surface voxels from the
// triangles, a breadth-first search of depth B through the band's bricks, the inside bit of every
// brick voxel and one per tiled block from the x-row crossings (scanline) or the winding number;
// no pass over the dense grid, no per-voxel array of it. Fills: scanline (closed meshes),
// winding, and hybrid (the dense hybrid's decision on every brick voxel, bit for bit, with its
// lattice evaluated only at the cells the bricks lie in); auto picks scanline for watertight
// meshes, hybrid otherwise. A tiled block takes the side of its first voxel (hybrid: the
// unanimous vote of its three rows, else the fast winding number). Method: docs/voxelize.md,
// "Narrow band".
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/progress.hpp"
#include "mesh/mesh.hpp"
#include "voxel/brick.hpp"
#include "voxel/grid.hpp"
#include "voxel/voxelize.hpp"

namespace hp {

struct BandLayerMap {
    BrickField<std::int16_t> layers;  // clamped to +-band
    int band = 0;
    FillMethod fill_used = FillMethod::scanline;
    std::size_t inside = 0, surface = 0, outside = 0;  // voxels of the whole grid (tiles counted)
    std::size_t band_voxels = 0;                       // grid voxels with |layer| < band
    int min_layer = 0, max_layer = 0;
    double seconds_surface = 0, seconds_fill = 0, seconds_layers = 0;
};

// Builds the band voxelmap. Preconditions as voxelize(); band >= 1; options.max_layers is ignored
// (the band clamps). FillMethod vote and flood are refused (usage error): they need the dense
// grid.
BandLayerMap voxelize_band(const TriMesh& mesh, const GridSpec& grid, const VoxelizeOptions& options, int band,
                           const Progress& progress = {});

// Voxels of the band a mesh of the given surface area would have on a grid of voxel size s
// (about (2 band + 1) layers of area / s^2 voxels, rounded up to whole 8^3 bricks): an estimate
// for memory checks before any work.
double band_voxel_estimate(double surface_area, double voxel_size, int band);

}  // namespace hp
