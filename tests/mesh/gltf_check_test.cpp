// The checks of a glTF 2.0 document before Assimp reads it (lib/mesh/gltf_check.cpp): small binary
// glTF files made by hand, by the specification, each damaged in one way that Assimp 5.2's glTF 2.0
// importer does not check (a copy past a heap buffer, a 64 GB allocation, a null pointer), refused
// with a line naming the object at fault; the undamaged files load with the triangles counted here.
#include "mesh/gltf_check.hpp"

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "mesh/mesh.hpp"

namespace {

using nlohmann::json;

std::string le32(std::uint32_t v) {
    std::string out(4, '\0');
    for (int i = 0; i < 4; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
    return out;
}

template <typename T>
std::string bytes_of(const std::vector<T>& values) {
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// A binary glTF 2.0 file: the 12-byte header, the JSON chunk padded with spaces and the BIN chunk
// padded with zeros to 4 bytes.
std::string glb(const json& doc, std::string bin) {
    std::string text = doc.dump();
    while (text.size() % 4 != 0) text += ' ';
    while (bin.size() % 4 != 0) bin += '\0';
    const std::string body = le32(static_cast<std::uint32_t>(text.size())) + "JSON" + text +
                             le32(static_cast<std::uint32_t>(bin.size())) + std::string("BIN\0", 4) + bin;
    return "glTF" + le32(2) + le32(static_cast<std::uint32_t>(12 + body.size())) + body;
}

// A unit square in z = 0 as four positions (48 bytes) and, from byte 48, the six unsigned short
// indices of its two triangles (12 bytes): views 0 and 1, accessors 0 (positions) and 1 (indices).
const std::vector<float> kSquare = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
const std::vector<std::uint16_t> kSquareIndices = {0, 1, 2, 0, 2, 3};

json square_document() {
    return json::parse(R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
        "meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":1}]}],
        "accessors":[{"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},
                     {"bufferView":1,"componentType":5123,"count":6,"type":"SCALAR"}],
        "bufferViews":[{"buffer":0,"byteLength":48},{"buffer":0,"byteOffset":48,"byteLength":12}],
        "buffers":[{"byteLength":60}]})");
}

std::string square_bin() { return bytes_of(kSquare) + bytes_of(kSquareIndices); }

std::filesystem::path write(const std::string& name, const std::string& content) {
    const auto dir = std::filesystem::temp_directory_path() / ("hp_gltf_check_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / name, std::ios::binary) << content;
    return dir / name;
}

// The message of the refusal of `doc` and `bin` by the check, empty when it passes.
std::string refusal(const json& doc, const std::string& bin) {
    std::string padded = bin;
    while (padded.size() % 4 != 0) padded += '\0';
    try {
        EXPECT_TRUE(hp::check_gltf2_document(doc.dump(), true, padded, true, "t.glb"));
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_EQ(std::string(e.what()).rfind("t.glb: glTF ", 0), 0u) << e.what();
        return e.what();
    }
    return {};
}

std::size_t triangles(const std::string& name, const std::string& file) {
    return hp::load_mesh(write(name, file)).mesh.triangles.size();
}

}  // namespace

// The undamaged square: two indexed triangles; as a strip and as a fan of its four vertices without
// indices, 4 - 2 = 2 triangles each (strip 0 1 2, 2 1 3 over the corners in the order 0 1 3 2).
TEST(GltfCheck, ValidFilesPassAndLoadTheirTriangles) {
    EXPECT_EQ(refusal(square_document(), square_bin()), "");
    EXPECT_EQ(triangles("square.glb", glb(square_document(), square_bin())), 2u);
    json strip = square_document();
    strip["meshes"][0]["primitives"][0] = json::parse(R"({"attributes":{"POSITION":0},"mode":5})");
    const std::vector<float> zigzag = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};
    EXPECT_EQ(triangles("strip.glb", glb(strip, bytes_of(zigzag) + bytes_of(kSquareIndices))), 2u);
    json fan = strip;
    fan["meshes"][0]["primitives"][0]["mode"] = 6;
    EXPECT_EQ(triangles("fan.glb", glb(fan, square_bin())), 2u);
    // Interleaved: the positions 24 bytes apart, each followed by 12 bytes of normal.
    json interleaved = square_document();
    interleaved["bufferViews"][0] = json::parse(R"({"buffer":0,"byteLength":96,"byteStride":24})");
    interleaved["bufferViews"][1]["byteOffset"] = 96;
    interleaved["accessors"].push_back(json::parse(R"({"bufferView":0,"byteOffset":12,"componentType":5126,"count":4,"type":"VEC3"})"));
    interleaved["meshes"][0]["primitives"][0]["attributes"]["NORMAL"] = 2;
    std::vector<float> vn;
    for (std::size_t v = 0; v < 4; ++v) vn.insert(vn.end(), {kSquare[3 * v], kSquare[3 * v + 1], kSquare[3 * v + 2], 0, 0, 1});
    EXPECT_EQ(triangles("interleaved.glb", glb(interleaved, bytes_of(vn) + bytes_of(kSquareIndices))), 2u);
}

