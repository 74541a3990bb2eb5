#include "formats/cfm.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "formats/container.hpp"

namespace fs = std::filesystem;
namespace cfm = hp::cfm;
using hp::Vec3d;

namespace {

// A unit cube (two triangles per face) and a tree on points of its surface.
struct Fixture {
    hp::TriMesh mesh;
    hp::PointSphereTree tree;
    Fixture() {
        for (int v = 0; v < 8; ++v) mesh.vertices.push_back({v & 4 ? 1.0 : -1.0, v & 2 ? 1.0 : -1.0, v & 1 ? 1.0 : -1.0});
        mesh.triangles = {{0, 1, 3}, {0, 3, 2}, {4, 6, 7}, {4, 7, 5}, {0, 4, 5}, {0, 5, 1},
                          {2, 3, 7}, {2, 7, 6}, {0, 2, 6}, {0, 6, 4}, {1, 5, 7}, {1, 7, 3}};
        std::mt19937 rng(9);
        std::uniform_real_distribution<double> u(-1, 1);
        std::vector<Vec3d> pts;
        for (int i = 0; i < 300; ++i) {
            Vec3d p{u(rng), u(rng), u(rng)};
            p[i % 3] = (i / 3) % 2 ? 1 : -1;
            pts.push_back(p);
        }
        tree = hp::build_point_sphere_tree(pts, {});
    }
};

fs::path temp(const std::string& name) {
    return fs::temp_directory_path() / ("hp_cfm_" + std::to_string(::getpid()) + "_" + name + ".hcfm");
}

hp::ExitCode read_error(const fs::path& p, std::string* message = nullptr) {
    try {
        hp::read_cfm_file(p);
    } catch (const hp::Error& e) {
        if (message) *message = e.what();
        return e.code();
    }
    return hp::ExitCode::ok;
}

}  // namespace

TEST(CfmFormat, RoundTripFullAndNormal) {
    Fixture f;
    for (cfm::Store store : {cfm::Store::full, cfm::Store::normal}) {
        cfm::Options o;
        o.stacks = 10;
        o.min_stacks = 3;
        o.store = store;
        const cfm::ClosestFeatureMap map = cfm::build_cfm(f.mesh, f.tree, o);
        const fs::path p = temp(cfm::store_name(store));
        hp::write_cfm_file(p, {{"tool", "test"}, {"source_hash", "abc"}}, map);
        const hp::CfmFile r = hp::read_cfm_file(p);
        EXPECT_EQ(r.metadata["source_hash"], "abc");
        EXPECT_EQ(r.file_size, fs::file_size(p));
        EXPECT_EQ(r.map.store, store);
        EXPECT_EQ(r.map.levels, map.levels);
        ASSERT_EQ(r.map.spheres.size(), map.spheres.size());
        for (std::size_t s = 0; s < map.spheres.size(); ++s) {
            EXPECT_EQ(r.map.spheres[s].center, map.spheres[s].center);
            EXPECT_EQ(r.map.spheres[s].radius, map.spheres[s].radius);
            EXPECT_EQ(r.map.spheres[s].stacks, map.spheres[s].stacks);
            EXPECT_EQ(r.map.spheres[s].single_feature, map.spheres[s].single_feature);
            EXPECT_EQ(r.map.spheres[s].first, map.spheres[s].first);
            EXPECT_EQ(r.map.lookup(s, {0.3, -0.5, 0.2}), map.lookup(s, {0.3, -0.5, 0.2}));
        }
        EXPECT_EQ(r.map.normals, map.normals);
        EXPECT_EQ(r.map.types, map.types);
        EXPECT_EQ(r.map.features, map.features);
        EXPECT_EQ(r.map.points, map.points);
        if (store == cfm::Store::normal) {
            EXPECT_TRUE(r.map.points.empty());
        }
        // Same input, same bytes.
        const fs::path q = temp("again");
        hp::write_cfm_file(q, {{"tool", "test"}, {"source_hash", "abc"}}, cfm::build_cfm(f.mesh, f.tree, o));
        std::ifstream a(p, std::ios::binary), b(q, std::ios::binary);
        EXPECT_TRUE(std::equal(std::istreambuf_iterator<char>(a), {}, std::istreambuf_iterator<char>(b)));
        fs::remove(p);
        fs::remove(q);
    }
}

