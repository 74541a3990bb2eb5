// The native OBJ reading (lib/mesh/obj_native) against Assimp 5.2.5, its reference: numbers against
// Assimp's own fast_atof; every OBJ file of the repository, the reference meshes, Assimp's test
// models, hand-written cases and generated files read both ways, where a file the native reading
// takes must give Assimp's scene, mesh, parts and messages exactly.
#include "mesh/obj_native.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <assimp/fast_atof.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "mesh/assembly.hpp"
#include "mesh/import.hpp"
#include "mesh/mesh.hpp"

namespace fs = std::filesystem;

namespace {

std::uint32_t bits(float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

std::uint64_t bits(double d) {
    std::uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
}

// The OBJ reading of the tests' choice for as long as it lives.
class Reading {
public:
    explicit Reading(bool native) { hp::set_native_obj(native); }
    ~Reading() { hp::set_native_obj(true); }
};

// A scene as both readings can give it: the root's children, their meshes' corners and triangles.
struct SceneView {
    struct Mesh {
        std::vector<std::array<std::uint32_t, 3>> corners;  // float bits
        std::vector<std::array<std::uint32_t, 3>> triangles;
        bool operator==(const Mesh& o) const { return corners == o.corners && triangles == o.triangles; }
    };
    struct Node {
        std::string name;
        std::vector<Mesh> meshes;
        bool operator==(const Node& o) const { return name == o.name && meshes == o.meshes; }
    };
    std::vector<Node> nodes;
    std::string problem;  // what Assimp's scene has that the native one cannot (empty: nothing)
};

SceneView view_of(const hp::ObjScene& obj) {
    SceneView v;
    for (const hp::ObjNode& n : obj.nodes) {
        SceneView::Node& node = v.nodes.emplace_back();
        node.name = n.name;
        for (std::uint32_t mi : n.meshes) {
            SceneView::Mesh& mesh = node.meshes.emplace_back();
            for (std::uint32_t c : obj.meshes[mi].corners) {
                const auto& p = obj.positions.at(c);
                mesh.corners.push_back({bits(p[0]), bits(p[1]), bits(p[2])});
            }
            mesh.triangles = obj.meshes[mi].triangles;
        }
    }
    return v;
}

SceneView view_of(const aiScene* scene) {
    SceneView v;
    const aiNode* root = scene->mRootNode;
    if (!root) return v.problem = "no root", v;
    if (root->mNumMeshes > 0) v.problem = "meshes at the root";
    if (!(root->mTransformation == aiMatrix4x4())) v.problem = "a transformed root";
    for (unsigned c = 0; c < root->mNumChildren; ++c) {
        const aiNode* child = root->mChildren[c];
        if (child->mNumChildren > 0 || !(child->mTransformation == aiMatrix4x4())) v.problem = "a deeper node graph";
        SceneView::Node& node = v.nodes.emplace_back();
        node.name = child->mName.C_Str();
        for (unsigned mi = 0; mi < child->mNumMeshes; ++mi) {
            const aiMesh* m = scene->mMeshes[child->mMeshes[mi]];
            SceneView::Mesh& mesh = node.meshes.emplace_back();
            for (unsigned i = 0; i < m->mNumVertices; ++i)
                mesh.corners.push_back({bits(m->mVertices[i].x), bits(m->mVertices[i].y), bits(m->mVertices[i].z)});
            for (unsigned f = 0; f < m->mNumFaces; ++f) {
                if (m->mFaces[f].mNumIndices != 3) v.problem = "a face that is not a triangle";
                else mesh.triangles.push_back({m->mFaces[f].mIndices[0], m->mFaces[f].mIndices[1], m->mFaces[f].mIndices[2]});
            }
        }
    }
    return v;
}

// What the tools get from a file: load_mesh's mesh and diagnostics, read_assembly's parts, the
// first geometry selected as --part does; or the message and exit code of the refusal.
std::string outcome(const fs::path& path) {
    std::ostringstream o;
    try {
        const hp::LoadedMesh m = hp::load_mesh(path);
        o << "mesh " << m.source_name << " " << m.source_hash << " " << hp::to_json(m.diagnostics).dump() << "\n";
        for (const hp::Vec3d& p : m.mesh.vertices) o << bits(p.x) << " " << bits(p.y) << " " << bits(p.z) << ";";
        for (const auto& t : m.mesh.triangles) o << t[0] << "," << t[1] << "," << t[2] << ";";
        o << "\n";
    } catch (const hp::Error& e) {
        o << "refused " << static_cast<int>(e.code()) << " " << e.what() << "\n";
    }
    try {
        const hp::Assembly a = hp::read_assembly(path);
        for (const hp::AssemblyPart& p : a.parts) {
            o << "part " << p.name << " " << p.index << " g" << p.geometry << " " << p.dropped_primitives;
            for (double x : p.placement.matrix) o << " " << bits(x);
            o << "\n";
        }
        for (const hp::AssemblyGeometry& g : a.geometries) {
            o << "geometry " << g.id << " " << g.first_part << " " << g.instances << " " << g.baked << " ";
            for (const hp::Vec3d& p : g.soup.vertices) o << bits(p.x) << " " << bits(p.y) << " " << bits(p.z) << ";";
            for (const auto& t : g.soup.triangles) o << t[0] << "," << t[1] << "," << t[2] << ";";
            o << "\n";
        }
        for (const std::string& n : a.notes) o << "note " << n << "\n";
        hp::MeshLoadOptions options;
        options.part = "@0";
        const hp::LoadedMesh part = hp::load_mesh(path, options);
        o << "part @0 " << part.part_name << " " << hp::to_json(part.diagnostics).dump() << "\n";
    } catch (const hp::Error& e) {
        o << "parts refused " << static_cast<int>(e.code()) << " " << e.what() << "\n";
    }
    return o.str();
}

struct Comparison {
    bool native = false;  // the native reading took the file
};

// Reads `path` both ways and requires the same: Assimp's scene for a file the native reading
// takes, and the same mesh, parts and messages from the tools' calls in every case.
Comparison compare(const fs::path& path) {
    Comparison result;
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::optional<hp::ObjScene> native = hp::read_obj_native(bytes);
    result.native = native.has_value();
    if (native) {
        Reading assimp(false);
        hp::ImportedFile file;
        try {
            file = hp::import_file(path);
        } catch (const hp::Error& e) {
            ADD_FAILURE() << path << ": read natively, refused by Assimp: " << e.what();
            return result;
        }
        EXPECT_FALSE(file.obj.has_value());
        const SceneView theirs = view_of(file.scene), ours = view_of(*native);
        EXPECT_EQ(theirs.problem, "") << path;
        EXPECT_TRUE(theirs.nodes == ours.nodes) << path << ": the native scene differs from Assimp's";
    }
    std::string with_native, with_assimp;
    {
        Reading reading(true);
        with_native = outcome(path);
    }
    {
        Reading reading(false);
        with_assimp = outcome(path);
    }
    EXPECT_EQ(with_native, with_assimp) << path;
    return result;
}

fs::path temp_obj(const std::string& name, const std::string& content) {
    const fs::path dir = fs::temp_directory_path() / ("hp_obj_native_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
}

std::vector<fs::path> obj_files(const fs::path& dir, std::uintmax_t max_bytes = UINTMAX_MAX) {
    std::vector<fs::path> out;
    if (!fs::exists(dir)) return out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        std::string ext = e.path().extension().string();
        std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (e.is_regular_file() && ext == ".obj" && e.file_size() <= max_bytes) out.push_back(e.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

const fs::path kSource = HP_SOURCE_DIR;

// Assimp's fast_atof throws its DeadlyImportError on a malformed number, whose base constructor
// Debian's libassimp does not export; the tokens given to it here are all well formed.
struct AtofError {
    template <typename... Args>
    explicit AtofError(Args&&...) {}
};

}  // namespace

TEST(ObjNative, NumbersAreAssimpsFastAtofBitForBit) {
    const std::vector<std::string> tokens = {
        "0", "-0", "+0", "1", "-1", "0.1", "-0.1", "1.", "1.e3", ".5", "-.5", "+.25", "3.14159265358979323846",
        "0.000000000000000000001", "1e-45", "1e-46", "3.4028235e38", "3.4028236e38", "1e39", "-1e39", "0e999",
        "1E+5", "2.5e-3", "123456789012345678", "999999999999999999", "0.1234567890123456789", "16777217",
        "16777217.5", "-16777219.25", "6.103515625e-05", "1.17549435e-38", "7.006492321624085e-46",
        "2.000000000000000111", "0.30000000000000004", "100000000000000000e-17"};
    std::mt19937_64 rng(20261206);
    std::vector<std::string> all = tokens;
    for (int i = 0; i < 200000; ++i) {
        std::string t;
        if (rng() % 4 == 0) t += rng() % 2 ? "-" : "+";
        const int whole = static_cast<int>(rng() % 12);
        for (int k = 0; k < whole; ++k) t += static_cast<char>('0' + rng() % 10);
        if (whole == 0 || rng() % 3 != 0) {
            t += '.';
            const int frac = 1 + static_cast<int>(rng() % 20);
            for (int k = 0; k < frac; ++k) t += static_cast<char>('0' + rng() % 10);
        }
        if (rng() % 3 == 0) t += (rng() % 2 ? "e" : "E") + std::string(rng() % 2 ? "-" : "") + std::to_string(rng() % 50);
        all.push_back(t);
    }
    std::size_t checked = 0;
    for (const std::string& t : all) {
        float ours = 0;
        ASSERT_TRUE(hp::parse_obj_real(t, ours)) << t;
        const float theirs = Assimp::fast_atof<AtofError>(t.c_str());
        ASSERT_EQ(bits(ours), bits(theirs)) << t << ": " << ours << " against Assimp's " << theirs;
        ++checked;
    }
    EXPECT_GT(checked, 200000u);
    // Golden bits: 0.1f, -0.0f, 16777216 (16777217 rounds to even), +inf (1e39 overflows float).
    float f = 0;
    ASSERT_TRUE(hp::parse_obj_real("0.1", f));
    EXPECT_EQ(bits(f), 0x3dcccccdu);
    ASSERT_TRUE(hp::parse_obj_real("-0", f));
    EXPECT_EQ(bits(f), 0x80000000u);
    ASSERT_TRUE(hp::parse_obj_real("16777217", f));
    EXPECT_EQ(bits(f), 0x4b800000u);
    ASSERT_TRUE(hp::parse_obj_real("1e39", f));
    EXPECT_EQ(bits(f), 0x7f800000u);
}

TEST(ObjNative, NumbersOutsideTheGrammarAreDeclined) {
    float f = 0;
    for (const char* t : {"", "-", "+", ".", "nan", "-inf", "inf", "1,5", "1.5.", "1e", "1e+", "0x10", "1.5f", "--1",
                          "1234567890123456789", "1e1234567890123456789", "1 "})
        EXPECT_FALSE(hp::parse_obj_real(t, f)) << "'" << t << "'";
}

TEST(ObjNative, ReferenceAndSampleMeshesAreReadNativelyAsAssimpReadsThem) {
    std::vector<fs::path> files = obj_files(kSource / "sample_meshes");
    for (const fs::path& p : obj_files(kSource / "scenes")) files.push_back(p);
    fs::path shared = kSource / ".." / "shared" / "meshes";
    if (const char* env = std::getenv("HP_MESHES")) shared = env;
    const std::vector<fs::path> reference = obj_files(shared);
    files.insert(files.end(), reference.begin(), reference.end());
    ASSERT_GE(files.size(), 11u);
    for (const fs::path& p : files) EXPECT_TRUE(compare(p).native) << p << " was declined";
    if (reference.empty()) GTEST_SKIP() << "reference meshes not found at " << shared;
}

TEST(ObjNative, FuzzInputsAndAssimpTestModelsReadAlikeOrAreDeclined) {
    std::vector<fs::path> files = obj_files(kSource / "tests" / "fuzz" / "corpus" / "mesh_obj");
    for (const fs::path& p : obj_files(kSource / "tests" / "fuzz" / "regressions" / "mesh_obj")) files.push_back(p);
    const std::size_t ours = files.size();
    // Assimp's own OBJ test models (assimp-testmodels), its broken ones included, when installed.
    for (const fs::path& p : obj_files("/usr/share/assimp/models", 300 * 1024)) files.push_back(p);
    ASSERT_GE(ours, 10u);
    std::size_t native = 0;
    for (const fs::path& p : files) native += compare(p).native;
    EXPECT_GE(native, 5u);  // box, bracket, inverted-box, seam-cube, two-boxes at least
}

TEST(ObjNative, AssemblyTestFileReadsAlike) {
    // The OBJ assembly of the assembly tests (tests/cli/make_assembly.py groups): `o` and `g` parts.
    const fs::path out = temp_obj("groups.obj", "");
    const std::string cmd = "python3 " + (kSource / "tests/cli/make_assembly.py").string() + " groups " + out.string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_TRUE(compare(out).native);
}

TEST(ObjNative, HandWrittenCasesReadAlike) {
    using namespace std::string_literals;
    const std::string cube8 = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n";
    const std::string tris = "f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n";
    struct Case {
        const char* name;
        std::string text;
        bool native;  // the native reading takes it
    };
    const std::vector<Case> cases = {
        {"triangles", cube8 + tris, true},
        {"negative-indices", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nv 0 0 1\nf -4 -1 -3\nf -4 -2 -1\nf -3 -1 -2\n", true},
        {"slashes", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nvt 0 0\nvt 1 0 0\nvn 0 0 1\n"
                    "f 1//1 3//1 2//1\nf 1/1 2/2 4/1\nf 1/1/1 4/2/1 3/1/1\nf 2 3 4\n", true},
        {"full-corners-without-uv", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nvn 0 0 1\nf 1/1/1 3/1/1 2/1/1\nf 1 2 4\n", false},
        {"full-corners-before-normals", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1/1/1 3/1/1 2/1/1\nvn 0 0 1\nf 1 2 4\n", true},
        {"normals-without-uv", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nvn 0 0 1\nf 1/1 3/1 2/1\nf 1 2 4\nf 1 4 3\nf 2 3 4\n", true},
        {"crlf", "# exported\r\nv 0 0 0\r\nv 1 0 0\r\nv 0 1 0\r\nv 0 0 1\r\n\r\nf 1 3 2\r\nf 1 2 4\r\nf 1 4 3\r\nf 2 3 4\r\n", true},
        {"cr-only", "v 0 0 0\rv 1 0 0\rv 0 1 0\rv 0 0 1\rf 1 3 2\rf 1 2 4\rf 1 4 3\rf 2 3 4", true},
        {"tabs-and-blanks", "v\t0\t0  0\nv 1 0 0\t\nv 0 1 0\nv 0 0 1\n   \n\t\nf\t1 3\t2\ns off\ns 1\nf 1 2 4\nf 1 4 3\nf 2 3 4  \n", true},
        {"no-final-newline", cube8 + tris.substr(0, tris.size() - 1), true},
        {"forward-reference", "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n", true},
        {"quads", cube8 + "f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n", true},
        {"concave-quads", "v 0 0 0\nv 2 0 0\nv 1 0.3 0\nv 1 2 0\nv 0 0 1\nv 2 0 1\nv 1 1.7 1\nv 1 2 1\n"
                          "f 1 2 3 4\nf 2 3 4 1\nf 3 4 1 2\nf 4 1 2 3\nf 5 6 7 8\nf 8 7 6 5\nf 1 2 6 5\n", true},
        {"degenerate-quads", "v 0 0 0\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 2 2 0\nf 1 2 3 4\nf 1 3 4 5\nf 3 4 5 1\nf 1 3 4\n", true},
        {"numbers", "v 1. -0 +2.5e+1\nv 1.e1 0.000000000000000000001 3.14159265358979323846\nv -.5 7E-3 1e2\n"
                    "v 16777217 0.1 -123456789.123456789\nf 1 2 3\nf 1 3 4\nf 1 2 4\nf 2 3 4\n", true},
        {"groups", "g left side\n" + cube8 + tris.substr(0, 48) + "g right \n" + tris.substr(48) + "g left side\nf 1 2 3\n", true},
        {"repeated-group", cube8 + "g a\nf 1 3 2\ng b\nf 1 4 3\ng a\nf 5 6 7\ng a\nf 5 7 8\n", true},
        {"objects", cube8 + "o first\nf 1 3 2\nf 1 4 3\no second\nf 5 6 7\no first extra words\nf 5 7 8\nusemtl red\nf 1 2 6\n", true},
        {"object-then-group", cube8 + "o part\ng shell\nf 1 3 2\nf 1 4 3\no part\nf 5 6 7\ng shell\nf 5 7 8\n", true},
        {"empty-group", cube8 + "o part\ng shell\nf 1 3 2\nf 1 4 3\ng\nf 5 6 7\n", false},
        {"default-object-then-groups", cube8 + "f 1 3 2\ng g1\nf 1 4 3\ng g1\nf 5 6 7\n", true},
        {"materials", "mtllib parts.mtl\n" + cube8 + "usemtl red\nf 1 3 2\nusemtl blue \nf 1 4 3\nusemtl red\nf 5 6 7\n"
                      "usemtl red\nf 5 7 8\nusemtl DefaultMaterial\nf 1 2 6\ng other\nusemtl green\nusemtl red\nf 1 6 5\n", true},
        {"material-before-object", cube8 + "usemtl steel\no body\nf 1 3 2\nusemtl steel\nf 1 4 3\nusemtl iron\nusemtl steel\nf 5 6 7\n", true},
        {"instances", cube8 + "g a\n" + tris + "g b\n" + tris + "g c\nf 1 3 2\n", true},
        {"out-of-range", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", false},
        {"relative-out-of-range", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n", false},
        {"zero-index", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", false},
        {"nan", "v nan 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", false},
        {"inf", "v 0 inf 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", false},
        {"overflow-to-inf", "v 0 1e39 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\n", true},
        {"infinite-normal-and-uv", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nvn 1e39 0 0\nvt 0 -1e39\n"
                                   "f 1/1/1 2/1/1 3/1/1\nf 1/1/1 2/1/1 4/1/1\n", true},
        {"zero-times-inf", "v 0e99 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 2 3 4\n", true},
        {"truncated-vertex", "v 0 0 0\nv 1 0 0\nv 0 1", false},
        {"truncated-face", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2", false},
        {"truncated-number", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nv 0 0 1.", true},
        {"only-vertices", "v 0 0 0\nv 1 0 0\nv 0 1 0\n", false},
        {"lines-and-points", cube8 + tris + "l 1 2 3\np 4\n", false},
        {"polygon", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0.5 1.5 0\nv 0 1 0\nf 1 2 3 4 5\n", false},
        {"comment-after-face", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3 # a triangle\n", false},
        {"continued-line", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 \\\n3\n", false},
        {"backslash-in-comment", "# C:\\models\\part.obj\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\n", true},
        {"nul-byte", "v 0 0 0\nv 1 0 0\0v 5 5 5\nv 0 1 0\nf 1 2 3\n"s, false},
        {"indented", "v 0 0 0\nv 1 0 0\nv 0 1 0\n  v 0 0 1\nf 1 2 3\n", false},
        {"vertex-colours", "v 0 0 0 1 0 0\nv 1 0 0 1 0 0\nv 0 1 0 1 0 0\nf 1 2 3\n", false},
        {"mtllib-inside-a-name", cube8 + "g mtllibrary\nf 1 2 3\n", false},
        {"small", "v 0 0 0\nf 1 1 1", false},
        {"long-fraction", "v 0." + std::string(5000, '3') + " 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", false},
        {"long-names", cube8 + "g " + std::string(1100, 'g') + "\nf 1 2 3\no " + std::string(600, 'o') + "\nf 1 3 4\n", false},
    };
    std::size_t native = 0;
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const Comparison r = compare(temp_obj(std::string(c.name) + ".obj", c.text));
        EXPECT_EQ(r.native, c.native);
        native += r.native;
    }
    EXPECT_GE(native, 20u);
    // An empty file is refused before either reading, with the same message.
    const fs::path empty = temp_obj("empty.obj", "");
    std::string with_native, with_assimp;
    {
        Reading reading(true);
        with_native = outcome(empty);
    }
    {
        Reading reading(false);
        with_assimp = outcome(empty);
    }
    EXPECT_EQ(with_native, with_assimp);
    EXPECT_NE(with_native.find("the file is empty"), std::string::npos) << with_native;
}

// Files made of random statements of the native grammar (and a few outside it): each is read
// alike both ways, or declined.
TEST(ObjNative, GeneratedFilesReadAlike) {
    std::mt19937 rng(40);
    const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    const auto number = [&] {
        std::string t = pick(3) == 0 ? "-" : "";
        t += std::to_string(pick(100));
        if (pick(2)) t += "." + std::to_string(pick(1000000));
        if (pick(6) == 0) t += "e" + std::string(pick(2) ? "-" : "") + std::to_string(pick(5));
        return t;
    };
    std::size_t native = 0;
    for (int file = 0; file < 150; ++file) {
        std::string text;
        int vertices = 0;
        const char* names[] = {"a", "b", "part one", "c"};
        const char* materials[] = {"red", "blue", "DefaultMaterial"};
        for (int line = 0, lines = 20 + pick(60); line < lines; ++line) {
            const int kind = pick(20);
            const char* end = pick(8) == 0 ? "\r\n" : "\n";
            if (kind < 7 || vertices < 3) {
                text += "v " + number() + " " + number() + " " + number() + end;
                ++vertices;
            } else if (kind < 15) {
                const int corners = pick(4) == 0 ? 4 : 3;
                text += "f";
                for (int c = 0; c < corners; ++c) {
                    const int v = pick(vertices);
                    text += " " + (pick(4) == 0 ? std::to_string(v - vertices) : std::to_string(v + 1));
                    if (pick(5) == 0) text += "//1";
                }
                text += end;
            } else if (kind == 15) {
                text += std::string("g ") + names[pick(4)] + end;
            } else if (kind == 16) {
                text += std::string("o ") + names[pick(4)] + end;
            } else if (kind == 17) {
                text += std::string("usemtl ") + materials[pick(3)] + end;
            } else if (kind == 18) {
                text += std::string(pick(2) ? "vn 0 0 1" : "vt 0.5 0.5") + end;
            } else {
                text += pick(10) == 0 ? std::string("l 1 2") + end : std::string("# note") + end;
            }
        }
        native += compare(temp_obj("generated-" + std::to_string(file) + ".obj", text)).native;
    }
    EXPECT_GE(native, 50u);
}

// Quads with a corner on or next to the diagonal between its neighbours, and quads on a small grid
// of points with three corners in a line: Assimp's choice of the corner it cuts from rests on the
// last bits of its angles there.
TEST(ObjNative, QuadsAreCutAtAssimpsCorner) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    std::string text;
    char line[160];
    int vertices = 0;
    for (int q = 0; q < 3000; ++q) {
        double p[4][3];
        for (int k = 0; k < 3; ++k) {
            p[0][k] = u(rng);
            p[2][k] = u(rng);
            p[3][k] = u(rng);
        }
        const double t = 0.5 + 0.4 * u(rng), noise = q % 3 == 0 ? 0.0 : 1e-7 * u(rng);
        for (int k = 0; k < 3; ++k) p[1][k] = p[0][k] + t * (p[2][k] - p[0][k]) + noise;
        for (const auto& c : p) {
            std::snprintf(line, sizeof line, "v %.9g %.9g %.9g\n", c[0], c[1], c[2]);
            text += line;
        }
        const int r = q % 4;  // the corner on the diagonal takes each place in turn
        text += "f";
        for (int c = 0; c < 4; ++c) text += " " + std::to_string(vertices + 1 + (c + r) % 4);
        text += "\n";
        vertices += 4;
    }
    const char* coordinates[] = {"0", "1", "2", "0.5", "1.5", "0.1", "3"};
    for (int v = 0; v < 64; ++v) {
        text += "v";
        for (int k = 0; k < 3; ++k) text += std::string(" ") + coordinates[rng() % (k == 2 ? 3 : 7)];
        text += "\n";
    }
    for (int f = 0; f < 3000; ++f) {
        text += "f";
        for (int c = 0; c < 4; ++c) text += " " + std::to_string(vertices + 1 + rng() % 64);
        text += "\n";
    }
    EXPECT_TRUE(compare(temp_obj("quads.obj", text)).native);
}

// Files past Assimp's 16 MiB block: statements across the block's end and in the last, short block.
TEST(ObjNative, FilesPastOneBlockReadAlike) {
    const std::size_t block = std::size_t{16} << 20;
    for (std::size_t shift : {0, 3, 9, 17}) {
        std::string text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\ng first\nf 1 2 3\n";
        const std::string comment = "# " + std::string(60, '-') + "\n";
        while (text.size() + comment.size() < block - shift) text += comment;
        text += std::string(block - shift - text.size() - 1, '#') + "\n";
        text += "v 0.25 0.5 0.125\nf 1 -1 2\ng second part\nf 1 3 4\r\nusemtl red\nf 2 3 4\n";
        SCOPED_TRACE(shift);
        EXPECT_TRUE(compare(temp_obj("past-a-block.obj", text)).native);
        text.pop_back();  // a last line without its end, which Assimp loses past the first block
        EXPECT_FALSE(compare(temp_obj("past-a-block-unended.obj", text)).native);
    }
}
