#include "query/static_field.hpp"

#include "core/error.hpp"
#include "formats/sampler.hpp"
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
    if (info.metadata.value("band", std::int64_t{0}) > 0 && (out.kind == "distance" || out.kind == "voxelmap")) {
        // A narrow-band file: read as its bricks and tiles into the sparse sampler (no dense copy).
        BrickField<double> band;
        if (out.kind == "distance") {
            out.encoding = vdb::distance_encoding_text(info.metadata);
            band = reader.read_distance_bricks();
        } else {
            out.encoding = "layers";
            const BrickField<std::int32_t> raw = reader.read_int32_bricks("layers");
            band.grid = raw.grid;
            band.blocks = raw.blocks;
            band.index = raw.index;
            band.tile.resize(raw.tile.size());
            for (std::size_t i = 0; i < raw.tile.size(); ++i) band.tile[i] = raw.tile[i] * info.grid.voxel_size;
            band.bricks.resize(raw.bricks.size());
            for (std::size_t i = 0; i < raw.bricks.size(); ++i) band.bricks[i] = raw.bricks[i] * info.grid.voxel_size;
        }
        try {
            out.field = DistanceSampler(band);
        } catch (const Error& e) {
            fail_input(name, e.what());
        }
        return out;
    }
    std::vector<double> values;
    if (out.kind == "distance") {
        out.encoding = vdb::distance_encoding_text(info.metadata);
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

StaticField map_static_field(std::shared_ptr<const MappedFile> file, const std::string& where) {
    SamplerFile f = read_sampler_file(std::move(file), where);
    const nlohmann::json record = f.metadata.value("field", nlohmann::json::object());
    StaticField out;
    out.field = std::move(f.sampler);
    out.made_from = record;
    if (record.is_object()) {
        out.kind = record.value("kind", "");
        out.encoding = record.value("encoding", "");
        out.metadata = record.value("metadata", nlohmann::json::object());
    }
    if (out.kind != "distance" && out.kind != "voxelmap")
        fail_input(where, "the prepared sampler does not record the distance field or voxelmap it was made from (its \"field\" "
                          "metadata); make it again with haptic-pipeline --assembly");
    return out;
}

nlohmann::json sampler_field_record(const std::string& file_name, std::uint64_t bytes, const std::string& hash,
                                    const StaticField& field) {
    return {{"file", file_name}, {"bytes", bytes}, {"hash", hash}, {"kind", field.kind}, {"encoding", field.encoding},
            {"metadata", field.metadata}};
}

nlohmann::json static_sampler_metadata(const std::string& file_name, std::uint64_t bytes, const std::string& hash,
                                       const StaticField& field) {
    return {{"tool", "haptic-pipeline"}, {"field", sampler_field_record(file_name, bytes, hash, field)}};
}

void write_static_sampler(const std::filesystem::path& path, const std::string& file_name, std::uint64_t bytes,
                          const std::string& hash, const StaticField& field) {
    write_sampler_file(path, static_sampler_metadata(file_name, bytes, hash, field), field.field);
}

}  // namespace hp
