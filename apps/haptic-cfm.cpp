// haptic-cfm: mesh + point-sphere tree -> closest feature map (.hcfm). See lib/cfm.
#include <chrono>
#include <cstdio>

#include "cfm/cfm.hpp"
#include "common/tool.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "formats/cfm.hpp"
#include "formats/shell.hpp"

namespace {
double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
// The tree's recorded parameters, an object or a JSON string of one.
nlohmann::json parameters_of(const nlohmann::json& meta) {
    nlohmann::json p = meta.value("parameters", nlohmann::json::object());
    if (p.is_string()) p = nlohmann::json::parse(p.get<std::string>(), nullptr, false);
    return p.is_object() ? p : nlohmann::json::object();
}
}  // namespace

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
        if (opt.min_stacks > opt.stacks)
            hp::fail_usage("--min-stacks " + std::to_string(opt.min_stacks) + " exceeds --stacks " + std::to_string(opt.stacks));
        opt.sampling = sampling == "polar" ? hp::cfm::Sampling::polar : hp::cfm::Sampling::adaptive;
        opt.store = store == "full" ? hp::cfm::Store::full : hp::cfm::Store::normal;

        hp::ShellFile shell = hp::read_shell_file(tree_path, /*require_tree=*/true);
        const nlohmann::json params = parameters_of(shell.metadata);
        // The mesh is read with the tree's --units/--scale unless others are given.
        if (tool.cli.count("--units") == 0 && params.contains("units") && params["units"].is_string())
            mopt.units = params["units"].get<std::string>();
        if (tool.cli.count("--scale") == 0 && params.contains("scale") && params["scale"].is_number())
            mopt.scale = params["scale"].get<double>();
        hp::LoadedMesh m = hp::load_mesh(mesh_path, mopt);
        const std::string recorded = shell.metadata.value("source_hash", "");
        const std::string mismatch = hp::check_source_hash(mesh_path, m.source_hash, tree_path, "tree", recorded, force, "--force");
        if (!mismatch.empty()) tool.warn(mismatch);
        if (m.diagnostics.orientation == "inward") opt.outward_sign = -1;
        if (m.diagnostics.orientation == "mixed")
            tool.warn(mesh_path + ": triangles are not consistently oriented; normals follow each triangle's winding");
        const double load_s = since(t_start);

        const auto t_build = std::chrono::steady_clock::now();
        const hp::cfm::ClosestFeatureMap map = hp::cfm::build_cfm(m.mesh, *shell.tree, opt, tool.progress());
        const double build_s = since(t_build);

        nlohmann::json meta{{"kind", "cfm"}, {"tool", "haptic-cfm"}, {"tool_version", hp::kVersion},
                            {"source_name", m.source_name}, {"source_hash", m.source_hash}, {"units", m.units},
                            {"tree", std::filesystem::path(tree_path).filename().string()},
                            {"tree_source_hash", recorded},
                            {"parameters", {{"stacks", opt.stacks}, {"min_stacks", opt.min_stacks}, {"sampling", sampling},
                                            {"store", store}, {"units", mopt.units}, {"scale", mopt.scale}}},
                            {"normal_orientation", opt.outward_sign < 0 ? "outward (mesh wound inward, flipped)" : "outward"},
                            {"feature_index", "face: triangle; edge: 3t+i of the lowest triangle t with it; vertex: vertex"}};
        const auto t_write = std::chrono::steady_clock::now();
        hp::write_cfm_file(output, meta, map);
        const double write_s = since(t_write);
        const double total_s = since(t_start);

        const auto stats = hp::cfm::level_stats(map);
        const std::size_t unique = hp::cfm::unique_features(map);
        const std::size_t bytes = std::filesystem::file_size(output);
        const std::size_t rss = hp::app::peak_rss_bytes();
        nlohmann::json levels = nlohmann::json::array();
        std::size_t singles = 0;
        for (const auto& s : stats) {
            levels.push_back({{"level", s.level}, {"stacks", s.stacks}, {"spheres", s.spheres},
                              {"samples_per_sphere", s.samples_per_sphere}, {"single_feature", s.single_feature},
                              {"records", s.records}});
            singles += s.single_feature;
        }
        nlohmann::json j{{"output", output}, {"mesh", hp::to_json(m.diagnostics)},
                         {"tree", {{"file", tree_path}, {"spheres", map.spheres.size()}, {"levels", map.levels}}},
                         {"sampling", sampling}, {"store", store}, {"stacks", opt.stacks}, {"min_stacks", opt.min_stacks},
                         {"levels", levels}, {"records", map.records()}, {"single_feature_spheres", singles},
                         {"unique_features", opt.store == hp::cfm::Store::full ? nlohmann::json(unique) : nlohmann::json()},
                         {"seconds", {{"load", load_s}, {"build", build_s}, {"write", write_s}, {"total", total_s}}},
                         {"file_bytes", bytes}, {"peak_rss_bytes", rss}};
        tool.print_json(j);
        if (tool.text_output()) {
            std::printf("tree         %s spheres on %d levels\n", hp::with_commas(map.spheres.size()).c_str(), map.levels);
            std::printf("sampling     %s, %d stacks at the root, %d at the deepest level; store %s\n", sampling.c_str(),
                        opt.stacks, opt.min_stacks, store.c_str());
            std::printf("level  stacks  samples  spheres  single-feature  records\n");
            for (const auto& s : stats)
                std::printf("%5d  %6d  %7zu  %7zu  %14zu  %7zu\n", s.level, s.stacks, s.samples_per_sphere, s.spheres,
                            s.single_feature, s.records);
            std::printf("records      %s", hp::with_commas(map.records()).c_str());
            if (opt.store == hp::cfm::Store::full) std::printf(", %s unique features", hp::with_commas(unique).c_str());
            std::printf("\ntime         load %.3f s, build %.3f s, write %.3f s, total %.3f s\n", load_s, build_s, write_s, total_s);
            std::printf("memory       peak %s\n", hp::human_bytes(static_cast<double>(rss)).c_str());
            std::printf("wrote        %s (%s)\n", output.c_str(), hp::human_bytes(static_cast<double>(bytes)).c_str());
        }
        return 0;
    });
}
