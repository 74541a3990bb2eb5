#pragma once
// lib/voxel — layered voxelmaps.
//
// In: a welded, non-empty mesh (world units) and a grid (GridSpec, usually grid_around(bbox, s,
// pad)), dims 1..kMaxGridDim. Out: per voxel its layer: 0 for surface voxels (the closed cube
// overlaps a triangle, 13-axis SAT), +n for the n-th layer inside, -n for the n-th outside, n =
// breadth-first steps from the surface within the voxel's side (26 or 6 neighbours), clamped to
// max_layers. Inside/outside by FillMethod: scanline (exact crossing parity along x; closed
// meshes), vote (parities along x, y, z, majority), winding (generalized winding number), hybrid
// (the winding number where it is decisive or the vote is not unanimous, else the vote; open
// meshes), flood (not connected to the border), auto (scanline when watertight, else hybrid).
// Cost: O(voxels + crossings) for scanline/vote, O(voxels log triangles) for winding. Memory: 2
// bytes per voxel while working plus the crossing tables; the int16 output. Threads: TBB inside,
// deterministic (the same map for any thread count); progress from the calling thread.
// Method, exactness and the layer proof: docs/voxelize.md.
#include <cstdint>
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "mesh/mesh.hpp"
#include "voxel/grid.hpp"

namespace hp {

enum class FillMethod { automatic, scanline, vote, winding, flood, hybrid };
// Every fill method with its name ("auto", "scanline", ...), in the order --fill lists them: the
// one list of the names (the voxelize stage's declaration takes its choices from it).
struct FillMethodName {
    const char* name;
    FillMethod method;
};
const std::vector<FillMethodName>& fill_methods();
const char* fill_name(FillMethod m);
// The method named `name`; hp::Error(usage) for a name not in fill_methods().
FillMethod parse_fill(const std::string& name);

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
    std::size_t by_winding = 0;  // vote: of those, decided by the winding number; hybrid: voxels the winding number decided
    std::size_t by_vote = 0;     // hybrid: voxels the unanimous vote decided (the winding number not decisive)
    std::size_t winding_evaluated = 0;  // hybrid: voxels where the winding number was evaluated (not interpolated)
    int min_layer = 0, max_layer = 0;
    int layer_sweeps = 0;        // chamfer sweeps made: 2 when inside and outside voxels never touch
    std::size_t flipped = 0;     // voxels of a pocket no surface voxel borders, moved to the side around it
    double seconds_prepare = 0, seconds_surface = 0, seconds_fill = 0, seconds_layers = 0;  // prepare: the work grid allocated

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
