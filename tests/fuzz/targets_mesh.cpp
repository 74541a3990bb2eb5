// Fuzz entries of mesh import: load_mesh, the call every tool makes, on a file whose extension
// selects Assimp's importer (obj, stl, ply, off, gltf, glb, dae, 3mf). Assimp is not instrumented
// in Debian's build: the fuzzer sees the coverage of our import layer (declared counts, the checks
// of what Assimp returns, welding, orientation repair) and what Assimp's crashes do to us.
// A loaded mesh must index only its own vertices, hold finite coordinates and at least one triangle.
// STEP and IGES go through the same call: load_mesh knows them by their content and hands them to
// the OpenCASCADE module (lib/mesh/cad.cpp loads it as for the tools). An OBJ file that the native
// OBJ reading takes (lib/mesh/obj_native.hpp) is read again by Assimp: the mesh, its diagnostics,
// its parts or the refusals must be the same.
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "fuzz_targets.hpp"
#include "mesh/assembly.hpp"
#include "mesh/import.hpp"
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

template <class T>
void append_bytes(std::string& out, const std::vector<T>& v) {
    out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// What load_mesh and read_assembly give with the OBJ reading chosen: the diagnostics and the
// mesh's bytes, the parts (names, geometries, instances) and the geometries' bytes; or the
// refusals' messages.
std::string reading(const std::filesystem::path& path, bool native_obj) {
    set_native_obj(native_obj);
    std::string out;
    try {
        const LoadedMesh m = load_mesh(path);
        out = to_json(m.diagnostics).dump();
        append_bytes(out, m.mesh.vertices);
        append_bytes(out, m.mesh.triangles);
    } catch (const Error& e) {
        out = e.what();
    }
    try {
        const Assembly a = read_assembly(path);
        for (const AssemblyPart& p : a.parts) out += "|" + p.name + " g" + std::to_string(p.geometry);
        for (const AssemblyGeometry& g : a.geometries) {
            out += "|" + std::to_string(g.instances);
            append_bytes(out, g.soup.vertices);
            append_bytes(out, g.soup.triangles);
        }
    } catch (const Error& e) {
        out += e.what();
    }
    set_native_obj(true);
    return out;
}

// OpenCASCADE is not instrumented and its parsers take time in proportion to the entities: the CAD
// entries skip inputs above this size, so that every input is read within a second or so.
constexpr std::size_t kMaxCadBytes = std::size_t{32} << 10;

}  // namespace

void mesh_obj(const std::uint8_t* d, std::size_t n) {
    load("mesh_obj", "obj", d, n);
    const std::string_view bytes(reinterpret_cast<const char*>(d), n);
    if (!read_obj_native(bytes)) return;
    const auto path = scratch_file("input.obj", bytes);
    if (reading(path, true) != reading(path, false)) violated("mesh_obj", "the native OBJ reading differs from Assimp's");
}
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
