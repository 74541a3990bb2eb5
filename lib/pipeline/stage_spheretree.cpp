// The spheretree stage: the body of haptic-spheretree (apps/haptic-spheretree.cpp parses its
// options and calls this).
#include <chrono>
#include <cmath>
#include <filesystem>

#include "core/clock.hpp"
#include "core/version.hpp"
#include "formats/shell.hpp"
#include "inspect/tree.hpp"
#include "pipeline/stage_runs.hpp"
#include "spheretree/tree.hpp"

namespace hp::pipeline {


nlohmann::json run_spheretree(const StageContext& ctx) {
    const auto t0 = std::chrono::steady_clock::now();
    const nlohmann::json& p = ctx.params;
    const std::filesystem::path input = ctx.inputs->at("pointshell");
    TreeOptions opt;
    opt.k = p.at("k").get<int>();
    opt.seed = p.at("seed").get<std::uint64_t>();
    opt.threshold = p.at("threshold").get<double>();

    const ShellFile in = read_shell_file(input);
    const double read_s = seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    const PointSphereTree tree = build_point_sphere_tree(in.shell.points, opt, ctx.progress);
    const double build_s = seconds_since(t1);
    const std::vector<TreeLevelStats> levels = level_statistics(tree);
    const nlohmann::json summary = inspect::tree_levels_json(tree, levels);

    // The pointshell's provenance (source mesh and hash, grid, its parameters) stays; the tree's is added.
    nlohmann::json meta = in.metadata.is_object() ? in.metadata : nlohmann::json::object();
    meta["kind"] = "tree";
    meta["tool"] = "haptic-spheretree";
    meta["tool_version"] = kVersion;
    meta["pointshell"] = input.filename().string();
    meta["tree_parameters"] = {{"k", opt.k}, {"seed", opt.seed}, {"threshold", opt.threshold},
                               {"threshold_rule", "T x median distance to the K-th nearest neighbour, per level"}};
    meta["tree_statistics"] = {{"levels", tree.levels}, {"clusters", tree.clusters.size()}, {"leaves", summary["leaves"]}};
    const auto t2 = std::chrono::steady_clock::now();
    write_shell_file(ctx.output, meta, in.shell, &tree);
    const double write_s = seconds_since(t2);

    const double log_k = std::log(static_cast<double>(in.shell.points.size())) / std::log(static_cast<double>(opt.k));
    return {{"points", in.shell.points.size()}, {"k", opt.k}, {"seed", opt.seed}, {"threshold", opt.threshold},
            {"log_k_points", log_k}, {"tree", summary},
            {"seconds", {{"read", read_s}, {"build", build_s}, {"write", write_s}}}};
}

}  // namespace hp::pipeline
