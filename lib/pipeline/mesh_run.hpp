#pragma once
// One mesh of a batch: its planned manifest entry, and the run of the pipeline's stages on it.
//
// run_mesh writes OUTDIR/<job.name>/<stage output> for each stage in order and returns the
// mesh's entry: "ok" with every output's size and hash and every stage's seconds, peak memory and
// report, or "failed" with the error, its exit code and the outputs this run wrote before the
// failure. It never throws for the mesh's own failure. Stale outputs of an earlier run are
// removed first. Called from TBB worker threads: `progress` is called on them too.
#include <functional>
#include <string_view>

#include "pipeline/batch.hpp"
#include "pipeline/stage_gate.hpp"

namespace hp::pipeline {

// Every stage's output to be, the input's hash (or the error that the mesh cannot be read).
MeshEntry planned_entry(const Pipeline& pipeline, const MeshJob& job);

struct MeshRun {
    const Pipeline& pipeline;
    std::filesystem::path outdir;
    bool per_stage_memory = false;  // reset the peak memory before each stage (one mesh at a time)
    StageGate& gate;                // shared by the batch's meshes
    std::function<void(std::string_view stage, std::string_view phase, double fraction)> progress;
};
MeshEntry run_mesh(const MeshRun& run, const MeshJob& job);

}  // namespace hp::pipeline
