// --merge: shard manifests into OUTDIR/manifest.json (batch.hpp, merge_manifests).
#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/outdir_lock.hpp"

namespace hp::pipeline {

namespace fs = std::filesystem;

Manifest merge_manifests(const std::vector<fs::path>& shard_files, const fs::path& outdir) {
    if (shard_files.empty()) fail_usage("--merge needs the shard manifests (e.g. OUTDIR/manifest.shard-*.json)");
    std::optional<Manifest> merged;
    std::set<int> indexes;
    std::map<std::string, std::string> seen;  // mesh name -> file
    std::vector<MeshEntry> meshes;
    std::vector<std::string> sources;
    const std::string first = shard_files.front().string();
    for (const auto& f : shard_files) {
        const std::string where = f.string();
        Manifest m = read_manifest(f);
        if (!m.shard.active())
            fail_usage(where + ": is not a shard manifest (written without --shard); merge only shard manifests");
        const int index = m.shard.index, n = m.shard.count;
        if (!merged) {
            merged = m;
        } else {
            if (m.params_hash != merged->params_hash)
                fail_usage(where + ": was made with other pipeline parameters than " + first + " (params_hash " +
                           m.params_hash + " vs " + merged->params_hash + ")");
            if (m.tool_version != merged->tool_version)
                fail_usage(where + ": was made by haptic-pipeline " + m.tool_version + ", " + first + " by " +
                           merged->tool_version);
            if (n != merged->shard.count)
                fail_usage(where + ": is shard " + std::to_string(index) + "/" + std::to_string(n) + ", others are of " +
                           std::to_string(merged->shard.count));
            if (m.batch_meshes != merged->batch_meshes)
                fail_usage(where + ": its batch had " + std::to_string(m.batch_meshes) + " meshes, " + first + "'s " +
                           std::to_string(merged->batch_meshes) + " (give every shard the same mesh list)");
        }
        if (!indexes.insert(index).second)
            fail_usage(where + ": shard " + std::to_string(index) + "/" + std::to_string(n) + " is given twice");
        for (auto& e : m.meshes) {
            if (auto it = seen.find(e.name); it != seen.end())
                fail_usage(where + ": mesh '" + e.name + "' is also in " + it->second);
            seen[e.name] = where;
            meshes.push_back(std::move(e));
        }
        sources.push_back(f.filename().string());
    }
    const int count = merged->shard.count;
    std::string missing;
    for (int i = 1; i <= count; ++i)
        if (!indexes.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(count);
    if (!missing.empty())
        fail_usage("--merge: shard " + missing + " is missing (run it, then merge all " + std::to_string(count) + ")");
    std::sort(meshes.begin(), meshes.end(), [](const MeshEntry& a, const MeshEntry& b) { return a.name < b.name; });
    if (meshes.size() != merged->batch_meshes)
        fail_usage("--merge: the shards hold " + std::to_string(meshes.size()) + " meshes, the batch had " +
                   std::to_string(merged->batch_meshes));
    merged->shard = {};
    merged->merged_from = sources;
    merged->meshes = std::move(meshes);
    summarize(*merged);
    prepare_outdir(outdir);
    const OutdirLock lock(outdir / "manifest.json");
    write_manifest(outdir / "manifest.json", *merged);
    return *merged;
}

}  // namespace hp::pipeline
