// The voxelize stage: the body of haptic-voxelize (apps/haptic-voxelize.cpp parses its options
// and calls this).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/version.hpp"
#include "formats/vdb.hpp"
#include "pipeline/stage_runs.hpp"
#include "voxel/voxelize.hpp"

namespace hp::pipeline {

namespace {

// The voxel size for the options, or a usage error that says what would fit.
double choose_voxel_size(const Aabb& box, double voxel_size, int resolution, int pad) {
    double longest = std::max({box.size().x, box.size().y, box.size().z});
    double s = voxel_size > 0 ? voxel_size : longest / resolution;
    if (!(s > 0) || !std::isfinite(s)) fail_usage("the voxel size must be a positive number");
    constexpr double kMaxVoxels = 2147483648.0;  // 2^31 dense voxels
    auto fits = [&](double t) {
        double n = voxel_count_for(box, t, pad);
        return n <= kMaxVoxels && longest / t + 2 * pad <= kMaxGridDim;
    };
    if (!fits(s)) {
        double t = s;
        while (!fits(t)) t *= 1.01;
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "voxel size %.6g gives %.3g voxels (the limit is 2^31 = 2.1e9 and %d per axis); "
                      "the smallest voxel size that fits is about %.6g",
                      s, voxel_count_for(box, s, pad), kMaxGridDim, t);
        fail_usage(buf);
    }
    return s;
}

}  // namespace

nlohmann::json run_voxelize(const StageContext& ctx) {
    const auto t_start = std::chrono::steady_clock::now();
    const nlohmann::json& p = ctx.params;
    MeshLoadOptions mopt;
    mopt.scale = p.at("scale").get<double>();
    if (!p.at("units").is_null()) mopt.units = p.at("units").get<std::string>();
    const double voxel_size = p.at("voxel_size").is_null() ? 0.0 : p.at("voxel_size").get<double>();
    const int resolution = p.at("resolution").is_null() ? (voxel_size > 0 ? 0 : 128) : p.at("resolution").get<int>();
    const int pad = p.at("pad").get<int>();
    const std::string fill = p.at("fill").get<std::string>();
    VoxelizeOptions vopt;
    vopt.max_layers = p.at("max_layers").get<int>();
    vopt.connectivity = p.at("connectivity").get<int>();
    const std::pair<const char*, FillMethod> methods[] = {{"auto", FillMethod::automatic},
                                                          {"scanline", FillMethod::scanline},
                                                          {"vote", FillMethod::vote},
                                                          {"winding", FillMethod::winding},
                                                          {"flood", FillMethod::flood}};
    for (const auto& [name, method] : methods)
        if (fill == name) vopt.fill = method;

    const LoadedMesh& m = ctx.load_mesh(mopt);
    nlohmann::json warnings = nlohmann::json::array();
    if (!m.diagnostics.watertight)
        warnings.push_back(ctx.mesh.string() + ": the mesh is not watertight (" +
                           std::to_string(m.diagnostics.boundary_edges) + " boundary edges); inside/outside by --fill " +
                           (fill == "auto" ? std::string("vote") : fill));
    const double s = choose_voxel_size(m.diagnostics.bbox, voxel_size, resolution, pad);
    GridSpec grid = grid_around(m.diagnostics.bbox, s, pad);
    LayerMap map = voxelize(m.mesh, grid, vopt, ctx.progress);

    nlohmann::json params{{"voxel_size", s}, {"pad", pad}, {"fill", fill}, {"max_layers", vopt.max_layers},
                          {"connectivity", vopt.connectivity}, {"scale", mopt.scale}, {"units", mopt.units}};
    nlohmann::json meta{{"kind", "voxelmap"},
                        {"tool", "haptic-voxelize"},
                        {"tool_version", kVersion},
                        {"source_name", m.source_name},
                        {"source_hash", m.source_hash},
                        {"units", m.units.empty() ? "file units" : m.units},
                        {"padding", pad},
                        {"fill", fill_name(map.fill_used)},
                        {"max_layers", vopt.max_layers},
                        {"connectivity", vopt.connectivity},
                        {"parameters", params.dump()}};
    const auto t_write = std::chrono::steady_clock::now();
    const std::size_t slice = static_cast<std::size_t>(grid.dims[0]) * static_cast<std::size_t>(grid.dims[1]);
    vdb::GridOut layers{"layers", vdb::ValueType::int32,
                        [&](int z, void* out) {
                            auto* dst = static_cast<std::int32_t*>(out);
                            auto& src = map.slices[static_cast<std::size_t>(z)];
                            for (std::size_t i = 0; i < slice; ++i) dst[i] = src[i];
                            std::vector<std::int16_t>().swap(src);  // free as the writer goes
                        },
                        static_cast<double>(std::min(map.min_layer - 1, -1))};
    vdb::write(ctx.output, grid, {layers}, meta, std::string("hapticprep ") + kVersion);
    const double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_write).count();

    return {{"grid", {{"dims", {grid.dims[0], grid.dims[1], grid.dims[2]}},
                      {"voxel_size", s},
                      {"origin", {grid.origin.x, grid.origin.y, grid.origin.z}},
                      {"voxels", grid.count()}}},
            {"fill", fill_name(map.fill_used)},
            {"undecided_voxels", map.undecided},
            {"flipped_voxels", map.flipped},
            {"winding_voxels", map.by_winding},
            {"voxels", {{"inside", map.inside}, {"surface", map.surface}, {"outside", map.outside}}},
            {"layers", {{"min", map.min_layer}, {"max", map.max_layer}, {"sweeps", map.layer_sweeps}}},
            {"seconds", {{"surface", map.seconds_surface}, {"fill", map.seconds_fill},
                         {"layers", map.seconds_layers}, {"write", write_s},
                         {"total", std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count()}}},
            {"warnings", warnings}};
}

}  // namespace hp::pipeline
