// haptic-cfm: mesh + point-sphere tree -> closest feature map (.hcfm). See lib/cfm.
#include <chrono>
#include <cstdio>

#include <filesystem>

#include "core/clock.hpp"
#include "cfm/cfm.hpp"
#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "core/text.hpp"


int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-cfm",
        "Build the closest feature map (paper 003) of every sphere of a point-sphere tree: for each sample\n"
        "direction, the closest mesh feature (face/edge/vertex), the closest point and the outward normal.",
        "Sampling: adaptive (default; floor((N+1) sin phi) samples on ring phi = i pi/N, 65 at 10 stacks,\n"
        "167 at 16) or polar (N per ring plus the poles, 242 at 16). Stacks: --stacks at the root, --min-stacks at\n"
        "the deepest level, linear in between. --store normal keeps only normals, full also features and points.\n"
        "\nExamples:\n"
        "  haptic-cfm bunny.obj bunny.tree.hps -o bunny.hcfm\n"
        "  haptic-cfm part.stl part.tree.hps --stacks 10 --min-stacks 2 --store full -o part.hcfm\n"
        "  haptic-cfm part.stl part.tree.hps --sampling polar --json -o part.hcfm\n");
    std::string mesh_path, tree_path, output, sampling = "adaptive", store = "normal";
    hp::cfm::Options opt;
    bool force = false;
    hp::MeshLoadOptions mopt;
    tool.cli.add_option("MESH", mesh_path, "the mesh the tree was made from")->required();
    tool.cli.add_option("TREE", tree_path, "point-sphere tree (.hps) from haptic-spheretree")->required();
    tool.cli.add_option("-o,--output", output, "output closest feature map (.hcfm)")->required();
    tool.cli.add_option("--stacks", opt.stacks, "stacks at the root (default 16)")->check(CLI::Range(hp::cfm::kMinStacks, hp::cfm::kMaxStacks));
    tool.cli.add_option("--min-stacks", opt.min_stacks, "stacks at the deepest level (default 4)")->check(CLI::Range(hp::cfm::kMinStacks, hp::cfm::kMaxStacks));
    tool.cli.add_option("--sampling", sampling, "adaptive or polar")->check(CLI::IsMember({"adaptive", "polar"}));
    tool.cli.add_option("--store", store, "normal (normals only) or full (features, points, normals)")->check(CLI::IsMember({"normal", "full"}));
    tool.cli.add_flag("--force", force, "proceed even if the mesh is not the one the tree was made from");
    tool.add_mesh_options(mopt);
    return tool.run(argc, argv, [&] {
        const auto t_start = std::chrono::steady_clock::now();
        hp::app::StageCall call(tool, "cfm", mesh_path, output);
        call.input("tree", tree_path)
            .set("stacks", opt.stacks)
            .set("min_stacks", opt.min_stacks)
            .set("sampling", sampling)
            .set("store", store)
            .set("force", force);
        // The mesh is read with the tree's --units/--scale unless others are given.
        if (tool.cli.count("--units")) call.set("units", mopt.units);
        if (tool.cli.count("--scale")) call.set("scale", mopt.scale);
        nlohmann::json j = call.run();
        const double total_s = hp::seconds_since(t_start);
        const std::size_t bytes = std::filesystem::file_size(output);
        const std::size_t rss = hp::peak_rss_bytes();
        j["output"] = output;
        j["mesh"] = hp::to_json(call.mesh()->diagnostics);
        j["tree"]["file"] = tree_path;
        j["seconds"]["total"] = total_s;
        j["file_bytes"] = bytes;
        j["peak_rss_bytes"] = rss;
        tool.print_json(j);
        if (tool.text_output()) {
            const auto& sec = j["seconds"];
            std::printf("tree         %s spheres on %d levels\n", hp::with_commas(j["tree"]["spheres"].get<std::size_t>()).c_str(),
                        j["tree"]["levels"].get<int>());
            std::printf("sampling     %s, %d stacks at the root, %d at the deepest level; store %s\n", sampling.c_str(),
                        opt.stacks, opt.min_stacks, store.c_str());
            std::printf("level  stacks  samples  spheres  single-feature  records\n");
            for (const auto& s : j["levels"])
                std::printf("%5d  %6d  %7zu  %7zu  %14zu  %7zu\n", s["level"].get<int>(), s["stacks"].get<int>(),
                            s["samples_per_sphere"].get<std::size_t>(), s["spheres"].get<std::size_t>(),
                            s["single_feature"].get<std::size_t>(), s["records"].get<std::size_t>());
            std::printf("records      %s", hp::with_commas(j["records"].get<std::size_t>()).c_str());
            if (!j["unique_features"].is_null())
                std::printf(", %s unique features", hp::with_commas(j["unique_features"].get<std::size_t>()).c_str());
            std::printf("\ntime         load %.3f s, build %.3f s, write %.3f s, total %.3f s\n", sec["load"].get<double>(),
                        sec["build"].get<double>(), sec["write"].get<double>(), total_s);
            std::printf("memory       peak %s\n", hp::human_bytes(static_cast<double>(rss)).c_str());
            std::printf("wrote        %s (%s)\n", output.c_str(), hp::human_bytes(static_cast<double>(bytes)).c_str());
        }
        return 0;
    });
}
