// Mesh names, shards and manifest paths (batch.hpp).
#include <algorithm>
#include <map>
#include <stdexcept>

#include "core/error.hpp"
#include "pipeline/batch.hpp"

namespace hp::pipeline {

namespace fs = std::filesystem;

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

}  // namespace hp::pipeline
