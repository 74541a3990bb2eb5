#include "pipeline/batch.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <new>
#include <set>

#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/version.hpp"
#include "pipeline/stage_gate.hpp"

namespace hp::pipeline {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kManifestFormat = "hapticprep-manifest";
constexpr int kManifestVersion = 1;

json manifest_head(const Pipeline& pipeline, const BatchOptions& options, std::size_t jobs_in_flight) {
    json shard = nullptr;
    if (options.shard.active()) shard = {{"index", options.shard.index}, {"count", options.shard.count}};
    return {{"format", kManifestFormat},
            {"format_version", kManifestVersion},
            {"tool", "haptic-pipeline"},
            {"tool_version", kVersion},
            {"pipeline", pipeline.to_json()},
            {"pipeline_file", pipeline.source},
            {"params_hash", pipeline.params_hash()},
            {"shard", shard},
            {"batch_meshes", options.batch_meshes},
            {"jobs", options.jobs},
            {"peak_rss_scope", jobs_in_flight <= 1 ? "stage" : "process"}};
}

json planned_entry(const Pipeline& pipeline, const MeshJob& job) {
    json outputs = json::array();
    for (const auto& s : pipeline.stages)
        outputs.push_back({{"stage", s.spec->name}, {"file", job.name + "/" + s.spec->output_name}});
    json input_hash = nullptr, error = nullptr;
    try {
        input_hash = file_hash(job.mesh);
    } catch (const Error& e) {
        error = e.what();
    }
    return {{"name", job.name},      {"mesh", job.mesh.string()}, {"input_hash", input_hash},
            {"params_hash", pipeline.params_hash()}, {"status", "planned"}, {"resumed", false},
            {"error", error},        {"exit_code", nullptr},      {"diagnostics", nullptr},
            {"warnings", json::array()}, {"outputs", outputs},    {"stages", json::array()},
            {"seconds", 0.0}};
}

// The previous entries of this OUTDIR that a resumed run may keep, by mesh name.
std::map<std::string, json> previous_entries(const fs::path& outdir, const Shard& shard) {
    std::map<std::string, json> out;
    std::vector<fs::path> files = {outdir / "manifest.json"};
    if (shard.active()) files.push_back(manifest_path(outdir, shard));
    for (const auto& f : files) {
        std::error_code ec;
        if (!fs::is_regular_file(f, ec)) continue;
        std::ifstream in(f, std::ios::binary);
        json m = json::parse(in, nullptr, false);
        if (m.is_discarded() || !m.is_object() || m.value("format", "") != kManifestFormat || !m.contains("meshes") ||
            !m["meshes"].is_array())
            continue;
        for (const auto& e : m["meshes"])
            if (e.is_object() && e.value("status", "") == "ok" && e.contains("name") && e["name"].is_string())
                out[e["name"].get<std::string>()] = e;
    }
    return out;
}

// True when `prev` says this mesh is done with these inputs and parameters and its outputs are
// on disk unchanged.
bool still_valid(const json& prev, const std::string& input_hash, const std::string& params_hash, const fs::path& outdir,
                 const Pipeline& pipeline) {
    if (prev.value("input_hash", "") != input_hash || prev.value("params_hash", "") != params_hash) return false;
    if (!prev.contains("outputs") || !prev["outputs"].is_array() || prev["outputs"].size() != pipeline.stages.size())
        return false;
    for (const auto& o : prev["outputs"]) {
        if (!o.is_object() || !o.contains("file") || !o["file"].is_string()) return false;
        const fs::path f = outdir / o["file"].get<std::string>();
        std::error_code ec;
        if (!fs::is_regular_file(f, ec) || fs::file_size(f, ec) != o.value("bytes", std::uint64_t{0})) return false;
        try {
            if (file_hash(f) != o.value("hash", "")) return false;
        } catch (const Error&) {
            return false;
        }
    }
    return true;
}

json output_entry(const MeshJob& job, const StageSpec& spec, const fs::path& file) {
    json o = {{"stage", spec.name},
              {"file", job.name + "/" + spec.output_name},
              {"bytes", fs::file_size(file)},
              {"hash", file_hash(file)}};
    if (!spec.deterministic) o["deterministic"] = false;  // holds measurements: differs per run
    return o;
}

struct MeshRunner {
    const Pipeline& pipeline;
    const BatchOptions& options;
    bool per_stage_memory;
    std::function<void(std::string_view stage, std::string_view phase, double fraction)> progress;
    StageGate& gate;  // shared by the batch's jobs

