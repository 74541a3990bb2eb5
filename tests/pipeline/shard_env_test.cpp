// --shard auto and auto/N: the shard from a Slurm array task's or a Kubernetes indexed job's
// environment, the errors for a missing or inconsistent one; --log's file names; what --merge
// says when shards come from different pipelines or mesh lists.
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "pipeline/batch.hpp"
#include "pipeline/task_log.hpp"

namespace {

using namespace hp::pipeline;
using hp::Error;
using nlohmann::json;
namespace fs = std::filesystem;

using Env = std::map<std::string, std::string>;

// The Slurm variables of task `id` of `sbatch --array=min-max` (step 1).
Env slurm(long id, long min, long max) {
    return {{"SLURM_JOB_ID", "77"},
            {"SLURM_ARRAY_JOB_ID", "70"},
            {"SLURM_ARRAY_TASK_ID", std::to_string(id)},
            {"SLURM_ARRAY_TASK_MIN", std::to_string(min)},
            {"SLURM_ARRAY_TASK_MAX", std::to_string(max)},
            {"SLURM_ARRAY_TASK_COUNT", std::to_string(max - min + 1)},
            {"SLURM_ARRAY_TASK_STEP", "1"}};
}

ShardChoice choose(const std::string& text, const Env& env) {
    return choose_shard(text, [&env](const char* name) -> const char* {
        const auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    });
}

// The usage error of choose(), or a failure when it accepts.
std::string refusal(const std::string& text, const Env& env) {
    try {
        const ShardChoice c = choose(text, env);
        ADD_FAILURE() << text << " accepted as " << c.shard.index << "/" << c.shard.count;
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::usage) << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
        return e.what();
    }
    return {};
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(ShardAuto, SlurmArraysFromZeroOrOne) {
    // --array=1-4: task 3 is shard 3 of 4; --array=0-3: task 2 is shard 3 of 4.
    for (const auto& [env, index] : {std::pair{slurm(3, 1, 4), 3}, std::pair{slurm(2, 0, 3), 3},
                                     std::pair{slurm(0, 0, 3), 1}, std::pair{slurm(4, 1, 4), 4}}) {
        const ShardChoice c = choose("auto", env);
        EXPECT_EQ(c.shard.index, index);
        EXPECT_EQ(c.shard.count, 4);
        EXPECT_TRUE(c.count_from_environment);
        EXPECT_HAS(c.source, "Slurm array job 70, task");
    }
    // A one-task array is one shard.
    const ShardChoice one = choose("auto", slurm(1, 1, 1));
    EXPECT_EQ(one.shard.index, 1);
    EXPECT_EQ(one.shard.count, 1);
}

TEST(ShardAuto, SlurmWithTheCountGivenTheTaskIdIsTheShard) {
    // The whole array, and task 3 submitted again on its own (--array=3: min = max = 3, count 1).
    for (const Env& env : {slurm(3, 1, 4), slurm(3, 3, 3), slurm(3, 2, 3)}) {
        const ShardChoice c = choose("auto/4", env);
        EXPECT_EQ(c.shard.index, 3);
        EXPECT_EQ(c.shard.count, 4);
        EXPECT_FALSE(c.count_from_environment);
    }
    EXPECT_HAS(refusal("auto/4", slurm(0, 0, 3)), "SLURM_ARRAY_TASK_ID is 0, not a shard number 1..4");
    EXPECT_HAS(refusal("auto/4", slurm(5, 1, 5)), "SLURM_ARRAY_TASK_ID is 5, not a shard number 1..4");
    EXPECT_HAS(refusal("auto/4", slurm(2, 1, 8)), "goes up to task id 8 (SLURM_ARRAY_TASK_MAX), beyond 4 shards");
}

TEST(ShardAuto, SlurmArraysItCannotMapAreRefused) {
    // Part of an array submitted again without the count: ids from 3 on.
    EXPECT_HAS(refusal("auto", slurm(3, 3, 3)), "start at 3 (SLURM_ARRAY_TASK_MIN)");
    EXPECT_HAS(refusal("auto", slurm(3, 3, 3)), "--shard auto/N");
    Env stepped = slurm(3, 1, 7);  // --array=1-7:2: ids 1, 3, 5, 7
    stepped["SLURM_ARRAY_TASK_STEP"] = "2";
    stepped["SLURM_ARRAY_TASK_COUNT"] = "4";
    EXPECT_HAS(refusal("auto", stepped), "steps of 2 (SLURM_ARRAY_TASK_STEP)");
    Env listed = slurm(4, 1, 8);  // --array=1,4,8
    listed["SLURM_ARRAY_TASK_COUNT"] = "3";
    listed.erase("SLURM_ARRAY_TASK_STEP");
    EXPECT_HAS(refusal("auto", listed), "the array's 3 task ids between 1 and 8 are not a range");
    Env no_count = slurm(1, 1, 2);
    no_count.erase("SLURM_ARRAY_TASK_COUNT");
    EXPECT_HAS(refusal("auto", no_count), "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not");
    Env garbled = slurm(1, 1, 2);
    garbled["SLURM_ARRAY_TASK_ID"] = "1x";
    EXPECT_HAS(refusal("auto", garbled), "SLURM_ARRAY_TASK_ID is '1x', not a whole number");
    garbled["SLURM_ARRAY_TASK_ID"] = "-1";
    EXPECT_HAS(refusal("auto/2", garbled), "SLURM_ARRAY_TASK_ID is '-1', not a whole number");
    Env outside = slurm(9, 1, 4);
    EXPECT_HAS(refusal("auto", outside), "SLURM_ARRAY_TASK_ID 9 is outside the array's ids 1..4");
}

TEST(ShardAuto, KubernetesIndexedJobsNeedTheCount) {
    const Env k8s = {{"JOB_COMPLETION_INDEX", "0"}};
    const ShardChoice c = choose("auto/3", k8s);
    EXPECT_EQ(c.shard.index, 1);
    EXPECT_EQ(c.shard.count, 3);
    EXPECT_HAS(c.source, "Kubernetes indexed job, index 0");
    EXPECT_EQ(choose("auto/3", {{"JOB_COMPLETION_INDEX", "2"}}).shard.index, 3);
    EXPECT_HAS(refusal("auto", k8s), "does not tell its size; give it: --shard auto/N");
    EXPECT_HAS(refusal("auto/3", {{"JOB_COMPLETION_INDEX", "3"}}), "JOB_COMPLETION_INDEX is 3, beyond the 3 completions");
}

TEST(ShardAuto, MissingOrAmbiguousEnvironment) {
    EXPECT_HAS(refusal("auto", {}), "neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX");
    EXPECT_HAS(refusal("auto/4", {{"SLURM_JOB_ID", "5"}}), "this Slurm job is not an array task");
    Env both = slurm(1, 1, 2);
    both["JOB_COMPLETION_INDEX"] = "0";
    EXPECT_HAS(refusal("auto", both), "both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set");
    for (const char* bad : {"auto/", "auto/0", "auto/x", "auto/-2", "auto/2/3", "automatic"})
        EXPECT_HAS(refusal(bad, slurm(1, 1, 2)), std::string("--shard ") + bad);
    // I/N needs no environment.
    EXPECT_EQ(choose("2/5", {}).shard.index, 2);
}

TEST(ShardAuto, NamesHashDependsOnNamesAndOrderOnly) {
    const auto a = plan_meshes({"x/peg.stl", "y/gear.obj"});
    const auto b = plan_meshes({"z/gear.obj", "w/peg.stl"});
    const auto c = plan_meshes({"z/gear.obj", "w/cup.stl"});
    EXPECT_EQ(names_hash(a), names_hash(b));
    EXPECT_NE(names_hash(a), names_hash(c));
    EXPECT_EQ(names_hash(a).size(), 16u);
}

class ShardDir : public ::testing::Test {
protected:
    fs::path dir = fs::temp_directory_path() /
                   ("hp_shard_env_test_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    void SetUp() override {
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }

