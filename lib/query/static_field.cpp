#include "query/static_field.hpp"

#include "core/error.hpp"
#include "formats/vdb.hpp"

namespace hp {

StaticField load_static_field(const std::filesystem::path& path) {
    const std::string name = path.string();
    const vdb::Reader reader = vdb::Reader::open(path);  // verified once; the reads below parse grids only
    const vdb::FileInfo& info = reader.info();
    if (!info.ours)
        fail_input(name, "is not a hapticprep distance field or voxelmap (no haptic: metadata); make one with haptic-distance");
    StaticField out;
    out.kind = info.metadata.value("kind", "");
    out.metadata = info.metadata;
    std::vector<double> values;
    if (out.kind == "distance") {
        out.encoding = info.metadata.value("encoding", "float");
        values = reader.read_distance();
    } else if (out.kind == "voxelmap") {
        out.encoding = "layers";
        std::vector<std::int32_t> raw = reader.read_int32("layers");
        values.resize(raw.size());
        for (std::size_t i = 0; i < raw.size(); ++i) values[i] = raw[i] * info.grid.voxel_size;
    } else {
        fail_input(name, "is a '" + out.kind + "' file, not a distance field or voxelmap (make one with haptic-distance)");
    }
    try {
        out.field = DistanceSampler(info.grid, std::move(values));
    } catch (const Error& e) {
        fail_input(name, e.what());
    }
    return out;
}

}  // namespace hp
