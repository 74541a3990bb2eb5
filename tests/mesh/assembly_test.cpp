// Parts of multi-part files (mesh/assembly.hpp). Oracles: the flattened import (load_mesh without
// --part, its own walk of the node graph) must hold exactly the parts' placed triangles; the
// placements must be the translations and rotations tests/cli/make_assembly.py wrote; instancing
// must find the meshes the files share.
#include "mesh/assembly.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
    fs::path dir = fs::temp_directory_path() / ("hp_assembly_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir;
}

// A test assembly written by tests/cli/make_assembly.py.
fs::path make(const std::string& kind, const std::string& file, const std::string& extra = "") {
    const fs::path out = temp_dir() / file;
    const std::string cmd = "python3 " + (fs::path(HP_SOURCE_DIR) / "tests/cli/make_assembly.py").string() + " " + kind +
                            " " + out.string() + " " + extra;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return out;
}

// The placed triangles as sorted lists of rounded corner coordinates (order-free comparison).
using Tri = std::array<std::array<long long, 3>, 3>;
Tri key(const hp::Vec3d& a, const hp::Vec3d& b, const hp::Vec3d& c, double unit) {
    Tri t{};
    const hp::Vec3d p[3] = {a, b, c};
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) t[i][k] = std::llround(p[i][k] / unit);
    std::sort(t.begin(), t.end());
    return t;
}

std::multiset<Tri> flattened(const fs::path& file, double unit) {
    const hp::LoadedMesh m = hp::load_mesh(file);
    std::multiset<Tri> out;
    for (const auto& t : m.mesh.triangles)
        out.insert(key(m.mesh.vertices[t[0]], m.mesh.vertices[t[1]], m.mesh.vertices[t[2]], unit));
    return out;
}

std::multiset<Tri> placed_parts(const fs::path& file, double unit) {
    const hp::Assembly a = hp::read_assembly(file);
    std::multiset<Tri> out;
    for (const hp::AssemblyPart& p : a.parts) {
        hp::MeshLoadOptions o;
        o.part = p.name;
        const hp::LoadedMesh m = hp::load_mesh(file, o);
        for (const auto& t : m.mesh.triangles)
            out.insert(key(p.placement.apply(m.mesh.vertices[t[0]]), p.placement.apply(m.mesh.vertices[t[1]]),
                           p.placement.apply(m.mesh.vertices[t[2]]), unit));
    }
    return out;
}

}  // namespace

TEST(Assembly, InstancedPegsShareOneGeometry) {
    const fs::path file = make("pegs", "pegs.gltf", "9");
    const hp::Assembly a = hp::read_assembly(file);
    ASSERT_EQ(a.parts.size(), 10u);
    ASSERT_EQ(a.geometries.size(), 2u);
    // Assimp makes the glTF scene's one root node the root: names are the paths below it.
    EXPECT_EQ(a.parts[0].name, "plate");
    EXPECT_EQ(a.parts[1].name, "peg");
    EXPECT_EQ(a.parts[2].name, "peg#2");
    EXPECT_EQ(a.geometries[0].instances, 1u);
    EXPECT_EQ(a.geometries[1].instances, 9u);
    for (std::size_t i = 1; i < a.parts.size(); ++i) EXPECT_EQ(a.parts[i].geometry, 1u);
    // make_assembly.py: peg i at (-0.02 + 0.04 (i % 3) / 2, -0.02 + 0.04 (i / 3) / 2, 0.005), rotated 0.3 i about z.
    for (std::size_t i = 0; i < 9; ++i) {
        const hp::Placement& p = a.parts[i + 1].placement;
        EXPECT_NEAR(p.position.x, -0.02 + 0.02 * static_cast<double>(i % 3), 1e-7);
        EXPECT_NEAR(p.position.y, -0.02 + 0.02 * static_cast<double>(i / 3), 1e-7);
        EXPECT_NEAR(p.position.z, 0.005, 1e-7);
        EXPECT_NEAR(p.quaternion[0], std::cos(0.15 * static_cast<double>(i)), 1e-6);
        EXPECT_NEAR(p.quaternion[3], std::sin(0.15 * static_cast<double>(i)), 1e-6);
        EXPECT_NEAR(p.quaternion[1], 0, 1e-7);
        EXPECT_NEAR(p.quaternion[2], 0, 1e-7);
    }
}

