#pragma once
// lib/bullet/hacd — the convex decomposition of a mesh by HACD (Mamou & Ghorbel 2009, Bullet's
// extras, libHACD), cached on disk: the decomposition of the full Stanford bunny takes minutes,
// so it is computed once per mesh and parameters. No Bullet header here.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "math/vec.hpp"
#include "mesh/mesh.hpp"

namespace hp::bullet {

struct HacdParams {
    int clusters = 8;        // the number of convex hulls HACD stops at (at least)
    int max_vertices = 100;  // vertices per hull
    double concavity = 100;  // HACD's concavity threshold
};

// The hulls' vertices in the mesh's frame. `mesh_key` names the mesh (its content hash and any
// scale); with a `cache_dir`, the result is read from, or written to, the file
// CACHE/hacd-<hash of key and parameters>.json (written atomically; a file that does not hold
// this very key and these parameters is recomputed). Throws hp::Error(bad_input) when HACD gives
// no hull, hp::Error(usage) when this build has no HACD.
std::vector<std::vector<Vec3d>> hacd_decomposition(const TriMesh& mesh, const std::string& mesh_key,
                                                   const HacdParams& params, const std::filesystem::path& cache_dir,
                                                   const std::function<void(const std::string&)>& note);

}  // namespace hp::bullet
