#include "inspect/inspect.hpp"

#include <system_error>

#include "core/error.hpp"
#include "formats/container.hpp"
#include "formats/vdb.hpp"

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
    return s;
}

}  // namespace hp::inspect
