#include "pipeline/manifest.hpp"

#include <fstream>
#include <limits>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace hp::pipeline {

using nlohmann::json;

ManifestKeyError::ManifestKeyError(std::string key_, std::string problem_)
    : std::runtime_error("key '" + key_ + "' " + problem_), key(std::move(key_)), problem(std::move(problem_)) {}

namespace {

// Values, strictly: a number where an integer is expected is an error, not a cast.
template <class T>
void read(const json& v, std::optional<T>& out);
template <class T>
void read(const json& v, std::vector<T>& out);
template <class T>
auto read(const json& v, T& out) -> decltype(from_json(v, out));

[[noreturn]] void mistyped(const char* what) { throw ManifestKeyError("", std::string("must be ") + what); }

void read(const json& v, json& out) { out = v; }  // free-form: the caller checks its kind
void read(const json& v, std::string& out) {
    if (!v.is_string()) mistyped("a string");
    out = v.get<std::string>();
}
void read(const json& v, bool& out) {
    if (!v.is_boolean()) mistyped("true or false");
    out = v.get<bool>();
}
void read(const json& v, int& out) {
    if (!v.is_number_integer()) mistyped("an integer");
    if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max())
                               : v.get<std::int64_t>() < std::numeric_limits<int>::min())
        mistyped("an integer of at most 10 digits");
    out = v.get<int>();
}
void read(const json& v, std::uint64_t& out) {
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0)) mistyped("an integer >= 0");
    out = v.get<std::uint64_t>();
}
void read(const json& v, double& out) {
    if (!v.is_number()) mistyped("a number");
    out = v.get<double>();
}
template <class T>
void read(const json& v, std::optional<T>& out) {
    if (v.is_null()) {
        out.reset();
        return;
    }
    T value;
    try {
        read(v, value);
    } catch (const ManifestKeyError& e) {
        if (!e.key.empty()) throw;
        throw ManifestKeyError("", e.problem + " or null");
    }
    out = std::move(value);
}
template <class T>
void read(const json& v, std::vector<T>& out) {
    if (!v.is_array()) mistyped("an array");
    out.clear();
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
        try {
            read(v[i], out.emplace_back());
        } catch (const ManifestKeyError& e) {
            throw ManifestKeyError("[" + std::to_string(i) + "]" + (e.key.empty() || e.key[0] == '[' ? "" : ".") + e.key,
                                   e.problem);
        }
    }
}
// The manifest's own types: their from_json (below).
template <class T>
auto read(const json& v, T& out) -> decltype(from_json(v, out)) {
    from_json(v, out);
}

// An object's keys, each read with its path in errors.
class Fields {
public:
    explicit Fields(const json& j) : j_(j) {
        if (!j.is_object()) mistyped("an object");
    }
    template <class T>
    void get(const char* key, T& out) const {
        const auto it = j_.find(key);
        if (it == j_.end()) throw ManifestKeyError(key, "is missing");
        read_at(key, *it, out);
    }
    // A key to_json writes only sometimes: absent leaves `out` as it is.
    template <class T>
    bool get_if(const char* key, T& out) const {
        const auto it = j_.find(key);
        if (it == j_.end()) return false;
        read_at(key, *it, out);
        return true;
    }

private:
    template <class T>
    static void read_at(const std::string& key, const json& v, T& out) {
        try {
            read(v, out);
        } catch (const ManifestKeyError& e) {
            throw ManifestKeyError(key + (e.key.empty() || e.key[0] == '[' ? "" : ".") + e.key, e.problem);
        }
    }
    const json& j_;
};

MeshStatus parse_status(const std::string& s) {
    for (MeshStatus m : {MeshStatus::ok, MeshStatus::failed, MeshStatus::planned})
        if (s == status_name(m)) return m;
    throw ManifestKeyError("", "must be \"ok\", \"failed\" or \"planned\" (got \"" + s + "\")");
}

}  // namespace

const char* status_name(MeshStatus s) {
    switch (s) {
        case MeshStatus::ok: return "ok";
        case MeshStatus::failed: return "failed";
        case MeshStatus::planned: return "planned";
    }
    return "?";
}

void to_json(json& j, const Shard& v) {
    j = v.active() ? json{{"index", v.index}, {"count", v.count}} : json(nullptr);
}

