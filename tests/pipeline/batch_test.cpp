// Batch planning: mesh names, shards, manifest merging checks.
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "pipeline/batch.hpp"

namespace hp::pipeline {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(BatchPlan, NamesAreStemsSortedAndClashesUseFileNames) {
    auto jobs = plan_meshes({"b/peg.stl", "a/gear.obj", "c/peg.obj", "torus.off"});
    ASSERT_EQ(jobs.size(), 4u);
    EXPECT_EQ(jobs[0].name, "gear");
    EXPECT_EQ(jobs[1].name, "peg.obj");
    EXPECT_EQ(jobs[1].mesh, fs::path("c/peg.obj"));
    EXPECT_EQ(jobs[2].name, "peg.stl");
    EXPECT_EQ(jobs[3].name, "torus");
}

TEST(BatchPlan, SameFileNameTwiceIsAUsageError) {
    try {
        plan_meshes({"a/peg.stl", "b/peg.stl"});
        FAIL() << "accepted two meshes named peg.stl";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::usage);
        EXPECT_NE(std::string(e.what()).find("a/peg.stl"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("b/peg.stl"), std::string::npos) << e.what();
    }
}

TEST(BatchPlan, ShardsPartitionTheMeshes) {
    std::vector<fs::path> meshes;
    for (int i = 0; i < 11; ++i) meshes.push_back("m" + std::to_string(i) + ".stl");
    const auto all = plan_meshes(meshes);
    for (int n : {1, 2, 3, 11, 15}) {
        std::multiset<std::string> seen;
        std::size_t largest = 0, smallest = all.size();
        for (int i = 1; i <= n; ++i) {
            const auto part = select_shard(all, parse_shard(std::to_string(i) + "/" + std::to_string(n)));
            for (const auto& j : part) seen.insert(j.name);
            largest = std::max(largest, part.size());
            smallest = std::min(smallest, part.size());
        }
        EXPECT_EQ(seen.size(), all.size()) << n << " shards";
        for (const auto& j : all) EXPECT_EQ(seen.count(j.name), 1u) << j.name << " in " << n << " shards";
        EXPECT_LE(largest - smallest, 1u) << "unbalanced with " << n << " shards";
    }
    // The order the meshes are given in does not change a shard.
    std::vector<fs::path> reversed(meshes.rbegin(), meshes.rend());
    const auto a = select_shard(all, parse_shard("2/3"));
    const auto b = select_shard(plan_meshes(reversed), parse_shard("2/3"));
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].name, b[i].name);
}

TEST(BatchPlan, ShardSyntax) {
    Shard s = parse_shard("3/8");
    EXPECT_EQ(s.index, 3);
    EXPECT_EQ(s.count, 8);
    for (const char* bad : {"0/2", "3/2", "1/0", "2", "a/b", "1/2x", "/2", "-1/2"}) {
        EXPECT_THROW(parse_shard(bad), Error) << bad;
    }
    EXPECT_EQ(manifest_path("out", s), fs::path("out/manifest.shard-3-of-8.json"));
    EXPECT_EQ(manifest_path("out", Shard{}), fs::path("out/manifest.json"));
}

class MergeTest : public ::testing::Test {
protected:
    fs::path dir;
    void SetUp() override {
        dir = fs::temp_directory_path() / ("hp_merge_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                           "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }

    fs::path shard(int index, int count, std::vector<std::string> names, const std::string& params_hash = "abc",
                   std::size_t batch = 3) {
        Manifest m;
        m.tool_version = "x";
        m.pipeline.name = "t";
        m.params_hash = params_hash;
        m.shard = {index, count};
        m.batch_meshes = batch;
        m.peak_rss_scope = "stage";
        for (const auto& n : names) {
            MeshEntry& e = m.meshes.emplace_back();
            e.name = n;
            e.mesh = n + ".stl";
            e.params_hash = params_hash;
            e.status = MeshStatus::ok;
            e.seconds = 1.0;
        }
        const fs::path f = dir / ("s" + std::to_string(index) + ".json");
        std::ofstream(f) << json(m).dump();
        return f;
    }
    std::string merge_error(const std::vector<fs::path>& files) {
        try {
            merge_manifests(files, dir);
        } catch (const Error& e) {
            return e.what();
        }
        ADD_FAILURE() << "merge accepted";
        return {};
    }
};

TEST_F(MergeTest, CombinesCompleteShardsSortedByName) {
    const Manifest m = merge_manifests({shard(2, 2, {"b"}), shard(1, 2, {"c", "a"})}, dir);
    ASSERT_EQ(m.meshes.size(), 3u);
    EXPECT_EQ(m.meshes[0].name, "a");
    EXPECT_EQ(m.meshes[2].name, "c");
    EXPECT_FALSE(m.shard.active());
    EXPECT_EQ(m.summary.ok, 3u);
    EXPECT_EQ(m.merged_from, (std::vector<std::string>{"s2.json", "s1.json"}));
    EXPECT_TRUE(fs::exists(dir / "manifest.json"));
}

TEST_F(MergeTest, RefusesIncompleteOrMismatchedShards) {
    EXPECT_NE(merge_error({shard(1, 2, {"a", "c"})}).find("shard 2/2 is missing"), std::string::npos);
    EXPECT_NE(merge_error({shard(1, 2, {"a"}), shard(2, 2, {"a", "b"})}).find("mesh 'a' is also in"), std::string::npos);
    EXPECT_NE(merge_error({shard(1, 2, {"a"}), shard(2, 2, {"b"}, "other")}).find("other pipeline parameters"),
              std::string::npos);
    EXPECT_NE(merge_error({shard(1, 2, {"a"}), shard(2, 3, {"b"})}).find("others are of 2"), std::string::npos);
    EXPECT_NE(merge_error({shard(1, 2, {"a"}), shard(2, 2, {"b"})}).find("the batch had 3"), std::string::npos);
    const fs::path junk = dir / "junk.json";
    std::ofstream(junk) << "{\"hello\": 1}";
    EXPECT_NE(merge_error({junk}).find("not a manifest"), std::string::npos);
}

TEST_F(MergeTest, AShardWithAMissingKeyIsBadInputNamingFileAndKey) {
    const fs::path f = shard(1, 1, {"a"}, "abc", 1);
    std::ifstream in(f);
    json m = json::parse(in);
    in.close();
    m["meshes"][0].erase("params_hash");
    std::ofstream(f) << m.dump();
    try {
        merge_manifests({f}, dir);
        FAIL() << "merge accepted a manifest without meshes[0].params_hash";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find(f.string()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("'meshes[0].params_hash' is missing"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace hp::pipeline
