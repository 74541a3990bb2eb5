#include "query/check_run.hpp"

#include <algorithm>
#include <limits>

#include "cfm/cfm.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "query/ist_check.hpp"
#include "query/scenario.hpp"
#include "query/session.hpp"
#include "query/static_field.hpp"

namespace hp {

namespace {
QueryMode parse_mode(const std::string& name) {
    if (const auto mode = query_mode_from_name(name)) return *mode;
    fail_usage("unknown query mode '" + name + "' (" + query_mode_list() + ")");
}
}  // namespace

QueryCheck run_query_check(const QueryCheckSpec& spec, const Progress& progress) {
    if (is_ist_mode(spec.mode)) return run_ist_check(spec, progress);
    const QueryMode mode = parse_mode(spec.mode);
    if (!spec.cfm_path.empty() && mode != QueryMode::time_critical)
        fail_usage("a closest feature map serves only the time-critical mode (the other modes never stop early), not mode '" +
                   spec.mode + "'");
    if (spec.budget_tests > 0 && mode != QueryMode::time_critical)
        fail_usage("a budget in sphere tests applies only to the time-critical mode (the other modes never stop early), not mode '" +
                   spec.mode + "'");
    spec.poses.require();
    auto name = [&](const std::filesystem::path& p) { return report_file_name(spec, p); };

    // Load and validate (the readers check checksums, counts and the tree's structure).
    const auto t_start = Clock::now();
    StaticField st = load_static_field(spec.static_path);
    MovingObjectData shell = load_moving_object(spec.moving_path);
    if (!spec.cfm_path.empty()) attach_cfm(shell, spec.cfm_path, spec.moving_path);
    const MovingObject moving = shell.view();
    QueryCheck out;
    nlohmann::json validation{{"static_file", "ok"}, {"moving_file", "ok"}};
    if (shell.cfm) validation["cfm_file"] = "ok (matches the tree)";
    out.covered = tree_covers_points(shell.tree, shell.points);
    validation["tree_covers_points"] = out.covered;

    const double load_s = seconds_since(t_start);
    auto t0 = Clock::now();
    CheckPoses got = check_poses(spec.poses, st.field, moving, progress);
    out.poses = std::move(got.poses);
    const double generation_s = got.generation_s;
    const std::size_t beyond = poses_beyond_grid(st.field, moving, out.poses);
    const double border = st.field.border_max_value();
    validation["poses_beyond_grid"] = beyond;
    validation["border_max_value"] = border;
    if (beyond > 0)
        out.warnings.push_back(std::to_string(beyond) + " of " + std::to_string(out.poses.size()) +
                               " poses keep the moving object entirely outside the static field's grid (only extrapolated distances)");
    if (border >= 0)
        out.warnings.push_back(name(spec.static_path) + ": the static object reaches the grid's border (value " +
                               std::to_string(border) + "): contacts beyond the grid are missed; voxelize with more padding");

    const double poses_s = seconds_since(t0);
    t0 = Clock::now();
    VpsQuery query(st.field, moving,
                   {.mode = mode, .level = spec.level, .budget_us = spec.budget_us, .budget_tests = spec.budget_tests});
    const std::size_t warmup = spec.warmup ? *spec.warmup : std::min<std::size_t>(out.poses.size(), 100);
    out.run = run_timed(query, out.poses, warmup);
    out.latency = latency_stats(out.run.latency_us);
    const double queries_s = seconds_since(t0);
    t0 = Clock::now();

    out.report = {
        {"budget_tests", spec.budget_tests > 0 ? nlohmann::json(spec.budget_tests) : nlohmann::json(nullptr)}, {"mode", spec.mode},
        {"level", mode == QueryMode::segmented ? nlohmann::json(spec.level) : nlohmann::json(nullptr)},
        {"cfm", shell.cfm ? nlohmann::json{{"file", name(spec.cfm_path)}, {"spheres", shell.cfm->spheres.size()},
                                           {"records", shell.cfm->records()},
                                           {"store", cfm::store_name(shell.cfm->store)},
                                           {"sampling", cfm::sampling_name(shell.cfm->sampling)}}
                          : nlohmann::json(nullptr)},
        {"validation", validation}};
    add_inputs(out.report, spec, st, shell, generation_s);
    out.pass = add_run_figures(out.report, out, spec) && out.covered;
    out.report["pass"] = out.pass;
    out.per_query = nlohmann::json::array();
    for (const QuerySummary& s : out.run.results) out.per_query.push_back(to_json(s));
    // The run's phases: the files loaded and checked, the poses made or read (and checked against
    // the grid), the queries run and timed (warm-up included), the report put together.
    out.report["seconds"] = {{"load", load_s}, {"poses", poses_s}, {"queries", queries_s}, {"report", seconds_since(t0)},
                             {"total", seconds_since(t_start)}};
    return out;
}

std::string report_file_name(const QueryCheckSpec& spec, const std::filesystem::path& file) {
    return spec.file_names_only ? file.filename().string() : file.string();
}

void add_inputs(nlohmann::json& report, const QueryCheckSpec& spec, const StaticField& st, const MovingObjectData& shell,
                double generation_s) {
    report["poses"] = spec.poses.file.empty()
                          ? nlohmann::json{{"scenario", spec.poses.scenario}, {"seed", spec.poses.seed}, {"count", spec.poses.count},
                                           {"depth", spec.poses.depth}, {"generation_seconds", generation_s}}
                          : nlohmann::json{{"file", spec.poses.file.string()}};
    report["static"] = {{"file", report_file_name(spec, spec.static_path)}, {"kind", st.kind}, {"encoding", st.encoding},
                        {"dims", st.field.grid().dims}, {"voxel_size", st.field.grid().voxel_size},
                        {"lipschitz", st.field.lipschitz()}};
    report["moving"] = {{"file", report_file_name(spec, spec.moving_path)}, {"points", shell.points.size()},
                        {"clusters", shell.tree.clusters.size()}, {"levels", shell.tree.levels}, {"k", shell.tree.k}};
}

bool add_run_figures(nlohmann::json& report, const QueryCheck& check, const QueryCheckSpec& spec) {
    const TimedRun& run = check.run;
    std::size_t over = 0, interrupted = 0, with_contact = 0, cfm_contacts = 0, with_cfm = 0, queued = 0, untested = 0;
    double total_us = 0, points_sum = 0, spheres_sum = 0;
    int min_level = std::numeric_limits<int>::max();
    for (std::size_t i = 0; i < run.results.size(); ++i) {
        over += run.latency_us[i] > spec.budget_us;
        total_us += run.latency_us[i];
        const QuerySummary& s = run.results[i];
        interrupted += s.interrupted;
        with_contact += s.contacts > 0;
        cfm_contacts += s.cfm_contacts;
        with_cfm += s.cfm_contacts > 0;
        queued += s.queued;
        untested += s.queued_untested;
        points_sum += static_cast<double>(s.points_tested);
        spheres_sum += static_cast<double>(s.spheres_tested);
        min_level = std::min(min_level, s.level_reached);
    }
    const double n = std::max<double>(1, static_cast<double>(run.results.size()));
    const double max_over = spec.max_over_budget;
    report["queries"] = run.results.size();
    report["budget_us"] = spec.budget_us;
    report["warmup"] = run.warmup;
    report["latency_us"] = to_json(check.latency);
    report["over_budget"] = over;
    report["over_budget_fraction"] = static_cast<double>(over) / n;
    report["queries_per_second"] = total_us > 0 ? 1e6 * n / total_us : 0.0;
    report["criterion"] = max_over >= 0 ? "over_budget_fraction <= " + std::to_string(max_over) : std::string("p99 <= budget");
    report["queries_with_contact"] = with_contact;
    report["interrupted"] = interrupted;
    report["min_level_reached"] = run.results.empty() ? 0 : min_level;
    report["cfm_contacts"] = cfm_contacts;
    report["queries_with_cfm_contacts"] = with_cfm;
    report["queued_at_interruption"] = queued;
    report["queued_untested"] = untested;
    report["mean_points_tested"] = points_sum / n;
    report["mean_spheres_tested"] = spheres_sum / n;
    return max_over >= 0 ? static_cast<double>(over) / n <= max_over : check.latency.p99 <= spec.budget_us;
}

nlohmann::json full_report(const QueryCheck& check) {
    nlohmann::json r = check.report;
    r["per_query"] = check.per_query;
    return r;
}

}  // namespace hp
