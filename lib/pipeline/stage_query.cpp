// The query stage: what haptic-query does after option parsing (apps/haptic-query.cpp): the
// mesh's pointshell tree as the moving object against its own distance field as the static one
// (a timing check of the result against itself), the report as the stage's file. A report holds
// measured latencies, so unlike the other stages' files it differs from run to run.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "formats/shell.hpp"
#include "pipeline/stage_runs.hpp"
#include "query/scenario.hpp"
#include "query/static_field.hpp"
#include "query/timing.hpp"

namespace hp::pipeline {

nlohmann::json run_query(const StageContext& ctx) {
    const nlohmann::json& p = ctx.params;
    const std::filesystem::path static_path =
        ctx.inputs->count("distance") ? ctx.inputs->at("distance") : ctx.inputs->at("voxelmap");
    const std::filesystem::path moving_path = ctx.inputs->at("tree");
    const std::string poses_path = p.at("poses").is_null() ? "" : p.at("poses").get<std::string>();
    const std::string scenario = p.at("scenario").is_null() ? "" : p.at("scenario").get<std::string>();
    const std::string mode_name = p.at("mode").get<std::string>();
    const std::size_t count = p.at("count").get<std::size_t>();
    const std::uint64_t seed = p.at("seed").get<std::uint64_t>();
    const double depth = p.at("depth").get<double>();
    const double budget_us = p.at("budget_us").get<double>();
    const double max_over = p.at("max_over_budget").is_null() ? -1.0 : p.at("max_over_budget").get<double>();
    const int level = p.at("level").is_null() ? 0 : p.at("level").get<int>();
    const QueryMode mode = mode_name == "brute"           ? QueryMode::brute
                           : mode_name == "segmented"     ? QueryMode::segmented
                           : mode_name == "time-critical" ? QueryMode::time_critical
                                                          : QueryMode::full;

    StaticField st = load_static_field(static_path);
    ShellFile shell = read_shell_file(moving_path, true);
    const MovingObject moving{shell.shell.points, shell.shell.normals, &*shell.tree};
    nlohmann::json validation{{"static_file", "ok"}, {"moving_file", "ok"}};
    const bool covered = tree_covers_points(*shell.tree, shell.shell.points);
    validation["tree_covers_points"] = covered;

    std::vector<Pose> poses;
    if (!poses_path.empty()) {
        poses = read_poses(poses_path);
    } else {
        ScenarioOptions so{.kind = parse_scenario_kind(scenario), .count = count, .seed = seed, .depth = depth};
        poses = generate_scenario(st.field, moving, so, ctx.progress);
    }
    nlohmann::json warnings = nlohmann::json::array();
    const std::size_t beyond = poses_beyond_grid(st.field, moving, poses);
    const double border = st.field.border_max_value();
    validation["poses_beyond_grid"] = beyond;
    validation["border_max_value"] = border;
    if (beyond > 0)
        warnings.push_back(std::to_string(beyond) + " of " + std::to_string(poses.size()) +
                           " poses keep the moving object entirely outside the static field's grid (only extrapolated distances)");
    if (border >= 0)
        warnings.push_back(static_path.string() + ": the static object reaches the grid's border (value " +
                           std::to_string(border) + "): contacts beyond the grid are missed; voxelize with more padding");

    VpsQuery query(st.field, moving, {.mode = mode, .level = level, .budget_us = budget_us});
    const std::size_t warmup = p.at("warmup").is_null() ? std::min<std::size_t>(poses.size(), 100)
                                                        : p.at("warmup").get<std::size_t>();
    TimedRun run = run_timed(query, poses, warmup);
    const LatencyStats stats = latency_stats(run.latency_us);
    std::size_t over = 0, interrupted = 0, with_contact = 0;
    double total_us = 0, points_sum = 0, spheres_sum = 0;
    int min_level = std::numeric_limits<int>::max();
    for (std::size_t i = 0; i < poses.size(); ++i) {
        over += run.latency_us[i] > budget_us;
        total_us += run.latency_us[i];
        const QuerySummary& s = run.results[i];
        interrupted += s.interrupted;
        with_contact += s.contacts > 0;
        points_sum += static_cast<double>(s.points_tested);
        spheres_sum += static_cast<double>(s.spheres_tested);
        min_level = std::min(min_level, s.level_reached);
    }
    const double n = static_cast<double>(poses.size());
    const bool timing_ok = max_over >= 0 ? static_cast<double>(over) / n <= max_over : stats.p99 <= budget_us;
    const bool pass = timing_ok && covered;
    nlohmann::json report{
        {"queries", poses.size()}, {"budget_us", budget_us}, {"mode", mode_name},
        {"level", mode == QueryMode::segmented ? nlohmann::json(level) : nlohmann::json(nullptr)},
        {"static", {{"file", static_path.filename().string()}, {"kind", st.kind}, {"encoding", st.encoding},
                    {"dims", st.field.grid().dims}, {"voxel_size", st.field.grid().voxel_size},
                    {"lipschitz", st.field.lipschitz()}}},
        {"moving", {{"file", moving_path.filename().string()}, {"points", shell.shell.points.size()},
                    {"clusters", shell.tree->clusters.size()}, {"levels", shell.tree->levels}, {"k", shell.tree->k}}},
        {"poses", poses_path.empty() ? nlohmann::json{{"scenario", scenario}, {"seed", seed}, {"count", count}, {"depth", depth}}
                                     : nlohmann::json{{"file", poses_path}}},
        {"warmup", run.warmup},
        {"latency_us", to_json(stats)}, {"over_budget", over},
        {"over_budget_fraction", static_cast<double>(over) / n},
        {"queries_per_second", total_us > 0 ? 1e6 * n / total_us : 0.0},
        {"criterion", max_over >= 0 ? "over_budget_fraction <= " + std::to_string(max_over) : std::string("p99 <= budget")},
        {"queries_with_contact", with_contact}, {"interrupted", interrupted},
        {"min_level_reached", min_level},
        {"mean_points_tested", points_sum / n}, {"mean_spheres_tested", spheres_sum / n},
        {"validation", validation}, {"pass", pass}};
    nlohmann::json summary = report;
    nlohmann::json per = nlohmann::json::array();
    for (const QuerySummary& s : run.results) per.push_back(to_json(s));
    report["per_query"] = std::move(per);
    write_file_atomically(ctx.output, report.dump(1) + "\n");
    if (!pass) {
        char what[256];
        if (covered)
            std::snprintf(what, sizeof what, "over budget: p99 %.1f us, %zu of %zu queries over %.6g us", stats.p99, over,
                          poses.size(), budget_us);
        else
            std::snprintf(what, sizeof what, "the tree does not cover its points");
        throw Error(ExitCode::check_failed, ctx.output.string() + ": " + what);
    }
    summary["warnings"] = warnings;
    return summary;
}

}  // namespace hp::pipeline