void to_json(json& j, const PipelineStage& v) {
    j = {{"stage", v.stage}};
    for (const auto& [k, value] : v.given.items()) j[k] = value;
}
void from_json(const json& j, PipelineStage& v) {
    Fields(j).get("stage", v.stage);
    v.given = j;
    v.given.erase("stage");
}

void to_json(json& j, const PipelineRecord& v) {
    j = {{"name", v.name}, {"description", v.description}, {"stages", v.stages}};
}
void from_json(const json& j, PipelineRecord& v) {
    const Fields f(j);
    f.get("name", v.name);
    f.get("description", v.description);
    f.get("stages", v.stages);
}

void to_json(json& j, const OutputRecord& v) {
    j = {{"stage", v.stage}, {"file", v.file}};
    if (v.bytes) j["bytes"] = *v.bytes;
    if (v.hash) j["hash"] = *v.hash;
    if (!v.deterministic) j["deterministic"] = false;
}
void from_json(const json& j, OutputRecord& v) {
    const Fields f(j);
    f.get("stage", v.stage);
    f.get("file", v.file);
    std::uint64_t bytes = 0;
    std::string hash;
    v.bytes = f.get_if("bytes", bytes) ? std::optional(bytes) : std::nullopt;
    v.hash = f.get_if("hash", hash) ? std::optional(hash) : std::nullopt;
    v.deterministic = true;
    f.get_if("deterministic", v.deterministic);
}

void to_json(json& j, const StageRecord& v) {
    j = {{"stage", v.stage}, {"seconds", v.seconds}, {"peak_rss_bytes", v.peak_rss_bytes}, {"report", v.report}};
}
void from_json(const json& j, StageRecord& v) {
    const Fields f(j);
    f.get("stage", v.stage);
    f.get("seconds", v.seconds);
    f.get("peak_rss_bytes", v.peak_rss_bytes);
    f.get("report", v.report);
    if (!v.report.is_object()) throw ManifestKeyError("report", "must be an object");
}

std::uint64_t output_bytes(const MeshEntry& e) {
    std::uint64_t b = 0;
    for (const auto& o : e.outputs) b += o.bytes.value_or(0);
    return b;
}

void to_json(json& j, const MeshEntry& v) {
    j = {{"name", v.name},
         {"mesh", v.mesh},
         {"input_hash", v.input_hash ? json(*v.input_hash) : json(nullptr)},
         {"params_hash", v.params_hash},
         {"status", status_name(v.status)},
         {"resumed", v.resumed},
         {"error", v.error ? json(*v.error) : json(nullptr)},
         {"exit_code", v.exit_code ? json(*v.exit_code) : json(nullptr)},
         {"diagnostics", v.diagnostics},
         {"warnings", v.warnings},
         {"outputs", v.outputs},
         {"output_bytes", output_bytes(v)},
         {"stages", v.stages},
         {"seconds", v.seconds}};
    if (v.part) j["part"] = *v.part;
}
void from_json(const json& j, MeshEntry& v) {
    const Fields f(j);
    f.get("name", v.name);
    f.get("mesh", v.mesh);
    f.get("input_hash", v.input_hash);
    f.get("params_hash", v.params_hash);
    std::string status;
    f.get("status", status);
    try {
        v.status = parse_status(status);
    } catch (const ManifestKeyError& e) {
        throw ManifestKeyError("status", e.problem);
    }
    f.get("resumed", v.resumed);
    f.get("error", v.error);
    f.get("exit_code", v.exit_code);
    f.get("diagnostics", v.diagnostics);
    if (!v.diagnostics.is_null() && !v.diagnostics.is_object()) throw ManifestKeyError("diagnostics", "must be an object or null");
    f.get("warnings", v.warnings);
    f.get("outputs", v.outputs);
    f.get("stages", v.stages);
    f.get("seconds", v.seconds);
    std::string part;
    v.part = f.get_if("part", part) ? std::optional(part) : std::nullopt;
    // Only a planned output has no size and hash yet.
    if (v.status != MeshStatus::planned)
        for (std::size_t i = 0; i < v.outputs.size(); ++i)
            if (!v.outputs[i].bytes || !v.outputs[i].hash)
                throw ManifestKeyError("outputs[" + std::to_string(i) + "]." + (v.outputs[i].bytes ? "hash" : "bytes"),
                                       "is missing");
}