// An accessor whose elements end past its buffer view: Assimp checks count × component size (not
// element size) and count × stride without the accessor's byteOffset, and copies past the BIN
// chunk's heap buffer when the view is the buffer's last bytes.
TEST(GltfCheck, AccessorPastItsViewIsRefused) {
    json doc = square_document();
    doc["accessors"][1]["byteOffset"] = 2;  // 2 + 6 × 2 = 14 bytes of a 12-byte view
    EXPECT_NE(refusal(doc, square_bin()).find("accessor 1 reads 6 elements of 2 bytes, 2 apart, from byte 2 of bufferView 1, which has 12"),
              std::string::npos);
    doc = square_document();
    doc["accessors"][0]["count"] = 5;  // 5 × 12 = 60 bytes of a 48-byte view
    EXPECT_NE(refusal(doc, square_bin()).find("accessor 0 reads 5 elements of 12 bytes"), std::string::npos);
    doc = square_document();
    doc["accessors"][0]["bufferView"] = 2;
    EXPECT_NE(refusal(doc, square_bin()).find("accessor 0 names bufferView 2 of 2"), std::string::npos);
    doc = square_document();
    doc["meshes"][0]["primitives"][0]["indices"] = 7;
    EXPECT_NE(refusal(doc, square_bin()).find("mesh 0 primitive 0 (indices) names accessor 7 of 2"), std::string::npos);
}

// A buffer view past its buffer: past the BIN chunk (60 bytes), and one whose byteOffset +
// byteLength wraps around 2^64 (Assimp's own check adds them in 64 bits).
TEST(GltfCheck, ViewPastItsBufferIsRefused) {
    json doc = square_document();
    doc["bufferViews"][1]["byteLength"] = 16;
    EXPECT_NE(refusal(doc, square_bin()).find("bufferView 1 (byteOffset 48, byteLength 16) ends past its buffer 0 of 60 bytes (the BIN chunk)"),
              std::string::npos);
    doc = square_document();
    doc["bufferViews"][1]["byteOffset"] = 18446744073709551612ull;  // 2^64 - 4, + 12 wraps to 8
    EXPECT_NE(refusal(doc, square_bin()).find("ends past its buffer 0"), std::string::npos);
    doc = square_document();
    doc["bufferViews"][0]["buffer"] = 1;
    EXPECT_NE(refusal(doc, square_bin()).find("bufferView 0 names no buffer of the 1 there are"), std::string::npos);
}

// A triangle strip without indices takes its face count as the vertex count minus 2, unsigned: one
// vertex is 2^32 - 1 faces, 64 GB in one new[]. A strip of 2^32 - 1 vertices is an accessor past
// its view. A fan of two indices writes a face into an array of none.
TEST(GltfCheck, StripsAndFansOfTooFewVerticesAreRefused) {
    json doc = square_document();
    doc["meshes"][0]["primitives"][0] = json::parse(R"({"attributes":{"POSITION":0},"mode":5})");
    doc["accessors"][0]["count"] = 1;
    EXPECT_NE(refusal(doc, square_bin()).find("mesh 0 primitive 0 is a triangle strip of 1 vertices (at least 3)"), std::string::npos);
    doc["meshes"][0]["primitives"][0] = json::parse(R"({"attributes":{},"mode":5})");  // no positions: 0 vertices
    EXPECT_NE(refusal(doc, square_bin()).find("triangle strip of 0 vertices"), std::string::npos);
    doc["accessors"][0]["count"] = 4294967295u;
    doc["meshes"][0]["primitives"][0] = json::parse(R"({"attributes":{"POSITION":0},"mode":5})");
    EXPECT_NE(refusal(doc, square_bin()).find("accessor 0 reads 4294967295 elements of 12 bytes"), std::string::npos);
    doc = square_document();
    doc["meshes"][0]["primitives"][0]["mode"] = 6;
    doc["accessors"][1]["count"] = 2;
    EXPECT_NE(refusal(doc, square_bin()).find("is a triangle fan of 2 indices (at least 3)"), std::string::npos);
}

