#include "pipeline/batch.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>

#include <tbb/parallel_pipeline.h>

#include "core/error.hpp"
#include "core/file_hash.hpp"
#include "core/hash.hpp"
#include "core/version.hpp"
#include "pipeline/mesh_run.hpp"
#include "pipeline/outdir_lock.hpp"
#include "pipeline/resume.hpp"
#include "pipeline/stage_gate.hpp"

namespace hp::pipeline {

namespace fs = std::filesystem;

namespace {

Manifest manifest_head(const Pipeline& pipeline, const BatchOptions& options, std::size_t jobs_in_flight) {
    Manifest m;
    m.tool_version = kVersion;
    m.pipeline = pipeline.to_json().get<PipelineRecord>();
    m.pipeline_file = pipeline.source;
    m.params_hash = pipeline.params_hash();
    m.shard = options.shard;
    m.batch_meshes = options.batch_meshes;
    if (options.shard.active()) m.names_hash = options.names_hash;
    m.jobs = options.jobs;
    m.peak_rss_scope = jobs_in_flight <= 1 ? "stage" : "process";
    return m;
}

}  // namespace

void prepare_outdir(const fs::path& outdir) {
    std::error_code ec;
    fs::create_directories(outdir, ec);
    if (ec || !fs::is_directory(outdir, ec))
        fail_write(outdir.string(), "cannot create the output folder (" + ec.message() + ")");
}

std::string file_hash(const fs::path& path) { return hash_file(path); }

void summarize(Manifest& manifest) {
    Summary s;
    s.meshes = manifest.meshes.size();
    for (const auto& e : manifest.meshes) {
        s.ok += e.status == MeshStatus::ok;
        s.failed += e.status == MeshStatus::failed;
        s.planned += e.status == MeshStatus::planned;
        s.resumed += e.resumed;
        if (e.status != MeshStatus::planned)
            for (const auto& o : e.outputs) s.output_bytes += o.bytes.value_or(0);
        if (!e.resumed) s.seconds += e.seconds;
    }
    manifest.summary = s;
}

Manifest plan_batch(const Pipeline& pipeline, const std::vector<MeshJob>& jobs, const BatchOptions& options) {
    prepare_outdir(options.outdir);
    const OutdirLock lock(manifest_path(options.outdir, options.shard));
    Manifest manifest = manifest_head(pipeline, options, static_cast<std::size_t>(options.jobs));
    for (const auto& job : jobs) manifest.meshes.push_back(planned_entry(pipeline, job));
    summarize(manifest);
    write_manifest(manifest_path(options.outdir, options.shard), manifest);
    return manifest;
}

Manifest run_batch(const Pipeline& pipeline, const std::vector<MeshJob>& jobs, const BatchOptions& options,
                   const BatchEvents& events) {
    prepare_outdir(options.outdir);
    const std::size_t in_flight = std::min<std::size_t>(static_cast<std::size_t>(std::max(options.jobs, 1)), jobs.size());
    const Manifest head = manifest_head(pipeline, options, in_flight);
    const fs::path path = manifest_path(options.outdir, options.shard);
    const OutdirLock lock(path);
    std::map<std::string, MeshEntry> previous;
    if (options.resume) previous = previous_entries(options.outdir, options.shard);

    std::vector<MeshEntry> entries;
    for (const auto& job : jobs) entries.push_back(planned_entry(pipeline, job));
    std::mutex mutex;  // guards entries, the events and the manifest file
    StageGate gate;    // a stage that times itself runs alone (stage_gate.hpp)
    auto last_write = std::chrono::steady_clock::now();
    auto snapshot = [&] {
        Manifest m = head;
        m.meshes = entries;
        summarize(m);
        return m;
    };

    auto run_one = [&](std::size_t i) {
        const MeshJob& job = jobs[i];
        {
            std::lock_guard lock(mutex);
            if (events.started) events.started(i, job);
        }
        MeshEntry entry;
        const auto prev = previous.find(job.name);
        if (prev != previous.end() && entries[i].input_hash && prev->second.part == entries[i].part &&
            still_valid(prev->second, *entries[i].input_hash, head.params_hash, options.outdir, pipeline)) {
            entry = prev->second;
            entry.resumed = true;
            entry.mesh = job.mesh.string();
        } else {
            MeshRun run{.pipeline = pipeline, .outdir = options.outdir, .per_stage_memory = in_flight <= 1, .gate = gate,
                        .progress = {}};
            if (events.progress)
                run.progress = [&, i](std::string_view stage, std::string_view phase, double f) {
                    std::lock_guard lock(mutex);
                    events.progress(i, stage, phase, f);
                };
            entry = run_mesh(run, job);
        }
        std::lock_guard lock(mutex);
        entries[i] = std::move(entry);
        if (events.finished) events.finished(i, entries[i]);
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

    Manifest manifest = snapshot();
    write_manifest(path, manifest);
    return manifest;
}

}  // namespace hp::pipeline
