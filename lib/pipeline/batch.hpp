#pragma once
// Batches: a pipeline over many meshes, the manifest, --resume, shards and their merge.
//
// Each mesh runs the pipeline's stages in order into OUTDIR/<mesh-name>/<stage output>; at most
// `jobs` meshes run at a time (TBB), sharing the TBB threads with the stages' own loops. A mesh
// that fails is recorded with its error and exit code and the batch goes on. Artifacts depend
// only on the mesh and the parameters: byte-identical whatever `jobs` and the thread count.
// Mesh names: the file name without its extension ("parts/peg.stl" -> "peg"), the full file name
// when two meshes share a stem; the same file name twice is a usage error. Shard I of N takes the
// meshes at positions p with p % N == I - 1 of the name order, so every shard agrees.
// The manifest (OUTDIR/manifest.json; manifest.shard-I-of-N.json for a shard) is rewritten
// atomically every few seconds, so a killed batch can be resumed. Types: manifest.hpp; keys:
// docs/pipeline.md. Sources: batch.cpp (the run), mesh_run.cpp (one mesh), resume.cpp,
// shards.cpp (names, shards, --shard auto), merge.cpp; --log: task_log.hpp.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "mesh/assembly.hpp"
#include "pipeline/manifest.hpp"
#include "pipeline/pipeline.hpp"

namespace hp::pipeline {

struct MeshJob {
    std::string name;              // folder name under OUTDIR
    std::filesystem::path mesh;    // as given
    std::string part;              // "": the whole mesh; else the part the stages read (--assembly: "@G")
    // --assembly: the file already read as parts, so that each stage takes its geometry from it
    // instead of importing the whole assembly again (the same geometry, the same bytes).
    std::shared_ptr<const Assembly> assembly;
};

// Names and orders the meshes (see above). Throws hp::Error(usage) on a name clash.
std::vector<MeshJob> plan_meshes(const std::vector<std::filesystem::path>& meshes);

// "I/N" with 1 <= I <= N; throws hp::Error(usage) otherwise.
Shard parse_shard(std::string_view text);
// Shard: manifest.hpp.
std::vector<MeshJob> select_shard(const std::vector<MeshJob>& all, const Shard& shard);

// hex64 of the meshes' names in order: the manifest's shard.names_hash, the same in every shard of one batch.
std::string names_hash(const std::vector<MeshJob>& all);

// --shard from a job array's environment (docs/pipeline.md, "Slurm job arrays"):
//   "auto"    Slurm: I = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN + 1, N = SLURM_ARRAY_TASK_COUNT,
//             for a whole array whose ids are a range starting at 0 or 1 (step 1).
//   "auto/N"  Slurm: I = SLURM_ARRAY_TASK_ID (the task id is the shard number, 1..N), so that
//             single tasks can be submitted again; Kubernetes indexed jobs: I = JOB_COMPLETION_INDEX + 1.
//   "I/N"     as parse_shard.
// `env` returns a variable's value or nullptr. Throws hp::Error(usage) with one line naming the
// variable when the environment is missing or inconsistent.
using Environment = std::function<const char*(const char*)>;
struct ShardChoice {
    Shard shard;
    std::string source;                   // where it came from, e.g. "Slurm array job 12, task 3"
    bool count_from_environment = false;  // "auto": N is the array's size, not given
};
ShardChoice choose_shard(std::string_view text, const Environment& env);

// For a count taken from the environment: throws hp::Error(usage) when OUTDIR already holds shard
// manifests of another count (a part of an array submitted again as an array of its own).
void check_shard_count(const std::filesystem::path& outdir, const Shard& shard);

// OUTDIR/manifest.json, or OUTDIR/manifest.shard-I-of-N.json.
std::filesystem::path manifest_path(const std::filesystem::path& outdir, const Shard& shard);

struct BatchOptions {
    std::filesystem::path outdir;
    int jobs = 1;            // meshes at a time
    bool resume = false;
    Shard shard;
    std::size_t batch_meshes = 0;  // meshes of the whole batch (before sharding)
    std::string names_hash;        // of the whole batch's names (names_hash), recorded when sharded
};

// Calls from the worker threads, serialised by the runner (never two at once).
struct BatchEvents {
    std::function<void(std::size_t index, const MeshJob&)> started;
    std::function<void(std::size_t index, std::string_view stage, std::string_view phase, double fraction)> progress;
    std::function<void(std::size_t index, const MeshEntry& entry)> finished;
};

// Runs the batch and writes the manifest; returns it. Throws hp::Error(cannot_write) when OUTDIR
// or the manifest cannot be written, hp::Error(bad_input) when --resume finds a manifest it
// cannot read; a mesh's own failure is in its entry.
Manifest run_batch(const Pipeline& pipeline, const std::vector<MeshJob>& jobs, const BatchOptions& options,
                   const BatchEvents& events = {});

// The manifest of what run_batch would do (every mesh "planned", its input hash, its outputs to
// be), written to the manifest path; nothing else runs.
Manifest plan_batch(const Pipeline& pipeline, const std::vector<MeshJob>& jobs, const BatchOptions& options);

// Combines shard manifests into OUTDIR/manifest.json. Checks that they come from the same
// pipeline and tool version, that the shards I/N are distinct and complete, and that no mesh is
// in two of them; throws hp::Error(usage) naming the file otherwise (bad_input for a file that
// is not a manifest).
Manifest merge_manifests(const std::vector<std::filesystem::path>& shard_files, const std::filesystem::path& outdir);

// The shards (1..N) that hold a failed mesh of a merged manifest (its meshes by name, N =
// merged_from's size): the ones to run again. Empty for a manifest that was not merged.
std::vector<int> shards_with_failures(const Manifest& merged);

// Recomputes "summary" from "meshes".
void summarize(Manifest& manifest);

// Creates OUTDIR (and its parents). Throws hp::Error(cannot_write) when it cannot.
void prepare_outdir(const std::filesystem::path& outdir);

// hex64 of a file's bytes, streamed. Throws hp::Error(bad_input) when unreadable.
std::string file_hash(const std::filesystem::path& path);

}  // namespace hp::pipeline