TEST(Assembly, PlacedPartsAreTheFlattenedMesh) {
    for (const auto& [kind, file] : {std::pair{"pegs", "pegs5.gltf"}, std::pair{"baked", "baked.gltf"}}) {
        const fs::path path = make(kind, file, std::string(kind) == "pegs" ? "5" : "");
        const double unit = 1e-6;  // a micrometre: single-precision files placed in double
        EXPECT_EQ(placed_parts(path, unit), flattened(path, unit)) << kind;
    }
}

TEST(Assembly, ScaleAndReflectionAreBakedIntoGeometries) {
    const hp::Assembly a = hp::read_assembly(make("baked", "baked2.gltf"));
    ASSERT_EQ(a.parts.size(), 3u);
    ASSERT_EQ(a.geometries.size(), 3u);  // the same mesh: plain, scaled by 2, mirrored
    EXPECT_EQ(a.geometries[0].baked, "");
    EXPECT_EQ(a.geometries[1].baked, "scale 2");
    EXPECT_EQ(a.geometries[2].baked, "reflection");
    EXPECT_EQ(a.notes.size(), 2u);
    // Baked placements keep their translation and are rigid.
    EXPECT_NEAR(a.parts[1].placement.position.x, 0.05, 1e-7);  // single precision in the file
    EXPECT_NEAR(a.parts[2].placement.position.x, 0.1, 1e-7);
    EXPECT_EQ(a.parts[2].placement.quaternion, (std::array<double, 4>{1, 0, 0, 0}));
    // The scaled geometry is the box twice as large.
    hp::MeshLoadOptions o;
    o.part = "1";
    const hp::LoadedMesh m = hp::load_mesh(make("baked", "baked3.gltf"), o);
    EXPECT_NEAR(m.diagnostics.bbox.size().z, 0.06, 1e-7);
    EXPECT_EQ(m.part, "@1");
    EXPECT_EQ(m.part_name, "double");
}

TEST(Assembly, ObjGroupsArePartsInTheIdentityFrame) {
    const fs::path file = make("groups", "groups.obj");
    const hp::Assembly a = hp::read_assembly(file);
    ASSERT_EQ(a.parts.size(), 3u);
    std::set<std::string> names;
    for (const auto& p : a.parts) {
        names.insert(p.name.substr(p.name.rfind('/') + 1));
        EXPECT_EQ(p.placement.position, (hp::Vec3d{0, 0, 0}));
    }
    EXPECT_EQ(names, (std::set<std::string>{"left", "middle", "right"}));
    // Three boxes of the same shape at different places: three geometries (content, not shape).
    EXPECT_EQ(a.geometries.size(), 3u);
    EXPECT_EQ(placed_parts(file, 1e-9), flattened(file, 1e-9));
}

TEST(Assembly, ColladaInstanceNodesShareGeometry) {
    const fs::path file = "/usr/share/assimp/models/Collada/teapot_instancenodes.DAE";
    if (!fs::exists(file)) GTEST_SKIP() << "assimp-testmodels is not installed";
    const hp::Assembly a = hp::read_assembly(file);
    EXPECT_GT(a.parts.size(), a.geometries.size());
    std::size_t instances = 0;
    for (const auto& g : a.geometries) instances += g.instances;
    EXPECT_EQ(instances, a.parts.size());
    EXPECT_EQ(placed_parts(file, 1e-3), flattened(file, 1e-3));
}

