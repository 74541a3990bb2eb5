#include "mesh/mesh.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace fs = std::filesystem;

namespace {

fs::path sample(const std::string& name) { return fs::path(HP_SOURCE_DIR) / "sample_meshes" / name; }

fs::path temp_file(const std::string& name, const std::string& content) {
    fs::path dir = fs::temp_directory_path() / ("hp_mesh_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
}

hp::ExitCode load_error(const fs::path& p, std::string* message = nullptr) {
    try {
        hp::load_mesh(p);
    } catch (const hp::Error& e) {
        if (message) *message = e.what();
        return e.code();
    }
    return hp::ExitCode::ok;
}

}  // namespace

TEST(MeshImport, SeamCubeWeldsIntoOneClosedSurface) {
    hp::LoadedMesh m = hp::load_mesh(sample("seam-cube.obj"));
    const auto& d = m.diagnostics;
    EXPECT_EQ(d.vertices, 8u);
    EXPECT_EQ(d.triangles, 12u);
    EXPECT_EQ(d.welded_vertices, 16u);  // 24 face corners onto 8 positions
    EXPECT_TRUE(d.watertight);
    EXPECT_EQ(d.boundary_edges, 0u);
    EXPECT_EQ(d.components, 1u);
    EXPECT_EQ(d.orientation, "outward");
    EXPECT_NEAR(d.signed_volume, 1.0, 1e-12);
    EXPECT_EQ(m.source_name, "seam-cube.obj");
    EXPECT_EQ(m.source_hash.size(), 16u);
}

TEST(MeshImport, StlWithLastBitSeamsIsWatertight) {
    const auto& d = hp::load_mesh(sample("lastbit-cylinder.stl")).diagnostics;
    EXPECT_TRUE(d.watertight);
    EXPECT_EQ(d.vertices, 48u);  // 24 around the bottom, 24 around the top
    EXPECT_GT(d.welded_vertices, 0u);
}

TEST(MeshImport, InvertedOpenAndMultiPartBoxes) {
    hp::MeshLoadOptions as_wound;  // import turns it outward unless told not to (orient_test.cpp)
    as_wound.repair_orientation = false;
    const auto inv = hp::load_mesh(sample("inverted-box.obj"), as_wound).diagnostics;
    EXPECT_TRUE(inv.watertight);
    EXPECT_EQ(inv.orientation, "inward");
    EXPECT_NEAR(inv.signed_volume, -1.0, 1e-12);

    const auto open = hp::load_mesh(sample("open-box.obj")).diagnostics;
    EXPECT_FALSE(open.watertight);
    EXPECT_EQ(open.boundary_edges, 4u);  // the rim of the missing top face
    EXPECT_EQ(open.triangles, 10u);

    const auto two = hp::load_mesh(sample("two-boxes.obj")).diagnostics;
    EXPECT_EQ(two.components, 2u);
    EXPECT_NEAR(two.signed_volume, 2.0, 1e-12);
    EXPECT_TRUE(two.watertight);
}

TEST(MeshImport, BlockWithHoleVolumeByHand) {
    const auto d = hp::load_mesh(sample("block-with-hole.stl")).diagnostics;
    EXPECT_TRUE(d.watertight);
    EXPECT_EQ(d.components, 1u);
    // 40 x 40 x 20 block minus a 32-gon prism of circumradius 6: area of the 32-gon is
    // 32/2 * 6^2 * sin(2 pi / 32). Coordinates were written as float32, hence the tolerance.
    double hole = 16 * 36 * std::sin(2 * M_PI / 32) * 20;
    EXPECT_NEAR(d.signed_volume, 40.0 * 40 * 20 - hole, 1e-2);
}

TEST(MeshImport, UnitsAndScale) {
    hp::MeshLoadOptions mm;
    mm.units = "mm";
    const auto d = hp::load_mesh(sample("peg.stl"), mm).diagnostics;
    EXPECT_NEAR(d.bbox.size().z, 0.030, 1e-9);  // 30 mm
    hp::MeshLoadOptions scaled;
    scaled.units = "in";
    scaled.scale = 2;
    const auto e = hp::load_mesh(sample("peg.stl"), scaled).diagnostics;
    EXPECT_NEAR(e.bbox.size().z, 30 * 0.0254 * 2, 1e-9);
}

TEST(MeshImport, NonManifoldAndDuplicatesFromASoup) {
    hp::TriMesh soup;
    soup.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, 0}};
    // Three triangles on the edge (0,1); one duplicate with the other winding; one degenerate.
    soup.triangles = {{0, 1, 2}, {1, 0, 3}, {0, 1, 4}, {2, 1, 0}, {0, 5, 1}};
    hp::LoadedMesh m = hp::prepare_mesh(soup, {}, "soup");
    EXPECT_EQ(m.diagnostics.triangles, 3u);
    EXPECT_EQ(m.diagnostics.dropped_duplicate, 1u);
    EXPECT_EQ(m.diagnostics.dropped_degenerate, 1u);  // vertex 5 welds onto vertex 0
    EXPECT_EQ(m.diagnostics.nonmanifold_edges, 1u);
    EXPECT_FALSE(m.diagnostics.watertight);
}

