// The manifest's types: what to_json writes, reading it back, errors naming the key, and the
// schema table of docs/pipeline.md.
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "pipeline/manifest.hpp"

namespace hp::pipeline {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Every key that to_json can write is set: a merged manifest with an ok, a failed and a planned
// mesh. The free-form objects (a pipeline stage's given keys, the diagnostics, a stage's report)
// are left empty, so the keys seen are the manifest's own.
OutputRecord output(const std::string& stage, const std::string& file, std::optional<std::uint64_t> bytes = {},
                    std::optional<std::string> hash = {}, bool deterministic = true) {
    return {.stage = stage, .file = file, .bytes = bytes, .hash = hash, .deterministic = deterministic};
}

MeshEntry entry(const std::string& name, const std::string& mesh, MeshStatus status) {
    MeshEntry e;
    e.name = name;
    e.mesh = mesh;
    e.params_hash = "00000000000000aa";
    e.status = status;
    return e;
}

Manifest full_example() {
    Manifest m;
    m.tool_version = "1.2.3";
    m.pipeline.name = "demo";
    m.pipeline.description = "a test";
    m.pipeline.stages.resize(2);
    m.pipeline.stages[0].stage = "voxelize";
    m.pipeline.stages[1].stage = "query";
    m.pipeline_file = "pipelines/demo.json";
    m.params_hash = "00000000000000aa";
    m.shard = {2, 3};
    m.names_hash = "00000000000000ff";
    m.batch_meshes = 7;
    m.jobs = 2;
    m.peak_rss_scope = "process";
    m.summary = {.meshes = 3, .ok = 1, .failed = 1, .resumed = 1, .planned = 1, .output_bytes = 30, .seconds = 2.5};
    MeshEntry ok = entry("peg", "in/peg.stl", MeshStatus::ok);
    ok.input_hash = "00000000000000bb";
    ok.resumed = true;
    ok.diagnostics = json::object();
    ok.warnings = {"not watertight"};
    ok.outputs = {output("voxelize", "peg/voxelize.vdb", 10, "00000000000000cc"),
                  output("query", "peg/query.json", 20, "00000000000000dd", false)};
    ok.stages = {{.stage = "voxelize", .seconds = 0.25, .peak_rss_bytes = 4096, .report = json::object()}};
    ok.seconds = 0.5;
    ok.part = "@0";  // written only for an assembly's geometry
    MeshEntry failed = entry("broken", "in/broken.obj", MeshStatus::failed);
    failed.error = "in/broken.obj: no triangles";
    failed.exit_code = 3;
    MeshEntry planned = entry("gear", "in/gear.obj", MeshStatus::planned);
    planned.input_hash = "00000000000000ee";
    planned.outputs = {output("voxelize", "gear/voxelize.vdb")};
    m.meshes = {failed, planned, ok};
    m.merged_from = std::vector<std::string>{"manifest.shard-1-of-3.json"};
    return m;
}

// Key paths of a JSON value: "a", "a.b", "a[].b" (every array element, once).
void collect_keys(const json& j, const std::string& path, std::set<std::string>& out) {
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            const std::string p = path.empty() ? k : path + "." + k;
            out.insert(p);
            collect_keys(v, p, out);
        }
    } else if (j.is_array()) {
        for (const auto& v : j) collect_keys(v, path + "[]", out);
    }
}

