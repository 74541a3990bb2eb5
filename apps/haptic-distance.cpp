// haptic-distance: mesh + layered voxelmap -> signed distance field (OpenVDB). See lib/distance.
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "core/text.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-distance",
        "Compute a signed distance field (inside positive, world units) over the voxels of a layered voxelmap.",
        "Encodings (--encoding): float (default), double, scaled = Int32 round(d * 10^P) (paper eq. 1).\n"
        "The output holds the 'distance' grid, a copy of the voxelmap's 'layers' grid, and with --gradient\n"
        "a Vec3f 'gradient' grid (unit gradient of the distance, pointing to increasing penetration).\n"
        "\nExamples:\n"
        "  haptic-distance bunny.obj bunny.layers.vdb -o bunny.dist.vdb\n"
        "  haptic-distance part.stl part.layers.vdb --encoding scaled --precision 6 -o part.dist.vdb\n"
        "  haptic-distance part.stl part.layers.vdb --gradient --json -o part.dist.vdb\n");
    std::string mesh_path, map_path, output, encoding = "float";
    int precision = 6;
    bool gradient = false, force = false;
    hp::MeshLoadOptions mopt;
    tool.cli.add_option("MESH", mesh_path, "the mesh the voxelmap was made from")->required();
    tool.cli.add_option("VOXELMAP", map_path, "layered voxelmap from haptic-voxelize")->required();
    tool.cli.add_option("-o,--output", output, "output distance field (.vdb)")->required();
    tool.cli.add_option("--encoding", encoding, "float, double or scaled")->check(CLI::IsMember({"float", "double", "scaled"}));
    tool.cli.add_option("--precision", precision, "decimal digits P of the scaled encoding (default 6)")->check(CLI::Range(0, 12));
    tool.cli.add_flag("--gradient", gradient, "also write a Vec3f 'gradient' grid");
    tool.cli.add_flag("--force", force, "proceed even if the mesh is not the one the voxelmap was made from");
    tool.add_mesh_options(mopt);
    return tool.run(argc, argv, [&] {
        const auto t_start = std::chrono::steady_clock::now();
        hp::app::StageCall call(tool, "distance", mesh_path, output);
        call.input("voxelmap", map_path).set("encoding", encoding).set("precision", precision).set("gradient", gradient)
            .set("force", force);
        // The mesh is read with the voxelmap's --units/--scale unless others are given.
        if (tool.cli.count("--units")) call.set("units", mopt.units);
        if (tool.cli.count("--scale")) call.set("scale", mopt.scale);
        nlohmann::json j = call.run();
        const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        const std::size_t rss = hp::peak_rss_bytes();
        const std::size_t bytes = std::filesystem::file_size(output);
        j["output"] = output;
        j["mesh"] = hp::to_json(call.mesh()->diagnostics);
        j["seconds"]["total"] = total_s;
        j["file_bytes"] = bytes;
        j["peak_rss_bytes"] = rss;
        tool.print_json(j);
        if (tool.text_output()) {
            const auto& g = j["grid"];
            const auto& sec = j["seconds"];
            std::printf("grid         %d x %d x %d voxels, voxel size %.6g\n", g["dims"][0].get<int>(), g["dims"][1].get<int>(),
                        g["dims"][2].get<int>(), g["voxel_size"].get<double>());
            std::printf("distance     %.6g .. %.6g (inside positive), encoding %s\n", j["range"][0].get<double>(),
                        j["range"][1].get<double>(), encoding.c_str());
            std::printf("exact        %s voxels within 3 voxels of the surface\n",
                        hp::with_commas(j["exact_voxels"].get<std::size_t>()).c_str());
            std::printf("time         exact %.3f s, propagate %.3f s, write %.3f s, total %.3f s\n", sec["exact"].get<double>(),
                        sec["propagate"].get<double>(), sec["write"].get<double>(), total_s);
            std::printf("memory       peak %s\n", hp::human_bytes(static_cast<double>(rss)).c_str());
            std::printf("wrote        %s (%s)\n", output.c_str(), hp::human_bytes(static_cast<double>(bytes)).c_str());
        }
        return 0;
    });
}
