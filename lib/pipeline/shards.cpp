// Mesh names, shards (given, or from a job array's environment) and manifest paths (batch.hpp).
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "core/error.hpp"
#include "core/hash.hpp"
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
            jobs.push_back({name, m, {}, {}});
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

std::string names_hash(const std::vector<MeshJob>& all) {
    std::string names;
    for (const auto& j : all) names += j.name + '\n';
    return hex64(hash64(names));
}

namespace {

// A variable that must hold a whole number >= 0; nullopt when it is not set.
std::optional<long> env_number(const Environment& env, const char* name, const std::string& option) {
    const char* v = env(name);
    if (!v) return std::nullopt;
    const std::string text(v);
    std::size_t used = 0;
    long n = -1;
    try {
        n = std::stol(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (text.empty() || used != text.size() || n < 0 || text[0] == '+' || text[0] == '-')
        fail_usage(option + ": " + name + " is '" + text + "', not a whole number (is the job's environment intact?)");
    return n;
}

long env_required(const Environment& env, const char* name, const std::string& option, const std::string& hint) {
    const auto n = env_number(env, name, option);
    if (!n) fail_usage(option + ": SLURM_ARRAY_TASK_ID is set but " + name + " is not" + hint);
    return *n;
}

ShardChoice slurm_shard(const Environment& env, const std::string& option, int given_count) {
    const long id = *env_number(env, "SLURM_ARRAY_TASK_ID", option);
    const std::string job = env("SLURM_ARRAY_JOB_ID") ? env("SLURM_ARRAY_JOB_ID") : "?";
    ShardChoice c;
    c.source = "Slurm array job " + job + ", task " + std::to_string(id);
    const std::string resubmit = "; give the count: --shard auto/N, where array task id I runs shard I of N";
    if (given_count > 0) {
        const std::string n = std::to_string(given_count);
        if (id < 1 || id > given_count)
            fail_usage(option + ": SLURM_ARRAY_TASK_ID is " + std::to_string(id) + ", not a shard number 1.." + n +
                       " (with auto/N the array's task ids are the shard numbers: sbatch --array=1-" + n + ")");
        if (const auto max = env_number(env, "SLURM_ARRAY_TASK_MAX", option); max && *max > given_count)
            fail_usage(option + ": the array goes up to task id " + std::to_string(*max) +
                       " (SLURM_ARRAY_TASK_MAX), beyond " + n + " shards (submit --array=1-" + n +
                       ", or give the array's size as N)");
        c.shard = {static_cast<int>(id), given_count};
        return c;
    }
    const long count = env_required(env, "SLURM_ARRAY_TASK_COUNT", option, " (Slurm older than 17.11?)" + resubmit);
    const long min = env_required(env, "SLURM_ARRAY_TASK_MIN", option, resubmit);
    const long max = env_required(env, "SLURM_ARRAY_TASK_MAX", option, resubmit);
    if (const auto step = env_number(env, "SLURM_ARRAY_TASK_STEP", option); step && *step != 1)
        fail_usage(option + ": the array's task ids go in steps of " + std::to_string(*step) +
                   " (SLURM_ARRAY_TASK_STEP); submit a range without a step (sbatch --array=1-N)" + resubmit);
    if (min > 1)
        fail_usage(option + ": the array's task ids start at " + std::to_string(min) +
                   " (SLURM_ARRAY_TASK_MIN): a part of an array (tasks submitted again?) cannot tell the shard count" +
                   resubmit);
    if (max - min + 1 != count)
        fail_usage(option + ": the array's " + std::to_string(count) + " task ids between " + std::to_string(min) +
                   " and " + std::to_string(max) + " are not a range (SLURM_ARRAY_TASK_COUNT); submit --array=1-N" +
                   resubmit);
    if (id < min || id > max)
        fail_usage(option + ": SLURM_ARRAY_TASK_ID " + std::to_string(id) + " is outside the array's ids " +
                   std::to_string(min) + ".." + std::to_string(max));
    if (count > 1000000) fail_usage(option + ": SLURM_ARRAY_TASK_COUNT is " + std::to_string(count) + ", too many shards");
    c.shard = {static_cast<int>(id - min + 1), static_cast<int>(count)};
    c.count_from_environment = true;
    return c;
}

}  // namespace

ShardChoice choose_shard(std::string_view text, const Environment& env) {
    const std::string t(text);
    if (t != "auto" && t.rfind("auto/", 0) != 0) return {parse_shard(t), "--shard " + t, false};
    const std::string option = "--shard " + t;
    int given = 0;
    if (t != "auto") {
        const std::string n = t.substr(5);
        std::size_t used = 0;
        try {
            given = std::stoi(n, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (n.empty() || used != n.size() || given < 1 || !std::isdigit(static_cast<unsigned char>(n[0])))
            fail_usage(option + ": expected auto or auto/N with N >= 1 shards, e.g. --shard auto/16");
    }
    const bool slurm = env("SLURM_ARRAY_TASK_ID") != nullptr;
    const bool kubernetes = env("JOB_COMPLETION_INDEX") != nullptr;
    if (slurm && kubernetes)
        fail_usage(option + ": both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set, which scheduler runs this? "
                            "(give --shard I/N)");
    if (slurm) return slurm_shard(env, option, given);
    if (kubernetes) {
        const long index = *env_number(env, "JOB_COMPLETION_INDEX", option);
        if (given == 0)
            fail_usage(option + ": a Kubernetes indexed job (JOB_COMPLETION_INDEX) does not tell its size; give it: "
                                "--shard auto/N with N the job's completions");
        if (index >= given)
            fail_usage(option + ": JOB_COMPLETION_INDEX is " + std::to_string(index) + ", beyond the " +
                       std::to_string(given) + " completions given (indexes 0.." + std::to_string(given - 1) +
                       "); give the job's completions as N");
        return {{static_cast<int>(index + 1), given}, "Kubernetes indexed job, index " + std::to_string(index), false};
    }
    if (env("SLURM_JOB_ID"))
        fail_usage(option + ": this Slurm job is not an array task (SLURM_ARRAY_TASK_ID is not set); submit it with "
                            "sbatch --array=1-N, or give --shard I/N");
    fail_usage(option + ": neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes "
                        "indexed job) is set; run it as an array task, or give --shard I/N");
}

void check_shard_count(const fs::path& outdir, const Shard& shard) {
    std::error_code ec;
    const std::string own = "-of-" + std::to_string(shard.count) + ".json";
    for (fs::directory_iterator it(outdir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const auto of = name.rfind("-of-");
        if (name.rfind("manifest.shard-", 0) != 0 || of == std::string::npos || name.size() < 5 ||
            name.compare(name.size() - 5, 5, ".json") != 0 || name.compare(of, std::string::npos, own) == 0)
            continue;
        const std::string other = name.substr(of + 4, name.size() - 5 - of - 4);
        fail_usage("--shard auto: " + (outdir / name).string() + " is a shard of a batch in " + other +
                   " shards, this array has " + std::to_string(shard.count) +
                   " tasks; a task submitted again keeps the count: --shard auto/" + other +
                   " (or remove the old shard manifests if that batch is obsolete)");
    }
}

fs::path manifest_path(const fs::path& outdir, const Shard& shard) {
    if (!shard.active()) return outdir / "manifest.json";
    return outdir / ("manifest.shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count) + ".json");
}

}  // namespace hp::pipeline
