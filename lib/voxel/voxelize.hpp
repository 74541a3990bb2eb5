#pragma once
// lib/voxel — layered voxelmaps (paper 000 section 2.1.1; SPEC §3, §5 "Voxelize").
//
// In: a welded mesh (world units) and a grid (GridSpec, usually grid_around(bbox, s, pad)).
// Out: per voxel a layer value: 0 for surface voxels (voxels whose closed cube overlaps a
// triangle, by the 13-axis SAT test), +n for the n-th layer inside, -n for the n-th layer outside.
//
// Phases:
//  1. surface   SAT over the voxels of each triangle's bounding box, TBB-parallel over triangles
//               (the union of marks does not depend on the schedule).
//  2. fill      inside/outside of every other voxel:
//       scanline  rows along x; a row's crossings with the triangles are counted exactly (integer
//                 coordinates snapped to s/2^20 and 128-bit orientation tests, ties broken by a
//                 symbolic perturbation of the row), so rows through edges and vertices count
//                 each crossing once; a voxel is inside when an odd number of crossings precede
//                 its centre. Exact for closed meshes (any orientation, any number of parts).
//       vote      the same along x, y and z; a row whose crossing count is odd (it passes through a
//                 hole) abstains; each voxel takes the majority of the valid votes. Voxels without
//                 a majority (a tie, or all three rows abstain) join the majority of their decided
//                 face neighbours (up to 16 sweeps, so short runs fill in from their ends); the
//                 few left then get the generalized winding number at their centre (|w| > 0.5 is
//                 inside; the fast tree evaluation, geometry/winding.hpp).
//       winding   the generalized winding number at every voxel centre (fast tree evaluation,
//                 O(voxels log triangles); slower than the parities by a large factor).
//       flood     everything 26-connected to the grid's border without crossing a surface voxel
//                 is outside, the rest inside (right for closed meshes; leaks through holes).
//       auto      scanline for watertight meshes, vote otherwise.
//  3. layers    the n-th layer is n breadth-first steps from the surface through voxels of the
//               same side (26- or 6-neighbourhood; a step may leave a surface voxel to either side,
//               never cross from inside to outside). Computed by chamfer sweeps: when the sides
//               never touch (closed meshes: a surface between two neighbouring centres overlaps
//               one of their cubes) one forward and one backward sweep give the exact Chebyshev
//               (26) or Manhattan (6) distance to the nearest surface voxel; where they touch
//               (open meshes, at holes) sweeps repeat until stable. A pocket of one side that no
//               surface voxel borders (votes near a hole can leave one) cannot be reached; it
//               joins the side around it and the sweeps go on. Rows on a wavefront 2k + j = t run
//               in parallel (deterministic). Values beyond max_layers are clamped.
// Memory: 2 bytes per voxel while working (distance and inside bit in a uint16, one buffer per
// z-slice), converted slice by slice into the int16 output (the writer frees those as it goes),
// plus the crossing tables (one double per row crossing; three axes for `vote`).
#include <cstdint>
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "mesh/mesh.hpp"
#include "voxel/grid.hpp"

namespace hp {

enum class FillMethod { automatic, scanline, vote, winding, flood };
const char* fill_name(FillMethod m);

struct VoxelizeOptions {
    FillMethod fill = FillMethod::automatic;
    int max_layers = 0;     // 0 = unlimited
    int connectivity = 26;  // 26 or 6
};

struct LayerMap {
    GridSpec grid;
    std::vector<std::vector<std::int16_t>> slices;  // slices[z][y * nx + x]
    FillMethod fill_used = FillMethod::scanline;
    std::size_t inside = 0, surface = 0, outside = 0;
    std::size_t undecided = 0;   // vote: voxels without a majority (resolved as documented)
    std::size_t by_winding = 0;  // vote: of those, decided by the winding number
    int min_layer = 0, max_layer = 0;
    int layer_sweeps = 0;        // chamfer sweeps made: 2 when inside and outside voxels never touch
    std::size_t flipped = 0;     // voxels of a pocket no surface voxel borders, moved to the side around it
    double seconds_surface = 0, seconds_fill = 0, seconds_layers = 0;

    std::int16_t at(int i, int j, int k) const {
        return slices[static_cast<std::size_t>(k)][static_cast<std::size_t>(j) * static_cast<std::size_t>(grid.dims[0]) +
                                                   static_cast<std::size_t>(i)];
    }
    // Every layer in GridSpec::index order (x fastest), as Int32: what the voxelmap file stores
    // and compute_distance / the pointshell take.
    std::vector<std::int32_t> values() const;
};

// Largest grid dimension the int16 layer storage supports.
inline constexpr int kMaxGridDim = 32000;

// Builds the layered voxelmap. Preconditions: grid dims in [1, kMaxGridDim], mesh non-empty.
LayerMap voxelize(const TriMesh& mesh, const GridSpec& grid, const VoxelizeOptions& options,
                  const Progress& progress = {});

}  // namespace hp
