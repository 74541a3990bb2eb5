// The voxelize stage: its declaration (options bound to VoxelizeParams), its body (shared with
// haptic-voxelize, which adds its files) and its summary (to_json, format_text).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "formats/vdb.hpp"
#include "pipeline/memory_model.hpp"
#include "pipeline/stage_voxelize.hpp"
#include "voxel/band.hpp"
#include "voxel/voxelize.hpp"

namespace hp::pipeline {

namespace {

// The voxel size for the options (a usage error when it is not a positive number).
double choose_voxel_size(const Aabb& box, double voxel_size, int resolution) {
    double longest = std::max({box.size().x, box.size().y, box.size().z});
    double s = voxel_size > 0 ? voxel_size : longest / resolution;
    if (!(s > 0) || !std::isfinite(s)) fail_usage("the voxel size must be a positive number");
    // A VDB file's transform refuses a voxel whose volume is below 3e-15 (OpenVDB's ScaleMap).
    if (s * s * s < 3e-15)
        fail_usage(strf("the voxel size %.4g is below %.4g, the least a VDB file holds; scale the mesh up (--scale or "
                        "--units) and the voxel size with it, or use a larger voxel size", s, 1.443e-5));
    return s;
}

}  // namespace

StageSpec voxelize_stage() {
    StageSpec s;
    s.name = "voxelize";
    s.tool = "haptic-voxelize";
    s.description = "layered voxelmap (surface 0, inside +n, outside -n)";
    s.output_name = "voxelize.vdb";
    s.produces = "voxelmap";
    s.available = true;
    Declare<VoxelizeParams> d(s.params);
    d(&VoxelizeParams::voxel_size, "voxel_size", "voxel edge length in world units").above_zero().excluding({"resolution"});
    d(&VoxelizeParams::resolution, "resolution", "voxels along the longest side (unless a voxel size is given)")
        .in(1, kMaxGridDim)
        .excluding({"voxel_size"});
    d(&VoxelizeParams::pad, "pad", "voxels of padding on every side").in(0, 1000);
    std::vector<nlohmann::json> fills;
    for (const FillMethodName& f : fill_methods()) fills.push_back(f.name);
    d(&VoxelizeParams::fill, "fill", "inside/outside method").one_of(fills);
    d(&VoxelizeParams::max_layers, "max_layers", "clamp layer values to +-L (0 = unlimited)").in(0, 32767);
    d(&VoxelizeParams::connectivity, "connectivity", "layer steps through 26 or 6 neighbours").one_of({26, 6});
    d(&VoxelizeParams::band, "band",
      "narrow band of B voxels (exact layers within B, +-B tiles beyond); 0 = dense; default: dense while it fits "
      "comfortably in memory, else 8")
        .in(0, 16383);
    declare_mesh_options(d, "");
    s.run = typed_run("voxelize", &run_voxelize);
    return s;
}

nlohmann::json to_json(const VoxelizeSummary& s) {
    nlohmann::json j = {{"grid", {{"dims", s.grid.dims}, {"voxel_size", s.grid.voxel_size}, {"origin", s.origin}, {"voxels", s.voxels}}},
            {"fill", s.fill},
            {"undecided_voxels", s.undecided},
            {"flipped_voxels", s.flipped},
            {"winding_voxels", s.by_winding},
            {"voxels", {{"inside", s.inside}, {"surface", s.surface}, {"outside", s.outside}}},
            {"layers", {{"min", s.min_layer}, {"max", s.max_layer}, {"sweeps", s.layer_sweeps}}},
            {"seconds", {{"import", s.seconds_import}, {"prepare", s.seconds_prepare}, {"surface", s.seconds_surface},
                         {"fill", s.seconds_fill}, {"layers", s.seconds_layers}, {"write", s.seconds_write},
                         {"total", s.seconds_total}}},
            {"mode_reason", s.mode_reason},
            {"warnings", s.warnings}};
    if (s.band > 0) j["band"] = {{"voxels", s.band}, {"band_voxels", s.band_voxels}};
    if (s.fill == fill_name(FillMethod::hybrid) && s.band == 0)
        j["fill_rules"] = {{"winding", s.by_winding}, {"vote", s.by_vote}, {"winding_evaluated", s.winding_evaluated}};
    return j;
}

nlohmann::json to_json(const VoxelizeSummary& s, const ToolFacts& f) {
    nlohmann::json j = to_json(s);
    j["output"] = f.output;
    j["mesh"] = to_json(f.mesh->diagnostics);
    j["mesh"]["source_name"] = f.mesh->source_name;
    j["peak_rss_bytes"] = f.peak_rss_bytes;
    j["seconds"]["total"] = f.total_seconds;  // the whole call, the voxelmap's memory given back included
    return j;
}

std::string format_text(const VoxelizeSummary& s, const ToolFacts& f) {
    const LoadedMesh& m = *f.mesh;
    std::string out = strf("mesh         %s: %s vertices, %s triangles, %s\n", m.source_name.c_str(),
                           with_commas(m.diagnostics.vertices).c_str(), with_commas(m.diagnostics.triangles).c_str(),
                           m.diagnostics.watertight ? "watertight" : "not watertight");
    out += strf("grid         %d x %d x %d voxels (%s), voxel size %.6g\n", s.grid.dims[0], s.grid.dims[1], s.grid.dims[2],
                with_commas(s.voxels).c_str(), s.grid.voxel_size);
    out += strf("fill         %s", s.fill.c_str());
    if (s.undecided)
        out += strf(" (%s voxels without a majority: %s by their neighbours, %s by the winding number)",
                    with_commas(s.undecided).c_str(), with_commas(s.undecided - s.by_winding).c_str(),
                    with_commas(s.by_winding).c_str());
    if (s.fill == fill_name(FillMethod::hybrid) && s.band > 0)
        out += strf(" (on the band's voxels as the dense hybrid decides them)");
    else if (s.fill == fill_name(FillMethod::hybrid))
        out += strf(" (%s voxels by the winding number, %s by the unanimous vote; %s winding numbers evaluated)",
                    with_commas(s.by_winding).c_str(), with_commas(s.by_vote).c_str(), with_commas(s.winding_evaluated).c_str());
    if (s.flipped)
        out += strf("; %s voxels in pockets cut off from the surface joined the side around them", with_commas(s.flipped).c_str());
    out += "\n";
    out += strf("voxels       %s inside, %s surface, %s outside; layers %d .. %d\n", with_commas(s.inside).c_str(),
                with_commas(s.surface).c_str(), with_commas(s.outside).c_str(), s.min_layer, s.max_layer);
    out += strf("mode         %s\n", s.mode_reason.c_str());
    out += strf("time         import %.3f s, prepare %.3f s, surface %.3f s, fill %.3f s, layers %.3f s, write %.3f s, total %.3f s\n",
                s.seconds_import, s.seconds_prepare, s.seconds_surface, s.seconds_fill, s.seconds_layers, s.seconds_write,
                f.total_seconds);
    out += strf("memory       peak %s\n", human_bytes(static_cast<double>(f.peak_rss_bytes)).c_str());
    out += strf("wrote        %s\n", f.output.c_str());
    return out;
}

VoxelizeSummary run_voxelize(const StageContext& ctx, const VoxelizeParams& p) {
    const auto t_start = std::chrono::steady_clock::now();
    MeshLoadOptions mopt;
    mopt.scale = p.scale;
    if (p.units) mopt.units = *p.units;
    if (p.part) mopt.part = *p.part;
    mopt.voxel_size = p.voxel_size.value_or(0.0);
    mopt.resolution = p.resolution;
    tessellation_or(mopt, p, nlohmann::json::object());
    const double voxel_size = p.voxel_size.value_or(0.0);
    const int resolution = p.resolution;
    const int pad = p.pad;
    const std::string& fill = p.fill;
    VoxelizeOptions vopt;
    vopt.max_layers = p.max_layers;
    vopt.connectivity = p.connectivity;
    vopt.fill = parse_fill(fill);

    const LoadedMesh& m = ctx.load_mesh(mopt);
    const double import_s = seconds_since(t_start);
    std::vector<std::string> warnings;
    add_import_notes(warnings, ctx.mesh.string(), m);
    if (!m.diagnostics.watertight)
        warnings.push_back(ctx.mesh.string() + ": the mesh is not watertight (" +
                           std::to_string(m.diagnostics.boundary_edges) + " boundary edges); inside/outside by " + ctx.option_name("fill") + " " +
                           (vopt.fill == FillMethod::automatic ? fill_name(FillMethod::hybrid) : fill));
    if (m.diagnostics.flipped_faces > 0)
        warnings.push_back(ctx.mesh.string() + ": " + std::to_string(m.diagnostics.flipped_faces) +
                           " faces were wound against their neighbours; import flipped them (orientation repaired)");
    if (m.diagnostics.non_orientable_parts + m.diagnostics.non_manifold_parts > 0)
        warnings.push_back(ctx.mesh.string() + ": " + std::to_string(m.diagnostics.non_orientable_parts) +
                           " non-orientable and " + std::to_string(m.diagnostics.non_manifold_parts) +
                           " non-manifold parts keep their faces as wound; distance signs near them may be wrong");
    const double s = choose_voxel_size(m.diagnostics.bbox, voxel_size, resolution);
    // In a pipeline, a distance stage to come with a gradient counts in the estimate.
    bool gradient = false;
    for (const auto& later : ctx.later)
        if (later.value("stage", "") == "distance" && later.contains("params") &&
            later["params"].value("gradient", nlohmann::json(false)) == true)
            gradient = true;
    const FieldMode mode = choose_field_mode(m.diagnostics.bbox, mesh_area(m.mesh), s, pad, p.band, gradient, physical_memory());
    GridSpec grid = grid_around(m.diagnostics.bbox, s, pad);
    LayerMap map;
    BandLayerMap bmap;
    if (mode.band > 0) bmap = voxelize_band(m.mesh, grid, vopt, mode.band, ctx.progress);
    else map = voxelize(m.mesh, grid, vopt, ctx.progress);
    const FillMethod fill_used = mode.band > 0 ? bmap.fill_used : map.fill_used;

    nlohmann::json params{{"voxel_size", s}, {"pad", pad}, {"fill", fill}, {"max_layers", vopt.max_layers},
                          {"connectivity", vopt.connectivity}, {"scale", mopt.scale}, {"units", mopt.units}};
    if (mode.band > 0) params["band"] = mode.band;
    record_tessellation(params, m);
    if (!m.part.empty()) params["part"] = m.part;  // the geometry, so that its files are the same from any instance
    nlohmann::json meta{{"kind", "voxelmap"},
                        {"tool", "haptic-voxelize"},
                        {"tool_version", kVersion},
                        {"source_name", m.source_name},
                        {"source_hash", m.source_hash},
                        {"units", m.units.empty() ? "file units" : m.units},
                        {"padding", pad},
                        {"fill", fill_name(fill_used)},
                        {"max_layers", vopt.max_layers},
                        {"connectivity", vopt.connectivity},
                        {"parameters", params.dump()}};
    if (mode.band > 0) meta["band"] = mode.band;
    const auto t_write = std::chrono::steady_clock::now();
    const std::size_t slice = static_cast<std::size_t>(grid.dims[0]) * static_cast<std::size_t>(grid.dims[1]);
    vdb::GridOut layers{"layers", vdb::ValueType::int32,
                        [&](int z, void* out) {
                            auto* dst = static_cast<std::int32_t*>(out);
                            auto& src = map.slices[static_cast<std::size_t>(z)];
                            for (std::size_t i = 0; i < slice; ++i) dst[i] = src[i];
                            std::vector<std::int16_t>().swap(src);  // free as the writer goes
                        },
                        static_cast<double>(std::min((mode.band > 0 ? bmap.min_layer : map.min_layer) - 1, -1))};
    std::vector<std::int32_t> brick(kBrickVoxels);
    if (mode.band > 0) {
        layers.slices = nullptr;
        layers.blocks = [&](std::size_t b, void* tile) -> const void* {
            const std::int16_t* src = bmap.layers.brick(b);
            if (!src) {
                *static_cast<std::int32_t*>(tile) = bmap.layers.tile[b];
                return nullptr;
            }
            // The writer asks for the blocks in order and the bricks lie in block order: those
            // before this one are in its tree already, and their pages go back to the system.
            if (bmap.layers.index[b] % 256 == 0) bmap.layers.release_bricks_before(bmap.layers.index[b]);
            std::copy(src, src + kBrickVoxels, brick.begin());
            return brick.data();
        };
    }
    vdb::write(ctx.output, grid, {layers}, meta, std::string("hapticprep ") + kVersion);
    const double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_write).count();
    if (mode.band > 0) {
        map.grid = grid;
        map.fill_used = bmap.fill_used;
        map.inside = bmap.inside, map.surface = bmap.surface, map.outside = bmap.outside;
        map.min_layer = bmap.min_layer, map.max_layer = bmap.max_layer;
        map.seconds_surface = bmap.seconds_surface, map.seconds_fill = bmap.seconds_fill, map.seconds_layers = bmap.seconds_layers;
    }

    VoxelizeSummary r;
    r.grid = {grid.dims, s};
    r.origin = {grid.origin.x, grid.origin.y, grid.origin.z};
    r.voxels = grid.count();
    r.fill = fill_name(map.fill_used);
    r.undecided = map.undecided, r.flipped = map.flipped, r.by_winding = map.by_winding;
    r.by_vote = map.by_vote, r.winding_evaluated = map.winding_evaluated;
    r.inside = map.inside, r.surface = map.surface, r.outside = map.outside;
    r.min_layer = map.min_layer, r.max_layer = map.max_layer, r.layer_sweeps = map.layer_sweeps;
    r.seconds_import = import_s, r.seconds_prepare = mode.band > 0 ? 0.0 : map.seconds_prepare;
    r.seconds_surface = map.seconds_surface, r.seconds_fill = map.seconds_fill, r.seconds_layers = map.seconds_layers;
    r.band = mode.band;
    r.band_voxels = bmap.band_voxels;
    r.mode_reason = mode.reason;
    r.seconds_write = write_s;
    r.seconds_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    r.warnings = std::move(warnings);
    return r;
}

}  // namespace hp::pipeline