    // A shard manifest of a batch of meshes a..e in `count` shards, with one mesh per name given.
    fs::path shard(int index, int count, std::vector<std::string> names, const std::function<void(Manifest&)>& edit = {}) {
        Manifest m;
        m.tool_version = "1";
        m.pipeline.name = "p";
        m.pipeline.stages.resize(1);
        m.pipeline.stages[0].stage = "voxelize";
        m.pipeline.stages[0].given = {{"resolution", 32}};
        m.params_hash = "abc";
        m.shard = {index, count};
        std::vector<MeshJob> all;
        for (const char* n : {"a", "b", "c", "d", "e"}) all.push_back({n, {}, {}, {}});
        m.names_hash = names_hash(all);
        m.batch_meshes = all.size();
        m.peak_rss_scope = "stage";
        for (const auto& n : names) {
            MeshEntry& e = m.meshes.emplace_back();
            e.name = n;
            e.mesh = n + ".stl";
            e.params_hash = m.params_hash;
            e.status = n == "d" ? MeshStatus::failed : MeshStatus::ok;
        }
        if (edit) edit(m);
        const fs::path f = dir / ("manifest.shard-" + std::to_string(index) + "-of-" + std::to_string(count) + ".json");
        std::ofstream(f) << json(m).dump();
        return f;
    }
    std::string merge_refusal(const std::vector<fs::path>& files) {
        try {
            merge_manifests(files, dir);
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::usage) << e.what();
            return e.what();
        }
        ADD_FAILURE() << "merge accepted";
        return {};
    }
};

