// haptic-query: run, validate and time VPS queries (Sagardia et al. 2014, Algorithm 1) against a
// budget. See lib/contact/query.hpp (the modes) and lib/query (scenario.hpp: poses; timing.hpp: the
// report figures; check_run.hpp: the body, shared with the pipeline's query stage).

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/stage_call.hpp"
#include "common/tool.hpp"
#include "core/cpu.hpp"
#include "pipeline/stage_query.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "query/check_run.hpp"
#include "query/scenario.hpp"
#include "report/query_report.hpp"
#include "query/validate_exact.hpp"
#include "scene/scene_check.hpp"

namespace {

// The tools of --tool and --tool-files in the order the command line gives them (empty: none given).
std::vector<hp::scene::ToolSpec> tools_in_order(const CLI::App& cli, const CLI::Option* part_option, const CLI::Option* file_option,
                                                const std::vector<std::string>& parts, const std::vector<std::string>& files) {
    std::vector<hp::scene::ToolSpec> tools;
    std::size_t p = 0, f = 0;
    for (const CLI::Option* o : cli.parse_order()) {
        if (o == part_option && p < parts.size()) tools.push_back({parts[p++], {}});
        else if (o == file_option && f < files.size()) tools.push_back({{}, files[f++]});
    }
    return tools;
}

// The command line's files and outputs (the declared keys are the query stage's, in StageCall).
struct Args {
    std::string static_path, moving_path, report_path, csv_path, write_poses_path, junit_path, plot_path;
    std::string scene_path, target_part, static_mesh_path, moving_mesh_path;
    std::vector<hp::scene::ToolSpec> tools;
};

// --scene: the tools against every part of a scene, frame by frame.
int run_scene(hp::app::Tool& tool, const Args& a, const hp::app::StageCall& call, const hp::pipeline::QueryParams& opt) {
    hp::scene::SceneCheckSpec spec;
    spec.cfm = opt.cfm;  // --cfm alone: the tool parts' maps of scene.json; --cfm FILE: the outside tool's too
    spec.cfm_file = call.file("cfm");
    spec.moving_octree_file = call.file("moving_octree");  // the outside tool's; the parts' are scene.json's
    spec.ist_level = opt.ist_level.value_or(0);
    spec.ist_max_contacts = opt.ist_max_contacts.value_or(0);
    spec.ist_one_child = !opt.ist_no_one_child;
    spec.ist_side = !opt.ist_no_side;
    spec.scene_path = a.scene_path;
    spec.tools = a.tools;
    spec.poses = hp::pipeline::pose_source(opt);
    spec.target = a.target_part;
    spec.mode = opt.mode;
    spec.level = opt.level.value_or(0);
    spec.budget_us = opt.budget_us;
    spec.budget_tests = opt.budget_tests.value_or(0);
    spec.max_over_budget = opt.max_over_budget.value_or(-1.0);
    spec.warmup = opt.warmup;
    spec.threads = tool.threads;
    const hp::scene::SceneCheck check = hp::scene::run_scene_check(spec, tool.progress());
    for (const std::string& w : check.warnings) tool.warn(w);
    if (!a.write_poses_path.empty()) hp::scene::write_tool_poses(a.write_poses_path, check);
    const nlohmann::json report = hp::scene::full_report(check);
    if (!a.report_path.empty()) hp::write_file_atomically(a.report_path, report.dump(1) + "\n");
    if (!a.csv_path.empty()) hp::write_file_atomically(a.csv_path, hp::scene::to_csv(check));
    if (!a.junit_path.empty()) hp::report::write_scene_junit(a.junit_path, check, spec.max_over_budget);
    if (!a.plot_path.empty()) hp::report::write_scene_plot(a.plot_path, check);
    tool.print_json(report);
    if (tool.text_output()) std::fputs(hp::scene::format_text(check).c_str(), stdout);
    return check.pass ? 0 : 1;
}

// --validate exact: VPS against the meshes' exact contact along the poses.
int run_exact(hp::app::Tool& tool, const Args& a, const hp::pipeline::QueryParams& opt) {
    hp::ExactValidationSpec vs;
    vs.static_path = a.static_path;
    vs.moving_path = a.moving_path;
    vs.static_mesh_path = a.static_mesh_path;
    vs.moving_mesh_path = a.moving_mesh_path;
    vs.poses = hp::pipeline::pose_source(opt);
    vs.fail_on_tunnel = opt.fail_on_tunnel;
    const hp::ExactValidation v = hp::run_exact_validation(vs, tool.progress());
    for (const std::string& w : v.warnings) tool.warn(w);
    if (!a.write_poses_path.empty()) hp::write_poses(a.write_poses_path, v.poses);
    if (!a.report_path.empty()) hp::write_file_atomically(a.report_path, v.report.dump(1) + "\n");
    tool.print_json(v.report);
    if (tool.text_output()) std::fputs(hp::format_exact_validation(v).c_str(), stdout);
    return v.pass ? 0 : 1;
}

// The timing checks of one pair: every mode, against the budget.
int run_timing(hp::app::Tool& tool, const Args& a, const hp::app::StageCall& call, const hp::pipeline::QueryParams& opt) {
    const std::string cfm_path = call.file("cfm").string();
    if (opt.cfm && cfm_path.empty())
        hp::fail_usage("--cfm needs the closest feature map's FILE (haptic-cfm of --moving's tree); only with --scene may it stand alone");
    hp::QueryCheckSpec spec = hp::pipeline::query_check_spec(opt);
    spec.static_path = a.static_path;
    spec.moving_path = a.moving_path;
    spec.cfm_path = cfm_path;
    spec.moving_octree_path = call.file("moving_octree");
    spec.static_octree_path = call.file("static_octree");
    const hp::QueryCheck check = hp::run_query_check(spec, tool.progress());
    for (const std::string& w : check.warnings) tool.warn(w);
    if (!a.write_poses_path.empty()) hp::write_poses(a.write_poses_path, check.poses);
    nlohmann::json report = hp::full_report(check);
    report["threads"] = tool.threads;
    if (!a.report_path.empty()) hp::write_file_atomically(a.report_path, report.dump(1) + "\n");
    if (!a.csv_path.empty()) hp::write_file_atomically(a.csv_path, hp::to_csv(check.run));
    if (!a.junit_path.empty()) hp::report::write_query_junit(a.junit_path, check, opt.max_over_budget.value_or(-1.0));
    if (!a.plot_path.empty()) hp::report::write_query_plot(a.plot_path, check);
    tool.print_json(report);
    if (tool.text_output()) std::fputs(hp::pipeline::format_text(check, opt, cfm_path).c_str(), stdout);
    return check.pass ? 0 : 1;
}

}  // namespace

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
        "sphere left in the queue adds one contact whose normal is the closest feature map's (Giang &\n"
        "O'Sullivan 2006) in the direction of grad V; the CFM must be haptic-cfm's for this very tree (else\n"
        "exit 3). The traversal then stops early enough for those contacts (coarsest spheres first) to fit in\n"
        "the budget; the report counts the queued spheres left untested when it runs out (queued_untested).\n"
        "--budget-tests N (time-critical only) also stops a query after N sphere tests, whichever comes first:\n"
        "with a time budget no query reaches (--budget-us 1e9), interrupted results that are the same on every\n"
        "run and machine (replays, regression checks).\n"
        "ist (implicit sphere trees, Ruffaldi et al.): --moving-octree and --static-octree (haptic-octree) descended\n"
        "simultaneously; --static and --moving still give the poses and the normals (docs/octree.md). ist-brute\n"
        "tests every voxel pair directly (the same contacts). --ist-level / --ist-max-contacts stop the descent early.\n"
        "\nExamples:\n"
        "  haptic-query --static fandisk.dist.vdb --moving bunny.hps --scenario contact --count 2000 --seed 1 --threads 1\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --poses poses.json --mode brute --csv q.csv\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --scenario random --count 500 --seed 3 --report r.json\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --cfm tool.hcfm --mode time-critical --budget-us 50 \\\n"
        "      --scenario contact --count 1000 --max-over-budget 0.01\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --mode time-critical --budget-tests 200 --poses poses.json\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --scenario contact --count 2000 --budget-us 100 \\\n"
        "      --junit query-junit.xml --plot query.png     (a CI job: JUnit report and latency plots)\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --mode ist --moving-octree tool.hoct --static-octree part.hoct \\\n"
        "      --scenario contact --count 1000\n"
        "  haptic-query --static part.dist.vdb --moving tool.hps --validate exact --static-mesh part.obj --moving-mesh tool.obj \\\n"
        "      --poses trajectory.json --fail-on-tunnel\n"
        "  haptic-query --scene out/fixture/scene.json --tool assembly/peg --scenario contact --count 2000 --threads 1\n"
        "  haptic-query --scene out/fixture/scene.json --tool-files hand.hps --poses world_poses.json --csv frames.csv\n"
        "  haptic-query --scene out/fixture/scene.json --tool assembly/peg --mode time-critical --budget-tests 400 --cfm \\\n"
        "      --scenario contact --count 1000     (the tool part's closest feature map of scene.json)\n"
        "  haptic-query --scene out/fixture/scene.json --tool-files hand.hps --cfm hand.hcfm --mode time-critical \\\n"
        "      --budget-us 200 --poses world_poses.json\n"
        "  haptic-query --scene out/fixture/scene.json --tool assembly/peg --mode ist --ist-max-contacts 64 --scenario contact \\\n"
        "      --count 1000     (the octrees of scene.json: the tool part's against each candidate part's)\n"
        "  haptic-query --scene out/fixture/scene.json --tool peg --tool peg#2 --tool-files hand.hps --scenario contact \\\n"
        "      --count 1000 --junit scene-junit.xml --plot scene.png     (three tools at once; JUnit report and plots)\n"
        "A scene (--scene, haptic-pipeline --assembly; docs/scene.md): the tool (--tool PART, or --tool-files TREE.hps)\n"
        "moves in the world frame against every other part: broad phase over the parts' bounds, then the pair query\n"
        "per candidate part in its own frame; the budget is per frame. --cfm alone: each tool part's closest feature map\n"
        "(scene.json's cfm file of its geometry; --cfm FILE for an outside tool). --mode ist or ist-brute: the tool's\n"
        "octree against each candidate's, both scene.json's octree files (--moving-octree FILE for an outside tool).\n"
        "--target PART: the part a scenario's poses are made against (default: each static part in turn). --tool and\n"
        "--tool-files repeated: several tools, each against the static parts and against the other tools that are\n"
        "parts (one pose per tool and frame:\n"
        "  {\"tools\": [{\"tool\": NAME, \"poses\": [...]}, ...]}, in the order the tools are given).\n");
    Args a;
    std::vector<std::string> tool_parts, tool_files;
    tool.cli.add_option("--static", a.static_path, "static object: distance field (haptic-distance) or voxelmap (required without --scene)");
    tool.cli.add_option("--moving", a.moving_path, "moving object: pointshell with its tree (haptic-spheretree) (required without --scene)");
    tool.cli.add_option("--scene", a.scene_path, "a scene.json (haptic-pipeline --assembly): query a tool against all its parts");
    CLI::Option* tool_option =
        tool.cli.add_option("--tool", tool_parts, "--scene: a part that moves (its name or index); repeated: several tools")
            ->allow_extra_args(false);
    CLI::Option* tool_files_option = tool.cli.add_option("--tool-files", tool_files, "--scene: an outside tool, its point-sphere tree file (haptic-spheretree); repeated: several")
        ->allow_extra_args(false);
    tool.cli.add_option("--target", a.target_part, "--scene with a scenario: the static part the poses are made against (default: each in turn)");
    hp::app::StageCall call(tool, "query");
    tool.cli.add_option("--report", a.report_path, "write the report (JSON, with per-query results)");
    tool.cli.add_option("--csv", a.csv_path, "write per-query results as CSV");
    tool.cli.add_option("--write-poses", a.write_poses_path, "write the poses used (JSON)");
    tool.cli.add_option("--junit", a.junit_path, "write the check as a JUnit XML test report (for CI servers)");
    tool.cli.add_option("--plot", a.plot_path, "write a PNG: latency histogram with p50/p99/budget, latency per pose");
    tool.cli.add_option("--static-mesh", a.static_mesh_path, "validate exact: the static object's mesh");
    tool.cli.add_option("--moving-mesh", a.moving_mesh_path, "validate exact: the moving object's mesh (frame of the tree's points)");
    // The three ways haptic-query runs, and the options that serve only some of them (the declared
    // keys' own modes, --mode and --validate, are in the query stage's declaration).
    const std::string timing = "timing checks", exact = std::string("--validate ") + hp::kValidateExact, scene = "--scene";
    tool.set_modes({{timing, {}}, {exact, {"--validate", hp::kValidateExact}}, {scene, {"--scene", "SCENE"}}}, [&] {
        return !a.scene_path.empty() ? scene : call.given("validate") ? exact : timing;
    });
    for (const char* o : {"--static", "--moving"}) tool.applies(o, {timing, exact});
    for (const char* o : {"--scene", "--tool", "--tool-files", "--target"}) tool.applies(o, {scene});
    for (const char* o : {"--validate", "--static-mesh", "--moving-mesh"}) tool.applies(o, {exact});
    // --cfm FILE for a pair; with --scene alone (the tool parts' maps of scene.json), or FILE for the outside tool.
    CLI::Option* cfm_option = tool.cli.get_option("--cfm");
    cfm_option->expected(0, 1);
    cfm_option->description(cfm_option->get_description() +
                            "; with --scene given alone: each tool part's map of scene.json (FILE: the outside tool's map)");
    tool.applies("--cfm", {timing, scene});
    CLI::Option* moving_octree_option = tool.cli.get_option("--moving-octree");
    moving_octree_option->description(moving_octree_option->get_description() +
                                      "; with --scene: the outside tool's octree (the parts' are the octree files of scene.json)");
    // The octrees: with --scene, the parts' are scene.json's; --moving-octree FILE is the outside tool's.
    tool.applies("--static-octree", {timing}, {{scene, "the static parts' octrees are the octree files of scene.json"}});
    for (const char* o : {"--moving-octree", "--ist-level", "--ist-max-contacts", "--ist-no-one-child", "--ist-no-side"})
        tool.applies(o, {timing, scene});
    for (const char* o : {"--csv", "--junit", "--plot"}) tool.applies(o, {timing, scene});
    return tool.run(argc, argv, [&] {
        if (!a.scene_path.empty())
            for (const char* key : {"moving_octree", "static_octree"}) call.waive(key);  // scene.json has the octrees
        const auto opt = call.typed<hp::pipeline::QueryParams>();
        if (tool.threads == 1) hp::pin_to_current_core();  // the queries run on the calling thread
        if (!a.scene_path.empty()) {
            a.tools = tools_in_order(tool.cli, tool_option, tool_files_option, tool_parts, tool_files);
            return run_scene(tool, a, call, opt);
        }
        if (a.static_path.empty() || a.moving_path.empty())
            hp::fail_usage(a.static_path.empty() ? "--static is required (or --scene)" : "--moving is required (or --scene)");
        return opt.validate ? run_exact(tool, a, opt) : run_timing(tool, a, call, opt);
    });
}
