#include "geometry/pseudo_normals.hpp"

#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "geometry/bvh.hpp"
#include "geometry/winding.hpp"
#include "shapes.hpp"

using hp::Vec3d;

namespace {
// Near a closed outward mesh, the pseudo-normal sign test must agree with the winding number
// (exact) at every point, including those whose closest feature is an edge or a vertex.
void expect_signs_match_winding(const hp::TriMesh& mesh, unsigned seed, double orient = 1) {
    const hp::TriangleBvh bvh(mesh);
    const hp::PseudoNormals normals(mesh);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    const double scale = mesh.bounds().diagonal();
    int features[3] = {0, 0, 0};
    for (int n = 0; n < 3000; ++n) {
        const Vec3d& v = mesh.vertices[rng() % mesh.vertices.size()];
        const Vec3d p = v + Vec3d{u(rng), u(rng), u(rng)} * (0.03 * scale);
        const hp::MeshHit hit = bvh.closest(p);
        if (hit.closest.distance2 < 1e-16 * scale * scale) continue;  // on the surface: no sign
        const double w = hp::winding_number(mesh, p);
        const bool outside = orient * hp::dot(p - hit.closest.point, normals.at(hit.triangle, hit.closest)) > 0;
        ASSERT_EQ(outside, std::abs(w) < 0.5) << n << " w=" << w << " feature " << int(hit.closest.type);
        ++features[static_cast<int>(hit.closest.type)];
    }
    for (int f : features) EXPECT_GT(f, 5) << "faces, edges and vertices are all exercised";
}
}  // namespace

TEST(PseudoNormals, SignsAgreeWithTheWindingNumberOnClosedMeshes) {
    expect_signs_match_winding(hp::test::uv_sphere(12, 16), 1);
    const auto dir = std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes";
    expect_signs_match_winding(hp::load_mesh(dir / "gear.obj").mesh, 2);
    expect_signs_match_winding(hp::load_mesh(dir / "torus.off").mesh, 3);
    hp::MeshLoadOptions as_wound;
    as_wound.repair_orientation = false;
    expect_signs_match_winding(hp::load_mesh(dir / "inverted-box.obj", as_wound).mesh, 4, -1);
}

// A closed mesh whose faces are wound inconsistently (as CAD exports often are): the sign of the
// pseudo-normal test is only right once import has oriented it (mesh/orient.hpp).
TEST(PseudoNormals, SignsAgreeOnAShuffledMeshAfterImport) {
    hp::TriMesh soup = hp::test::uv_sphere(12, 16);
    std::mt19937 rng(11);
    for (auto& t : soup.triangles)
        if (rng() % 4 == 0) std::swap(t[1], t[2]);
    const hp::LoadedMesh m = hp::prepare_mesh(soup, {}, "shuffled sphere");
    EXPECT_GT(m.diagnostics.flipped_faces, 20u);
    EXPECT_EQ(m.diagnostics.orientation, "repaired");
    expect_signs_match_winding(m.mesh, 5);
}

TEST(PseudoNormals, CubeCornerAndEdgeNormals) {
    const hp::TriMesh cube = hp::load_mesh(std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / "seam-cube.obj").mesh;
    const hp::PseudoNormals normals(cube);
    // Every corner of the unit cube: the angle-weighted sum of its three faces (each face meets
    // the corner at pi/2 in total, however it is triangulated) is (±1, ±1, ±1)/sqrt(3).
    for (std::uint32_t v = 0; v < cube.vertices.size(); ++v) {
        const Vec3d& p = cube.vertices[v];
        if ((p.x != 0 && p.x != 1) || (p.y != 0 && p.y != 1) || (p.z != 0 && p.z != 1)) continue;
        const Vec3d want = hp::normalized(Vec3d{p.x * 2 - 1, p.y * 2 - 1, p.z * 2 - 1});
        EXPECT_NEAR(hp::length(normals.vertex(v) - want), 0, 1e-12) << v;
    }
    // Edges on the cube's edges bisect their two faces; edges inside a face are the face's normal.
    for (std::uint32_t t = 0; t < cube.triangles.size(); ++t)
        for (int i = 0; i < 3; ++i) {
            const Vec3d a = cube.vertices[cube.triangles[t][static_cast<std::size_t>(i)]];
            const Vec3d b = cube.vertices[cube.triangles[t][static_cast<std::size_t>((i + 1) % 3)]];
            const Vec3d m = (a + b) * 0.5, n = normals.edge(t, i);
            Vec3d want;
            for (int k = 0; k < 3; ++k) want[k] = m[k] == 0 ? -1 : (m[k] == 1 ? 1 : 0);
            EXPECT_NEAR(hp::length(n - hp::normalized(want)), 0, 1e-12) << t << " " << i;
        }
}
