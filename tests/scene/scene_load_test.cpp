// The scene's load: each geometry once however many instances it has, on all threads with the
// same result as alone, scene.json's file hashes (XXH3 from version 2, FNV of version 1), and the
// prepared samplers mapped in place of the fields (the same contacts; changed, foreign or missing
// files refused).
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <tbb/global_control.h>

#include "core/error.hpp"
#include "core/file_hash.hpp"
#include "pipeline/assembly_run.hpp"
#include "query/static_field.hpp"
#include "scene/scene_file.hpp"
#include "scene/scene_query.hpp"
#include "scene_fixture.hpp"

namespace fs = std::filesystem;
using hp::scene::SceneQuery;

namespace {

SceneQuery load(const hp_test::SceneFiles& f) { return SceneQuery(f.scene_path, {.part = "tool", .tree_file = {}}, {}, 1); }

std::string load_error(const hp_test::SceneFiles& f) {
    try {
        load(f);
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        return e.what();
    }
    return "";
}

// Every sample of two fields, compared bit for bit.
void expect_same_samples(const hp::DistanceSampler& a, const hp::DistanceSampler& b) {
    ASSERT_EQ(a.grid().dims, b.grid().dims);
    std::size_t differ = 0;
    for (int k = 0; k < a.grid().dims[2]; ++k)
        for (int j = 0; j < a.grid().dims[1]; ++j)
            for (int i = 0; i < a.grid().dims[0]; ++i) differ += a.sample(i, j, k) != b.sample(i, j, k);
    EXPECT_EQ(differ, 0u);
}

}  // namespace

TEST(SceneLoad, ManyInstancesHoldWhatTheirFewGeometriesPlacedOnceHold) {
    const hp_test::SceneFiles many("load_many", 6, 6);  // 216 balls and 216 boxes of two geometries
    const hp_test::SceneFiles few("load_few", 1, 1);    // one ball, one box
    const SceneQuery a = load(many), b = load(few);
    EXPECT_EQ(a.static_parts().size(), 432u);
    EXPECT_EQ(b.static_parts().size(), 2u);
    EXPECT_EQ(a.geometries_loaded(), 2u);
    EXPECT_EQ(b.geometries_loaded(), 2u);
    EXPECT_EQ(a.memory_bytes(), b.memory_bytes());
    // Each field loaded alone gives the memory too: nothing per instance.
    const hp::StaticField ball = hp::load_static_field(many.dir / "g0" / "distance.vdb");
    const hp::StaticField box = hp::load_static_field(many.dir / "g1" / "distance.vdb");
    EXPECT_EQ(a.memory_bytes(), ball.field.memory_bytes() + box.field.memory_bytes());
    // Every instance reads its geometry's one field (the same object), equal to the file read alone.
    for (std::uint32_t p : a.static_parts()) {
        const std::size_t first = many.scene.parts[p].geometry == 0 ? 0 : 216;
        EXPECT_EQ(&a.field(p), &a.field(a.static_parts()[first])) << p;
    }
    expect_same_samples(a.field(a.static_parts()[0]).field, ball.field);
    expect_same_samples(a.field(a.static_parts()[216]).field, box.field);
}

TEST(SceneLoad, OnOneThreadOrManyTheSameFieldsAndTheFirstErrorInGeometryOrder) {
    const hp_test::SceneFiles f("load_threads", 2, 2);
    const SceneQuery many_threads = load(f);
    {
        const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        const SceneQuery one_thread = load(f);
        for (std::uint32_t p : {many_threads.static_parts().front(), many_threads.static_parts().back()})
            expect_same_samples(one_thread.field(p).field, many_threads.field(p).field);
        EXPECT_EQ(one_thread.memory_bytes(), many_threads.memory_bytes());
    }
    // Both static geometries' files damaged: the message names the first geometry's part and file.
    for (const char* g : {"g0", "g1"}) std::ofstream(f.dir / g / "distance.vdb", std::ios::binary | std::ios::app) << 'x';
    for (int run = 0; run < 5; ++run) {
        const std::string what = load_error(f);
        EXPECT_NE(what.find("part 'ball/000'"), std::string::npos) << what;
        EXPECT_NE(what.find("g0/distance.vdb"), std::string::npos) << what;
        EXPECT_EQ(what.find("g1/"), std::string::npos) << what;
    }
}

TEST(SceneLoad, ScenesRecordXxh3HashesAndStillVerifyVersionOneFnvHashes) {
    hp_test::SceneFiles f("load_hash", 1, 1);
    // The fixture records FNV hashes, as version 1 did: they verify.
    EXPECT_EQ(f.scene.geometries[0].files.at("distance").hash, hp::hash_file(f.dir / "g0" / "distance.vdb"));
    EXPECT_NO_THROW(load(f));
    hp::scene::hash_scene_files(f.scene_path, f.scene);
    for (const auto& g : f.scene.geometries)
        for (const auto& [kind, ref] : g.files) {
            EXPECT_EQ(ref.hash, hp::content_hash(f.dir / ref.file)) << ref.file;
            EXPECT_EQ(ref.hash.rfind("xxh3:", 0), 0u) << ref.hash;
            EXPECT_EQ(ref.bytes, fs::file_size(f.dir / ref.file));
        }
    hp::scene::write_scene(f.scene_path, f.scene);
    std::ifstream in(f.scene_path);
    const nlohmann::json j = nlohmann::json::parse(in);
    EXPECT_EQ(j.at("format_version"), hp::scene::kSceneVersion);
    EXPECT_EQ(hp::scene::kSceneVersion, 2);
    EXPECT_NO_THROW(load(f));
    // One byte changed in place (same size): the XXH3 hash refuses it, naming the part and the file.
    {
        std::fstream io(f.dir / "g1" / "distance.vdb", std::ios::binary | std::ios::in | std::ios::out);
        io.seekg(100);
        const char c = static_cast<char>(io.get());
        io.seekp(100);
        io.put(static_cast<char>(c ^ 0x5a));
    }
    const std::string what = load_error(f);
    EXPECT_NE(what.find("part 'box/000'"), std::string::npos) << what;
    EXPECT_NE(what.find("changed since the scene was prepared"), std::string::npos) << what;
}