    json run(const MeshJob& job) const {
        json entry = planned_entry(pipeline, job);
        const auto t0 = std::chrono::steady_clock::now();
        std::string current_stage;
        try {
            if (!entry["error"].is_null()) fail_input("", entry["error"].get<std::string>());
            const fs::path dir = options.outdir / job.name;
            std::error_code ec;
            fs::create_directories(dir, ec);
            if (ec) fail_write(dir.string(), "cannot create the mesh's folder (" + ec.message() + ")");
            // Outputs of an earlier run must not outlive a failure of this one.
            for (const auto& s : pipeline.stages) fs::remove(dir / s.spec->output_name, ec);

            std::map<std::string, LoadedMesh> meshes;  // by load options
            auto load = [&](const MeshLoadOptions& mopt) -> const LoadedMesh& {
                const std::string key = json{mopt.scale, mopt.units, mopt.weld_tolerance}.dump();
                auto it = meshes.find(key);
                if (it == meshes.end()) {
                    it = meshes.emplace(key, load_mesh(job.mesh, mopt)).first;
                    if (entry["diagnostics"].is_null()) entry["diagnostics"] = to_json(it->second.diagnostics);
                }
                return it->second;
            };
            std::map<std::string, fs::path> inputs;
            json outputs = json::array();
            for (const auto& s : pipeline.stages) {
                current_stage = s.spec->name;
                StageContext ctx;
                ctx.mesh = job.mesh;
                ctx.output = dir / s.spec->output_name;
                ctx.inputs = &inputs;
                ctx.params = s.params;
                ctx.given = s.given;
                ctx.load_mesh = load;
                if (progress)
                    ctx.progress.callback = [this, &s](std::string_view phase, double f) {
                        progress(s.spec->name, phase, f);
                    };
                if (progress) progress(s.spec->name, "", 0.0);
                json report;
                double seconds = 0;
                {
                    const StageGate::Pass pass(gate, s.spec->runs_alone);  // the wait is not the stage's time
                    if (per_stage_memory) reset_peak_rss();
                    const auto ts = std::chrono::steady_clock::now();
                    // Isolated: while the stage's own parallel loops wait, this thread must not pick
                    // up another mesh's job (its stage would wait at the gate on a thread this stage
                    // needs, a deadlock).
                    report = tbb::this_task_arena::isolate([&] { return s.spec->run(ctx); });
                    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
                }
                if (report.contains("warnings")) {
                    for (const auto& w : report["warnings"]) entry["warnings"].push_back(w);
                    report.erase("warnings");
                }
                entry["stages"].push_back(
                    {{"stage", s.spec->name}, {"seconds", seconds}, {"peak_rss_bytes", peak_rss_bytes()}, {"report", report}});
                outputs.push_back(output_entry(job, *s.spec, ctx.output));
                inputs[s.spec->produces] = ctx.output;
            }
            entry["outputs"] = outputs;
            entry["status"] = "ok";
        } catch (const Error& e) {
            entry["status"] = "failed";
            entry["error"] = (current_stage.empty() ? std::string() : "stage '" + current_stage + "': ") + e.what();
            entry["exit_code"] = e.exit_code();
        } catch (const std::bad_alloc&) {
            entry["status"] = "failed";
            entry["error"] = "stage '" + current_stage + "': out of memory (try a coarser voxel size or a smaller -j)";
            entry["exit_code"] = static_cast<int>(ExitCode::bad_input);
        } catch (const std::exception& e) {
            entry["status"] = "failed";
            entry["error"] = "stage '" + current_stage + "': internal error: " + e.what();
            entry["exit_code"] = static_cast<int>(ExitCode::bad_input);
        }
        if (entry["status"] == "failed") {
            // Keep what this run wrote before the failure (stale files were removed first; a
            // stage that fails a check, like query over budget, still writes its report).
            json kept = json::array();
            for (const auto& s : pipeline.stages) {
                const fs::path f = options.outdir / job.name / s.spec->output_name;
                std::error_code ec;
                if (fs::is_regular_file(f, ec)) kept.push_back(output_entry(job, *s.spec, f));
            }
            entry["outputs"] = kept;
        }
        entry["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return entry;
    }
};

void write_manifest(const fs::path& path, const json& manifest) {
    write_file_atomically(path, manifest.dump(2) + "\n");
}

void prepare_outdir(const fs::path& outdir) {
    std::error_code ec;
    fs::create_directories(outdir, ec);
    if (ec || !fs::is_directory(outdir, ec))
        fail_write(outdir.string(), "cannot create the output folder (" + ec.message() + ")");
}

}  // namespace

std::string file_hash(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_input(path.string(), "cannot be read (missing, or no permission to read it)");
    std::uint64_t h = 0xcbf29ce484222325ULL;
    std::vector<char> buf(1 << 20);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        h = hash64(buf.data(), static_cast<std::size_t>(in.gcount()), h);
    }
    if (in.bad()) fail_input(path.string(), "read error");
    return hex64(h);
}