void to_json(json& j, const Summary& v) {
    j = {{"meshes", v.meshes},   {"ok", v.ok},
         {"failed", v.failed},   {"resumed", v.resumed},
         {"planned", v.planned}, {"output_bytes", v.output_bytes},
         {"seconds", v.seconds}};
}
void from_json(const json& j, Summary& v) {
    const Fields f(j);
    f.get("meshes", v.meshes);
    f.get("ok", v.ok);
    f.get("failed", v.failed);
    f.get("resumed", v.resumed);
    f.get("planned", v.planned);
    f.get("output_bytes", v.output_bytes);
    f.get("seconds", v.seconds);
}

void to_json(json& j, const Manifest& v) {
    j = {{"format", v.format},
         {"format_version", v.format_version},
         {"tool", v.tool},
         {"tool_version", v.tool_version},
         {"pipeline", v.pipeline},
         {"pipeline_file", v.pipeline_file},
         {"params_hash", v.params_hash},
         {"shard", v.shard},
         {"batch_meshes", v.batch_meshes},
         {"jobs", v.jobs},
         {"peak_rss_scope", v.peak_rss_scope},
         {"summary", v.summary},
         {"meshes", v.meshes}};
    if (v.shard.active() && !v.names_hash.empty()) j["shard"]["names_hash"] = v.names_hash;
    if (v.merged_from) j["merged_from"] = *v.merged_from;
}
void from_json(const json& j, Manifest& v) {
    const Fields f(j);
    f.get("format", v.format);
    f.get("format_version", v.format_version);
    f.get("tool", v.tool);
    f.get("tool_version", v.tool_version);
    f.get("pipeline", v.pipeline);
    f.get("pipeline_file", v.pipeline_file);
    f.get("params_hash", v.params_hash);
    const auto shard = j.find("shard");
    if (shard == j.end()) throw ManifestKeyError("shard", "is missing");
    v.shard = {};
    if (!shard->is_null()) {
        try {
            const Fields s(*shard);
            s.get("index", v.shard.index);
            s.get("count", v.shard.count);
            v.names_hash.clear();
            s.get_if("names_hash", v.names_hash);
        } catch (const ManifestKeyError& e) {
            throw ManifestKeyError(e.key.empty() ? "shard" : "shard." + e.key, e.problem);
        }
        if (!v.shard.active()) throw ManifestKeyError("shard.count", "must be at least 1");
        if (v.shard.index < 1 || v.shard.index > v.shard.count)
            throw ManifestKeyError("shard.index", "must be between 1 and shard.count (" + std::to_string(v.shard.count) + ")");
    }
    f.get("batch_meshes", v.batch_meshes);
    f.get("jobs", v.jobs);
    f.get("peak_rss_scope", v.peak_rss_scope);
    f.get("summary", v.summary);
    f.get("meshes", v.meshes);
    std::vector<std::string> merged;
    v.merged_from = f.get_if("merged_from", merged) ? std::optional(merged) : std::nullopt;
}

Manifest read_manifest(const std::filesystem::path& file) {
    const std::string where = file.string();
    std::ifstream in(file, std::ios::binary);
    if (!in) fail_input(where, "cannot be read (missing, or no permission to read it)");
    const json j = json::parse(in, nullptr, false);
    // (json::value would throw on a "format" that is not a string.)
    if (j.is_discarded() || !j.is_object() || !j.contains("format") || j["format"] != kManifestFormat)
        fail_input(where, "is not a manifest of haptic-pipeline");
#ifdef HP_FUZZ_CANARY
    // The fuzzing canary (docs/fuzzing.md): the version check below, off by one.
    if (const auto v = j.find("format_version"); v != j.end() && *v == kManifestVersion + 1) __builtin_trap();
#endif
    if (const auto v = j.find("format_version"); v != j.end() && v->is_number_integer() && *v > kManifestVersion)
        fail_input(where, "was written by a newer haptic-pipeline (manifest format " + v->dump() +
                              "); read it with that version");
    try {
        return j.get<Manifest>();
    } catch (const ManifestKeyError& e) {
        fail_input(where, std::string(e.what()) + " (the manifest was edited or damaged; remove it, or run the batch again)");
    }
}

void write_manifest(const std::filesystem::path& file, const Manifest& manifest) {
    write_file_atomically(file, json(manifest).dump(2) + "\n");
}

}  // namespace hp::pipeline