namespace {

// A copy of the fixture's scene.json without its prepared samplers (the fields are read instead).
fs::path without_samplers(const hp_test::SceneFiles& f) {
    hp::scene::Scene plain = f.scene;
    for (auto& g : plain.geometries) g.files.erase("sampler");
    const fs::path path = f.dir / "scene-fields.json";
    hp::scene::write_scene(path, plain);
    return path;
}

}  // namespace

TEST(SceneLoad, PreparedSamplersGiveTheFieldsContactsAndRefuseAChangedOrForeignFile) {
    hp_test::SceneFiles f("load_sampler", 2, 2);
    hp::scene::hash_scene_files(f.scene_path, f.scene);
    hp::pipeline::write_samplers(f.scene_path, f.scene);
    hp::scene::write_scene(f.scene_path, f.scene);
    for (const char* g : {"g0", "g1"}) ASSERT_TRUE(fs::is_regular_file(f.dir / g / "distance.hsmp")) << g;
    EXPECT_EQ(f.scene.geometries[0].files.at("sampler").file, "g0/distance.hsmp");
    EXPECT_EQ(f.scene.geometries[0].files.at("sampler").hash, hp::content_hash(f.dir / "g0" / "distance.hsmp"));
    const fs::path plain_path = without_samplers(f);

    // The same contacts, forces and torques in every frame, and the same samples.
    const SceneQuery mapped = load(f);
    const SceneQuery decoded(plain_path, {.part = "tool", .tree_file = {}}, {}, 1);
    ASSERT_EQ(mapped.static_parts(), decoded.static_parts());
    EXPECT_NE(mapped.field_file(mapped.static_parts()[0]).extension(), decoded.field_file(decoded.static_parts()[0]).extension());
    for (std::uint32_t p : {mapped.static_parts().front(), mapped.static_parts().back()})
        expect_same_samples(mapped.field(p).field, decoded.field(p).field);
    EXPECT_EQ(mapped.field(mapped.static_parts()[0]).kind, "distance");
    SceneQuery a = load(f);
    SceneQuery b(plain_path, {.part = "tool", .tree_file = {}}, {}, 1);
    std::size_t contacts = 0;
    for (const hp::Pose& pose : f.poses(300, 5)) {
        const hp::scene::FrameResult& fa = a.query(pose);
        const hp::scene::FrameResult& fb = b.query(pose);
        hp_test::expect_same_frame(fa, fb);
        contacts += fa.contacts.size();
    }
    EXPECT_GT(contacts, 100u);

    // Written again (--resume): a sampler that records the same field is kept, byte for byte.
    const auto before = fs::last_write_time(f.dir / "g0" / "distance.hsmp");
    hp::pipeline::write_samplers(f.scene_path, f.scene);
    EXPECT_EQ(fs::last_write_time(f.dir / "g0" / "distance.hsmp"), before);

    // One byte changed in place: refused as changed, naming the part and the file.
    {
        std::fstream io(f.dir / "g1" / "distance.hsmp", std::ios::binary | std::ios::in | std::ios::out);
        io.seekg(5000);
        const char c = static_cast<char>(io.get());
        io.seekp(5000);
        io.put(static_cast<char>(c ^ 0x10));
    }
    std::string what = load_error(f);
    EXPECT_NE(what.find("part 'box/000'"), std::string::npos) << what;
    EXPECT_NE(what.find("g1/distance.hsmp: changed since the scene was prepared"), std::string::npos) << what;
    // Made again, then g1's record names g0's sampler (valid file, its own hash): made from another field.
    hp::pipeline::write_samplers(f.scene_path, f.scene);
    EXPECT_NO_THROW(load(f));
    f.scene.geometries[1].files["sampler"] = f.scene.geometries[0].files.at("sampler");
    hp::scene::write_scene(f.scene_path, f.scene);
    what = load_error(f);
    EXPECT_NE(what.find("part 'box/000'"), std::string::npos) << what;
    EXPECT_NE(what.find("made from another distance than g1/distance.vdb"), std::string::npos) << what;
    // Missing: refused as missing; the field whose sampler is read is checked for its size.
    f.scene.geometries[1].files["sampler"].file = "g1/none.hsmp";
    hp::scene::write_scene(f.scene_path, f.scene);
    what = load_error(f);
    EXPECT_NE(what.find("g1/none.hsmp: missing"), std::string::npos) << what;
    hp::pipeline::write_samplers(f.scene_path, f.scene);
    hp::scene::write_scene(f.scene_path, f.scene);
    std::ofstream(f.dir / "g0" / "distance.vdb", std::ios::binary | std::ios::app) << 'x';
    what = load_error(f);
    EXPECT_NE(what.find("g0/distance.vdb: changed since the scene was prepared"), std::string::npos) << what;
}
