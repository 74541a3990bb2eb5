// haptic-pipeline: a JSON pipeline of stages over many meshes, in-process. See lib/pipeline.
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <unistd.h>

#include "common/tool.hpp"
#include "core/error.hpp"
#include "pipeline/assembly_run.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/report.hpp"
#include "pipeline/task_log.hpp"
#include "report/batch_report.hpp"

namespace {

// On a terminal: one line per finished mesh, and a status line of the running ones below.
struct Display {
    std::size_t total = 0, done = 0;
    std::map<std::size_t, std::string> running;  // index -> "name stage 40%"
    std::map<std::size_t, std::string> names;
    std::chrono::steady_clock::time_point last{};

    void status(bool force) {
        const auto now = std::chrono::steady_clock::now();
        if (!force && now - last < std::chrono::milliseconds(100)) return;
        last = now;
        std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "]";
        for (const auto& [i, s] : running) line += "  " + s;
        if (line.size() > 150) line = line.substr(0, 147) + "...";
        std::fprintf(stderr, "\r\033[K%s", line.c_str());
        std::fflush(stderr);
    }
};


// The command line: what to run and where.
struct Args {
    std::vector<std::string> files, sets;
    std::string outdir, shard_text, log_pattern, junit_path, plot_path;
    int jobs = 1;
    bool resume = false, emit_only = false, merge = false, list = false, assembly = false;
};

// What a run or a merge leaves: the manifest, where it was written, and the scene of an assembly.
struct Outcome {
    hp::pipeline::Manifest manifest;
    std::string manifest_file, scene_file;
};

// The batch's events: the terminal display (when stderr is one and the output is text), and the
// log lines around it.
hp::pipeline::BatchEvents batch_events(const hp::app::Tool& tool, Display& display, hp::pipeline::TaskLog* log) {
    namespace pl = hp::pipeline;
    pl::BatchEvents events;
    if (!tool.quiet && !tool.json && ::isatty(STDERR_FILENO)) {
        events.started = [&display](std::size_t i, const pl::MeshJob& job) {
            display.names[i] = job.name;
            display.running[i] = job.name;
            display.status(true);
        };
        events.progress = [&display](std::size_t i, std::string_view stage, std::string_view phase, double f) {
            display.running[i] = display.names[i] + " " + std::string(stage) + (phase.empty() ? "" : " " + std::string(phase)) +
                                 " " + std::to_string(static_cast<int>(f * 100 + 0.5)) + "%";
            display.status(false);
        };
        events.finished = [&display](std::size_t i, const pl::MeshEntry& entry) {
            display.running.erase(i);
            ++display.done;
            std::fprintf(stderr, "\r\033[K%s\n", pl::format_mesh_line(entry).c_str());
            display.status(true);
        };
    }
    if (log) {
        events.started = [log, shown = events.started](std::size_t i, const pl::MeshJob& job) {
            log->mesh_started(job);
            if (shown) shown(i, job);
        };
        events.finished = [log, shown = events.finished](std::size_t i, const pl::MeshEntry& entry) {
            log->mesh_finished(entry);
            if (shown) shown(i, entry);
        };
    }
    return events;
}

// A pipeline over meshes (or over an assembly's geometries): plan, shard, run or only plan.
Outcome run_pipeline(const Args& a, const hp::app::Tool& tool) {
    namespace pl = hp::pipeline;
    if (a.files.size() < 2) hp::fail_usage("give a pipeline file and at least one mesh (see --help)");
    std::vector<pl::Override> overrides;
    for (const auto& s : a.sets) overrides.push_back(pl::parse_override(s));
    pl::Pipeline pipeline = pl::load_pipeline(a.files[0], overrides);
    std::optional<pl::AssemblyPlan> plan;
    if (a.assembly || pipeline.assembly) {
        if (a.files.size() != 2) hp::fail_usage("--assembly takes one assembly file (run one batch per assembly)");
        plan = pl::plan_assembly(pipeline, a.files[1]);
    }
    const auto all = plan ? plan->jobs : pl::plan_meshes(std::vector<std::filesystem::path>(a.files.begin() + 1, a.files.end()));
    pl::BatchOptions opt;
    opt.outdir = a.outdir;
    opt.jobs = a.jobs;
    opt.resume = a.resume;
    pl::ShardChoice shard;
    if (!a.shard_text.empty()) {
        shard = pl::choose_shard(a.shard_text, [](const char* name) { return std::getenv(name); });
        if (shard.count_from_environment) pl::check_shard_count(a.outdir, shard.shard);
        opt.shard = shard.shard;
        opt.names_hash = pl::names_hash(all);
    }
    opt.batch_meshes = all.size();
    const auto selected = pl::select_shard(all, opt.shard);
    Outcome out;
    out.manifest_file = pl::manifest_path(a.outdir, opt.shard).string();
    std::unique_ptr<pl::TaskLog> log;
    if (!a.log_pattern.empty()) {
        if (a.emit_only) hp::fail_usage("--log logs a run; --emit-manifest-only runs nothing");
        log = std::make_unique<pl::TaskLog>(a.log_pattern, opt.shard);
        log->start(pipeline, opt, selected.size(), shard.source);
    }
    if (a.emit_only) {
        out.manifest = pl::plan_batch(pipeline, selected, opt);
        return out;
    }
    Display display;
    display.total = selected.size();
    const pl::BatchEvents events = batch_events(tool, display, log.get());
    const bool drawing = !tool.quiet && !tool.json && ::isatty(STDERR_FILENO);
    try {
        out.manifest = pl::run_batch(pipeline, selected, opt, events);
    } catch (const hp::Error& e) {
        if (log) log->stopped(e.what(), e.exit_code());
        throw;
    }
    if (drawing) std::fprintf(stderr, "\r\033[K");
    if (log) log->end(out.manifest);
    if (plan && !opt.shard.active()) {
        out.scene_file = (std::filesystem::path(a.outdir) / "scene.json").string();
        hp::scene::Scene scene = pl::scene_of(*plan, pipeline, out.manifest);
        hp::scene::hash_scene_files(out.scene_file, scene);
        pl::write_samplers(out.scene_file, scene);
        hp::scene::write_scene(out.scene_file, scene);
    }
    return out;
}

void print_text(const Outcome& out) {
    namespace pl = hp::pipeline;
    const pl::Manifest& manifest = out.manifest;
    std::printf("pipeline %s (%s), %zu stage(s)\n", manifest.pipeline.name.c_str(), manifest.pipeline_file.c_str(),
                manifest.pipeline.stages.size());
    std::cout << pl::format_summary(manifest, out.manifest_file);
    if (!out.scene_file.empty()) std::printf("scene        %s\n", out.scene_file.c_str());
    if (const auto again = pl::shards_with_failures(manifest); !again.empty()) {
        std::string list;
        for (int i : again) list += (list.empty() ? "" : ",") + std::to_string(i);
        std::printf("shards with failed meshes: %s of %zu (fix their inputs, run them again with --resume, merge "
                    "again)\n", list.c_str(), manifest.merged_from->size());
    }
}

}  // namespace

