// The query stage: the mesh's pointshell tree as the moving object against its own distance field
// as the static one (a timing check of the result against itself), the report as the stage's
// file. The body is haptic-query's (lib/query/check_run.hpp). A report holds measured latencies,
// so unlike the other stages' files it differs from run to run.
#include <cstdio>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "pipeline/stage_runs.hpp"
#include "query/check_run.hpp"

namespace hp::pipeline {

nlohmann::json run_query(const StageContext& ctx) {
    const nlohmann::json& p = ctx.params;
    QueryCheckSpec spec;
    spec.static_path = ctx.inputs->count("distance") ? ctx.inputs->at("distance") : ctx.inputs->at("voxelmap");
    spec.moving_path = ctx.inputs->at("tree");
    if (!p.at("poses").is_null()) spec.poses_path = p.at("poses").get<std::string>();
    if (!p.at("scenario").is_null()) spec.scenario = p.at("scenario").get<std::string>();
    spec.mode = p.at("mode").get<std::string>();
    spec.count = p.at("count").get<std::size_t>();
    spec.seed = p.at("seed").get<std::uint64_t>();
    spec.depth = p.at("depth").get<double>();
    spec.budget_us = p.at("budget_us").get<double>();
    if (!p.at("max_over_budget").is_null()) spec.max_over_budget = p.at("max_over_budget").get<double>();
    if (!p.at("level").is_null()) spec.level = p.at("level").get<int>();
    if (!p.at("warmup").is_null()) spec.warmup = p.at("warmup").get<std::size_t>();
    spec.file_names_only = true;

    const QueryCheck check = run_query_check(spec, ctx.progress);
    write_file_atomically(ctx.output, full_report(check).dump(1) + "\n");
    if (!check.pass) {
        char what[256];
        if (check.covered)
            std::snprintf(what, sizeof what, "over budget: p99 %.1f us, %zu of %zu queries over %.6g us", check.latency.p99,
                          check.report["over_budget"].get<std::size_t>(), check.poses.size(), spec.budget_us);
        else
            std::snprintf(what, sizeof what, "the tree does not cover its points");
        throw Error(ExitCode::check_failed, ctx.output.string() + ": " + what);
    }
    nlohmann::json summary = check.report;
    summary["warnings"] = check.warnings;
    return summary;
}

}  // namespace hp::pipeline
