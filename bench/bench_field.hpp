#pragma once
// The in-process static field of the query benches (bench_query, bench_peers), without OpenVDB.
#include <cstdint>
#include <vector>

#include "distance/distance.hpp"
#include "mesh/mesh.hpp"
#include "voxel/grid.hpp"
#include "voxel/voxelize.hpp"

namespace hp::bench {

// A mesh's layered voxelmap and distance field built in process (pad 2, default options).
struct Field {
    GridSpec grid;
    std::vector<std::int32_t> layers;
    std::vector<double> distance;
};
inline Field make_field(const TriMesh& mesh, const Aabb& box, double s) {
    Field f;
    f.grid = grid_around(box, s, 2);
    f.layers = voxelize(mesh, f.grid, {}).values();
    f.distance = compute_distance(mesh, f.grid, f.layers, {}).values;
    return f;
}

}  // namespace hp::bench
