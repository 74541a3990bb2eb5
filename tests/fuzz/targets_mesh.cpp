// Fuzz entries of mesh import: load_mesh, the call every tool makes, on a file whose extension
// selects Assimp's importer (obj, stl, ply, off, gltf, glb, dae, 3mf). Assimp is not instrumented
// in Debian's build: the fuzzer sees the coverage of our import layer (declared counts, the checks
// of what Assimp returns, welding, orientation repair) and what Assimp's crashes do to us.
// A loaded mesh must index only its own vertices, hold finite coordinates and at least one triangle.
// STEP and IGES go through the same call: load_mesh knows them by their content and hands them to
// the OpenCASCADE module (lib/mesh/cad.cpp loads it as for the tools).
#include <cmath>

#include "fuzz_targets.hpp"
#include "mesh/mesh.hpp"

namespace hp::fuzz {

namespace {

void load(const char* target, const char* extension, const std::uint8_t* data, std::size_t size) {
    const auto path = scratch_file(std::string("input.") + extension,
                                   std::string_view(reinterpret_cast<const char*>(data), size));
    LoadedMesh m;
    if (!refused_or_ran([&] { m = load_mesh(path); })) return;
    const std::size_t n = m.mesh.vertices.size();
    if (m.mesh.triangles.empty()) violated(target, "a mesh without triangles was accepted");
    for (const auto& t : m.mesh.triangles)
        for (std::uint32_t v : t)
            if (v >= n) violated(target, "a triangle indexes vertex " + std::to_string(v) + " of " + std::to_string(n));
    for (const Vec3d& v : m.mesh.vertices)
        if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) violated(target, "a vertex is not finite");
    if (m.diagnostics.triangles != m.mesh.triangles.size()) violated(target, "the diagnostics count other triangles");
}

// OpenCASCADE is not instrumented and its parsers take time in proportion to the entities: the CAD
// entries skip inputs above this size, so that every input is read within a second or so.
constexpr std::size_t kMaxCadBytes = std::size_t{32} << 10;

}  // namespace

void mesh_obj(const std::uint8_t* d, std::size_t n) { load("mesh_obj", "obj", d, n); }
void mesh_stl(const std::uint8_t* d, std::size_t n) { load("mesh_stl", "stl", d, n); }
void mesh_ply(const std::uint8_t* d, std::size_t n) { load("mesh_ply", "ply", d, n); }
void mesh_off(const std::uint8_t* d, std::size_t n) { load("mesh_off", "off", d, n); }
void mesh_gltf(const std::uint8_t* d, std::size_t n) { load("mesh_gltf", "gltf", d, n); }
void mesh_glb(const std::uint8_t* d, std::size_t n) { load("mesh_glb", "glb", d, n); }
void mesh_dae(const std::uint8_t* d, std::size_t n) { load("mesh_dae", "dae", d, n); }
void mesh_3mf(const std::uint8_t* d, std::size_t n) { load("mesh_3mf", "3mf", d, n); }
void step(const std::uint8_t* d, std::size_t n) {
    if (n <= kMaxCadBytes) load("step", "step", d, n);
}
void iges(const std::uint8_t* d, std::size_t n) {
    if (n <= kMaxCadBytes) load("iges", "igs", d, n);
}

}  // namespace hp::fuzz