// A binary glTF whose JSON has no asset.version (found by replaying the grown mesh_glb fuzz corpus:
// a byte of "version" damaged) is still glTF 2.0 to Assimp, which keeps its header's version: it
// is checked as one. Its strip without positions had asked for 64 GB.
TEST(GltfCheck, BinaryFilesWithoutAnAssetVersionAreCheckedAsVersion2) {
    json doc = square_document();
    doc["asset"].erase("version");
    doc["meshes"][0]["primitives"][0] = json::parse(R"({"attributes":{},"mode":5})");
    const std::filesystem::path file = write("no-version-strip.glb", glb(doc, square_bin()));
    try {
        (void)hp::load_mesh(file);
        ADD_FAILURE() << "a strip of no vertices was read";
    } catch (const hp::Error& e) {
        EXPECT_NE(std::string(e.what()).find("mesh 0 primitive 0 is a triangle strip of 0 vertices"), std::string::npos) << e.what();
    }
    doc = square_document();
    doc["asset"].erase("version");
    EXPECT_EQ(hp::load_mesh(write("no-version.glb", glb(doc, square_bin()))).mesh.triangles.size(), 2u);
    doc["asset"]["version"] = "1.0";  // another version: not checked here (Assimp refuses it)
    EXPECT_EQ(hp::check_gltf2_document(doc.dump(), true, square_bin(), false, "x.glb"), false);
}

// A line loop is refused only when Assimp would follow a null pointer: its first segment indexes a
// vertex that is not there. A loop of the square's corners passes (and is dropped as lines).
TEST(GltfCheck, OnlyLineLoopsThatCrashAreRefused) {
    json doc = square_document();
    doc["meshes"][0]["primitives"][0]["mode"] = 2;
    EXPECT_EQ(refusal(doc, square_bin()), "");
    std::vector<std::uint16_t> far = kSquareIndices;
    far[1] = 4;  // vertex 4 of 4
    EXPECT_NE(refusal(doc, bytes_of(kSquare) + bytes_of(far)).find("line loop whose first segment indexes vertex 4 of 4"),
              std::string::npos);
    doc["accessors"][1]["count"] = 1;
    EXPECT_NE(refusal(doc, square_bin()).find("is a line loop of 1 indices (at least 2)"), std::string::npos);
}

// A sparse accessor without the buffer view of its indices (Assimp follows a null pointer), or with
// values past theirs; without a buffer view, no more than 1 GiB of zeros.
TEST(GltfCheck, SparseAccessorsWithinTheirViews) {
    json doc = square_document();
    doc["accessors"][0]["sparse"] = json::parse(R"({"count":1,"indices":{"bufferView":1,"componentType":5123},
                                                   "values":{"bufferView":0,"byteOffset":36}})");
    EXPECT_EQ(refusal(doc, square_bin()), "");
    doc["accessors"][0]["sparse"]["values"]["byteOffset"] = 40;
    EXPECT_NE(refusal(doc, square_bin()).find("accessor 0's sparse values reads 1 elements of 12 bytes"), std::string::npos);
    doc["accessors"][0]["sparse"]["indices"].erase("bufferView");
    EXPECT_NE(refusal(doc, square_bin()).find("is sparse without the bufferView of its indices and of its values"), std::string::npos);
    doc = square_document();
    doc["accessors"][0] = json::parse(R"({"componentType":5126,"count":100000000,"type":"VEC3",
        "sparse":{"count":1,"indices":{"bufferView":1,"componentType":5123},"values":{"bufferView":0}}})");
    EXPECT_NE(refusal(doc, square_bin()).find("describes 1200000000 bytes without a bufferView"), std::string::npos);
}

