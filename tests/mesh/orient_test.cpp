#include "mesh/orient.hpp"

#include <filesystem>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../geometry/shapes.hpp"
#include "mesh/mesh.hpp"

namespace {

using hp::TriMesh;

// Signed volume (positive when wound outward), summed over the given triangles.
double volume(const TriMesh& m, std::size_t first = 0, std::size_t last = SIZE_MAX) {
    double v = 0;
    for (std::size_t t = first; t < std::min(last, m.triangles.size()); ++t) {
        const auto& tri = m.triangles[t];
        v += hp::dot(m.vertices[tri[0]], hp::cross(m.vertices[tri[1]], m.vertices[tri[2]])) / 6.0;
    }
    return v;
}

void flip(TriMesh& m, std::size_t t) { std::swap(m.triangles[t][1], m.triangles[t][2]); }

// Appends `b` to `a`, its vertices scaled by `s`.
void append(TriMesh& a, const TriMesh& b, double s = 1) {
    const auto base = static_cast<std::uint32_t>(a.vertices.size());
    for (const auto& v : b.vertices) a.vertices.push_back(v * s);
    for (auto t : b.triangles) a.triangles.push_back({t[0] + base, t[1] + base, t[2] + base});
}

// Which triangles of `m` differ in winding from `ref` (same vertices, same triangle order).
std::set<std::size_t> differing(const TriMesh& m, const TriMesh& ref) {
    std::set<std::size_t> out;
    for (std::size_t t = 0; t < m.triangles.size(); ++t) {
        auto a = m.triangles[t], b = ref.triangles[t];
        // Same cyclic order <=> some rotation of a equals b.
        const bool same = a == b || std::array{a[1], a[2], a[0]} == b || std::array{a[2], a[0], a[1]} == b;
        if (!same) out.insert(t);
    }
    return out;
}

}  // namespace

TEST(Orient, ShuffledClosedSphereComesBackOutward) {
    const TriMesh ref = hp::test::uv_sphere(10, 14);
    TriMesh m = ref;
    std::mt19937 rng(7);
    std::set<std::size_t> flipped;
    for (std::size_t t = 0; t < m.triangles.size(); ++t)
        if (rng() % 3 == 0) flip(m, t), flipped.insert(t);
    ASSERT_GT(flipped.size(), 20u);
    const hp::OrientationRepair r = hp::orient_consistently(m);
    EXPECT_TRUE(differing(m, ref).empty()) << "every face wound as in the outward sphere";
    EXPECT_EQ(r.flipped_faces, flipped.size());
    EXPECT_EQ(r.parts, 1u);
    EXPECT_EQ(hp::diagnose(m).inconsistent_edges, 0u);
    EXPECT_GT(volume(m), 0);
}

TEST(Orient, InwardClosedMeshIsTurnedOutward) {
    TriMesh m = hp::test::uv_sphere(6, 8);
    for (std::size_t t = 0; t < m.triangles.size(); ++t) flip(m, t);
    const hp::OrientationRepair r = hp::orient_consistently(m);
    EXPECT_EQ(r.flipped_faces, m.triangles.size());
    EXPECT_TRUE(differing(m, hp::test::uv_sphere(6, 8)).empty());
}

// A hollow ball: the cavity's shell must face inward (towards the cavity), whatever it was.
TEST(Orient, CavityInsideAClosedPartFacesInward) {
    const TriMesh sphere = hp::test::uv_sphere(8, 12);
    TriMesh m;
    append(m, sphere);
    append(m, sphere, 0.5);  // wound outward: wrong for a cavity
    const std::size_t n = sphere.triangles.size();
    flip(m, 3);  // and one outer face flipped
    const hp::OrientationRepair r = hp::orient_consistently(m);
    EXPECT_EQ(r.flipped_faces, n + 1);
    EXPECT_EQ(r.parts, 2u);
    EXPECT_NEAR(volume(m, 0, n), volume(sphere), 1e-12);
    EXPECT_NEAR(volume(m, n), -volume(sphere) * 0.125, 1e-12);

    // Two disjoint balls side by side: both outward.
    TriMesh two;
    append(two, sphere);
    TriMesh moved = sphere;
    for (auto& v : moved.vertices) v.x += 3;
    for (std::size_t t = 0; t < moved.triangles.size(); ++t) flip(moved, t);
    append(two, moved);
    EXPECT_EQ(hp::orient_consistently(two).flipped_faces, n);
    EXPECT_NEAR(volume(two, 0, n), volume(sphere), 1e-9);
    EXPECT_NEAR(volume(two, n), volume(sphere), 1e-9);  // a closed part's volume does not depend on where it is
}

