// The query stage: the mesh's pointshell tree as the moving object against its own distance field
// as the static one (a timing check of the result against itself), the report as the stage's
// file. The body is haptic-query's (lib/query/check_run.hpp); the declaration here is its options
// (cfm: the CFM an earlier stage made). A report holds measured latencies, so unlike the other
// stages' files it differs from run to run.
#include <cstdio>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "pipeline/stage_query.hpp"
#include "query/check_run.hpp"
#include "query/ist_check.hpp"
#include "query/scenario.hpp"
#include "query/validate_exact.hpp"

namespace hp::pipeline {

StageSpec query_stage() {
    StageSpec s;
    s.name = "query";
    s.tool = "haptic-query";
    s.description = "timed VPS queries of the mesh's tree against its own distance field (report)";
    s.output_name = "query.json";
    s.produces = "report";
    s.needs = {"distance|voxelmap", "tree"};  // --static and --moving of haptic-query
    s.available = true;
    s.deterministic = false;
    s.runs_alone = true;
    Declare<QueryParams> d(s.params);
    // The modes: --validate exact checks the meshes' exact contact along the poses (no timing, no
    // tree traversal options); otherwise --mode picks the traversal.
    const nlohmann::json unset;
    const std::vector<nlohmann::json> scenarios(kScenarioNames.begin(), kScenarioNames.end());
    const std::vector<nlohmann::json> ist(kIstModeNames.begin(), kIstModeNames.end());
    std::vector<nlohmann::json> modes(kQueryModeNames.begin(), kQueryModeNames.end());
    modes.insert(modes.end(), ist.begin(), ist.end());
    const std::vector<nlohmann::json> with_depth{scenario_kind_name(ScenarioKind::contact), scenario_kind_name(ScenarioKind::approach),
                                                 scenario_kind_name(ScenarioKind::trajectory)};
    const nlohmann::json segmented = query_mode_name(QueryMode::segmented), time_critical = query_mode_name(QueryMode::time_critical);
    const nlohmann::json ist_only = kIstModeNames[0];
    const std::string never_early = " (the other modes never stop early)";
    d(&QueryParams::poses, "poses", "poses file (JSON)").excluding({"scenario"});
    d(&QueryParams::scenario, "scenario", "generate poses: " + scenario_list())
        .one_of(scenarios)
        .excluding({"poses"});
    d(&QueryParams::count, "count", "scenario: number of poses").in(1, 1e8).only_with("scenario", scenarios);
    d(&QueryParams::seed, "seed", "scenario: random seed").in(0, kMaxSeed).only_with("scenario", scenarios);
    d(&QueryParams::depth, "depth", "contact: maximum penetration in voxels")
        .above_zero()
        .only_with("scenario", with_depth);
    d(&QueryParams::mode, "mode", query_mode_list() + " (octrees)")
        .one_of(modes)
        .only_with("validate", {unset});
    d(&QueryParams::level, "level", "segmented: tree level of the segments (1 = root)")
        .in(1, 1000)
        .only_with("validate", {unset})
        .only_with("mode", {segmented});
    d(&QueryParams::budget_us, "budget_us", "per-query budget in microseconds").above_zero().only_with("validate", {unset});
    d(&QueryParams::budget_tests, "budget_tests",
      "time-critical: also stop each query after this many sphere tests (deterministic)")
        .at_least(1)
        .only_with("validate", {unset})
        .only_with("mode", {time_critical}, never_early);
    d(&QueryParams::max_over_budget, "max_over_budget",
      "pass when at most this fraction of queries is over budget (instead of p99)")
        .in(0, 1)
        .only_with("validate", {unset});
    d(&QueryParams::warmup, "warmup", "untimed queries first (default: min(count, 100))").in(0, 1e8).only_with("validate", {unset});
    d(&QueryParams::cfm, "cfm",
      "time-critical: closest feature map of the moving tree (haptic-cfm) for the normals of interrupted spheres; "
      "in a pipeline, true uses the CFM its cfm stage made")
        .input_file("cfm")
        .only_with("validate", {unset})
        .only_with("mode", {time_critical}, never_early);
    d(&QueryParams::moving_octree, "moving_octree",
      "ist modes: the moving object's octree (haptic-octree); in a pipeline, true uses the octree its octree stage made")
        .input_file("octree")
        .only_with("validate", {unset})
        .only_with("mode", ist);
    d(&QueryParams::static_octree, "static_octree",
      "ist modes: the static object's octree (haptic-octree); in a pipeline, true uses the octree its octree stage made")
        .input_file("octree")
        .only_with("validate", {unset})
        .only_with("mode", ist);
    d(&QueryParams::ist_level, "ist_level", "ist: stop the descent at this octree level (contacts are node pairs; 0 = voxels)")
        .in(0, 21)
        .only_with("validate", {unset})
        .only_with("mode", {ist_only}, " (" + std::string(kIstModeNames[1]) + " tests every voxel pair)");
    d(&QueryParams::ist_max_contacts, "ist_max_contacts",
      "ist: stop the descent after the first level that leaves at least this many pairs (time-critical)")
        .at_least(1)
        .only_with("validate", {unset})
        .only_with("mode", {ist_only}, " (" + std::string(kIstModeNames[1]) + " tests every voxel pair)");
    d(&QueryParams::ist_no_one_child, "ist_no_one_child", "ist: test the spheres of nodes with one child too (one-child optimization off)")
        .only_with("validate", {unset})
        .only_with("mode", ist);
    d(&QueryParams::ist_no_side, "ist_no_side", "ist: the cubes' circumspheres instead of the table of tight spheres (side optimization off)")
        .only_with("validate", {unset})
        .only_with("mode", ist);
    d(&QueryParams::validate, "validate",
      "exact: per step of a 1 kHz trajectory, the exact first contact between the meshes (static-mesh, moving-mesh) "
      "against VPS at the step's end: early, late and tunnelling contacts (docs/exact.md)")
        .one_of({kValidateExact});
    d(&QueryParams::fail_on_tunnel, "fail_on_tunnel", "validate exact: exit 1 when the meshes touched between two samples unseen by VPS")
        .only_with("validate", {kValidateExact});
    // What the modes need (what they refuse is declared above, with only_with).
    s.check = [segmented](const nlohmann::json& p, const Spelling& name) -> std::pair<std::string, std::string> {
        const std::string mode = p["mode"].get<std::string>();
        const bool ist = is_ist_mode(mode);
        if (p["validate"].is_null() && ist && (p["moving_octree"] != true || p["static_octree"] != true))
            return {"moving_octree", name("mode") + " " + mode + " needs " + name("moving_octree") + " and " + name("static_octree")};
        if (p["poses"].is_null() && p["scenario"].is_null())
            return {"scenario", "give " + name("poses") + " (a file) or " + name("scenario") + " (" + scenario_list() + ")"};
        if (p["validate"].is_null() && mode == segmented && p["level"].is_null())
            return {"level", name("mode") + " " + mode + " needs " + name("level")};
        return {};
    };
    s.run = typed_run("query", &run_query);
    return s;
}

PoseSource pose_source(const QueryParams& p) {
    PoseSource source;
    if (p.poses) source.file = *p.poses;
    if (p.scenario) source.scenario = *p.scenario;
    source.count = p.count;
    source.seed = p.seed;
    source.depth = p.depth;
    return source;
}

QueryCheckSpec query_check_spec(const QueryParams& p) {
    QueryCheckSpec spec;
    spec.poses = pose_source(p);
    spec.mode = p.mode;
    spec.budget_us = p.budget_us;
    spec.budget_tests = p.budget_tests.value_or(0);
    spec.max_over_budget = p.max_over_budget.value_or(-1.0);
    spec.level = p.level.value_or(0);
    spec.warmup = p.warmup;
    spec.ist_level = p.ist_level.value_or(0);
    spec.ist_max_contacts = p.ist_max_contacts.value_or(0);
    spec.ist_one_child = !p.ist_no_one_child;
    spec.ist_side = !p.ist_no_side;
    return spec;
}

nlohmann::json to_json(const QuerySummary& s) {
    nlohmann::json j = s.report;
    j["warnings"] = s.warnings;
    return j;
}

std::string format_text(const QueryCheck& check, const QueryParams& p, const std::string& cfm_file) {
    const nlohmann::json& r = check.report;
    const LatencyStats& stats = check.latency;
    const std::size_t n = check.poses.size(), over = r["over_budget"].get<std::size_t>();
    const std::string source = p.poses ? *p.poses : "scenario " + p.scenario.value_or("");
    std::string out = strf("queries      %zu (%s, mode %s), %zu with contact, warm-up %zu\n", n, source.c_str(), p.mode.c_str(),
                           r["queries_with_contact"].get<std::size_t>(), check.run.warmup);
    out += strf("latency us   min %.2f  p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f  mean %.2f\n", stats.min, stats.p50,
                stats.p90, stats.p99, stats.p999, stats.max, stats.mean);
    out += strf("work         %.1f points, %.1f spheres tested per query (of %zu points)\n", r["mean_points_tested"].get<double>(),
                r["mean_spheres_tested"].get<double>(), r["moving"]["points"].get<std::size_t>());
    out += strf("budget       %.0f us: %zu over (%.3f%%), %.0f queries/s%s\n", p.budget_us, over,
                100.0 * r["over_budget_fraction"].get<double>(), r["queries_per_second"].get<double>(),
                p.mode == query_mode_name(QueryMode::time_critical) ? (", " + std::to_string(r["interrupted"].get<std::size_t>()) + " interrupted").c_str()
                                          : "");
    if (r.contains("ist"))
        out += strf("ist          %.1f voxel pairs tested, %.1f sphere tests skipped (one-child) per query; octrees %zu + %zu nodes\n",
                    r["ist"]["mean_voxel_tests"].get<double>(), r["ist"]["mean_skipped_tests"].get<double>(),
                    r["ist"]["moving_octree"]["nodes"].get<std::size_t>(), r["ist"]["static_octree"]["nodes"].get<std::size_t>());
    if (!cfm_file.empty())
        out += strf("cfm          %s: %zu contacts from it in %zu queries; %zu of %zu queued clusters left untested at the budget\n",
                    cfm_file.c_str(), r["cfm_contacts"].get<std::size_t>(), r["queries_with_cfm_contacts"].get<std::size_t>(),
                    r["queued_untested"].get<std::size_t>(), r["queued_at_interruption"].get<std::size_t>());
    out += strf("result       %s\n", check.pass      ? "PASS"
                                     : check.covered ? "FAIL (over budget)"
                                                     : "FAIL (tree does not cover its points)");
    return out;
}

QuerySummary run_query(const StageContext& ctx, const QueryParams& p) {
    if (p.validate)
        fail_usage("validate exact runs in haptic-query (it needs the meshes: --static-mesh, --moving-mesh), not in a pipeline");
    QueryCheckSpec spec = query_check_spec(p);
    spec.static_path = ctx.inputs->count("distance") ? ctx.inputs->at("distance") : ctx.inputs->at("voxelmap");
    spec.moving_path = ctx.inputs->at("tree");
    if (p.cfm) spec.cfm_path = ctx.inputs->at("cfm");
    if (p.moving_octree) spec.moving_octree_path = ctx.inputs->at("octree");
    if (p.static_octree) spec.static_octree_path = ctx.inputs->at("octree");
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
    return {check.report, check.warnings};
}

}  // namespace hp::pipeline
