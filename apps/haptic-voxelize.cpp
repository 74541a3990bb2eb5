// haptic-voxelize: mesh -> layered voxelmap (OpenVDB Int32 grid "layers"). See lib/voxel.
#include <chrono>
#include <cmath>
#include <iostream>

#include "common/tool.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "formats/vdb.hpp"
#include "voxel/voxelize.hpp"

namespace {

// The voxel size for the options, or a usage error that says what would fit.
double choose_voxel_size(const hp::Aabb& box, double voxel_size, int resolution, int pad) {
    double longest = std::max({box.size().x, box.size().y, box.size().z});
    double s = voxel_size > 0 ? voxel_size : longest / resolution;
    if (!(s > 0) || !std::isfinite(s)) hp::fail_usage("the voxel size must be a positive number");
    constexpr double kMaxVoxels = 2147483648.0;  // 2^31 dense voxels
    auto fits = [&](double t) {
        double n = hp::voxel_count_for(box, t, pad);
        return n <= kMaxVoxels && longest / t + 2 * pad <= hp::kMaxGridDim;
    };
    if (!fits(s)) {
        double t = s;
        while (!fits(t)) t *= 1.01;
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "voxel size %.6g gives %.3g voxels (the limit is 2^31 = 2.1e9 and %d per axis); "
                      "the smallest voxel size that fits is about %.6g",
                      s, hp::voxel_count_for(box, s, pad), hp::kMaxGridDim, t);
        hp::fail_usage(buf);
    }
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-voxelize", "Build a layered voxelmap (surface = 0, inside +n, outside -n) from a triangle mesh.",
        "Fill methods (--fill):\n"
        "  auto      scanline for watertight meshes, vote otherwise (default)\n"
        "  scanline  exact crossing parity along x rows (closed meshes, any orientation, many parts)\n"
        "  vote      parity along x, y and z; rows through holes (odd counts) abstain; majority wins;\n"
        "            ties join their neighbours' majority, the rest the generalized winding number\n"
        "            (open meshes such as scans)\n"
        "  winding   generalized winding number at every voxel (tree evaluated; slow on big grids)\n"
        "  flood     outside = reachable from the border (closed meshes; leaks through holes)\n"
        "Layers count breadth-first steps from the surface through voxels of the same side; a pocket of\n"
        "one side that no surface voxel borders (left by votes at a hole) joins the side around it.\n"
        "--max-layers 0 (default) keeps every layer; otherwise values are clamped to +-L.\n"
        "\nExamples:\n"
        "  haptic-voxelize bunny.obj --voxel-size 0.0005 -o bunny.layers.vdb\n"
        "  haptic-voxelize part.stl --units mm --resolution 256 -o part.layers.vdb --json\n"
        "  haptic-voxelize scan.ply --voxel-size 0.002 --max-layers 20 --connectivity 6 -o scan.vdb\n");
    std::string input, output;
    double voxel_size = 0;
    int resolution = 0, pad = 2;
    std::string fill = "auto";
    hp::VoxelizeOptions vopt;
    hp::MeshLoadOptions mopt;
    tool.cli.add_option("MESH", input, "input mesh (any format Assimp reads)")->required();
    tool.cli.add_option("-o,--output", output, "output voxelmap (.vdb)")->required();
    auto* vs = tool.cli.add_option("--voxel-size", voxel_size, "voxel edge length in world units")->type_name("S");
    auto* res = tool.cli.add_option("--resolution", resolution, "voxels along the longest side (default 128)")
                    ->type_name("N")
                    ->check(CLI::Range(1, hp::kMaxGridDim));
    vs->excludes(res);
    tool.cli.add_option("--pad", pad, "voxels of padding on every side (default 2)")->check(CLI::Range(0, 1000));
    tool.cli.add_option("--fill", fill, "inside/outside method")->check(CLI::IsMember({"auto", "scanline", "vote", "winding", "flood"}));
    tool.cli.add_option("--max-layers", vopt.max_layers, "clamp layer values to +-L (0 = unlimited)")->check(CLI::Range(0, 32767));
    tool.cli.add_option("--connectivity", vopt.connectivity, "layer steps through 26 or 6 neighbours")->check(CLI::IsMember({26, 6}));
    tool.add_mesh_options(mopt);
    return tool.run(argc, argv, [&] {
        if (vs->count() && !(voxel_size > 0)) hp::fail_usage("--voxel-size must be a positive number (got " + std::to_string(voxel_size) + ")");
        if (!vs->count() && resolution == 0) resolution = 128;
        const auto t_start = std::chrono::steady_clock::now();
        hp::Progress progress = tool.progress();
        hp::LoadedMesh m = hp::load_mesh(input, mopt);
        if (!m.diagnostics.watertight)
            tool.warn(input + ": the mesh is not watertight (" + std::to_string(m.diagnostics.boundary_edges) +
                      " boundary edges); inside/outside by --fill " + (fill == "auto" ? std::string("vote") : fill));
        const double s = choose_voxel_size(m.diagnostics.bbox, voxel_size, resolution, pad);
        hp::GridSpec grid = hp::grid_around(m.diagnostics.bbox, s, pad);
        const std::pair<const char*, hp::FillMethod> methods[] = {{"auto", hp::FillMethod::automatic},
                                                                   {"scanline", hp::FillMethod::scanline},
                                                                   {"vote", hp::FillMethod::vote},
                                                                   {"winding", hp::FillMethod::winding},
                                                                   {"flood", hp::FillMethod::flood}};
        for (const auto& [name, method] : methods)
            if (fill == name) vopt.fill = method;
        hp::LayerMap map = hp::voxelize(m.mesh, grid, vopt, progress);

        nlohmann::json params{{"voxel_size", s}, {"pad", pad}, {"fill", fill}, {"max_layers", vopt.max_layers},
                              {"connectivity", vopt.connectivity}, {"scale", mopt.scale}, {"units", mopt.units}};
        nlohmann::json meta{{"kind", "voxelmap"},
                            {"tool", "haptic-voxelize"},
                            {"tool_version", hp::kVersion},
                            {"source_name", m.source_name},
                            {"source_hash", m.source_hash},
                            {"units", m.units.empty() ? "file units" : m.units},
                            {"padding", pad},
                            {"fill", hp::fill_name(map.fill_used)},
                            {"max_layers", vopt.max_layers},
                            {"connectivity", vopt.connectivity},
                            {"parameters", params.dump()}};
        const auto t_write = std::chrono::steady_clock::now();
        const std::size_t slice = static_cast<std::size_t>(grid.dims[0]) * static_cast<std::size_t>(grid.dims[1]);
        hp::vdb::GridOut layers{"layers", hp::vdb::ValueType::int32,
                                [&](int z, void* out) {
                                    auto* dst = static_cast<std::int32_t*>(out);
                                    auto& src = map.slices[static_cast<std::size_t>(z)];
                                    for (std::size_t i = 0; i < slice; ++i) dst[i] = src[i];
                                    std::vector<std::int16_t>().swap(src);  // free as the writer goes
                                },
                                static_cast<double>(std::min(map.min_layer - 1, -1))};
        hp::vdb::write(output, grid, {layers}, meta, std::string("hapticprep ") + hp::kVersion);
        const double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_write).count();
        const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        const std::size_t rss = hp::app::peak_rss_bytes();

        nlohmann::json j{{"output", output},
                         {"mesh", hp::to_json(m.diagnostics)},
                         {"grid", {{"dims", {grid.dims[0], grid.dims[1], grid.dims[2]}},
                                   {"voxel_size", s},
                                   {"origin", {grid.origin.x, grid.origin.y, grid.origin.z}},
                                   {"voxels", grid.count()}}},
                         {"fill", hp::fill_name(map.fill_used)},
                         {"undecided_voxels", map.undecided},
                         {"flipped_voxels", map.flipped},
                         {"winding_voxels", map.by_winding},
                         {"voxels", {{"inside", map.inside}, {"surface", map.surface}, {"outside", map.outside}}},
                         {"layers", {{"min", map.min_layer}, {"max", map.max_layer}, {"sweeps", map.layer_sweeps}}},
                         {"seconds", {{"surface", map.seconds_surface}, {"fill", map.seconds_fill},
                                      {"layers", map.seconds_layers}, {"write", write_s}, {"total", total_s}}},
                         {"peak_rss_bytes", rss}};
        tool.print_json(j);
        if (tool.text_output()) {
            std::printf("mesh         %s: %s vertices, %s triangles, %s\n", m.source_name.c_str(),
                        hp::with_commas(m.diagnostics.vertices).c_str(), hp::with_commas(m.diagnostics.triangles).c_str(),
                        m.diagnostics.watertight ? "watertight" : "not watertight");
            std::printf("grid         %d x %d x %d voxels (%s), voxel size %.6g\n", grid.dims[0], grid.dims[1], grid.dims[2],
                        hp::with_commas(grid.count()).c_str(), s);
            std::printf("fill         %s", hp::fill_name(map.fill_used));
            if (map.undecided)
                std::printf(" (%s voxels without a majority: %s by their neighbours, %s by the winding number)",
                            hp::with_commas(map.undecided).c_str(), hp::with_commas(map.undecided - map.by_winding).c_str(),
                            hp::with_commas(map.by_winding).c_str());
            if (map.flipped) std::printf("; %s voxels in pockets cut off from the surface joined the side around them",
                                         hp::with_commas(map.flipped).c_str());
            std::printf("\n");
            std::printf("voxels       %s inside, %s surface, %s outside; layers %d .. %d\n", hp::with_commas(map.inside).c_str(),
                        hp::with_commas(map.surface).c_str(), hp::with_commas(map.outside).c_str(), map.min_layer, map.max_layer);
            std::printf("time         surface %.3f s, fill %.3f s, layers %.3f s, write %.3f s, total %.3f s\n",
                        map.seconds_surface, map.seconds_fill, map.seconds_layers, write_s, total_s);
            std::printf("memory       peak %s\n", hp::human_bytes(static_cast<double>(rss)).c_str());
            std::printf("wrote        %s\n", output.c_str());
        }
        return 0;
    });
}