TEST(Manifest, WritesTheKeysAndValuesOfTheFormat) {
    // Written out by hand from the format (docs/pipeline.md), not from the code.
    const json expected = json::parse(R"({
      "format": "hapticprep-manifest", "format_version": 1, "tool": "haptic-pipeline", "tool_version": "1.2.3",
      "pipeline": {"name": "demo", "description": "a test", "stages": [{"stage": "voxelize"}, {"stage": "query"}]},
      "pipeline_file": "pipelines/demo.json", "params_hash": "00000000000000aa", "shard": {"index": 2, "count": 3, "names_hash": "00000000000000ff"},
      "batch_meshes": 7, "jobs": 2, "peak_rss_scope": "process",
      "summary": {"meshes": 3, "ok": 1, "failed": 1, "resumed": 1, "planned": 1, "output_bytes": 30, "seconds": 2.5},
      "meshes": [
        {"name": "broken", "mesh": "in/broken.obj", "input_hash": null, "params_hash": "00000000000000aa",
         "status": "failed", "resumed": false, "error": "in/broken.obj: no triangles", "exit_code": 3,
         "diagnostics": null, "warnings": [], "outputs": [], "output_bytes": 0, "stages": [], "seconds": 0.0},
        {"name": "gear", "mesh": "in/gear.obj", "input_hash": "00000000000000ee", "params_hash": "00000000000000aa",
         "status": "planned", "resumed": false, "error": null, "exit_code": null, "diagnostics": null, "warnings": [],
         "outputs": [{"stage": "voxelize", "file": "gear/voxelize.vdb"}], "output_bytes": 0, "stages": [], "seconds": 0.0},
        {"name": "peg", "mesh": "in/peg.stl", "input_hash": "00000000000000bb", "params_hash": "00000000000000aa",
         "status": "ok", "resumed": true, "error": null, "exit_code": null, "diagnostics": {},
         "warnings": ["not watertight"],
         "outputs": [{"stage": "voxelize", "file": "peg/voxelize.vdb", "bytes": 10, "hash": "00000000000000cc"},
                     {"stage": "query", "file": "peg/query.json", "bytes": 20, "hash": "00000000000000dd",
                      "deterministic": false}],
         "output_bytes": 30,
         "stages": [{"stage": "voxelize", "seconds": 0.25, "peak_rss_bytes": 4096, "report": {}}],
         "seconds": 0.5, "part": "@0"}],
      "merged_from": ["manifest.shard-1-of-3.json"]})");
    EXPECT_EQ(json(full_example()).dump(2), expected.dump(2));
    Manifest unsharded = full_example();
    unsharded.shard = {};
    unsharded.merged_from.reset();
    const json j = unsharded;
    EXPECT_TRUE(j["shard"].is_null());
    EXPECT_FALSE(j.contains("merged_from"));
}

TEST(Manifest, ReadsBackWhatItWrites) {
    const json written = full_example();
    const Manifest back = written.get<Manifest>();
    EXPECT_EQ(json(back).dump(), written.dump());
    EXPECT_EQ(back.meshes[0].status, MeshStatus::failed);
    EXPECT_EQ(back.meshes[0].exit_code, 3);
    EXPECT_FALSE(back.meshes[1].outputs[0].bytes.has_value());
    EXPECT_FALSE(back.meshes[2].outputs[1].deterministic);
    EXPECT_EQ(back.shard.index, 2);
    // A stage's given keys come back as given.
    Manifest m = full_example();
    m.pipeline.stages[0].given = {{"resolution", 64}, {"fill", "auto"}};
    const json j = m;
    EXPECT_EQ(j["pipeline"]["stages"][0], json({{"stage", "voxelize"}, {"resolution", 64}, {"fill", "auto"}}));
    EXPECT_EQ(json(j.get<Manifest>()), j);
}

class ManifestFile : public ::testing::Test {
protected:
    fs::path file = fs::temp_directory_path() /
                    ("hp_manifest_test_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                     ".json");
    void TearDown() override { fs::remove(file); }

    // The error read_manifest gives for the full example changed by `edit`.
    std::string error_after(const std::function<void(json&)>& edit) {
        json j = full_example();
        edit(j);
        std::ofstream(file) << j.dump();
        try {
            read_manifest(file);
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), ExitCode::bad_input) << e.what();
            EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
            return e.what();
        }
        ADD_FAILURE() << "read_manifest accepted it";
        return {};
    }
};

