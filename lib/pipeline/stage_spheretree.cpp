// The spheretree stage: its declaration (options bound to SpheretreeParams), its body (shared with
// haptic-spheretree, which adds its files) and its summary (to_json, format_text).
#include <chrono>
#include <cmath>
#include <filesystem>

#include "core/clock.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "formats/shell.hpp"
#include "inspect/tree.hpp"
#include "pipeline/stage_spheretree.hpp"
#include "spheretree/tree.hpp"

namespace hp::pipeline {


StageSpec spheretree_stage() {
    StageSpec s;
    s.name = "spheretree";
    s.tool = "haptic-spheretree";
    s.description = "the pointshell with its point-sphere tree";
    s.output_name = "spheretree.hps";
    s.produces = "tree";
    s.needs = {"pointshell"};
    s.available = true;
    Declare<SpheretreeParams> d(s.params);
    d(&SpheretreeParams::k, "k", "points per cluster").in(2, 1024);
    d(&SpheretreeParams::seed, "seed", "chooses the start point of each level").in(0, kMaxSeed);
    d(&SpheretreeParams::threshold, "threshold",
      "tagging threshold in multiples of the level's median K-th-neighbour distance (0 = off)")
        .at_least(0);
    s.run = typed_run("spheretree", &run_spheretree);
    return s;
}

nlohmann::json to_json(const SpheretreeSummary& s) {
    return {{"points", s.points}, {"k", s.k}, {"seed", s.seed}, {"threshold", s.threshold},
            {"log_k_points", s.log_k_points}, {"tree", s.tree},
            {"seconds", {{"read", s.seconds_read}, {"build", s.seconds_build}, {"write", s.seconds_write}}}};
}

nlohmann::json to_json(const SpheretreeSummary& s, const ToolFacts& f) {
    nlohmann::json j = to_json(s);
    j["output"] = f.output;
    j["seconds"]["total"] = f.total_seconds;
    j["file_bytes"] = f.file_bytes;
    j["peak_rss_bytes"] = f.peak_rss_bytes;
    return j;
}

std::string format_text(const SpheretreeSummary& s, const ToolFacts& f) {
    std::string out = strf("points       %s, K = %d, seed %llu, threshold %g x K-th neighbour distance\n",
                           with_commas(s.points).c_str(), s.k, static_cast<unsigned long long>(s.seed), s.threshold);
    out += inspect::format_tree_levels(s.tree);
    out += strf("depth        %d levels, log_K(points) = %.2f\n", s.tree["levels"].get<int>(), s.log_k_points);
    out += strf("time         read %.3f s, build %.3f s, write %.3f s, total %.3f s\n", s.seconds_read, s.seconds_build,
                s.seconds_write, f.total_seconds);
    out += strf("wrote        %s (%s)\n", f.output.c_str(), human_bytes(static_cast<double>(f.file_bytes)).c_str());
    return out;
}

SpheretreeSummary run_spheretree(const StageContext& ctx, const SpheretreeParams& p) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::filesystem::path input = ctx.inputs->at("pointshell");
    TreeOptions opt;
    opt.k = p.k;
    opt.seed = p.seed;
    opt.threshold = p.threshold;

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
    SpheretreeSummary r;
    r.points = in.shell.points.size();
    r.k = opt.k, r.seed = opt.seed, r.threshold = opt.threshold;
    r.log_k_points = log_k;
    r.tree = summary;
    r.seconds_read = read_s, r.seconds_build = build_s, r.seconds_write = write_s;
    return r;
}

}  // namespace hp::pipeline
