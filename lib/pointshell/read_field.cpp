// Reading the pointshell stage's input field (voxelmap or distance file) from formats/vdb.
#include "core/error.hpp"
#include "formats/vdb.hpp"
#include "pointshell/pointshell.hpp"

namespace hp {

ShellField read_shell_field(const std::filesystem::path& path, vdb::FileInfo& info) {
    ShellField f;
    const std::string where = path.string();
    const vdb::Reader reader = vdb::Reader::open(path);  // verified once for both grids
    info = reader.info();
    f.layers = reader.read_int32("layers");
    const std::string kind = info.metadata.value("kind", "");
    if (kind != "voxelmap" && kind != "distance")
        fail_input(where, "is not a voxelmap or distance field of hapticprep (kind '" + (kind.empty() ? "?" : kind) +
                              "'); make one with haptic-voxelize or haptic-distance");
    f.grid = info.grid;
    if (kind == "distance") f.distance = reader.read_distance();
    return f;
}

}  // namespace hp
