#pragma once
// The batch manifest (OUTDIR/manifest.json) as types. to_json writes every key below (the
// optional ones only when set); from_json reads it back (other keys are ignored) and throws
// ManifestKeyError naming the key path ("meshes[2].outputs[0].hash") for a key that is missing
// or of the wrong type. read_manifest turns that into hp::Error(bad_input) naming the file.
// What each key means: docs/pipeline.md, "The manifest" (a test checks it lists these keys).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hp::pipeline {

inline constexpr const char* kManifestFormat = "hapticprep-manifest";
inline constexpr int kManifestVersion = 1;

struct Shard {
    int index = 0, count = 0;  // count 0: not sharded (written as null)
    bool active() const { return count > 0; }
};

// One stage of the pipeline as run: its name and the keys the pipeline gave (free-form).
struct PipelineStage {
    std::string stage;
    nlohmann::json given = nlohmann::json::object();
};
struct PipelineRecord {
    std::string name, description;
    std::vector<PipelineStage> stages;
};

struct OutputRecord {
    std::string stage;
    std::string file;                    // relative to OUTDIR
    std::optional<std::uint64_t> bytes;  // unset in a planned entry
    std::optional<std::string> hash;     // hex64 of the bytes; unset in a planned entry
    bool deterministic = true;           // false (written only then): holds measurements
};

struct StageRecord {
    std::string stage;
    double seconds = 0;
    std::uint64_t peak_rss_bytes = 0;
    nlohmann::json report = nlohmann::json::object();  // the stage's own summary, as it returned it
};

enum class MeshStatus { ok, failed, planned };

struct MeshEntry {
    std::string name, mesh;
    std::optional<std::string> input_hash;  // unset when the mesh cannot be read
    std::string params_hash;
    MeshStatus status = MeshStatus::planned;
    bool resumed = false;
    std::optional<std::string> error;
    std::optional<int> exit_code;
    nlohmann::json diagnostics;  // the mesh's diagnostics (mesh.hpp to_json), or null
    std::vector<std::string> warnings;
    std::vector<OutputRecord> outputs;
    std::vector<StageRecord> stages;
    double seconds = 0;
    std::optional<std::string> part;  // an assembly's geometry ("@G"), written only then
};

struct Summary {
    std::size_t meshes = 0, ok = 0, failed = 0, resumed = 0, planned = 0;
    std::uint64_t output_bytes = 0;
    double seconds = 0;
};

struct Manifest {
    std::string format = kManifestFormat;
    int format_version = kManifestVersion;
    std::string tool = "haptic-pipeline", tool_version;
    PipelineRecord pipeline;
    std::string pipeline_file, params_hash;
    Shard shard;
    // Written as shard.names_hash, when sharded: hex64 of the names of every mesh of the batch in
    // order (all shards of one batch agree); empty when not recorded (earlier releases).
    std::string names_hash;
    std::size_t batch_meshes = 0;
    int jobs = 1;
    std::string peak_rss_scope;  // "stage" or "process"
    Summary summary;
    std::vector<MeshEntry> meshes;
    std::optional<std::vector<std::string>> merged_from;  // shard manifest file names, after --merge
};

// A key of a manifest that is missing or of the wrong type; `key` is its path from the top.
struct ManifestKeyError : std::runtime_error {
    std::string key, problem;
    ManifestKeyError(std::string key_, std::string problem_);
};

const char* status_name(MeshStatus s);

// The bytes a mesh's outputs hold (those written so far).
std::uint64_t output_bytes(const MeshEntry& e);

void to_json(nlohmann::json& j, const Shard& v);
void to_json(nlohmann::json& j, const PipelineStage& v);
void to_json(nlohmann::json& j, const PipelineRecord& v);
void to_json(nlohmann::json& j, const OutputRecord& v);
void to_json(nlohmann::json& j, const StageRecord& v);
void to_json(nlohmann::json& j, const MeshEntry& v);
void to_json(nlohmann::json& j, const Summary& v);
void to_json(nlohmann::json& j, const Manifest& v);

void from_json(const nlohmann::json& j, PipelineStage& v);
void from_json(const nlohmann::json& j, PipelineRecord& v);
void from_json(const nlohmann::json& j, OutputRecord& v);
void from_json(const nlohmann::json& j, StageRecord& v);
void from_json(const nlohmann::json& j, MeshEntry& v);
void from_json(const nlohmann::json& j, Summary& v);
void from_json(const nlohmann::json& j, Manifest& v);

// Reads OUTDIR/manifest.json or a shard manifest. Throws hp::Error(bad_input) naming the file:
// unreadable, not JSON, not a manifest, a newer format version, a key missing or mistyped.
Manifest read_manifest(const std::filesystem::path& file);

// Writes the manifest atomically (2-space indented JSON and a newline). Throws
// hp::Error(cannot_write) when it cannot.
void write_manifest(const std::filesystem::path& file, const Manifest& manifest);

}  // namespace hp::pipeline