// .gltf files: a base64 buffer holds its decoded length (the square's 60 bytes are 80 characters);
// a data: URI whose header Assimp cannot index is refused.
TEST(GltfCheck, DataUris) {
    const std::string bin = square_bin();
    static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string text;
    for (std::size_t i = 0; i < bin.size(); i += 3) {
        const unsigned v = static_cast<unsigned char>(bin[i]) << 16 | static_cast<unsigned char>(bin[i + 1]) << 8 |
                           static_cast<unsigned char>(bin[i + 2]);
        for (int k = 3; k >= 0; --k) text += digits[(v >> (6 * k)) & 63];
    }
    json doc = square_document();
    doc["buffers"][0]["uri"] = "data:application/octet-stream;base64," + text;
    EXPECT_EQ(triangles("square.gltf", doc.dump()), 2u);
    doc["meshes"][0]["primitives"][0]["mode"] = 2;  // a line loop, its indices read from the text
    EXPECT_NO_THROW(hp::check_gltf2_document(doc.dump(), false, {}, true, "t.gltf"));
    doc["bufferViews"][1]["byteLength"] = 13;
    EXPECT_THROW(hp::check_gltf2_document(doc.dump(), false, {}, true, "t.gltf"), hp::Error);
    doc = square_document();
    doc["buffers"][0]["uri"] = "data:" + std::string(130, 'a') + ";base64," + text;
    try {
        hp::check_gltf2_document(doc.dump(), false, {}, true, "t.gltf");
        ADD_FAILURE() << "a data: URI header of 143 bytes passed";
    } catch (const hp::Error& e) {
        EXPECT_NE(std::string(e.what()).find("buffer 0 has a data: URI whose header (before its ',') is 142 bytes long"),
                  std::string::npos)
            << e.what();
    }
}

// The rest of what Assimp trusts: a node hierarchy of disjoint trees no deeper than 1024 levels
// (converted once per path, recursively), animation samplers with a value per key time, a skin's
// inverse bind matrices, morph targets without an attribute index, keys once per object.
TEST(GltfCheck, HierarchyAnimationsSkinsTargetsAndKeys) {
    json doc = square_document();
    doc["nodes"] = json::parse(R"([{"children":[2]},{"children":[2]},{"mesh":0}])");
    doc["scenes"][0]["nodes"] = json::array({0, 1});
    EXPECT_NE(refusal(doc, square_bin()).find("node 2 is a child of node 0 and of node 1 (a node has one parent)"), std::string::npos);
    doc["nodes"] = json::array();
    for (int n = 0; n < 1025; ++n) doc["nodes"].push_back(n < 1024 ? json{{"children", {n + 1}}} : json{{"mesh", 0}});
    doc["scenes"][0]["nodes"] = json::array({0});
    EXPECT_NE(refusal(doc, square_bin()).find("node 1024 is 1025 levels deep (at most 1024)"), std::string::npos);
    doc["nodes"].erase(1024);
    doc["nodes"][1023] = json{{"mesh", 0}};
    EXPECT_EQ(refusal(doc, square_bin()), "");

    doc = square_document();  // the six indices as key times of four values
    doc["animations"] = json::parse(R"([{"channels":[{"sampler":0,"target":{"node":0,"path":"translation"}}],
                                         "samplers":[{"input":1,"output":0}]}])");
    doc["accessors"][1]["componentType"] = 5126;
    doc["accessors"][1]["count"] = 3;
    EXPECT_EQ(refusal(doc, square_bin()), "");
    doc["animations"][0]["samplers"][0]["interpolation"] = "CUBICSPLINE";
    EXPECT_NE(refusal(doc, square_bin()).find("animation 0 sampler 0 has 3 key times and 4 values (3 per key at least)"),
              std::string::npos);

    doc = square_document();
    doc["nodes"][0]["skin"] = 0;
    doc["skins"] = json::parse(R"([{"joints":[0]}])");
    EXPECT_NE(refusal(doc, square_bin()).find("skin 0 of node 0 has no inverseBindMatrices"), std::string::npos);

    doc = square_document();
    doc["meshes"][0]["primitives"][0]["targets"] = json::parse(R"([{"POSITION":0},{"POSITION_1":0}])");
    EXPECT_NE(refusal(doc, square_bin()).find("target 1 has the attribute POSITION_1 (morph targets have POSITION only)"),
              std::string::npos);

    std::string twice = square_document().dump();
    twice.replace(twice.find("\"count\":4"), 9, "\"count\":4,\"count\":400");
    EXPECT_THROW(hp::check_gltf2_document(twice, true, square_bin(), true, "t.glb"), hp::Error);
    EXPECT_THROW(hp::check_gltf2_document(std::string(600, '[') + std::string(600, ']'), true, {}, true, "t.glb"), hp::Error);
}