// An open hemisphere keeps the winding most of its faces had.
TEST(Orient, OpenPartKeepsItsMajorityWinding) {
    const TriMesh ref = hp::test::uv_sphere(8, 10, true);
    TriMesh inward = ref;
    for (std::size_t t = 0; t < inward.triangles.size(); ++t) flip(inward, t);
    TriMesh m = inward;
    flip(m, 0), flip(m, 5), flip(m, 9);  // three faces disagree with the rest
    const hp::OrientationRepair r = hp::orient_consistently(m);
    EXPECT_EQ(r.flipped_faces, 3u);
    EXPECT_TRUE(differing(m, inward).empty());
}

// A Moebius strip cannot be oriented; a fan of three triangles on one edge is not manifold:
// both are kept as they were and counted.
TEST(Orient, NonOrientableAndNonManifoldPartsAreKept) {
    TriMesh strip;
    const int n = 12;
    for (int i = 0; i < n; ++i) {
        const double a = 2 * std::numbers::pi * i / n, h = 0.3;
        const hp::Vec3d c{std::cos(a), std::sin(a), 0}, up{0, 0, 1};
        const hp::Vec3d d = c * std::cos(a / 2) * h + up * std::sin(a / 2) * h;  // half a turn per loop
        strip.vertices.push_back(c + d);
        strip.vertices.push_back(c - d);
    }
    for (std::uint32_t i = 0; i < n; ++i) {
        std::uint32_t a = 2 * i, b = 2 * i + 1, c = 2 * ((i + 1) % n), d = 2 * ((i + 1) % n) + 1;
        if (i + 1 == n) std::swap(c, d);  // the twist joins top to bottom
        strip.triangles.push_back({a, b, c});
        strip.triangles.push_back({b, d, c});
    }
    TriMesh before = strip;
    const hp::OrientationRepair r = hp::orient_consistently(strip);
    EXPECT_EQ(r.non_orientable_parts, 1u);
    EXPECT_EQ(r.flipped_faces, 0u);
    EXPECT_TRUE(differing(strip, before).empty());

    TriMesh fan;
    fan.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}};
    fan.triangles = {{0, 1, 2}, {0, 1, 3}, {1, 0, 4}};
    before = fan;
    const hp::OrientationRepair f = hp::orient_consistently(fan);
    EXPECT_EQ(f.non_manifold_parts, 3u);  // each triangle is a part of its own (no manifold edge)
    EXPECT_EQ(f.flipped_faces, 0u);
    EXPECT_TRUE(differing(fan, before).empty());
}

TEST(Orient, ImportRepairsAndSaysSo) {
    const auto dir = std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes";
    const hp::LoadedMesh m = hp::load_mesh(dir / "inverted-box.obj");
    EXPECT_EQ(m.diagnostics.orientation, "repaired");
    EXPECT_EQ(m.diagnostics.flipped_faces, 12u);
    EXPECT_NEAR(m.diagnostics.signed_volume, 1.0, 1e-12);
    EXPECT_EQ(hp::to_json(m.diagnostics)["flipped_faces"], 12);
    EXPECT_NE(hp::format_diagnostics(m.diagnostics).find("12 faces flipped"), std::string::npos);

    hp::MeshLoadOptions keep;
    keep.repair_orientation = false;
    const hp::LoadedMesh raw = hp::load_mesh(dir / "inverted-box.obj", keep);
    EXPECT_EQ(raw.diagnostics.orientation, "inward");
    EXPECT_EQ(raw.diagnostics.flipped_faces, 0u);
    EXPECT_NEAR(raw.diagnostics.signed_volume, -1.0, 1e-12);

    const hp::LoadedMesh ok = hp::load_mesh(dir / "torus.off");
    EXPECT_EQ(ok.diagnostics.orientation, "outward");
    EXPECT_EQ(ok.diagnostics.flipped_faces, 0u);
}
