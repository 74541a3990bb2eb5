// Reading the pointshell stage's input field (voxelmap or distance file) from formats/vdb.
#include <cmath>

#include "core/error.hpp"
#include "formats/vdb.hpp"
#include "pointshell/pointshell.hpp"

namespace hp {

ShellField read_shell_field(const std::filesystem::path& path, vdb::FileInfo& info) {
    ShellField f;
    const std::string where = path.string();
    f.layers = vdb::read_int32(path, "layers", &info);
    const std::string kind = info.metadata.value("kind", "");
    if (kind != "voxelmap" && kind != "distance")
        fail_input(where, "is not a voxelmap or distance field of hapticprep (kind '" + (kind.empty() ? "?" : kind) +
                              "'); make one with haptic-voxelize or haptic-distance");
    f.grid = info.grid;
    if (kind == "distance") {
        const std::string encoding = info.metadata.value("encoding", "float");
        if (encoding == "scaled") {
            const double factor = info.metadata.value("scale_factor", 0.0);
            if (!(factor > 0) || !std::isfinite(factor))
                fail_input(where, "scaled distance field without a valid scale_factor in its metadata");
            std::vector<std::int32_t> raw = vdb::read_int32(path, "distance");
            f.distance.resize(raw.size());
            for (std::size_t i = 0; i < raw.size(); ++i) f.distance[i] = raw[i] / factor;
        } else {
            f.distance = vdb::read_real(path, "distance");
        }
    }
    return f;
}

}  // namespace hp
