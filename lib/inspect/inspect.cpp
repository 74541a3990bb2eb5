#include "inspect/inspect.hpp"

#include <cstdio>
#include <system_error>

#include "core/error.hpp"
#include "formats/container.hpp"
#include "formats/vdb.hpp"
#include "mesh/assembly.hpp"
#include "scene/scene_file.hpp"

namespace hp::inspect {
namespace fs = std::filesystem;

void require_file(const fs::path& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) fail_input(path.string(), "no such file");
    if (fs::is_directory(path, ec)) fail_input(path.string(), "is a folder, not a file");
    if (fs::file_size(path, ec) == 0) fail_input(path.string(), "the file is empty (0 bytes)");
}

Summary describe(const fs::path& path, const MeshLoadOptions& mesh_options) {
    require_file(path);
    if (container::looks_like_container(path)) return describe_container(path);
    if (vdb::looks_like_vdb(path)) return describe_vdb(path);
    if (scene::looks_like_scene(path)) return describe_scene(path);
    return describe_mesh(path, mesh_options);
}

Summary describe_mesh(const fs::path& path, const MeshLoadOptions& options) {
    LoadedMesh m = load_mesh(path, options);
    Summary s;
    s.text = "file         " + path.string() + "\nkind         mesh\nsource hash  " + m.source_hash + "\n" +
             "units        " + (m.units.empty() ? std::string("as in the file") : m.units) + "\n" +
             format_diagnostics(m.diagnostics);
    s.json = {{"file", path.string()}, {"kind", "mesh"}, {"source_hash", m.source_hash},
              {"units", m.units}, {"mesh", to_json(m.diagnostics)}};
    if (m.tessellation.linear_deflection > 0) {
        const Tessellation& t = m.tessellation;
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "tessellation %s in %s: linear deflection %.6g, angular %.6g rad; read %.3f s, meshed %.3f s\n",
                      t.format == "iges" ? "IGES" : "STEP", t.file_unit.c_str(), t.linear_deflection, t.angular_deflection,
                      t.seconds_read, t.seconds_mesh);
        s.text += buf;
        s.text += "cad module   " + t.module + "\n";
        s.json["tessellation"] = {{"format", t.format}, {"linear_deflection", t.linear_deflection},
                                  {"angular_deflection", t.angular_deflection}, {"file_unit", t.file_unit},
                                  {"seconds_read", t.seconds_read}, {"seconds_mesh", t.seconds_mesh}, {"module", t.module}};
    }
    for (const std::string& n : m.notes) s.text += "note         " + n + "\n";
    if (!m.notes.empty()) s.json["notes"] = m.notes;
    if (!m.part.empty()) {
        s.text.insert(s.text.find("source hash"), "part         " + m.part_name + " (geometry " + m.part + ")\n");
        s.json["part"] = {{"name", m.part_name}, {"geometry", m.part}};
    }
    return s;
}

Summary describe_parts(const fs::path& path, const MeshLoadOptions& options) {
    require_file(path);
    const Assembly assembly = read_assembly(path, options);
    std::vector<LoadedMesh> prepared;
    for (std::size_t g = 0; g < assembly.geometries.size(); ++g)
        prepared.push_back(prepare_geometry(assembly, g, options,
                                            path.string() + ": part '" + assembly.parts[assembly.geometries[g].first_part].name + "'"));
    Summary s;
    s.text = "file         " + path.string() + "\nkind         mesh\nsource hash  " + assembly.source_hash + "\n" +
             "units        " + (assembly.units.empty() ? std::string("as in the file") : assembly.units) + "\n" +
             format_parts(assembly, prepared);
    s.json = parts_json(assembly, prepared);
    s.json["file"] = path.string();
    s.json["kind"] = "mesh";
    s.json["source_hash"] = assembly.source_hash;
    s.json["units"] = assembly.units;
    return s;
}

}  // namespace hp::inspect