TEST(MeshImport, JsonHasTheMeshKeys) {
    nlohmann::json j = hp::to_json(hp::load_mesh(sample("torus.off")).diagnostics);
    for (const char* key : {"vertices", "triangles", "bbox", "boundary_edges", "nonmanifold_edges",
                            "inconsistent_edges", "components", "signed_volume", "watertight", "orientation",
                            "flipped_faces", "non_orientable_parts", "non_manifold_parts"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j["vertices"], 512);
    EXPECT_EQ(j["bbox"]["min"].size(), 3u);
    EXPECT_EQ(j["watertight"], true);
}

TEST(MeshImport, BadInputsAreExitCode3) {
    std::string msg;
    EXPECT_EQ(load_error("/nonexistent/nothing.stl", &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("no such file"), std::string::npos);
    EXPECT_EQ(load_error(temp_file("empty.stl", ""), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("empty"), std::string::npos);
    EXPECT_EQ(load_error(temp_file("notes.txt", "just some words\nnot a mesh\n")), hp::ExitCode::bad_input);
    EXPECT_EQ(load_error(temp_file("lines.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2\nl 2 3\n"), &msg),
              hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("no triangles"), std::string::npos) << msg;
    EXPECT_EQ(load_error(temp_file("nan.obj", "v nan 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"), &msg), hp::ExitCode::bad_input);
    EXPECT_EQ(load_error(temp_file("inf.obj", "v 1e999 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"), &msg), hp::ExitCode::bad_input);
    // A header that declares billions of vertices is rejected before the importer allocates.
    EXPECT_EQ(load_error(temp_file("huge.off", "OFF\n3535352353 586 0\n0 0 0\n"), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("declares"), std::string::npos) << msg;
    EXPECT_EQ(load_error(fs::temp_directory_path(), &msg), hp::ExitCode::bad_input);
}

// Only Assimp's importers that claim a file's extension read it. Both glTF importers refuse an OBJ
// named .gltf, which Assimp would then hand to every other importer's parser (one of which reads
// past the end of a 12-byte file: tests/fuzz/regressions/mesh_gltf). An extension that no importer
// claims is still read by its content.
TEST(MeshImport, OnlyTheImportersOfTheExtensionReadTheFile) {
    const std::string triangle = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
    EXPECT_EQ(hp::load_mesh(temp_file("triangle.obj", triangle)).mesh.triangles.size(), 1u);
    EXPECT_EQ(hp::load_mesh(temp_file("TRIANGLE.OBJ", triangle)).mesh.triangles.size(), 1u);
    std::string msg;
    EXPECT_EQ(load_error(temp_file("triangle.gltf", triangle), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("triangle.gltf"), std::string::npos) << msg;
    EXPECT_EQ(hp::load_mesh(temp_file("triangle.txt", triangle)).mesh.triangles.size(), 1u);
}

namespace {

void put_le32(std::string& bytes, std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A binary glTF 2.0 file of one triangle, by the specification: a 12-byte header (magic, version,
// length), a JSON chunk (padded with spaces to 4 bytes) and a BIN chunk of three float positions;
// `primitive` goes first into the primitive's object.
std::string glb_triangle(const std::string& primitive = "") {
    std::string json = R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],)"
                       R"("meshes":[{"primitives":[{)" + primitive + R"("attributes":{"POSITION":0}}]}],"accessors":[{"bufferView":0,)"
                       R"("componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}],)"
                       R"("bufferViews":[{"buffer":0,"byteLength":36}],"buffers":[{"byteLength":36}]})";
    while (json.size() % 4 != 0) json += ' ';
    const float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    std::string bin(reinterpret_cast<const char*>(xyz), sizeof xyz);
    std::string glb = std::string("glTF") + std::string(8, '\0') + std::string(8, '\0') + json + std::string(8, '\0') + bin;
    put_le32(glb, 4, 2);
    put_le32(glb, 8, static_cast<std::uint32_t>(glb.size()));
    put_le32(glb, 12, static_cast<std::uint32_t>(json.size()));
    std::memcpy(&glb[16], "JSON", 4);
    put_le32(glb, 20 + json.size(), 36);
    std::memcpy(&glb[24 + json.size()], "BIN\0", 4);
    return glb;
}

// A COLLADA 1.4.1 file of one triangle, by the schema; `p` is its index list, `count` the float
// array's count.
std::string collada_triangle(const std::string& p, const std::string& count) {
    return R"(<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
<library_geometries><geometry id="g"><mesh>
<source id="pos"><float_array id="pos-a" count=")" + count + R"(">0 0 0 1 0 0 0 1 0</float_array>
<technique_common><accessor source="#pos-a" count="3" stride="3"><param name="X" type="float"/>
<param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source>
<vertices id="v"><input semantic="POSITION" source="#pos"/></vertices>
<triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>)" + p + R"(</p></triangles>
</mesh></geometry></library_geometries>
<library_visual_scenes><visual_scene id="s"><node id="n"><instance_geometry url="#g"/></node></visual_scene>
</library_visual_scenes><scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
)";
}

}  // namespace

// A binary glTF file whose header or chunks declare more bytes than the file holds is refused
// before Assimp allocates the declared length (a 20-byte file declaring a 4 GB chunk took 4 GB).
TEST(MeshImport, GlbLengthsBeyondTheFileAreRefused) {
    const std::string glb = glb_triangle();
    EXPECT_EQ(hp::load_mesh(temp_file("triangle.glb", glb)).mesh.triangles.size(), 1u);
    std::string msg;
    std::string longer = glb;
    put_le32(longer, 8, static_cast<std::uint32_t>(glb.size() + 4));
    EXPECT_EQ(load_error(temp_file("longer.glb", longer), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("declares a file of"), std::string::npos) << msg;
    std::string json_past = glb;
    put_le32(json_past, 12, 0xffffffffu);
    EXPECT_EQ(load_error(temp_file("json-past.glb", json_past), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("declares a JSON chunk of 4294967295 bytes"), std::string::npos) << msg;
    std::string bin_past = glb;
    put_le32(bin_past, glb.size() - 36 - 8, 37);
    EXPECT_EQ(load_error(temp_file("bin-past.glb", bin_past), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("declares a chunk of 37 bytes where the file has 36"), std::string::npos) << msg;
    EXPECT_EQ(load_error(temp_file("header.glb", "glTF\2\0\0"), &msg), hp::ExitCode::bad_input);
    // The JSON chunk is read even when the header's length ends before it (found by fuzzing mesh_glb).
    std::string short_header = glb;
    put_le32(short_header, 8, 19);
    put_le32(short_header, 12, 0x987e0008u);
    EXPECT_EQ(load_error(temp_file("short-header.glb", short_header), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("declares a JSON chunk of 2558394376 bytes where the file has " + std::to_string(glb.size() - 20)),
              std::string::npos) << msg;
}

// A COLLADA index list with a character that is not part of an integer (Assimp appended zeros for
// it until memory ran out) or a count larger than the file is refused before Assimp reads it.
TEST(MeshImport, ColladaListsOfIntegersAndCountsWithinTheFile) {
    EXPECT_EQ(hp::load_mesh(temp_file("triangle.dae", collada_triangle("0 1 2", "9"))).mesh.triangles.size(), 1u);
    std::string msg;
    EXPECT_EQ(load_error(temp_file("letter.dae", collada_triangle("0 1 x2", "9")), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("COLLADA list <p> at byte"), std::string::npos) << msg;
    EXPECT_NE(msg.find("holds 'x'"), std::string::npos) << msg;
    // Checked whatever the first bytes (a .dae file that starts with "PK" skipped the checks: 17 GB).
    EXPECT_EQ(load_error(temp_file("pk.dae", "PK" + collada_triangle("0 1 x2", "9")), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("holds 'x'"), std::string::npos) << msg;
    EXPECT_EQ(load_error(temp_file("count.dae", collada_triangle("0 1 2", "4000000000")), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("declares 4000000000 elements"), std::string::npos) << msg;
    std::string uncounted = collada_triangle("0 1 2", "9");
    uncounted.replace(uncounted.find(" count=\"9\""), 10, " size=\"9\"");
    EXPECT_EQ(load_error(temp_file("uncounted.dae", uncounted), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("the COLLADA array float_array at byte"), std::string::npos) << msg;
    EXPECT_NE(msg.find("has no count attribute"), std::string::npos) << msg;
    std::string listless = collada_triangle("0 1 2", "9");
    listless.erase(listless.find("<p>"), std::string("<p>0 1 2</p>").size());
    EXPECT_EQ(load_error(temp_file("listless.dae", listless), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("has 0 <p> lists for a count of 1"), std::string::npos) << msg;
}

// A glTF 2.0 line loop is read, and its lines dropped as the tools keep triangles, unless its first
// segment is out of range (Assimp then follows a null pointer: tests/mesh/gltf_check_test.cpp). A
// "mode" that is not an integer is Assimp's default, triangles.
TEST(MeshImport, GltfLineLoopsAreReadAndDropped) {
    std::string msg;
    EXPECT_EQ(load_error(temp_file("loop.glb", glb_triangle(R"("mode":2,)")), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("no triangles found"), std::string::npos) << msg;
    // Also in JSON that a strict parser refuses and Assimp's reads (a byte that is not UTF-8).
    EXPECT_EQ(hp::load_mesh(temp_file("loop-latin1.glb", glb_triangle("\"name\":\"\xA5\",\"mode\" : 2.0,"))).mesh.triangles.size(), 1u);
    EXPECT_EQ(load_error(temp_file("loop-latin1.glb", glb_triangle("\"name\":\"\xA5\",\"mode\" : 2,")), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("no triangles found"), std::string::npos) << msg;
    EXPECT_EQ(load_error(temp_file("strip.glb", glb_triangle(R"("mode":3,)")), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("no triangles found"), std::string::npos) << msg;
    EXPECT_EQ(hp::load_mesh(temp_file("triangles.glb", glb_triangle(R"("mode":4,)"))).mesh.triangles.size(), 1u);
}

// A ZIP entry (3MF) that does not inflate to its CRC-32, whose local header disagrees with its
// directory entry, that is encrypted, or a 3MF package without the model part its relationships name, is refused:
// Assimp's ZIP and 3MF readers would abort the process on an assertion.
TEST(MeshImport, ZipEntriesThatDoNotOpenAreRefused) {
    std::ifstream in(fs::path(HP_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / "mesh_3mf" / "box.3mf", std::ios::binary);
    const std::string box((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(box.size(), 100u);
    EXPECT_GT(hp::load_mesh(temp_file("box.3mf", box)).mesh.triangles.size(), 0u);
    const auto le32 = [](const std::string& b, std::size_t at) {
        std::uint32_t v = 0;
        for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
        return v;
    };
    std::size_t entries = 0;
    for (std::size_t entry = box.find("PK\1\2"); entry != std::string::npos; entry = box.find("PK\1\2", entry + 1)) {
        ++entries;
        const std::size_t local = le32(box, entry + 42);
        std::string msg, damaged = box;
        damaged[entry + 16] = static_cast<char>(damaged[entry + 16] ^ 1);  // the CRC-32 in the directory
        EXPECT_EQ(load_error(temp_file("directory.3mf", damaged), &msg), hp::ExitCode::bad_input) << entry;
        EXPECT_NE(msg.find("has a local header that disagrees with its directory entry"), std::string::npos) << msg;
        damaged[local + 14] = static_cast<char>(damaged[local + 14] ^ 1);  // and in the local header
        EXPECT_EQ(load_error(temp_file("both.3mf", damaged), &msg), hp::ExitCode::bad_input) << entry;
        EXPECT_NE(msg.find("does not inflate to its size"), std::string::npos) << msg;
        std::string encrypted = box;
        encrypted[entry + 8] = static_cast<char>(encrypted[entry + 8] | 1);  // the directory's "encrypted" flag
        EXPECT_EQ(load_error(temp_file("encrypted.3mf", encrypted), &msg), hp::ExitCode::bad_input) << entry;
        EXPECT_NE(msg.find("is encrypted, which the mesh import cannot read"), std::string::npos) << msg;
    }
    EXPECT_GE(entries, 3u);  // [Content_Types].xml, _rels/.rels, the model
    // minizip finds the archive by its end record: a .3mf file whose first local header is damaged
    // (the file no longer starts with "PK") is still a ZIP archive to Assimp, and checked as one.
    std::string first = box;
    first[0] = 'X';
    std::string first_msg;
    EXPECT_EQ(load_error(temp_file("first.3mf", first), &first_msg), hp::ExitCode::bad_input);
    EXPECT_NE(first_msg.find("has no local header"), std::string::npos) << first_msg;
    // An end record cut short (minizip still finds its signature).
    EXPECT_EQ(load_error(temp_file("short.3mf", box.substr(0, box.size() - 3)), &first_msg), hp::ExitCode::bad_input);
    EXPECT_NE(first_msg.find("end record is cut short"), std::string::npos) << first_msg;
    // The model part renamed in the directory and its local header: the relationships name a part
    // the archive does not have.
    std::string renamed = box;
    for (std::size_t at = renamed.find("3dmodel.model"); at != std::string::npos; at = renamed.find("3dmodel.model", at + 1))
        renamed[at] = '4';
    std::string msg;
    EXPECT_EQ(load_error(temp_file("renamed.3mf", renamed), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("which its relationships name as the 3MF model"), std::string::npos) << msg;
    // Archives minizip cannot open (Assimp refused them too, and its 3MF reader leaked 96 bytes on
    // each): no end record, or one whose entry counts disagree.
    const std::size_t end = box.rfind("PK\5\6");
    ASSERT_NE(end, std::string::npos);
    std::string counts = box;
    counts[end + 8] = static_cast<char>(counts[end + 8] + 1);  // the entries on this disk
    for (const std::string& unopened : {std::string("B/`St06ru,F"), box.substr(0, end), counts}) {
        EXPECT_EQ(load_error(temp_file("unopened.3mf", unopened), &msg), hp::ExitCode::bad_input);
        EXPECT_NE(msg.find("not a ZIP archive that can be opened"), std::string::npos) << msg;
    }
    // A package whose relationships (renamed away) name no model: Assimp aborted on an assertion.
    std::string no_rels = box;
    for (std::size_t at = no_rels.find("_rels/.rels"); at != std::string::npos; at = no_rels.find("_rels/.rels", at + 1))
        no_rels[at + 10] = 'z';
    EXPECT_EQ(load_error(temp_file("no-rels.3mf", no_rels), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("has no 3MF model named by its relationships"), std::string::npos) << msg;
}

// A count beyond long long's range (or inf) is refused with a message, not cast.
// A PLY header whose end line Assimp does not take as one ("end_header" followed at once by other
// bytes) made Assimp read the binary data as header lines: SIGSEGV or a hang
// (tests/fuzz/regressions/mesh_ply). Refused before Assimp reads it; a space, tab or CR before the
// line end is still an end line.
TEST(MeshImport, PlyHeaderWithoutAnEndLineIsRefused) {
    const std::string header = "ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\n"
                               "property float y\nproperty float z\nelement face 1\n"
                               "property list uchar int vertex_indices\n";
    std::string body(36, '\0');
    const float one = 1.0f;
    std::memcpy(&body[12], &one, 4);  // (1, 0, 0)
    std::memcpy(&body[28], &one, 4);  // (0, 1, 0)
    body += std::string("\3\0\0\0\0\1\0\0\0\2\0\0\0", 13);
    for (const char* end : {"end_header\n", "end_header \r\n", "  end_header\t\n"})
        EXPECT_EQ(hp::load_mesh(temp_file("triangle.ply", header + end + body)).mesh.triangles.size(), 1u) << end;
    std::string msg;
    for (const char* end : {"end_headerX\n", "end_header\xff", "end_header_\n"}) {
        EXPECT_EQ(load_error(temp_file("no-end.ply", header + end + body), &msg), hp::ExitCode::bad_input) << end;
        EXPECT_NE(msg.find("no end_header line"), std::string::npos) << msg;
    }
    // A header whose end_header is the file's last bytes, without a line end: Assimp hung on it.
    for (const char* end : {"end_header", "end_header  "}) {
        EXPECT_EQ(load_error(temp_file("no-line-end.ply", "ply\nformat ascii 1.0\n" + std::string(end)), &msg), hp::ExitCode::bad_input) << end;
        EXPECT_NE(msg.find("no end_header line"), std::string::npos) << msg;
    }
    // Assimp takes any first line that begins with "ply" as the magic number: a header whose "ply" is
    // followed by NUL bytes, and which has no end line, hung it.
    EXPECT_EQ(load_error(temp_file("nul.ply", std::string("ply\0\0\n", 6) + header.substr(4) + body), &msg),
              hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("no end_header line"), std::string::npos) << msg;
}

// A PLY element declared twice: Assimp sized its vertex array by the first "vertex" element and wrote
// the second's past its end (a heap overflow, tests/fuzz/regressions/mesh_ply).
TEST(MeshImport, PlyElementDeclaredTwiceIsRefused) {
    const std::string twice = "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nelement vertex 3\n"
                              "property float x\nproperty float y\nproperty float z\nelement face 1\n"
                              "property list uchar int vertex_indices\nend_header\n0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    std::string msg;
    EXPECT_EQ(load_error(temp_file("twice.ply", twice), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("declares the element 'vertex' twice"), std::string::npos) << msg;
}

// Assimp reads an ASCII PLY file one line per element and, past the last line, parses from what its
// line buffer still holds: 14 elements on 8 lines made it allocate 16 GB
// (tests/fuzz/regressions/mesh_ply). Each element needs its line.
TEST(MeshImport, AsciiPlyElementsPastTheLastLineAreRefused) {
    const std::string header = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                               "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
    const std::string body = "0 0 0\n1 0 0\n0 1 0\n3 0 1 2";
    EXPECT_EQ(hp::load_mesh(temp_file("triangle.ply", header + body)).mesh.triangles.size(), 1u);
    EXPECT_EQ(hp::load_mesh(temp_file("triangle.ply", header + body + "\n")).mesh.triangles.size(), 1u);
    std::string msg;
    EXPECT_EQ(load_error(temp_file("short.ply", header + "0 0 0\n1 0 0\n0 1 0\n"), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("has 3 lines where the header declares 4 elements"), std::string::npos) << msg;
    // A NUL byte in the ASCII data: Assimp allocated 12 GB for an 811-byte file.
    EXPECT_EQ(load_error(temp_file("nul.ply", header + "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n" + std::string(1, '\0') + "\n"), &msg),
              hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("holds a NUL byte at byte"), std::string::npos) << msg;
}

// Assimp takes the count of a PLY element whose name it does not know from the digits that name
// starts with (unsigned, wrapping at 2^32) and allocates that many instances: "element" followed by
// 103 fives made it ask for 91.6 GB (tests/fuzz/regressions/mesh_ply). Refused by that count.
TEST(MeshImport, PlyElementCountsAreReadAsAssimpReadsThem) {
    const std::string header = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                               "property float z\nelement face 1\nproperty list uchar int vertex_indices\n";
    const std::string body = "end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    EXPECT_EQ(hp::load_mesh(temp_file("named.ply", header + "element note 0\nproperty float a\n" + body)).mesh.triangles.size(), 1u);
    std::string msg;
    EXPECT_EQ(load_error(temp_file("digits.ply", header + "element " + std::string(103, '5') + "\nproperty float a\n" + body), &msg),
              hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("declares 3817748707 '5555"), std::string::npos) << msg;
}

// An ASCII data line whose list gives more values than the line holds is refused: Assimp 5.2.5
// reserved the values first (26.6 GB for a count of 37 digits in a 646-byte file,
// tests/fuzz/regressions/mesh_ply). A list with the values of its count, and more values on the
// line than the list needs, still read.
TEST(MeshImport, PlyListsHoldTheValuesTheirCountsGive) {
    const std::string header = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                               "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
                               "0 0 0\n1 0 0\n0 1 0\n";
    EXPECT_EQ(hp::load_mesh(temp_file("list.ply", header + "3 0 1 2\n")).mesh.triangles.size(), 1u);
    EXPECT_EQ(hp::load_mesh(temp_file("extra.ply", header + "3 0 1 2 7\n")).mesh.triangles.size(), 1u);
    std::string msg;
    EXPECT_EQ(load_error(temp_file("short.ply", header + "4 0 1 2\n"), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("line 4 of the PLY data gives a list of 4 values where the line holds 3"), std::string::npos) << msg;
    EXPECT_EQ(load_error(temp_file("digits.ply", header + "0000000000000000000000001639710584328 0 1 2\n"), &msg),
              hp::ExitCode::bad_input);
}

// The PLY reader's reading followed as Assimp 5.2.5 reads (lib/mesh/ply_check.cpp): an element of
// a name it does not know takes no lines when its name starts with no digit, a line short of its
// values lets the parser read on in what longer lines left in its buffer, a signed count below zero
// is four billion, and binary lists are counted in bytes. Each made Assimp allocate gigabytes for a
// file of a few hundred bytes (1.7 GB and 1.6 GB resident, 16.8 GB for the binary one; the first
// found by fuzzing, tests/fuzz/regressions/mesh_ply).
TEST(MeshImport, PlyListsAreCountedAsAssimpReadsThem) {
    const std::string vertices = "element vertex 3\nproperty float x\nproperty float y\nproperty float z\n";
    const std::string faces = "element face 1\nproperty list uchar int vertex_indices\n";
    const std::string data = "0 0 0\n1 0 0\n0 1 0\n";
    std::string msg;
    // "element vepk3x 8": 8 to a reader of the PLY format, none to Assimp.
    const std::string unknown = "ply\nformat ascii 1.0\n" + vertices + "element vepk3x 8\nproperty float w\n" + faces + "end_header\n" + data;
    EXPECT_EQ(hp::load_mesh(temp_file("unknown.ply", unknown + "3 0 1 2\n0\n0\n0\n0\n0\n0\n0\n0\n")).mesh.triangles.size(), 1u);
    EXPECT_EQ(load_error(temp_file("unknown-big.ply", unknown + "111111111\n3 0 1 2\n0\n0\n0\n0\n0\n0\n0\n"), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("gives a list of 111111111 values"), std::string::npos) << msg;
    // A face line of one value before its list: the list's count comes from the line before.
    const std::string flagged = "ply\nformat ascii 1.0\n" + vertices + "element face 1\nproperty uchar flags\n"
                                "property list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n";
    EXPECT_EQ(hp::load_mesh(temp_file("flags.ply", flagged + "0 1 0\n7 3 0 1 2\n")).mesh.triangles.size(), 1u);
    EXPECT_EQ(load_error(temp_file("stale.ply", flagged + "1  99999999 0\n7\n"), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("gives a list of 99999999 values"), std::string::npos) << msg;
    // A signed count.
    const std::string signed_faces = "ply\nformat ascii 1.0\n" + vertices + "element face 1\nproperty list int int vertex_indices\nend_header\n" + data;
    EXPECT_EQ(hp::load_mesh(temp_file("signed.ply", signed_faces + "3 0 1 2\n")).mesh.triangles.size(), 1u);
    EXPECT_EQ(load_error(temp_file("negative.ply", signed_faces + "-1 0 1 2\n"), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("gives a list of 4294967295 values"), std::string::npos) << msg;
    // A list counted by a float.
    const std::string float_count = "ply\nformat ascii 1.0\n" + vertices + "element face 1\nproperty list float int vertex_indices\nend_header\n" + data;
    EXPECT_EQ(load_error(temp_file("float-count.ply", float_count + "3 0 1 2\n"), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("counted by a floating-point number"), std::string::npos) << msg;
    // The last line without its line end still reads.
    EXPECT_EQ(hp::load_mesh(temp_file("no-last-line-end.ply", "ply\nformat ascii 1.0\n" + vertices + faces + "end_header\n" + data + "3 0 1 2"))
                  .mesh.triangles.size(),
              1u);
    // Binary: a list count beyond the bytes left, and data shorter than the elements.
    const std::string binary_header = "ply\nformat binary_little_endian 1.0\n" + vertices + "element face 1\nproperty list uint int vertex_indices\nend_header\n";
    const auto binary = [&](std::uint32_t count, std::size_t indices) {
        std::string bytes = binary_header;
        const float v[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
        bytes.append(reinterpret_cast<const char*>(v), sizeof v);
        bytes.append(reinterpret_cast<const char*>(&count), 4);
        for (std::int32_t i = 0; i < static_cast<std::int32_t>(indices); ++i) bytes.append(reinterpret_cast<const char*>(&i), 4);
        return bytes;
    };
    EXPECT_EQ(hp::load_mesh(temp_file("binary.ply", binary(3, 3))).mesh.triangles.size(), 1u);
    EXPECT_EQ(load_error(temp_file("binary-count.ply", binary(0x7fffffffu, 3)), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("gives a list of 2147483647 values (8589934588 bytes) where 12 bytes are left"), std::string::npos) << msg;
    EXPECT_EQ(load_error(temp_file("binary-short.ply", binary(3, 2)), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("gives a list of 3 values (12 bytes) where 8 bytes are left"), std::string::npos) << msg;
    std::string truncated = binary(3, 3);
    truncated.resize(truncated.size() - 14);  // inside the vertices
    EXPECT_EQ(load_error(temp_file("binary-truncated.ply", truncated), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("end before its elements do"), std::string::npos) << msg;
}

// A header with a carriage return that ends no line is refused (Assimp 5.2.5 hung on one before
// "end_header", tests/fuzz/regressions/mesh_ply); Windows line ends still read.
TEST(MeshImport, PlyHeaderCarriageReturnsEndLines) {
    const std::string header = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                               "property float z\nelement face 1\nproperty list uchar int vertex_indices\n";
    const std::string data = "0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    std::string windows = header + "end_header\n";
    for (std::size_t at = windows.find('\n'); at != std::string::npos; at = windows.find('\n', at + 2)) windows.insert(at, "\r");
    EXPECT_EQ(hp::load_mesh(temp_file("crlf.ply", windows + data)).mesh.triangles.size(), 1u);
    std::string msg;
    EXPECT_EQ(load_error(temp_file("cr.ply", header + "\rend_header\n" + data), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("carriage return without a line feed"), std::string::npos) << msg;
}

// A <vertices> without an input of semantic POSITION, or a polylist of a non-zero count without its
// <vcount>, is refused: with both, Assimp 5.2.5 followed a null pointer (SIGSEGV on a 4.9 KB file,
// tests/fuzz/regressions/mesh_dae); so is an accessor that reads past its array.
TEST(MeshImport, ColladaVerticesNameTheirPositionsAndPolylistsTheirSizes) {
    const std::string triangle = collada_triangle("0 1 2", "9");
    const std::string triangles = R"(<triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1 2</p></triangles>)";
    ASSERT_NE(triangle.find(triangles), std::string::npos);
    std::string polylist = triangle;
    polylist.replace(polylist.find(triangles), triangles.size(),
                     R"(<polylist count="1"><input semantic="VERTEX" source="#v" offset="0"/><vcount>3</vcount><p>0 1 2</p></polylist>)");
    EXPECT_EQ(hp::load_mesh(temp_file("polylist.dae", polylist)).mesh.triangles.size(), 1u);
    std::string msg;
    std::string sizeless = polylist;
    sizeless.erase(sizeless.find("<vcount>"), std::string("<vcount>3</vcount>").size());
    EXPECT_EQ(load_error(temp_file("sizeless.dae", sizeless), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("has a count of 1 but no <vcount>"), std::string::npos) << msg;
    std::string unnamed = triangle;
    unnamed.replace(unnamed.find(R"(semantic="POSITION")"), 19, R"(semantic="NORMAL")");
    EXPECT_EQ(load_error(temp_file("unnamed.dae", unnamed), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("has no input of semantic POSITION"), std::string::npos) << msg;
    // An accessor reading past its array (Assimp read an array of count 0 through a null pointer).
    EXPECT_EQ(load_error(temp_file("short.dae", collada_triangle("0 1 2", "8")), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("reads 9 values of the array 'pos-a', which has 8"), std::string::npos) << msg;
    EXPECT_EQ(load_error(temp_file("star.dae", collada_triangle("0 1 2", "*9")), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("which has 0"), std::string::npos) << msg;
}

// Assimp read a missing material library as the OBJ file's own bytes, and a texture line before its
// first newmtl made it write through a null material (SIGSEGV, tests/fuzz/regressions/mesh_obj). The
// import does not read material libraries: the file's triangles are read.
TEST(MeshImport, ObjMaterialLibrariesAreNotRead) {
    const std::string triangle = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
    for (const std::string& head : {std::string("mtllib missing.mtl\nmap_Kd a.png\n"), std::string("mtllib missing.mtl\r\nbump a.png\r\n"),
                                   std::string("#\0\0mtllib missing.mtl\nnorm a.png\n", 34)})  // a NUL byte ends a line too
        EXPECT_EQ(hp::load_mesh(temp_file("materials.obj", head + triangle)).mesh.triangles.size(), 1u) << head;
}

// Assimp's OFF reader takes its counts from where its tokenizer stands: "OFF08 500000000" is 8
// vertices and 500 million faces (7.8 GB before the check), and a file without a header is read
// from its first number (tests/fuzz/regressions/mesh_off). Both are checked as it reads them.
TEST(MeshImport, OffCountsAreCheckedAsAssimpReadsThem) {
    const std::string triangle = "3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    for (const std::string head : {"OFF\n", "", "nOFF 3\n"})
        EXPECT_EQ(hp::load_mesh(temp_file("triangle.off", head + triangle)).mesh.triangles.size(), 1u) << head;
    std::string msg;
    for (const char* bomb : {"OFF08 500000000 5 0\n0 0 0\n", "500000000 5 0\n0 0 0\n"}) {
        EXPECT_EQ(load_error(temp_file("bomb.off", bomb), &msg), hp::ExitCode::bad_input) << bomb;
        EXPECT_NE(msg.find("the header declares"), std::string::npos) << msg;
    }
}

TEST(MeshImport, CountsBeyondLongLongAreRefused) {
    std::string msg;
    EXPECT_EQ(load_error(temp_file("inf.off", "OFF\n1e526 1 0\n0 0 0\n"), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("declares more than 10^18 vertices"), std::string::npos) << msg;
    EXPECT_EQ(load_error(temp_file("inf.dae", collada_triangle("0 1 2", "1e999")), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("declares more than 10^18 elements"), std::string::npos) << msg;
}

TEST(MeshImport, StanfordBunnyReportsItsOpenBottom) {
    fs::path bunny = fs::path(HP_SOURCE_DIR) / ".." / "shared" / "meshes" / "stanford-bunny.obj";
    if (const char* env = std::getenv("HP_MESHES")) bunny = fs::path(env) / "stanford-bunny.obj";
    if (!fs::exists(bunny)) GTEST_SKIP() << "reference meshes not found";
    const auto d = hp::load_mesh(bunny).diagnostics;
    EXPECT_EQ(d.vertices, 34834u);
    EXPECT_EQ(d.triangles, 69451u);
    EXPECT_GT(d.boundary_edges, 0u);
    EXPECT_FALSE(d.watertight);
}

// Assimp's own test models, including its deliberately broken ones: every file either loads or
// fails with hp::Error; none may crash. Files over 300 KB are skipped to keep the test short
// (Assimp's SMD reader alone needs 40 s for its 900 KB sample).
TEST(MeshImport, AssimpTestModelsNeverCrash) {
    const fs::path root = "/usr/share/assimp/models";
    if (!fs::exists(root)) GTEST_SKIP() << "assimp-testmodels not installed";
    std::size_t loaded = 0, rejected = 0;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (!entry.is_regular_file() || entry.file_size() > 300 * 1024) continue;
        try {
            hp::load_mesh(entry.path());
            ++loaded;
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << entry.path();
            ++rejected;
        }
    }
    EXPECT_GT(loaded, 100u);
    EXPECT_GT(rejected, 10u);
}
