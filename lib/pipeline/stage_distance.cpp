// The distance stage: its declaration (options bound to DistanceParams), its body (shared with
// haptic-distance, which adds its files) and its summary (to_json, format_text).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "distance/distance.hpp"
#include "formats/vdb.hpp"
#include "pipeline/stage_runs.hpp"

namespace hp::pipeline {

StageSpec distance_stage() {
    StageSpec s;
    s.name = "distance";
    s.tool = "haptic-distance";
    s.description = "signed distance field (inside positive) over the voxelmap";
    s.output_name = "distance.vdb";
    s.produces = "distance";
    s.needs = {"voxelmap"};
    s.available = true;
    Declare<DistanceParams> d(s.params);
    d(&DistanceParams::encoding, "encoding", "float, double or scaled").one_of({"float", "double", "scaled"});
    d(&DistanceParams::precision, "precision", "decimal digits P of the scaled encoding").in(0, 12);
    d(&DistanceParams::gradient, "gradient", "also write a Vec3f 'gradient' grid");
    d(&DistanceParams::force, "force", "proceed even if the mesh is not the one the voxelmap was made from");
    declare_mesh_options(d, " (default: the voxelmap's)");
    s.run = typed_run("distance", &run_distance);
    return s;
}

nlohmann::json to_json(const DistanceSummary& s) {
    return {{"encoding", s.encoding},
            {"precision", s.precision},
            {"grid", {{"dims", s.grid.dims}, {"voxel_size", s.grid.voxel_size}}},
            {"range", {s.min, s.max}},
            {"exact_voxels", s.exact_voxels},
            {"propagation_passes", s.propagation_passes},
            {"seconds", {{"exact", s.seconds_exact}, {"propagate", s.seconds_propagate}, {"write", s.seconds_write}}},
            {"warnings", s.warnings}};
}

nlohmann::json to_json(const DistanceSummary& s, const ToolFacts& f) {
    nlohmann::json j = to_json(s);
    j.erase("warnings");
    j["output"] = f.output;
    j["mesh"] = to_json(f.mesh->diagnostics);
    j["seconds"]["total"] = f.total_seconds;
    j["file_bytes"] = f.file_bytes;
    j["peak_rss_bytes"] = f.peak_rss_bytes;
    return j;
}

std::string format_text(const DistanceSummary& s, const ToolFacts& f) {
    std::string out = strf("grid         %d x %d x %d voxels, voxel size %.6g\n", s.grid.dims[0], s.grid.dims[1],
                           s.grid.dims[2], s.grid.voxel_size);
    out += strf("distance     %.6g .. %.6g (inside positive), encoding %s\n", s.min, s.max, s.encoding.c_str());
    out += strf("exact        %s voxels within 3 voxels of the surface\n", with_commas(s.exact_voxels).c_str());
    out += strf("time         exact %.3f s, propagate %.3f s, write %.3f s, total %.3f s\n", s.seconds_exact,
                s.seconds_propagate, s.seconds_write, f.total_seconds);
    out += strf("memory       peak %s\n", human_bytes(static_cast<double>(f.peak_rss_bytes)).c_str());
    out += strf("wrote        %s (%s)\n", f.output.c_str(), human_bytes(static_cast<double>(f.file_bytes)).c_str());
    return out;
}

DistanceSummary run_distance(const StageContext& ctx, const DistanceParams& p) {
    const std::filesystem::path map_path = ctx.inputs->at("voxelmap");
    const std::string& encoding = p.encoding;
    const int precision = p.precision;
    const bool gradient = p.gradient;
    const bool force = p.force;

    vdb::FileInfo info;
    std::vector<std::int32_t> layers = vdb::read_int32(map_path, "layers", &info);
    if (info.metadata.value("kind", "") != "voxelmap")
        fail_input(map_path.string(), "is not a voxelmap of haptic-voxelize (kind '" + info.metadata.value("kind", "?") + "')");
    // The mesh is read with the voxelmap's units/scale unless the stage gives others.
    nlohmann::json params = nlohmann::json::parse(info.metadata.value("parameters", "{}"), nullptr, false);
    if (params.is_discarded()) params = nlohmann::json::object();
    MeshLoadOptions mopt;
    mopt.units = p.units ? *p.units : params.value("units", "");
    mopt.scale = p.scale ? *p.scale : params.value("scale", 1.0);
    const LoadedMesh& m = ctx.load_mesh(mopt);
    std::vector<std::string> warnings;
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
    DistanceSummary r;
    r.encoding = encoding;
    r.precision = encoding == "scaled" ? precision : -1;
    r.grid = {g.dims, g.voxel_size};
    r.min = lo, r.max = hi;
    r.exact_voxels = field.exact_voxels;
    r.propagation_passes = field.propagation_passes;
    r.seconds_exact = field.seconds_exact, r.seconds_propagate = field.seconds_propagate, r.seconds_write = write_s;
    r.warnings = std::move(warnings);
    return r;
}

}  // namespace hp::pipeline
