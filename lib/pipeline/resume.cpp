#include "pipeline/resume.hpp"

#include "core/error.hpp"
#include "core/file_hash.hpp"

namespace hp::pipeline {

namespace fs = std::filesystem;

std::map<std::string, MeshEntry> previous_entries(const fs::path& outdir, const Shard& shard) {
    std::map<std::string, MeshEntry> out;
    std::vector<fs::path> files = {outdir / "manifest.json"};
    if (shard.active()) files.push_back(manifest_path(outdir, shard));
    for (const auto& f : files) {
        std::error_code ec;
        if (!fs::is_regular_file(f, ec)) continue;
        for (auto& e : read_manifest(f).meshes)
            if (e.status == MeshStatus::ok) out[e.name] = std::move(e);
    }
    return out;
}

bool still_valid(const MeshEntry& prev, const std::string& input_hash, const std::string& params_hash,
                 const fs::path& outdir, const Pipeline& pipeline) {
    if (prev.input_hash != input_hash || prev.params_hash != params_hash) return false;
    if (prev.outputs.size() != pipeline.stages.size()) return false;
    for (const auto& o : prev.outputs) {
        const fs::path f = outdir / o.file;
        std::error_code ec;
        if (!fs::is_regular_file(f, ec) || fs::file_size(f, ec) != o.bytes.value_or(0)) return false;
        try {
            if (!hash_matches(f, o.hash.value_or(""))) return false;  // XXH3, or FNV in earlier manifests
        } catch (const Error&) {
            return false;
        }
    }
    return true;
}

}  // namespace hp::pipeline