// A real assembly: the two-cylinder engine of the glTF sample models (Debian's assimp-testmodels),
// 67 parts of 29 meshes, a bolt placed 20 times.
TEST(Assembly, TwoCylinderEngineKeepsItsInstances) {
    const fs::path file = "/usr/share/assimp/models/glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb";
    if (!fs::exists(file)) GTEST_SKIP() << "assimp-testmodels is not installed";
    const hp::Assembly a = hp::read_assembly(file);
    EXPECT_EQ(a.parts.size(), 67u);
    EXPECT_EQ(a.geometries.size(), 29u);
    std::size_t most = 0;
    for (const auto& g : a.geometries) most = std::max(most, g.instances);
    EXPECT_EQ(most, 20u);
    // The flattened mesh welds the parts together and drops a face two touching parts share: the
    // placed parts hold every flattened triangle (to 0.01 mm, the file's millimetres rounded) and
    // exactly the duplicates more.
    const std::multiset<Tri> placed = placed_parts(file, 1e-2), flat = flattened(file, 1e-2);
    std::vector<Tri> missing;
    std::set_difference(flat.begin(), flat.end(), placed.begin(), placed.end(), std::back_inserter(missing));
    // A corner rounded to the other side of a 0.01 mm step: the same triangle within one step.
    std::map<std::array<long long, 3>, std::vector<const Tri*>> near;
    auto cell = [](const Tri& t, int dx, int dy, int dz) {
        return std::array<long long, 3>{t[0][0] / 4 + dx, t[0][1] / 4 + dy, t[0][2] / 4 + dz};
    };
    for (const Tri& t : placed) near[cell(t, 0, 0, 0)].push_back(&t);
    std::size_t unmatched = 0;
    for (const Tri& m : missing) {
        bool found = false;
        for (int d = 0; d < 27 && !found; ++d)
            for (const Tri* t : near[cell(m, d % 3 - 1, d / 3 % 3 - 1, d / 9 - 1)]) {
                bool close = true;
                for (int i = 0; i < 3; ++i)
                    for (int k = 0; k < 3; ++k) close = close && std::llabs((*t)[i][k] - m[i][k]) <= 1;
                found = found || close;
            }
        unmatched += !found;
    }
    EXPECT_EQ(unmatched, 0u) << "flattened triangles no part holds, of " << missing.size() << " off by rounding";
    EXPECT_EQ(placed.size() - flat.size(), hp::load_mesh(file).diagnostics.dropped_duplicate);
}

TEST(Assembly, SelectorsAndTheirErrors) {
    const fs::path file = make("pegs", "pegs3.gltf", "3");
    const hp::Assembly a = hp::read_assembly(file);
    EXPECT_EQ(a.select("peg#3", "f").index, 3u);
    EXPECT_EQ(a.select("2", "f").index, 2u);
    EXPECT_EQ(a.select("@1", "f").index, 1u);  // geometry 1's first part
    for (const char* bad : {"nope", "4", "@2", "@", "@x"}) {
        try {
            a.select(bad, file.string());
            ADD_FAILURE() << bad;
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
            EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos);
        }
    }
    // --part on a whole load: the geometry in its own frame (the peg stands at the origin).
    hp::MeshLoadOptions o;
    o.part = "peg#2";
    const hp::LoadedMesh m = hp::load_mesh(file, o);
    EXPECT_NEAR(m.diagnostics.bbox.min.z, 0, 1e-9);
    EXPECT_NEAR(m.diagnostics.bbox.max.z, 0.02, 1e-7);
    EXPECT_EQ(m.source_hash, hp::load_mesh(file).source_hash);  // the file's hash either way
}

TEST(Assembly, UnitsScaleThePlacements) {
    const fs::path file = make("pegs", "pegs2.gltf", "2");
    hp::MeshLoadOptions mm;
    mm.units = "mm";
    const hp::Assembly a = hp::read_assembly(file, mm);
    EXPECT_NEAR(a.parts[2].placement.position.x, 0.00002, 1e-12);  // 0.02 "mm" in metres
    mm.part = "1";
    EXPECT_NEAR(hp::load_mesh(file, mm).diagnostics.bbox.max.z, 0.00002, 1e-10);
}

TEST(Assembly, NonFiniteTransformIsRefusedNamingThePart) {
    const fs::path file = make("nan", "nan.gltf");
    try {
        hp::read_assembly(file);
        ADD_FAILURE() << "accepted";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find("lost"), std::string::npos) << e.what();
    }
}

TEST(Assembly, PlacementFromRotationMatchesMatrix) {
    // A rotation of 120 degrees about (1,1,1): x -> y -> z -> x; quaternion (1/2)(1, 1, 1, 1).
    const hp::Placement p = hp::make_placement({{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}}}, {1, 2, 3});
    for (double c : p.quaternion) EXPECT_NEAR(c, 0.5, 1e-15);
    const hp::Vec3d x = p.apply({1, 0, 0});
    EXPECT_NEAR(x.x, 1, 1e-15);
    EXPECT_NEAR(x.y, 3, 1e-15);
    EXPECT_NEAR(x.z, 3, 1e-15);
    // 180 degrees about x: trace -1, the branch without w.
    const hp::Placement h = hp::make_placement({{{1, 0, 0}, {0, -1, 0}, {0, 0, -1}}}, {});
    EXPECT_NEAR(h.quaternion[0], 0, 1e-15);
    EXPECT_NEAR(h.quaternion[1], 1, 1e-15);
}
