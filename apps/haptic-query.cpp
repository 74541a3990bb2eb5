// haptic-query: run, validate and time VPS queries (paper 000, Algorithm 1) against a budget.
// See lib/query (query.hpp: the modes; scenario.hpp: poses; timing.hpp: the report figures;
// check_run.hpp: the body, shared with the pipeline's query stage).
#include <sched.h>

#include <cstdio>
#include <limits>
#include <optional>

#include "common/tool.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "query/check_run.hpp"
#include "query/scenario.hpp"

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
        "direction of grad V; the CFM must be haptic-cfm's for this very tree (else exit 3). The traversal then stops\n"
        "early enough for those contacts (coarsest spheres first) to fit in the budget; the report counts the queued\n"
        "spheres left untested when it runs out (queued_untested).\n"
        "--budget-tests N (time-critical only) also stops a query after N sphere tests, whichever comes first:\n"
        "interrupted results that are the same on every run and machine (replays, regression checks).\n"
        "\nExamples:\n"
        "  haptic-query --static fandisk.dist.vdb --moving bunny.hps --scenario contact --count 2000 --seed 1 --threads 1\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --poses poses.json --mode brute --csv q.csv\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --scenario random --count 500 --seed 3 --report r.json\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --cfm tool.hcfm --mode time-critical --budget-us 50 \\\n"
        "      --scenario contact --count 1000 --max-over-budget 0.01\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --mode time-critical --budget-tests 200 --poses poses.json\n");
    std::string static_path, moving_path, cfm_path, poses_path, scenario, mode_name = "full", report_path, csv_path,
        write_poses_path;
    std::size_t count = 1000, warmup = 0, budget_tests = 0;
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
    tool.cli.add_option("--budget-tests", budget_tests,
                        "time-critical: also stop each query after this many sphere tests (deterministic)")
        ->check(CLI::Range(std::size_t{1}, std::numeric_limits<std::size_t>::max()));
    tool.cli.add_option("--max-over-budget", max_over, "pass when at most this fraction of queries is over budget (instead of p99)")
        ->check(CLI::Range(0.0, 1.0));
    tool.cli.add_option("--warmup", warmup, "untimed queries first (default: min(count, 100))");
    tool.cli.add_option("--report", report_path, "write the report (JSON, with per-query results)");
    tool.cli.add_option("--csv", csv_path, "write per-query results as CSV");
    tool.cli.add_option("--write-poses", write_poses_path, "write the poses used (JSON)");
    return tool.run(argc, argv, [&] {
        if (poses_path.empty() && scenario.empty()) hp::fail_usage("give --poses POSES.json or --scenario contact|approach|random");
        if (mode_name == "segmented" && tool.cli.count("--level") == 0) hp::fail_usage("--mode segmented needs --level L");
        // --threads 1: also pin this thread to the core it runs on, so the timing stays on one core
        // (the queries run on the calling thread).
        if (tool.threads == 1) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(sched_getcpu(), &set);
            sched_setaffinity(0, sizeof set, &set);
        }
        hp::QueryCheckSpec spec{.static_path = static_path, .moving_path = moving_path, .cfm_path = cfm_path,
                                .poses_path = poses_path, .scenario = scenario, .count = count, .seed = seed,
                                .depth = depth, .mode = mode_name, .level = level, .budget_us = budget_us,
                                .budget_tests = budget_tests, .max_over_budget = max_over};
        if (tool.cli.count("--warmup")) spec.warmup = warmup;
        const hp::QueryCheck check = hp::run_query_check(spec, tool.progress());
        for (const std::string& w : check.warnings) tool.warn(w);
        if (!write_poses_path.empty()) hp::write_poses(write_poses_path, check.poses);

        nlohmann::json report = hp::full_report(check);
        report["threads"] = tool.threads;
        if (!report_path.empty()) hp::write_file_atomically(report_path, report.dump(1) + "\n");
        if (!csv_path.empty()) hp::write_file_atomically(csv_path, hp::to_csv(check.run));
        tool.print_json(report);
        if (tool.text_output()) {
            const nlohmann::json& r = check.report;
            const hp::LatencyStats& stats = check.latency;
            const std::size_t n = check.poses.size(), over = r["over_budget"].get<std::size_t>();
            std::printf("queries      %zu (%s, mode %s), %zu with contact, warm-up %zu\n", n,
                        poses_path.empty() ? ("scenario " + scenario).c_str() : poses_path.c_str(), mode_name.c_str(),
                        r["queries_with_contact"].get<std::size_t>(), check.run.warmup);
            std::printf("latency us   min %.2f  p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f  mean %.2f\n", stats.min,
                        stats.p50, stats.p90, stats.p99, stats.p999, stats.max, stats.mean);
            std::printf("work         %.1f points, %.1f spheres tested per query (of %zu points)\n",
                        r["mean_points_tested"].get<double>(), r["mean_spheres_tested"].get<double>(),
                        r["moving"]["points"].get<std::size_t>());
            std::printf("budget       %.0f us: %zu over (%.3f%%), %.0f queries/s%s\n", budget_us, over,
                        100.0 * r["over_budget_fraction"].get<double>(), r["queries_per_second"].get<double>(),
                        mode_name == "time-critical"
                            ? (", " + std::to_string(r["interrupted"].get<std::size_t>()) + " interrupted").c_str()
                            : "");
            if (!cfm_path.empty())
                std::printf("cfm          %s: %zu contacts from it in %zu queries; %zu of %zu queued clusters left "
                            "untested at the budget\n",
                            cfm_path.c_str(), r["cfm_contacts"].get<std::size_t>(),
                            r["queries_with_cfm_contacts"].get<std::size_t>(), r["queued_untested"].get<std::size_t>(),
                            r["queued_at_interruption"].get<std::size_t>());
            std::printf("result       %s\n", check.pass      ? "PASS"
                                             : check.covered ? "FAIL (over budget)"
                                                             : "FAIL (tree does not cover its points)");
        }
        return check.pass ? 0 : 1;
    });
}
