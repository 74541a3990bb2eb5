#include "geometry/bvh.hpp"

#include <filesystem>
#include <random>

#include <gtest/gtest.h>
#include <tbb/parallel_for.h>

#include "shapes.hpp"

using hp::Vec3d;

namespace {
// Brute force over all triangles, with the closest point computed per triangle.
double brute_distance2(const hp::TriMesh& m, const Vec3d& p) {
    double best = INFINITY;
    for (const auto& t : m.triangles)
        best = std::min(best, hp::closest_point_on_triangle(p, m.vertices[t[0]], m.vertices[t[1]], m.vertices[t[2]]).distance2);
    return best;
}

void expect_exact(const hp::TriMesh& mesh, unsigned seed, double spread, int queries) {
    hp::TriangleBvh bvh(mesh);
    EXPECT_LE(bvh.depth(), hp::TriangleBvh::kMaxDepth);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int n = 0; n < queries; ++n) {
        const Vec3d p = Vec3d{u(rng), u(rng), u(rng)} * spread;
        const double best = brute_distance2(mesh, p);
        const hp::MeshHit hit = bvh.closest(p);
        ASSERT_NE(hit.triangle, UINT32_MAX);
        ASSERT_EQ(hit.closest.distance2, best) << n;  // the same kernel on the same triangle: bit-equal
        // The reported triangle and feature are consistent with the reported point.
        const auto& t = mesh.triangles[hit.triangle];
        const hp::ClosestPoint again = hp::closest_point_on_triangle(p, mesh.vertices[t[0]], mesh.vertices[t[1]], mesh.vertices[t[2]]);
        ASSERT_EQ(again.point, hit.closest.point);
        ASSERT_EQ(again.type, hit.closest.type);
        // A bound below the answer finds nothing; a bound at it still finds it.
        if (best > 0) {
            ASSERT_EQ(bvh.closest(p, best * 0.999).triangle, UINT32_MAX);
        }
        ASSERT_EQ(bvh.closest(p, best).closest.distance2, best);
    }
}
}  // namespace

TEST(Bvh, EqualsBruteForceOnRandomSoups) {
    for (unsigned seed = 1; seed <= 3; ++seed) expect_exact(hp::test::random_soup(2000 * static_cast<int>(seed), seed), seed, 1.5, 500);
    // Large triangles that overlap a lot (boxes overlap, pruning is weak).
    expect_exact(hp::test::random_soup(300, 9, 1.0), 9, 2.0, 500);
}

TEST(Bvh, EqualsBruteForceOnClosedMeshes) {
    expect_exact(hp::test::uv_sphere(40, 60), 4, 1.3, 1000);
    const auto dir = std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes";
    expect_exact(hp::load_mesh(dir / "gear.obj").mesh, 5, 1.2, 300);
    expect_exact(hp::load_mesh(dir / "torus.off").mesh, 6, 1.5, 300);
}

TEST(Bvh, CoincidentCentroidsKeepTheDepthBounded) {
    // 5000 copies of the same triangle plus a few others: SAH finds no split, median splits do.
    hp::TriMesh m;
    m.vertices = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {5, 5, 5}, {6, 5, 5}, {5, 6, 5}};
    for (int i = 0; i < 5000; ++i) m.triangles.push_back({0, 1, 2});
    m.triangles.push_back({3, 4, 5});
    hp::TriangleBvh bvh(m);
    EXPECT_LE(bvh.depth(), hp::TriangleBvh::kMaxDepth);
    hp::MeshHit hit = bvh.closest({5.2, 5.2, 6});
    EXPECT_EQ(hit.triangle, 5000u);
    EXPECT_DOUBLE_EQ(hit.closest.distance2, 1.0);
    EXPECT_EQ(hp::TriangleBvh(hp::TriMesh{}).closest({0, 0, 0}).triangle, UINT32_MAX);
}

TEST(Bvh, ConcurrentQueriesGiveTheSerialAnswers) {
    const hp::TriMesh mesh = hp::test::random_soup(5000, 21);
    const hp::TriangleBvh bvh(mesh);
    std::mt19937 rng(22);
    std::uniform_real_distribution<double> u(-1.2, 1.2);
    std::vector<Vec3d> points(20000);
    for (Vec3d& p : points) p = {u(rng), u(rng), u(rng)};
    std::vector<hp::MeshHit> serial(points.size()), parallel(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) serial[i] = bvh.closest(points[i]);
    tbb::parallel_for(std::size_t{0}, points.size(), [&](std::size_t i) { parallel[i] = bvh.closest(points[i]); });
    for (std::size_t i = 0; i < points.size(); ++i) {
        ASSERT_EQ(serial[i].triangle, parallel[i].triangle);
        ASSERT_EQ(serial[i].closest.distance2, parallel[i].closest.distance2);
    }
}