TEST_F(ManifestFile, AMissingOrMistypedKeyIsNamedWithItsPath) {
    auto has = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };
    std::string e = error_after([](json& j) { j.erase("jobs"); });
    EXPECT_TRUE(has(e, "key 'jobs' is missing")) << e;
    e = error_after([](json& j) { j["meshes"][2]["outputs"][1]["bytes"] = "20"; });
    EXPECT_TRUE(has(e, "key 'meshes[2].outputs[1].bytes' must be an integer >= 0")) << e;
    e = error_after([](json& j) { j["meshes"][2]["outputs"][0].erase("hash"); });
    EXPECT_TRUE(has(e, "key 'meshes[2].outputs[0].hash' is missing")) << e;
    e = error_after([](json& j) { j["meshes"][0]["exit_code"] = 1.5; });
    EXPECT_TRUE(has(e, "key 'meshes[0].exit_code' must be an integer or null")) << e;
    e = error_after([](json& j) { j["meshes"][1]["status"] = "done"; });
    EXPECT_TRUE(has(e, "key 'meshes[1].status' must be \"ok\", \"failed\" or \"planned\"")) << e;
    e = error_after([](json& j) { j["shard"]["names_hash"] = 7; });
    EXPECT_TRUE(has(e, "key 'shard.names_hash' must be a string")) << e;
    e = error_after([](json& j) { j["shard"] = {{"index", 1}}; });
    EXPECT_TRUE(has(e, "key 'shard.count' is missing")) << e;
    e = error_after([](json& j) { j["shard"]["index"] = 4; });  // of 3
    EXPECT_TRUE(has(e, "key 'shard.index' must be between 1 and shard.count (3)")) << e;
    e = error_after([](json& j) { j["shard"]["index"] = 0; });
    EXPECT_TRUE(has(e, "key 'shard.index' must be between 1 and shard.count (3)")) << e;
    e = error_after([](json& j) { j["pipeline"]["stages"][1] = "query"; });
    EXPECT_TRUE(has(e, "key 'pipeline.stages[1]' must be an object")) << e;
    e = error_after([](json& j) { j["meshes"][0]["warnings"] = json::array({"a", 2}); });
    EXPECT_TRUE(has(e, "key 'meshes[0].warnings[1]' must be a string")) << e;
    e = error_after([](json& j) { j["format_version"] = 2; });
    EXPECT_TRUE(has(e, "newer")) << e;
    e = error_after([](json& j) { j = json::array(); });
    EXPECT_TRUE(has(e, "is not a manifest")) << e;
    e = error_after([](json& j) { j["format"] = 2; });  // (json::value threw its own type error)
    EXPECT_TRUE(has(e, "is not a manifest")) << e;
}

TEST_F(ManifestFile, WriteThenReadKeepsEveryValue) {
    write_manifest(file, full_example());
    EXPECT_EQ(json(read_manifest(file)), json(full_example()));
}

// The schema table in docs/pipeline.md lists exactly the keys to_json writes.
TEST(Manifest, DocumentedKeysAreTheKeysWritten) {
    std::ifstream in(fs::path(HP_SOURCE_DIR) / "docs" / "pipeline.md");
    ASSERT_TRUE(in) << "docs/pipeline.md";
    std::set<std::string> documented;
    bool in_section = false;
    // A key's row starts "| `key` |" (std::regex is avoided: GCC 12 warns falsely inside it
    // under the sanitizers).
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("## ", 0) == 0) in_section = line == "## The manifest";
        if (!in_section || line.rfind("| `", 0) != 0) continue;
        const std::size_t end = line.find('`', 3);
        if (end == std::string::npos || line.compare(end, 3, "` |") != 0 || end == 3) continue;
        const std::string key = line.substr(3, end - 3);
        EXPECT_TRUE(documented.insert(key).second) << key << " twice";
    }
    std::set<std::string> written;
    collect_keys(json(full_example()), "", written);
    EXPECT_EQ(documented, written);
}

}  // namespace
}  // namespace hp::pipeline
