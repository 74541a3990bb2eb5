// haptic-query: run, validate and time VPS queries (paper 000, Algorithm 1) against a budget.
// See lib/query (query.hpp: the modes; scenario.hpp: poses; timing.hpp: the report figures).
#include <sched.h>

#include <cstdio>
#include <optional>

#include "cfm/cfm.hpp"
#include "common/tool.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "query/scenario.hpp"
#include "query/session.hpp"
#include "query/static_field.hpp"
#include "query/timing.hpp"

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-query",
        "Run VPS collision queries of a moving pointshell tree against a static distance field, time them and "
        "check them against a per-query budget (exit 1 when p99 exceeds it).",
        "Poses place the moving object in the static object's frame (world point = R p + t):\n"
        "  {\"poses\": [{\"position\": [tx,ty,tz], \"quaternion\": [w,x,y,z]}, ...]}\n"
        "Modes: full (Algorithm 1, breadth-first over the tree), brute (every point; same contacts as full),\n"
        "segmented --level L (one deepest contact per cluster of level L), time-critical (stops at --budget-us).\n"
        "--cfm (time-critical only; another mode is a usage error): when a query is interrupted, each colliding\n"
        "sphere left in the queue adds one contact whose normal is the closest feature map's (paper 003) in the\n"
        "direction of grad V; the CFM must be haptic-cfm's for this very tree (else exit 3).\n"
        "\nExamples:\n"
        "  haptic-query --static fandisk.dist.vdb --moving bunny.hps --scenario contact --count 2000 --seed 1 --threads 1\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --poses poses.json --mode brute --csv q.csv\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --scenario random --count 500 --seed 3 --report r.json\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --cfm tool.hcfm --mode time-critical --budget-us 50 \\\n"
        "      --scenario contact --count 1000 --max-over-budget 0.01\n");
    std::string static_path, moving_path, cfm_path, poses_path, scenario, mode_name = "full", report_path, csv_path,
        write_poses_path;
    std::size_t count = 1000, warmup = 0;
    std::uint64_t seed = 1;
    double depth = 5, budget_us = 1000, max_over = -1;
    int level = 0;
    tool.cli.add_option("--static", static_path, "static object: distance field (haptic-distance) or voxelmap")->required();
    tool.cli.add_option("--moving", moving_path, "moving object: pointshell with its tree (haptic-spheretree)")->required();
    tool.cli.add_option("--cfm", cfm_path, "closest feature map of the moving object's tree (haptic-cfm): normals of interrupted spheres, time-critical only");
    auto* poses_opt = tool.cli.add_option("--poses", poses_path, "poses file (JSON)");
    auto* scen_opt = tool.cli.add_option("--scenario", scenario, "generate poses: contact, approach or random")
                         ->check(CLI::IsMember({"contact", "approach", "random"}));
    poses_opt->excludes(scen_opt);
    tool.cli.add_option("--count", count, "scenario: number of poses (default 1000)")->check(CLI::Range(1, 100000000));
    tool.cli.add_option("--seed", seed, "scenario: random seed (default 1)");
    tool.cli.add_option("--depth", depth, "contact: maximum penetration in voxels (default 5)")->check(CLI::PositiveNumber);
    tool.cli.add_option("--mode", mode_name, "full, brute, segmented or time-critical (default full)")
        ->check(CLI::IsMember({"full", "brute", "segmented", "time-critical"}));
    tool.cli.add_option("--level", level, "segmented: tree level of the segments (1 = root)");
    tool.cli.add_option("--budget-us", budget_us, "per-query budget in microseconds (default 1000)")->check(CLI::PositiveNumber);
    tool.cli.add_option("--max-over-budget", max_over, "pass when at most this fraction of queries is over budget (instead of p99)")
        ->check(CLI::Range(0.0, 1.0));
    tool.cli.add_option("--warmup", warmup, "untimed queries first (default: min(count, 100))");
    tool.cli.add_option("--report", report_path, "write the report (JSON, with per-query results)");
    tool.cli.add_option("--csv", csv_path, "write per-query results as CSV");
    tool.cli.add_option("--write-poses", write_poses_path, "write the poses used (JSON)");
    return tool.run(argc, argv, [&] {
        if (poses_path.empty() && scenario.empty()) hp::fail_usage("give --poses POSES.json or --scenario contact|approach|random");
        const hp::QueryMode mode = mode_name == "brute"       ? hp::QueryMode::brute
                                   : mode_name == "segmented" ? hp::QueryMode::segmented
                                   : mode_name == "time-critical" ? hp::QueryMode::time_critical
                                                                  : hp::QueryMode::full;
        if (mode == hp::QueryMode::segmented && tool.cli.count("--level") == 0) hp::fail_usage("--mode segmented needs --level L");
        if (!cfm_path.empty() && mode != hp::QueryMode::time_critical)
            hp::fail_usage("--cfm serves only --mode time-critical (the other modes never stop early), not --mode " + mode_name);

        // Load and validate (the readers check checksums, counts and the tree's structure).
        hp::StaticField st = hp::load_static_field(static_path);
        hp::MovingObjectData shell = hp::load_moving_object(moving_path);
        if (!cfm_path.empty()) hp::attach_cfm(shell, cfm_path, moving_path);
        const hp::MovingObject moving = shell.view();
        nlohmann::json validation{{"static_file", "ok"}, {"moving_file", "ok"}};
        if (shell.cfm) validation["cfm_file"] = "ok (matches the tree)";
        const bool covered = hp::tree_covers_points(shell.tree, shell.points);
        validation["tree_covers_points"] = covered;

        hp::ScenarioOptions so;
        std::vector<hp::Pose> poses;
        if (!poses_path.empty()) {
            poses = hp::read_poses(poses_path);
        } else {
            so = {.kind = hp::parse_scenario_kind(scenario), .count = count, .seed = seed, .depth = depth};
            poses = hp::generate_scenario(st.field, moving, so, tool.progress());
        }
        if (!write_poses_path.empty()) hp::write_poses(write_poses_path, poses);
        const std::size_t beyond = hp::poses_beyond_grid(st.field, moving, poses);
        const double border = st.field.border_max_value();
        validation["poses_beyond_grid"] = beyond;
        validation["border_max_value"] = border;
        if (beyond > 0)
            tool.warn(std::to_string(beyond) + " of " + std::to_string(poses.size()) +
                      " poses keep the moving object entirely outside the static field's grid (only extrapolated distances)");
        if (border >= 0)
            tool.warn(static_path + ": the static object reaches the grid's border (value " + std::to_string(border) +
                      "): contacts beyond the grid are missed; voxelize with more padding");

        // --threads 1: also pin this thread to the core it runs on, so the timing stays on one core.
        if (tool.threads == 1) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(sched_getcpu(), &set);
            sched_setaffinity(0, sizeof set, &set);
        }
        hp::VpsQuery query(st.field, moving, {.mode = mode, .level = level, .budget_us = budget_us});
        if (tool.cli.count("--warmup") == 0) warmup = std::min<std::size_t>(poses.size(), 100);
        hp::TimedRun run = hp::run_timed(query, poses, warmup);
        const hp::LatencyStats stats = hp::latency_stats(run.latency_us);

        std::size_t over = 0, interrupted = 0, with_contact = 0, cfm_contacts = 0, with_cfm = 0;
        double total_us = 0, points_sum = 0, spheres_sum = 0;
        int min_level = std::numeric_limits<int>::max();
        for (std::size_t i = 0; i < poses.size(); ++i) {
            over += run.latency_us[i] > budget_us;
            total_us += run.latency_us[i];
            const hp::QuerySummary& s = run.results[i];
            interrupted += s.interrupted;
            with_contact += s.contacts > 0;
            cfm_contacts += s.cfm_contacts;
            with_cfm += s.cfm_contacts > 0;
            points_sum += static_cast<double>(s.points_tested);
            spheres_sum += static_cast<double>(s.spheres_tested);
            min_level = std::min(min_level, s.level_reached);
        }
        const double n = static_cast<double>(poses.size());
        const bool timing_ok = max_over >= 0 ? static_cast<double>(over) / n <= max_over : stats.p99 <= budget_us;
        const bool pass = timing_ok && covered;

        nlohmann::json report{
            {"queries", poses.size()}, {"budget_us", budget_us}, {"mode", mode_name},
            {"level", mode == hp::QueryMode::segmented ? nlohmann::json(level) : nlohmann::json(nullptr)},
            {"static", {{"file", static_path}, {"kind", st.kind}, {"encoding", st.encoding},
                        {"dims", st.field.grid().dims}, {"voxel_size", st.field.grid().voxel_size},
                        {"lipschitz", st.field.lipschitz()}}},
            {"moving", {{"file", moving_path}, {"points", shell.points.size()},
                        {"clusters", shell.tree.clusters.size()}, {"levels", shell.tree.levels}, {"k", shell.tree.k}}},
            {"cfm", shell.cfm ? nlohmann::json{{"file", cfm_path}, {"spheres", shell.cfm->spheres.size()},
                                               {"records", shell.cfm->records()},
                                               {"store", hp::cfm::store_name(shell.cfm->store)},
                                               {"sampling", hp::cfm::sampling_name(shell.cfm->sampling)}}
                              : nlohmann::json(nullptr)},
            {"poses", poses_path.empty() ? nlohmann::json{{"scenario", scenario}, {"seed", seed}, {"count", count}, {"depth", depth}}
                                         : nlohmann::json{{"file", poses_path}}},
            {"warmup", run.warmup}, {"threads", tool.threads},
            {"latency_us", hp::to_json(stats)}, {"over_budget", over},
            {"over_budget_fraction", static_cast<double>(over) / n},
            {"queries_per_second", total_us > 0 ? 1e6 * n / total_us : 0.0},
            {"criterion", max_over >= 0 ? "over_budget_fraction <= " + std::to_string(max_over) : std::string("p99 <= budget")},
            {"queries_with_contact", with_contact}, {"interrupted", interrupted},
            {"min_level_reached", min_level},
            {"cfm_contacts", cfm_contacts}, {"queries_with_cfm_contacts", with_cfm},
            {"mean_points_tested", points_sum / n}, {"mean_spheres_tested", spheres_sum / n},
            {"validation", validation}, {"pass", pass}};
        nlohmann::json per = nlohmann::json::array();
        for (const hp::QuerySummary& s : run.results) per.push_back(hp::to_json(s));
        report["per_query"] = std::move(per);
        if (!report_path.empty()) hp::write_file_atomically(report_path, report.dump(1) + "\n");
        if (!csv_path.empty()) hp::write_file_atomically(csv_path, hp::to_csv(run));
        tool.print_json(report);
        if (tool.text_output()) {
            std::printf("queries      %zu (%s, mode %s), %zu with contact, warm-up %zu\n", poses.size(),
                        poses_path.empty() ? ("scenario " + scenario).c_str() : poses_path.c_str(), mode_name.c_str(),
                        with_contact, run.warmup);
            std::printf("latency us   min %.2f  p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f  mean %.2f\n", stats.min,
                        stats.p50, stats.p90, stats.p99, stats.p999, stats.max, stats.mean);
            std::printf("work         %.1f points, %.1f spheres tested per query (of %zu points)\n", points_sum / n,
                        spheres_sum / n, shell.points.size());
            std::printf("budget       %.0f us: %zu over (%.3f%%), %.0f queries/s%s\n", budget_us, over,
                        100.0 * static_cast<double>(over) / n, total_us > 0 ? 1e6 * n / total_us : 0.0,
                        mode == hp::QueryMode::time_critical ? (", " + std::to_string(interrupted) + " interrupted").c_str() : "");
            if (shell.cfm)
                std::printf("cfm          %s: %zu contacts from it in %zu queries\n", cfm_path.c_str(), cfm_contacts, with_cfm);
            std::printf("result       %s\n", pass ? "PASS" : covered ? "FAIL (over budget)" : "FAIL (tree does not cover its points)");
        }
        return pass ? 0 : 1;
    });
}