TEST_F(ShardDir, MergeNamesTheShardAndWhatDiffers) {
    // Shards of 2 of the batch a..e: 1 takes a, c, e; 2 takes b, d.
    const fs::path one = shard(1, 2, {"a", "c", "e"});
    std::string e = merge_refusal(
        {one, shard(2, 2, {"b", "d"}, [](Manifest& m) { m.pipeline.stages[0].given["resolution"] = 64; })});
    EXPECT_HAS(e, "manifest.shard-2-of-2.json: made with another pipeline: stage 'voxelize' key 'resolution': 64 vs 32");
    e = merge_refusal({one, shard(2, 2, {"b", "d"}, [](Manifest& m) { m.pipeline.name = "q"; })});
    EXPECT_HAS(e, "pipeline 'q' vs 'p'");
    e = merge_refusal({one, shard(2, 2, {"b", "d"}, [](Manifest& m) { m.pipeline.stages[0].stage = "distance"; })});
    EXPECT_HAS(e, "stages [distance] vs [voxelize]");
    e = merge_refusal({one, shard(2, 2, {"b", "d"}, [](Manifest& m) { m.tool_version = "2"; })});
    EXPECT_HAS(e, "manifest.shard-2-of-2.json: was made by haptic-pipeline 2");
    e = merge_refusal({one, shard(2, 2, {"b", "d"}, [](Manifest& m) { m.names_hash = "0000000000000001"; })});
    EXPECT_HAS(e, "manifest.shard-2-of-2.json: its batch had other mesh names than");
    // Same count, other names, no names_hash recorded (an earlier release): the positions tell.
    const auto unrecorded = [](Manifest& m) { m.names_hash.clear(); };
    EXPECT_NO_THROW(merge_manifests({shard(1, 2, {"a", "c", "e"}, unrecorded), shard(2, 2, {"d", "b"}, unrecorded)}, dir));
    fs::remove(dir / "manifest.json");
    e = merge_refusal({shard(1, 2, {"a", "b", "e"}, unrecorded), shard(2, 2, {"c", "d"}, unrecorded)});
    EXPECT_HAS(e, "mesh 'b' is in shard 1, but shard 2/2 of the merged list");
}

TEST_F(ShardDir, MergeTellsWhichShardsHaveFailures) {
    const Manifest m = merge_manifests({shard(2, 2, {"b", "d"}), shard(1, 2, {"a", "c", "e"})}, dir);
    EXPECT_EQ(m.summary.failed, 1u);
    EXPECT_TRUE(m.names_hash.empty());
    EXPECT_EQ(shards_with_failures(m), std::vector<int>{2});
    EXPECT_TRUE(shards_with_failures(Manifest{}).empty());
}

TEST_F(ShardDir, AutoRefusesAnOutdirOfAnotherCount) {
    shard(1, 4, {"a", "e"});
    EXPECT_NO_THROW(check_shard_count(dir, {2, 4}));
    try {
        check_shard_count(dir, {1, 1});
        ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
        EXPECT_HAS(std::string(e.what()), "manifest.shard-1-of-4.json is a shard of a batch in 4 shards, this array has 1");
        EXPECT_HAS(std::string(e.what()), "--shard auto/4");
    }
    EXPECT_NO_THROW(check_shard_count(dir / "absent", {1, 1}));
}

TEST_F(ShardDir, LogFileNamesAndLines) {
    EXPECT_EQ(log_path("logs/shard-%I-of-%N.log", {3, 8}), fs::path("logs/shard-3-of-8.log"));
    EXPECT_EQ(log_path("100%%.log", {}), fs::path("100%.log"));
    EXPECT_THROW(log_path("shard-%I.log", {}), Error);
    EXPECT_THROW(log_path("shard-%x.log", {1, 2}), Error);
    EXPECT_THROW(log_path("shard-%", {1, 2}), Error);
    const std::string pattern = (dir / "logs" / "s-%I.log").string();
    for (int run = 0; run < 2; ++run) {
        TaskLog log(pattern, {2, 3});
        MeshEntry e;
        e.name = "gear";
        e.status = MeshStatus::failed;
        e.exit_code = 3;
        e.error = "gear.obj: no triangles";
        log.mesh_finished(e);
        Manifest m;
        m.summary.meshes = 1;
        m.summary.failed = 1;
        log.end(m);
    }
    std::ifstream in(dir / "logs" / "s-2.log");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    ASSERT_EQ(lines.size(), 4u) << "appended, not overwritten";
    EXPECT_HAS(lines[0], "Z mesh gear: failed (exit code 3) after 0.00 s: gear.obj: no triangles");
    EXPECT_HAS(lines[3], "Z end: 1 meshes, 0 ok (0 resumed), 1 failed; exit code 1");
    EXPECT_EQ(lines[0][4], '-');
}

}  // namespace