// Files whose checksums are right but whose structure is not (as a buggy or hostile writer
// would make them): every one is refused with bad_input.
TEST(CfmFormat, RejectsBrokenStructure) {
    Fixture f;
    cfm::Options o;
    o.stacks = 8;
    o.min_stacks = 4;
    o.store = cfm::Store::full;
    const cfm::ClosestFeatureMap good = cfm::build_cfm(f.mesh, f.tree, o);
    ASSERT_GE(good.spheres.size(), 3u);
    std::size_t multi = 0;
    while (good.spheres[multi].single_feature) ++multi;
    const std::vector<std::pair<const char*, std::function<void(cfm::ClosestFeatureMap&)>>> damage = {
        {"count", [&](cfm::ClosestFeatureMap& m) { m.spheres[multi].count -= 1; }},
        {"first", [](cfm::ClosestFeatureMap& m) { m.spheres[1].first += 1; }},
        {"stacks", [](cfm::ClosestFeatureMap& m) { m.spheres[0].stacks += 1; }},
        {"level", [](cfm::ClosestFeatureMap& m) { m.spheres[1].level = 1; }},
        {"cluster", [](cfm::ClosestFeatureMap& m) { m.spheres[2].cluster = 7; }},
        {"radius", [](cfm::ClosestFeatureMap& m) { m.spheres[1].radius = -1; }},
        {"center", [](cfm::ClosestFeatureMap& m) { m.spheres[1].center.x = NAN; }},
        {"normal", [](cfm::ClosestFeatureMap& m) { m.normals[3] = {2, 0, 0}; }},
        {"type", [](cfm::ClosestFeatureMap& m) { m.types[2] = static_cast<hp::FeatureType>(7); }},
        {"point", [](cfm::ClosestFeatureMap& m) { m.points[2].y = INFINITY; }},
        {"missing points", [](cfm::ClosestFeatureMap& m) { m.points.pop_back(); }},
        {"min stacks", [](cfm::ClosestFeatureMap& m) { m.min_stacks = 1; }},
        {"root stacks", [](cfm::ClosestFeatureMap& m) { m.root_stacks = 3; }},
        {"levels", [](cfm::ClosestFeatureMap& m) { m.levels += 1; }},
        {"sampling", [](cfm::ClosestFeatureMap& m) { m.sampling = static_cast<cfm::Sampling>(5); }},
    };
    const fs::path p = temp("broken");
    hp::write_cfm_file(p, {}, good);
    EXPECT_EQ(read_error(p), hp::ExitCode::ok);
    for (const auto& [name, hurt] : damage) {
        cfm::ClosestFeatureMap m = good;
        hurt(m);
        hp::write_cfm_file(p, {}, m);
        std::string msg;
        EXPECT_EQ(read_error(p, &msg), hp::ExitCode::bad_input) << name;
        EXPECT_NE(msg.find(p.string()), std::string::npos) << name << ": " << msg;
    }
    fs::remove(p);
}

// Byte damage is the container's job (CRC over everything); spot-check it reaches the reader,
// and that a container of another kind is refused.
TEST(CfmFormat, RejectsDamagedBytesAndOtherKinds) {
    Fixture f;
    const cfm::ClosestFeatureMap map = cfm::build_cfm(f.mesh, f.tree, {});
    const fs::path p = temp("bytes");
    hp::write_cfm_file(p, {}, map);
    std::string bytes;
    {
        std::ifstream in(p, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    for (std::size_t at : {std::size_t{3}, std::size_t{45}, bytes.size() / 2, bytes.size() - 1}) {
        std::string b = bytes;
        b[at] = static_cast<char>(b[at] ^ 0x10);
        std::ofstream(p, std::ios::binary | std::ios::trunc) << b;
        EXPECT_EQ(read_error(p), hp::ExitCode::bad_input) << "flip at " << at;
    }
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 9);
    EXPECT_EQ(read_error(p), hp::ExitCode::bad_input);
    hp::container::Writer w(hp::container::Kind::tree, {});
    w.write(p);
    std::string msg;
    EXPECT_EQ(read_error(p, &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("expected a closest feature map"), std::string::npos) << msg;
    fs::remove(p);
}