int main(int argc, char** argv) {
    hp::app::Tool tool(
        "haptic-pipeline",
        "Run a JSON pipeline of stages (voxelize, distance, ...) over many meshes: one folder per mesh under\n"
        "OUTDIR, a manifest OUTDIR/manifest.json with every output's size and hash, per-stage times and memory.",
        "A pipeline file: {\"name\": ..., \"description\": ..., \"stages\": [{\"stage\": \"voxelize\", \"resolution\": 128}, ...]};\n"
        "a stage's keys are its executable's options with '_' for '-' (--list-stages shows them).\n"
        "Exit codes: 0 all meshes converted, 1 some failed (see the manifest), 2 bad pipeline or options.\n"
        "\nExamples:\n"
        "  haptic-pipeline pipelines/vps-default.json parts/*.stl -o out -j 4\n"
        "  haptic-pipeline pipelines/cad-mm.json parts/*.stl -o out --set voxelize.voxel_size=0.001 --resume\n"
        "  haptic-pipeline pipelines/vps-default.json parts/*.stl -o out --shard 3/8     (one job of a job array)\n"
        "  haptic-pipeline --merge out/manifest.shard-*-of-8.json -o out\n"
        "  haptic-pipeline pipelines/vps-default.json parts/*.stl -o out --shard auto/8 --log 'out/logs/shard-%I-of-%N.log'\n"
        "      (in a Slurm array task, --array=1-8: the task id is the shard; Kubernetes: JOB_COMPLETION_INDEX + 1)\n"
        "  haptic-pipeline pipelines/vps-default.json parts/*.stl -o out --junit out/junit.xml --plot out/times.png\n"
        "  haptic-pipeline pipelines/vps-default.json gearbox.glb --assembly -o out/gearbox\n"
        "      (each distinct part once, in its own frame, at one voxel size; out/gearbox/scene.json for haptic-query --scene)\n"
        "  haptic-pipeline --list-stages\n"
        "See docs/pipeline.md for Slurm job arrays, GNU parallel and make.\n");
    Args a;
    tool.cli.add_option("FILES", a.files, "PIPELINE.json MESH... (with --merge: SHARD_MANIFEST...)");
    tool.cli.add_option("-o,--output", a.outdir, "output folder (one folder per mesh, manifest.json)");
    tool.cli.add_option("-j,--jobs", a.jobs, "meshes converted at the same time (default 1)")->check(CLI::Range(1, 1024));
    tool.cli.add_flag("--resume", a.resume, "skip meshes whose outputs exist with the same input and parameter hashes");
    tool.cli.add_option("--set", a.sets, "override a parameter: stage.key=value (stage.key= resets it)")->type_name("S.K=V");
    tool.cli.add_flag("--emit-manifest-only", a.emit_only, "validate and write the manifest of the planned work; run nothing");
    tool.cli.add_option("--shard", a.shard_text,
                        "run only shard I of N of the meshes (manifest.shard-I-of-N.json); auto, auto/N: from the job "
                        "array's environment")
        ->type_name("I/N");
    tool.cli.add_option("--log", a.log_pattern, "append a line per mesh started and finished to FILE (%I, %N: the shard)")
        ->type_name("FILE");
    tool.cli.add_flag("--merge", a.merge, "combine the given shard manifests into OUTDIR/manifest.json");
    tool.cli.add_flag("--assembly", a.assembly,
                      "the mesh is an assembly: prepare each distinct geometry once in its own frame and write "
                      "OUTDIR/scene.json (docs/scene.md)");
    tool.cli.add_flag("--list-stages", a.list, "list the stages of this build and their parameters");
    tool.cli.add_option("--junit", a.junit_path, "also write the batch as a JUnit XML test report (a case per mesh and stage)");
    tool.cli.add_option("--plot", a.plot_path, "also write a PNG of the time per stage per mesh");
    tool.output_is_file = false;
    // A run of a pipeline over meshes, a merge of shard manifests, or the list of stages.
    const std::string run = "a run", merging = "--merge", listing = "--list-stages";
    tool.set_modes({{run, {}}, {merging, {"--merge"}}, {listing, {"--list-stages"}}},
                   [&] { return a.list ? listing : a.merge ? merging : run; });
    for (const char* o : {"--jobs", "--resume", "--set", "--emit-manifest-only", "--shard", "--log", "--assembly"}) tool.applies(o, {run});
    for (const char* o : {"FILES", "--output", "--junit", "--plot"}) tool.applies(o, {run, merging});
    tool.applies("--merge", {merging});
    tool.applies("--list-stages", {listing});
    return tool.run(argc, argv, [&] {
        namespace pl = hp::pipeline;
        if (a.outdir == "-") hp::fail_usage("-o - is for files; haptic-pipeline writes a folder (give its name)");
        if (a.list) {
            tool.print_json(pl::stages_json());
            if (tool.text_output()) std::cout << pl::format_stages();
            return 0;
        }
        if (a.outdir.empty()) hp::fail_usage("give the output folder with -o OUTDIR");
        Outcome out;
        if (a.merge) {
            out.manifest = pl::merge_manifests(std::vector<std::filesystem::path>(a.files.begin(), a.files.end()), a.outdir);
            out.manifest_file = (std::filesystem::path(a.outdir) / "manifest.json").string();
        } else {
            out = run_pipeline(a, tool);
        }
        if (!a.junit_path.empty()) hp::report::write_batch_junit(a.junit_path, out.manifest);
        if (!a.plot_path.empty()) hp::report::write_batch_plot(a.plot_path, out.manifest);
        nlohmann::json summary = out.manifest;
        if (!out.scene_file.empty()) summary["scene"] = out.scene_file;
        tool.print_json(summary);
        if (tool.text_output()) print_text(out);
        if (!out.scene_file.empty() && out.manifest.summary.ok == 0 && out.manifest.summary.failed > 0)
            return static_cast<int>(hp::ExitCode::bad_input);  // no part of the assembly could be prepared
        return out.manifest.summary.failed > 0 ? 1 : 0;
    });
}
