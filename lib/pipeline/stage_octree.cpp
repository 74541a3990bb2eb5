// The octree stage: its declaration (options bound to OctreeParams), its body (shared with
// haptic-octree, which adds its files) and its summary (to_json, format_text).
#include <chrono>
#include <filesystem>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "formats/octree.hpp"
#include "formats/vdb.hpp"
#include "octree/octree.hpp"
#include "pipeline/stage_octree.hpp"

namespace hp::pipeline {

StageSpec octree_stage() {
    StageSpec s;
    s.name = "octree";
    s.tool = "haptic-octree";
    s.description = "octree of the voxelmap's voxels (one child mask per node) for implicit sphere tree queries";
    s.output_name = "octree.hoct";
    s.produces = "octree";
    s.needs = {"voxelmap|distance"};
    s.available = true;
    Declare<OctreeParams> d(s.params);
    d(&OctreeParams::surface_only, "surface_only", "only the surface voxels (layer 0) instead of every solid voxel (layer >= 0)");
    s.run = typed_run("octree", &run_octree);
    return s;
}

nlohmann::json to_json(const OctreeSummary& s) {
    const auto per = [&](std::size_t bytes, std::size_t voxels) {
        return voxels ? nlohmann::json(8.0 * static_cast<double>(bytes) / static_cast<double>(voxels)) : nlohmann::json();
    };
    return {{"surface_only", s.surface_only}, {"levels", s.levels}, {"nodes", s.nodes}, {"voxels", s.voxels},
            {"voxel_size", s.voxel_size},
            {"voxelmap", {{"solid_voxels", s.solid_voxels}, {"surface_voxels", s.surface_voxels}}},
            {"nodes_per_level", s.nodes_per_level},
            {"mask_bytes", s.mask_bytes}, {"memory_bytes", s.memory_bytes},
            {"bits_per_solid_voxel", per(s.mask_bytes, s.solid_voxels)},
            {"bits_per_surface_voxel", per(s.mask_bytes, s.surface_voxels)},
            {"bytes_per_solid_voxel", per(s.mask_bytes, s.solid_voxels * 8)},
            {"bytes_per_surface_voxel", per(s.mask_bytes, s.surface_voxels * 8)},
            {"tight_spheres_smaller", s.tight_smaller},
            {"child_masks", 255},
            {"tight_spheres_smaller_in_the_paper", 85},
            {"root_side_voxels", 1 << s.levels},
            {"seconds", {{"read", s.seconds_read}, {"build", s.seconds_build}, {"write", s.seconds_write}}}};
}

nlohmann::json to_json(const OctreeSummary& s, const ToolFacts& f, const std::string& voxelmap_file) {
    nlohmann::json j = to_json(s);
    j["output"] = f.output;
    j["voxelmap"]["file"] = voxelmap_file;
    j["seconds"]["total"] = f.total_seconds;
    j["file_bytes"] = f.file_bytes;
    j["peak_rss_bytes"] = f.peak_rss_bytes;
    return j;
}

std::string format_text(const OctreeSummary& s, const ToolFacts& f) {
    std::string out = strf("voxels       %s in the octree (%s), of %s solid and %s surface voxels\n",
                           with_commas(s.voxels).c_str(), s.surface_only ? "surface only" : "solid",
                           with_commas(s.solid_voxels).c_str(), with_commas(s.surface_voxels).c_str());
    out += strf("octree       %d levels, %s nodes, root cube %d voxels per side of %g\n", s.levels, with_commas(s.nodes).c_str(),
                1 << s.levels, s.voxel_size);
    out += "level  nodes\n";
    for (std::size_t i = 0; i < s.nodes_per_level.size(); ++i)
        out += strf("%5d  %s\n", s.levels - static_cast<int>(i), with_commas(s.nodes_per_level[i]).c_str());
    const auto per = [](std::size_t bytes, std::size_t voxels) {
        return voxels ? 8.0 * static_cast<double>(bytes) / static_cast<double>(voxels) : 0.0;
    };
    out += strf("storage      %s mask bytes: %.3f bits per solid voxel, %.3f bits per surface voxel (%s in memory with the child index)\n",
                with_commas(s.mask_bytes).c_str(), per(s.mask_bytes, s.solid_voxels), per(s.mask_bytes, s.surface_voxels),
                human_bytes(static_cast<double>(s.memory_bytes)).c_str());
    out += strf("spheres      %d of the 255 child masks have a tight sphere smaller than the node's (the paper counts 85; docs/octree.md)\n",
                s.tight_smaller);
    out += strf("time         read %.3f s, build %.3f s, write %.3f s, total %.3f s\n", s.seconds_read, s.seconds_build,
                s.seconds_write, f.total_seconds);
    out += strf("wrote        %s (%s)\n", f.output.c_str(), human_bytes(static_cast<double>(f.file_bytes)).c_str());
    return out;
}

OctreeSummary run_octree(const StageContext& ctx, const OctreeParams& p) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::filesystem::path input =
        ctx.inputs->count("voxelmap") ? ctx.inputs->at("voxelmap") : ctx.inputs->at("distance");
    const vdb::Reader reader = vdb::Reader::open(input);
    const vdb::FileInfo& info = reader.info();
    if (!info.ours)
        fail_input(input.string(), "is not a hapticprep voxelmap (no haptic: metadata); make one with haptic-voxelize");
    const std::string kind = info.metadata.value("kind", "");
    if (kind != "voxelmap" && kind != "distance")
        fail_input(input.string(), "is a '" + kind + "' file, not a voxelmap (make one with haptic-voxelize)");
    const std::vector<std::int32_t> layers = reader.read_int32("layers");
    const GridSpec& g = info.grid;
    OctreeSummary r;
    std::vector<std::array<int, 3>> voxels;
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                const std::int32_t l = layers[g.index(i, j, k)];
                r.solid_voxels += l >= 0;
                r.surface_voxels += l == 0;
                if (p.surface_only ? l == 0 : l >= 0) voxels.push_back({i, j, k});
            }
    if (voxels.empty())
        fail_input(input.string(), std::string("has no ") + (p.surface_only ? "surface" : "solid") + " voxels to build an octree from");
    r.seconds_read = seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    const octree::Octree tree = octree::build(std::move(voxels), g.origin, g.voxel_size, p.surface_only);
    r.seconds_build = seconds_since(t1);

    nlohmann::json meta{{"kind", "octree"}, {"tool", "haptic-octree"}, {"tool_version", kVersion},
                        {"voxelmap", input.filename().string()},
                        {"voxelmap_kind", kind},
                        {"parameters", {{"surface_only", p.surface_only}}},
                        {"grid", {{"origin", {g.origin.x, g.origin.y, g.origin.z}}, {"voxel_size", g.voxel_size},
                                  {"dims", g.dims}}}};
    for (const char* key : {"source_name", "source_hash", "units"})
        if (info.metadata.contains(key)) meta[key] = info.metadata[key];
    const auto t2 = std::chrono::steady_clock::now();
    write_octree_file(ctx.output, meta, tree);
    r.seconds_write = seconds_since(t2);

    r.surface_only = p.surface_only;
    r.levels = tree.levels;
    r.nodes = tree.nodes();
    r.voxels = tree.voxels;
    r.voxel_size = tree.voxel_size;
    r.nodes_per_level = octree::nodes_per_level(tree);
    r.mask_bytes = tree.masks.size();
    r.memory_bytes = tree.masks.size() * (sizeof(std::uint8_t) + sizeof(std::uint32_t));
    r.tight_smaller = octree::table_counts().cubes;
    return r;
}

}  // namespace hp::pipeline
