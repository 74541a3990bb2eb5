// --merge: shard manifests into OUTDIR/manifest.json (batch.hpp, merge_manifests).
#include <algorithm>
#include <map>
#include <set>

#include "core/error.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/outdir_lock.hpp"

namespace hp::pipeline {

namespace fs = std::filesystem;

namespace {

std::string stage_list(const PipelineRecord& p) {
    std::string s;
    for (const auto& st : p.stages) s += (s.empty() ? "" : ", ") + st.stage;
    return "[" + s + "]";
}

std::string key_value(const nlohmann::json& given, const std::string& key) {
    const auto it = given.find(key);
    return it == given.end() ? "(not given)" : it->dump();
}

// What differs between two pipelines as run, in words; empty when the records are the same.
std::string pipeline_difference(const PipelineRecord& a, const PipelineRecord& b) {
    if (a.name != b.name) return "pipeline '" + a.name + "' vs '" + b.name + "'";
    if (a.stages.size() != b.stages.size()) return "stages " + stage_list(a) + " vs " + stage_list(b);
    for (std::size_t i = 0; i < a.stages.size(); ++i) {
        const PipelineStage& x = a.stages[i];
        const PipelineStage& y = b.stages[i];
        if (x.stage != y.stage) return "stages " + stage_list(a) + " vs " + stage_list(b);
        std::set<std::string> keys;
        for (const auto& [k, v] : x.given.items()) keys.insert(k);
        for (const auto& [k, v] : y.given.items()) keys.insert(k);
        for (const auto& k : keys)
            if (key_value(x.given, k) != key_value(y.given, k))
                return "stage '" + x.stage + "' key '" + k + "': " + key_value(x.given, k) + " vs " + key_value(y.given, k);
    }
    return {};
}

// Refuses a shard that does not belong to the batch of the first one, saying what differs.
void check_same_batch(const Manifest& m, const std::string& where, const Manifest& first, const std::string& first_file) {
    const std::string versus = " (this shard vs " + first_file + ")";
    const std::string fix = "; merge only the shards of one batch (every task with the same pipeline, options and mesh list)";
    if (m.tool_version != first.tool_version)
        fail_usage(where + ": was made by haptic-pipeline " + m.tool_version + ", " + first_file + " by " +
                   first.tool_version + " (run every shard with the same release)");
    if (const std::string d = pipeline_difference(m.pipeline, first.pipeline); !d.empty())
        fail_usage(where + ": made with another pipeline: " + d + versus + fix);
    if (m.params_hash != first.params_hash)
        fail_usage(where + ": made with other pipeline parameters (params_hash " + m.params_hash + " vs " +
                   first.params_hash + versus + ")" + fix);
    if (m.shard.count != first.shard.count)
        fail_usage(where + ": is shard " + std::to_string(m.shard.index) + "/" + std::to_string(m.shard.count) +
                   ", others are of " + std::to_string(first.shard.count) + " shards (" + first_file + ")" + fix);
    if (m.batch_meshes != first.batch_meshes)
        fail_usage(where + ": its batch had " + std::to_string(m.batch_meshes) + " meshes, " + first_file + "'s " +
                   std::to_string(first.batch_meshes) + fix);
    if (!m.names_hash.empty() && !first.names_hash.empty() && m.names_hash != first.names_hash)
        fail_usage(where + ": its batch had other mesh names than " + first_file + "'s (names_hash " +
                   m.names_hash + " vs " + first.names_hash + ")" + fix);
}

}  // namespace

Manifest merge_manifests(const std::vector<fs::path>& shard_files, const fs::path& outdir) {
    if (shard_files.empty()) fail_usage("--merge needs the shard manifests (e.g. OUTDIR/manifest.shard-*.json)");
    std::optional<Manifest> merged;
    std::map<int, std::string> indexes;       // shard index -> file
    std::map<std::string, std::string> seen;  // mesh name -> file
    std::map<std::string, int> shard_of;      // mesh name -> shard index
    std::vector<std::pair<std::string, std::string>> recorded;  // file, names_hash
    std::vector<MeshEntry> meshes;
    std::vector<std::string> sources;
    const std::string first = shard_files.front().string();
    for (const auto& f : shard_files) {
        const std::string where = f.string();
        Manifest m = read_manifest(f);
        if (!m.shard.active())
            fail_usage(where + ": is not a shard manifest (written without --shard); merge only shard manifests");
        const int index = m.shard.index, n = m.shard.count;
        if (!merged)
            merged = m;
        else
            check_same_batch(m, where, *merged, first);
        if (const auto [it, fresh] = indexes.emplace(index, where); !fresh)
            fail_usage(where + ": shard " + std::to_string(index) + "/" + std::to_string(n) + " is given twice (also " +
                       it->second + ")");
        for (auto& e : m.meshes) {
            if (auto it = seen.find(e.name); it != seen.end())
                fail_usage(where + ": mesh '" + e.name + "' is also in " + it->second +
                           " (shards of batches with other mesh lists?)");
            seen[e.name] = where;
            shard_of[e.name] = index;
            meshes.push_back(std::move(e));
        }
        recorded.emplace_back(where, m.names_hash);
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
    // Every mesh where its shard would take it from the merged list (select_shard): shards of
    // one batch agree; shards given other mesh lists of the same length do not.
    for (std::size_t p = 0; p < meshes.size(); ++p) {
        const int want = static_cast<int>(p % static_cast<std::size_t>(count)) + 1;
        if (shard_of[meshes[p].name] != want)
            fail_usage(seen[meshes[p].name] + ": mesh '" + meshes[p].name + "' is in shard " +
                       std::to_string(shard_of[meshes[p].name]) + ", but shard " + std::to_string(want) + "/" +
                       std::to_string(count) + " of the merged list (the shards were given different mesh lists)");
    }
    std::vector<MeshJob> names;
    for (const auto& e : meshes) names.push_back({e.name, {}, {}, {}});
    const std::string all_names = names_hash(names);
    for (const auto& [where, hash] : recorded)
        if (!hash.empty() && hash != all_names)
            fail_usage(where + ": its batch had other mesh names than the merged shards hold (names_hash " + hash +
                       " vs " + all_names + "); give every task the same mesh list");
    merged->shard = {};
    merged->names_hash.clear();
    merged->merged_from = sources;
    merged->meshes = std::move(meshes);
    summarize(*merged);
    prepare_outdir(outdir);
    const OutdirLock lock(outdir / "manifest.json");
    write_manifest(outdir / "manifest.json", *merged);
    return *merged;
}

std::vector<int> shards_with_failures(const Manifest& merged) {
    std::set<int> shards;
    if (!merged.merged_from || merged.merged_from->empty()) return {};
    const std::size_t n = merged.merged_from->size();
    for (std::size_t p = 0; p < merged.meshes.size(); ++p)
        if (merged.meshes[p].status == MeshStatus::failed) shards.insert(static_cast<int>(p % n) + 1);
    return {shards.begin(), shards.end()};
}

}  // namespace hp::pipeline