std::vector<MeshJob> plan_meshes(const std::vector<fs::path>& meshes) {
    std::map<std::string, std::vector<std::size_t>> by_stem;
    for (std::size_t i = 0; i < meshes.size(); ++i) by_stem[meshes[i].stem().string()].push_back(i);
    std::vector<MeshJob> jobs;
    std::map<std::string, std::size_t> names;
    for (const auto& [stem, idx] : by_stem)
        for (std::size_t i : idx) {
            const fs::path& m = meshes[i];
            std::string name = idx.size() == 1 ? stem : m.filename().string();
            if (name.empty() || name == "." || name == ".." || name.rfind("manifest", 0) == 0)
                fail_usage(m.string() + ": cannot name an output folder after this file (rename it)");
            if (auto it = names.find(name); it != names.end())
                fail_usage(m.string() + " and " + meshes[it->second].string() + " have the same file name '" + name +
                           "' (rename one, or convert them in separate batches)");
            names[name] = i;
            jobs.push_back({name, m});
        }
    std::sort(jobs.begin(), jobs.end(), [](const MeshJob& a, const MeshJob& b) { return a.name < b.name; });
    return jobs;
}

Shard parse_shard(std::string_view text) {
    const std::string t(text);
    const auto slash = t.find('/');
    Shard s;
    try {
        if (slash == std::string::npos) throw std::invalid_argument("no slash");
        std::size_t a = 0, b = 0;
        s.index = std::stoi(t.substr(0, slash), &a);
        s.count = std::stoi(t.substr(slash + 1), &b);
        if (a != slash || b != t.size() - slash - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
        fail_usage("--shard " + t + ": expected I/N, e.g. --shard 2/8 (the second of 8 shards)");
    }
    if (s.count < 1 || s.index < 1 || s.index > s.count)
        fail_usage("--shard " + t + ": I must be between 1 and N (got " + std::to_string(s.index) + " of " +
                   std::to_string(s.count) + ")");
    return s;
}

std::vector<MeshJob> select_shard(const std::vector<MeshJob>& all, const Shard& shard) {
    if (!shard.active()) return all;
    std::vector<MeshJob> out;
    for (std::size_t p = 0; p < all.size(); ++p)
        if (static_cast<int>(p % static_cast<std::size_t>(shard.count)) == shard.index - 1) out.push_back(all[p]);
    return out;
}

fs::path manifest_path(const fs::path& outdir, const Shard& shard) {
    if (!shard.active()) return outdir / "manifest.json";
    return outdir / ("manifest.shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count) + ".json");
}

void summarize(json& manifest) {
    std::size_t ok = 0, failed = 0, resumed = 0, planned = 0;
    std::uint64_t bytes = 0;
    double seconds = 0;
    for (const auto& e : manifest["meshes"]) {
        const std::string st = e.value("status", "");
        ok += st == "ok";
        failed += st == "failed";
        planned += st == "planned";
        resumed += e.value("resumed", false);
        if (st != "planned")
            for (const auto& o : e["outputs"]) bytes += o.value("bytes", std::uint64_t{0});
        if (!e.value("resumed", false)) seconds += e.value("seconds", 0.0);
    }
    manifest["summary"] = {{"meshes", manifest["meshes"].size()},
                           {"ok", ok},
                           {"failed", failed},
                           {"resumed", resumed},
                           {"planned", planned},
                           {"output_bytes", bytes},
                           {"seconds", seconds}};
}

json plan_batch(const Pipeline& pipeline, const std::vector<MeshJob>& jobs, const BatchOptions& options) {
    prepare_outdir(options.outdir);
    json manifest = manifest_head(pipeline, options, static_cast<std::size_t>(options.jobs));
    manifest["meshes"] = json::array();
    for (const auto& job : jobs) manifest["meshes"].push_back(planned_entry(pipeline, job));
    summarize(manifest);
    write_manifest(manifest_path(options.outdir, options.shard), manifest);
    return manifest;
}

json run_batch(const Pipeline& pipeline, const std::vector<MeshJob>& jobs, const BatchOptions& options,
               const BatchEvents& events) {
    prepare_outdir(options.outdir);
    const std::size_t in_flight = std::min<std::size_t>(static_cast<std::size_t>(std::max(options.jobs, 1)), jobs.size());
    json manifest = manifest_head(pipeline, options, in_flight);
    const fs::path path = manifest_path(options.outdir, options.shard);
    const std::string params_hash = pipeline.params_hash();
    std::map<std::string, json> previous;
    if (options.resume) previous = previous_entries(options.outdir, options.shard);

    std::vector<json> entries(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) entries[i] = planned_entry(pipeline, jobs[i]);
    std::mutex mutex;  // guards entries, the events and the manifest file
    StageGate gate;    // a stage that times itself runs alone (stage_gate.hpp)
    auto last_write = std::chrono::steady_clock::now();
    auto snapshot = [&] {
        json m = manifest;
        m["meshes"] = json::array();
        for (const auto& e : entries) m["meshes"].push_back(e);
        summarize(m);
        return m;
    };

    auto run_one = [&](std::size_t i) {
        const MeshJob& job = jobs[i];
        {
            std::lock_guard lock(mutex);
            if (events.started) events.started(i, job);
        }
        json entry;
        auto prev = previous.find(job.name);
        if (prev != previous.end() && entries[i]["input_hash"].is_string() &&
            still_valid(prev->second, entries[i]["input_hash"].get<std::string>(), params_hash, options.outdir, pipeline)) {
            entry = prev->second;
            entry["resumed"] = true;
            entry["mesh"] = job.mesh.string();
        } else {
            MeshRunner runner{pipeline, options, in_flight <= 1, {}, gate};
            if (events.progress)
                runner.progress = [&, i](std::string_view stage, std::string_view phase, double f) {
                    std::lock_guard lock(mutex);
                    events.progress(i, stage, phase, f);
                };
            entry = runner.run(job);
        }
        std::lock_guard lock(mutex);
        entries[i] = entry;
        if (events.finished) events.finished(i, entry);
        const auto now = std::chrono::steady_clock::now();
        if (now - last_write > std::chrono::seconds(2)) {
            last_write = now;
            try {
                write_manifest(path, snapshot());
            } catch (const Error&) {
                // reported by the final write below
            }
        }
    };

    std::atomic<std::size_t> next{0};
    if (!jobs.empty())
        tbb::parallel_pipeline(
            in_flight,
            tbb::make_filter<void, std::size_t>(tbb::filter_mode::serial_in_order,
                                                [&](tbb::flow_control& fc) -> std::size_t {
                                                    const std::size_t i = next++;
                                                    if (i >= jobs.size()) fc.stop();
                                                    return i;
                                                }) &
                tbb::make_filter<std::size_t, void>(tbb::filter_mode::parallel, [&](std::size_t i) {
                    if (i < jobs.size()) run_one(i);
                }));

    manifest = snapshot();
    write_manifest(path, manifest);
    return manifest;
}

json merge_manifests(const std::vector<fs::path>& shard_files, const fs::path& outdir) {
    if (shard_files.empty()) fail_usage("--merge needs the shard manifests (e.g. OUTDIR/manifest.shard-*.json)");
    json merged;
    std::set<int> indexes;
    int count = 0;
    std::map<std::string, std::string> seen;  // mesh name -> file
    json meshes = json::array(), sources = json::array();
    for (const auto& f : shard_files) {
        const std::string where = f.string();
        std::ifstream in(f, std::ios::binary);
        if (!in) fail_input(where, "cannot be read (is it a shard manifest of haptic-pipeline --shard?)");
        json m = json::parse(in, nullptr, false);
        if (m.is_discarded() || !m.is_object() || m.value("format", "") != kManifestFormat || !m.contains("meshes") ||
            !m["meshes"].is_array())
            fail_input(where, "is not a manifest of haptic-pipeline");
        if (m.value("format_version", 0) > kManifestVersion)
            fail_input(where, "was written by a newer haptic-pipeline (manifest format " +
                                  std::to_string(m.value("format_version", 0)) + "); merge with that version");
        if (!m.contains("shard") || !m["shard"].is_object())
            fail_usage(where + ": is not a shard manifest (written without --shard); merge only shard manifests");
        const int index = m["shard"].value("index", 0), n = m["shard"].value("count", 0);
        if (merged.is_null()) {
            merged = m;
            count = n;
        } else {
            if (m.value("params_hash", "") != merged.value("params_hash", ""))
                fail_usage(where + ": was made with other pipeline parameters than " + shard_files.front().string() +
                           " (params_hash " + m.value("params_hash", "") + " vs " + merged.value("params_hash", "") + ")");
            if (m.value("tool_version", "") != merged.value("tool_version", ""))
                fail_usage(where + ": was made by haptic-pipeline " + m.value("tool_version", "?") + ", " +
                           shard_files.front().string() + " by " + merged.value("tool_version", "?"));
            if (n != count)
                fail_usage(where + ": is shard " + std::to_string(index) + "/" + std::to_string(n) + ", others are of " +
                           std::to_string(count));
            if (m.value("batch_meshes", 0) != merged.value("batch_meshes", 0))
                fail_usage(where + ": its batch had " + std::to_string(m.value("batch_meshes", 0)) + " meshes, " +
                           shard_files.front().string() + "'s " + std::to_string(merged.value("batch_meshes", 0)) +
                           " (give every shard the same mesh list)");
        }
        if (!indexes.insert(index).second)
            fail_usage(where + ": shard " + std::to_string(index) + "/" + std::to_string(n) + " is given twice");
        for (const auto& e : m["meshes"]) {
            const std::string name = e.value("name", "");
            if (auto it = seen.find(name); it != seen.end())
                fail_usage(where + ": mesh '" + name + "' is also in " + it->second);
            seen[name] = where;
            meshes.push_back(e);
        }
        sources.push_back(f.filename().string());
    }
    std::string missing;
    for (int i = 1; i <= count; ++i)
        if (!indexes.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(count);
    if (!missing.empty()) fail_usage("--merge: shard " + missing + " is missing (run it, then merge all " +
                                     std::to_string(count) + ")");
    std::sort(meshes.begin(), meshes.end(),
              [](const json& a, const json& b) { return a.value("name", "") < b.value("name", ""); });
    if (meshes.size() != merged.value("batch_meshes", std::size_t{0}))
        fail_usage("--merge: the shards hold " + std::to_string(meshes.size()) + " meshes, the batch had " +
                   std::to_string(merged.value("batch_meshes", 0)));
    merged["shard"] = nullptr;
    merged["merged_from"] = sources;
    merged["meshes"] = meshes;
    summarize(merged);
    prepare_outdir(outdir);
    write_manifest(outdir / "manifest.json", merged);
    return merged;
}

}  // namespace hp::pipeline
