// haptic-pointshell: mesh + voxelmap/distance field -> pointshell (.hps). See lib/pointshell.
#include <chrono>
#include <cmath>
#include <cstdio>

#include <filesystem>

#include "core/clock.hpp"
#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "core/text.hpp"


int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-pointshell",
        "Sample the surface of a mesh into a pointshell: points on the mesh about alpha voxels apart, each with a unit\n"
        "inward normal and its source triangle (paper 000, section 2.1.2).",
        "FIELD is the voxelmap (haptic-voxelize) or distance field (haptic-distance) made from MESH: its surface\n"
        "voxels define the sampling; gradient normals come from its distances (or, for a voxelmap, its layers).\n"
        "\nExamples:\n"
        "  haptic-pointshell bunny.obj bunny.dist.vdb -o bunny.hps\n"
        "  haptic-pointshell part.stl part.layers.vdb --normals surface --alpha 2 -o part.hps\n"
        "  haptic-pointshell part.stl part.dist.vdb --json -o part.hps | jq .spacing\n");
    std::string mesh_path, field_path, output, normals = "gradient";
    double alpha = std::sqrt(2.0);
    bool force = false;
    hp::MeshLoadOptions mopt;
    tool.cli.add_option("MESH", mesh_path, "the mesh the field was made from")->required();
    tool.cli.add_option("FIELD", field_path, "voxelmap or distance field (.vdb) of the mesh")->required();
    tool.cli.add_option("-o,--output", output, "output pointshell (.hps)")->required();
    tool.cli.add_option("--alpha", alpha, "minimum spacing in voxel sizes (default sqrt 2 = 1.414)")->check(CLI::PositiveNumber);
    tool.cli.add_option("--normals", normals, "gradient (of the distance field, default) or surface (angle-weighted)")
        ->check(CLI::IsMember({"gradient", "surface"}));
    tool.cli.add_flag("--force", force, "proceed even if the mesh is not the one the field was made from");
    tool.add_mesh_options(mopt);
    return tool.run(argc, argv, [&] {
        const auto t0 = std::chrono::steady_clock::now();
        hp::app::StageCall call(tool, "pointshell", mesh_path, output);
        call.input("distance", field_path).set("alpha", alpha).set("normals", normals).set("force", force);
        // The mesh is read with the field's --units/--scale unless others are given.
        if (tool.cli.count("--units")) call.set("units", mopt.units);
        if (tool.cli.count("--scale")) call.set("scale", mopt.scale);
        nlohmann::json j = call.run();
        const double total_s = hp::seconds_since(t0);
        const std::size_t bytes = std::filesystem::file_size(output);
        j["output"] = output;
        j["mesh"] = hp::to_json(call.mesh()->diagnostics);
        j["seconds"]["total"] = total_s;
        j["file_bytes"] = bytes;
        j["peak_rss_bytes"] = hp::peak_rss_bytes();
        tool.print_json(j);
        if (tool.text_output()) {
            const auto& g = j["grid"];
            const auto& sp = j["spacing"];
            const auto& cov = j["coverage"];
            const auto& dev = j["normal_deviation_deg"];
            const auto& nr = j["normals"];
            const auto& sec = j["seconds"];
            const double as = sp["alpha_s"].get<double>();
            const auto num = [](const nlohmann::json& v) { return v.get<double>(); };
            const auto count = [](const nlohmann::json& v) { return v.get<std::size_t>(); };
            std::printf("grid         %d x %d x %d voxels, voxel size %.6g\n", g["dims"][0].get<int>(), g["dims"][1].get<int>(),
                        g["dims"][2].get<int>(), num(g["voxel_size"]));
            std::printf("points       %s (from %s projected voxel centres, %zu colours)\n",
                        hp::with_commas(count(j["points"])).c_str(), hp::with_commas(count(j["candidates"])).c_str(),
                        count(j["colours"]));
            std::printf("spacing      nearest neighbour min %.4g (%.2f alpha*s), median %.4g (%.2f alpha*s), alpha*s = %.4g\n",
                        num(sp["min"]), num(sp["min"]) / as, num(sp["median"]), num(sp["median"]) / as, as);
            std::printf("coverage     surface to nearest point: max %.4g (%.2f alpha*s), p99 %.4g, %s samples\n",
                        num(cov["max"]), num(cov["max"]) / as, num(cov["p99"]), hp::with_commas(count(cov["samples"])).c_str());
            std::printf("normals      %s, inward; deviation from the triangle's normal median %.2f deg, p95 %.2f deg, max %.1f deg\n",
                        nr["source"].get<std::string>().c_str(), num(dev["median"]), num(dev["p95"]), num(dev["max"]));
            if (count(nr["surface_fallbacks"]) || count(nr["inverted_components"]) || count(nr["dropped_no_normal"]))
                std::printf("             %zu points took the surface normal (weak or outward gradient), %zu of %zu components "
                            "wound inward, %zu candidates without a normal\n",
                            count(nr["surface_fallbacks"]), count(nr["inverted_components"]), count(nr["components"]),
                            count(nr["dropped_no_normal"]));
            std::printf("time         read %.3f s, sample %.3f s, statistics %.3f s, write %.3f s, total %.3f s\n",
                        num(sec["read"]), num(sec["sample"]), num(sec["statistics"]), num(sec["write"]), total_s);
            std::printf("wrote        %s (%s)\n", output.c_str(), hp::human_bytes(static_cast<double>(bytes)).c_str());
        }
        return 0;
    });
}
