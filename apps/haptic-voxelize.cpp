// haptic-voxelize: mesh -> layered voxelmap (OpenVDB Int32 grid "layers"). See lib/voxel.
#include <cstdio>
#include <string>

#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "voxel/voxelize.hpp"

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
        hp::app::StageCall call(tool, "voxelize", input, output);
        if (vs->count()) call.set("voxel_size", voxel_size);
        if (res->count()) call.set("resolution", resolution);
        call.set("pad", pad).set("fill", fill).set("max_layers", vopt.max_layers).set("connectivity", vopt.connectivity);
        call.set("scale", mopt.scale);
        if (tool.cli.count("--units")) call.set("units", mopt.units);
        nlohmann::json j = call.run();
        const std::size_t rss = hp::peak_rss_bytes();
        const hp::LoadedMesh& m = *call.mesh();
        j["output"] = output;
        j["mesh"] = hp::to_json(m.diagnostics);
        j["peak_rss_bytes"] = rss;
        tool.print_json(j);
        if (tool.text_output()) {
            const auto& g = j["grid"];
            const auto& sec = j["seconds"];
            const auto count = [](const nlohmann::json& v) { return hp::with_commas(v.get<std::size_t>()); };
            const std::size_t undecided = j["undecided_voxels"].get<std::size_t>(), flipped = j["flipped_voxels"].get<std::size_t>();
            const std::size_t by_winding = j["winding_voxels"].get<std::size_t>();
            std::printf("mesh         %s: %s vertices, %s triangles, %s\n", m.source_name.c_str(),
                        hp::with_commas(m.diagnostics.vertices).c_str(), hp::with_commas(m.diagnostics.triangles).c_str(),
                        m.diagnostics.watertight ? "watertight" : "not watertight");
            std::printf("grid         %d x %d x %d voxels (%s), voxel size %.6g\n", g["dims"][0].get<int>(), g["dims"][1].get<int>(),
                        g["dims"][2].get<int>(), count(g["voxels"]).c_str(), g["voxel_size"].get<double>());
            std::printf("fill         %s", j["fill"].get<std::string>().c_str());
            if (undecided)
                std::printf(" (%s voxels without a majority: %s by their neighbours, %s by the winding number)",
                            hp::with_commas(undecided).c_str(), hp::with_commas(undecided - by_winding).c_str(),
                            hp::with_commas(by_winding).c_str());
            if (flipped)
                std::printf("; %s voxels in pockets cut off from the surface joined the side around them", hp::with_commas(flipped).c_str());
            std::printf("\n");
            const auto& v = j["voxels"];
            std::printf("voxels       %s inside, %s surface, %s outside; layers %d .. %d\n", count(v["inside"]).c_str(),
                        count(v["surface"]).c_str(), count(v["outside"]).c_str(), j["layers"]["min"].get<int>(),
                        j["layers"]["max"].get<int>());
            std::printf("time         surface %.3f s, fill %.3f s, layers %.3f s, write %.3f s, total %.3f s\n",
                        sec["surface"].get<double>(), sec["fill"].get<double>(), sec["layers"].get<double>(),
                        sec["write"].get<double>(), sec["total"].get<double>());
            std::printf("memory       peak %s\n", hp::human_bytes(static_cast<double>(rss)).c_str());
            std::printf("wrote        %s\n", output.c_str());
        }
        return 0;
    });
}
