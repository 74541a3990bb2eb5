#include "pipeline/mesh_run.hpp"

#include <chrono>
#include <map>
#include <new>

#include <tbb/task_arena.h>

#include "core/error.hpp"
#include "core/file_hash.hpp"

namespace hp::pipeline {

namespace fs = std::filesystem;

namespace {

OutputRecord output_record(const MeshJob& job, const StageSpec& spec, const fs::path& file) {
    return {.stage = spec.name,
            .file = job.name + "/" + spec.output_name,
            .bytes = fs::file_size(file),
            .hash = content_hash(file),  // XXH3: outputs are large (a dense field, tens of MB)
            .deterministic = spec.deterministic};  // false: holds measurements, differs per run
}

// The stages in order; throws what the first failing stage throws, `current` naming it.
void run_stages(const MeshRun& run, const MeshJob& job, MeshEntry& entry, std::string& current) {
    if (entry.error) fail_input("", *entry.error);
    const fs::path dir = run.outdir / job.name;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) fail_write(dir.string(), "cannot create the mesh's folder (" + ec.message() + ")");
    // Outputs of an earlier run must not outlive a failure of this one.
    for (const auto& s : run.pipeline.stages) fs::remove(dir / s.spec->output_name, ec);

    std::map<std::string, LoadedMesh> meshes;  // by load options
    auto load = [&](MeshLoadOptions mopt) -> const LoadedMesh& {
        if (mopt.part.empty()) mopt.part = job.part;  // an assembly's geometry (batch.hpp)
        const std::string key = nlohmann::json{mopt.scale, mopt.units, mopt.weld_tolerance, mopt.part, mopt.linear_deflection,
                                                 mopt.angular_deflection, mopt.voxel_size, mopt.resolution}.dump();
        auto it = meshes.find(key);
        if (it == meshes.end()) {
            if (job.assembly && !mopt.part.empty()) {
                const AssemblyPart& part = job.assembly->select(mopt.part, job.mesh.string());
                it = meshes.emplace(key, prepare_geometry(*job.assembly, part.geometry, mopt,
                                                          job.mesh.string() + ": part '" + part.name + "'")).first;
            } else {
                it = meshes.emplace(key, load_mesh(job.mesh, mopt)).first;
            }
            if (entry.diagnostics.is_null()) entry.diagnostics = hp::to_json(it->second.diagnostics);
        }
        return it->second;
    };
    std::map<std::string, fs::path> inputs;
    std::vector<OutputRecord> outputs;
    for (const auto& s : run.pipeline.stages) {
        current = s.spec->name;
        StageContext ctx;
        ctx.mesh = job.mesh;
        ctx.output = dir / s.spec->output_name;
        ctx.inputs = &inputs;
        ctx.params = s.params;
        ctx.load_mesh = load;
        ctx.prepared_sampler = job.assembly != nullptr;
        for (const auto* t = &s + 1; t != run.pipeline.stages.data() + run.pipeline.stages.size(); ++t)
            ctx.later.push_back({{"stage", t->spec->name}, {"params", t->params}});
        if (run.progress) {
            ctx.progress.callback = [&run, &s](std::string_view phase, double f) { run.progress(s.spec->name, phase, f); };
            run.progress(s.spec->name, "", 0.0);
        }
        StageRecord record;
        record.stage = s.spec->name;
        {
            const StageGate::Pass pass(run.gate, s.spec->runs_alone);  // the wait is not the stage's time
            if (run.per_stage_memory) reset_peak_rss();
            const auto ts = std::chrono::steady_clock::now();
            // Isolated: while the stage's own parallel loops wait, this thread must not pick up
            // another mesh's job (its stage would wait at the gate on a thread this stage needs,
            // a deadlock).
            record.report = tbb::this_task_arena::isolate([&] { return s.spec->run(ctx); });
            record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
        }
        if (record.report.contains("warnings")) {
            for (const auto& w : record.report["warnings"]) entry.warnings.push_back(w.get<std::string>());
            record.report.erase("warnings");
        }
        record.peak_rss_bytes = peak_rss_bytes();
        entry.stages.push_back(std::move(record));
        outputs.push_back(output_record(job, *s.spec, ctx.output));
        inputs[s.spec->produces] = ctx.output;
    }
    entry.outputs = std::move(outputs);
    entry.status = MeshStatus::ok;
}

}  // namespace

MeshEntry planned_entry(const Pipeline& pipeline, const MeshJob& job) {
    MeshEntry e;
    e.name = job.name;
    e.mesh = job.mesh.string();
    e.params_hash = pipeline.params_hash();
    if (!job.part.empty()) e.part = job.part;
    for (const auto& s : pipeline.stages) {
        OutputRecord& o = e.outputs.emplace_back();
        o.stage = s.spec->name;
        o.file = job.name + "/" + s.spec->output_name;
    }
    try {
        e.input_hash = file_hash(job.mesh);
    } catch (const Error& err) {
        e.error = err.what();
    }
    return e;
}

MeshEntry run_mesh(const MeshRun& run, const MeshJob& job) {
    MeshEntry entry = planned_entry(run.pipeline, job);
    const auto t0 = std::chrono::steady_clock::now();
    std::string stage;
    const auto fail = [&](const std::string& error, int exit_code) {
        entry.status = MeshStatus::failed;
        entry.error = error;
        entry.exit_code = exit_code;
    };
    try {
        run_stages(run, job, entry, stage);
    } catch (const Error& e) {
        fail((stage.empty() ? std::string() : "stage '" + stage + "': ") + e.what(), e.exit_code());
    } catch (const std::bad_alloc&) {
        fail("stage '" + stage + "': out of memory (try a coarser voxel size or a smaller -j)",
             static_cast<int>(ExitCode::bad_input));
    } catch (const std::exception& e) {
        fail("stage '" + stage + "': internal error: " + e.what(), static_cast<int>(ExitCode::bad_input));
    }
    if (entry.status == MeshStatus::failed) {
        // Keep what this run wrote before the failure (stale files were removed first; a stage
        // that fails a check, like query over budget, still writes its report).
        entry.outputs.clear();
        for (const auto& s : run.pipeline.stages) {
            const fs::path f = run.outdir / job.name / s.spec->output_name;
            std::error_code ec;
            if (fs::is_regular_file(f, ec)) entry.outputs.push_back(output_record(job, *s.spec, f));
        }
    }
    entry.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return entry;
}

}  // namespace hp::pipeline
