// The distance stage: the body of haptic-distance (apps/haptic-distance.cpp parses its options
// and calls this).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "core/version.hpp"
#include "distance/distance.hpp"
#include "formats/vdb.hpp"
#include "pipeline/stage_runs.hpp"

namespace hp::pipeline {

nlohmann::json run_distance(const StageContext& ctx) {
    const nlohmann::json& p = ctx.params;
    const std::filesystem::path map_path = ctx.inputs->at("voxelmap");
    const std::string encoding = p.at("encoding").get<std::string>();
    const int precision = p.at("precision").get<int>();
    const bool gradient = p.at("gradient").get<bool>();
    const bool force = p.at("force").get<bool>();

    vdb::FileInfo info;
    std::vector<std::int32_t> layers = vdb::read_int32(map_path, "layers", &info);
    if (info.metadata.value("kind", "") != "voxelmap")
        fail_input(map_path.string(), "is not a voxelmap of haptic-voxelize (kind '" + info.metadata.value("kind", "?") + "')");
    // The mesh is read with the voxelmap's units/scale unless the stage gives others.
    nlohmann::json params = nlohmann::json::parse(info.metadata.value("parameters", "{}"), nullptr, false);
    if (params.is_discarded()) params = nlohmann::json::object();
    MeshLoadOptions mopt;
    mopt.units = p.at("units").is_null() ? params.value("units", "") : p.at("units").get<std::string>();
    mopt.scale = p.at("scale").is_null() ? params.value("scale", 1.0) : p.at("scale").get<double>();
    const LoadedMesh& m = ctx.load_mesh(mopt);
    nlohmann::json warnings = nlohmann::json::array();
    const std::string mismatch = check_source_hash(ctx.mesh.string(), m.source_hash, map_path.string(), "voxelmap",
                                                   info.metadata.value("source_hash", ""), force, ctx.option_name("force"));
    if (!mismatch.empty()) warnings.push_back(mismatch);
    DistanceOptions dopt;
    dopt.connectivity = static_cast<int>(info.metadata.value("connectivity", std::int64_t{26}));
    dopt.gradient = gradient;
    DistanceField field = compute_distance(m.mesh, info.grid, layers, dopt, ctx.progress);

    double lo = 0, hi = 0;
    for (double v : field.values) lo = std::min(lo, v), hi = std::max(hi, v);
    const double factor = std::pow(10.0, precision);
    if (encoding == "scaled" && std::max(-lo, hi) * factor > 2147483647.0)
        fail_usage(ctx.option_name("precision") + " " + std::to_string(precision) + " overflows Int32 for distances up to " +
                   std::to_string(std::max(-lo, hi)) + "; use at most " +
                   std::to_string(static_cast<int>(std::floor(std::log10(2147483647.0 / std::max(-lo, hi))))));

    nlohmann::json meta = info.metadata;  // keeps the voxelmap's provenance (source, fill...)
    meta["kind"] = "distance";
    meta["tool"] = "haptic-distance";
    meta["tool_version"] = kVersion;
    meta["encoding"] = encoding;
    meta["precision"] = encoding == "scaled" ? precision : -1;
    meta["scale_factor"] = encoding == "scaled" ? factor : 1.0;
    meta["voxelmap"] = map_path.filename().string();
    meta["method"] = "exact BVH closest points within 3 voxels of the surface; closest-feature propagation beyond";
    meta["distance_parameters"] =
        nlohmann::json{{"encoding", encoding}, {"precision", precision}, {"gradient", gradient}}.dump();
    meta.erase("grid");
    meta.erase("format_version");

    const GridSpec& g = info.grid;
    const std::size_t slice = static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]);
    std::vector<vdb::GridOut> grids;
    auto at = [&](int z) { return static_cast<std::size_t>(z) * slice; };
    if (encoding == "float")
        grids.push_back({"distance", vdb::ValueType::float32, [&](int z, void* out) {
                             auto* d = static_cast<float*>(out);
                             for (std::size_t i = 0; i < slice; ++i) d[i] = static_cast<float>(field.values[at(z) + i]);
                         }, lo - g.voxel_size});
    else if (encoding == "double")
        grids.push_back({"distance", vdb::ValueType::float64, [&](int z, void* out) {
                             std::copy_n(field.values.data() + at(z), slice, static_cast<double*>(out));
                         }, lo - g.voxel_size});
    else
        grids.push_back({"distance", vdb::ValueType::int32, [&](int z, void* out) {
                             auto* d = static_cast<std::int32_t*>(out);
                             for (std::size_t i = 0; i < slice; ++i)
                                 d[i] = static_cast<std::int32_t>(std::llround(field.values[at(z) + i] * factor));
                         }, std::round((lo - g.voxel_size) * factor)});
    grids.push_back({"layers", vdb::ValueType::int32, [&](int z, void* out) {
                         std::copy_n(layers.data() + at(z), slice, static_cast<std::int32_t*>(out));
                     }, -1.0});
    if (gradient)
        grids.push_back({"gradient", vdb::ValueType::vec3f, [&](int z, void* out) {
                             std::copy_n(field.gradient.data() + 3 * at(z), 3 * slice, static_cast<float*>(out));
                         }, 0.0});
    const auto t_write = std::chrono::steady_clock::now();
    vdb::write(ctx.output, g, grids, meta, std::string("hapticprep ") + kVersion);
    const double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_write).count();
    return {{"encoding", encoding},
            {"precision", encoding == "scaled" ? precision : -1},
            {"grid", {{"dims", {g.dims[0], g.dims[1], g.dims[2]}}, {"voxel_size", g.voxel_size}}},
            {"range", {lo, hi}},
            {"exact_voxels", field.exact_voxels},
            {"propagation_passes", field.propagation_passes},
            {"seconds", {{"exact", field.seconds_exact}, {"propagate", field.seconds_propagate}, {"write", write_s}}},
            {"warnings", warnings}};
}

}  // namespace hp::pipeline
