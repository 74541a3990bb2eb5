#pragma once
// The in-process static field of the query benches (bench_query, bench_peers), without OpenVDB.
#include <cstdint>
#include <vector>

#include "distance/distance.hpp"
#include "mesh/mesh.hpp"
#include "voxel/grid.hpp"
#include "voxel/voxelize.hpp"

namespace hp::bench {

// A mesh's layered voxelmap and distance field built in process (pad 2, default options, the
// distances rounded to float like the default file encoding).
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
    // Rounded to float, as haptic-distance's default encoding stores them: the query then holds
    // the field as a user's file would give it (float samples, lib/field/field.hpp).
    for (double& v : f.distance) v = static_cast<double>(static_cast<float>(v));
    return f;
}

}  // namespace hp::bench
