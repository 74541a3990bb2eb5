#include "geometry/winding.hpp"

#include <array>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "shapes.hpp"

using hp::Vec3d;

namespace {
hp::TriMesh sample(const char* name) {
    hp::MeshLoadOptions as_wound;  // inverted-box.obj stays inward: these tests are about that
    as_wound.repair_orientation = false;
    return hp::load_mesh(std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / name, as_wound).mesh;
}
}  // namespace

TEST(Winding, ClosedInvertedAndOpenBoxes) {
    hp::TriMesh cube = sample("seam-cube.obj"), inv = sample("inverted-box.obj"), open = sample("open-box.obj");
    EXPECT_NEAR(hp::winding_number(cube, {0.5, 0.5, 0.5}), 1.0, 1e-12);
    EXPECT_NEAR(hp::winding_number(cube, {0.1, 0.9, 0.2}), 1.0, 1e-12);
    EXPECT_NEAR(hp::winding_number(cube, {1.5, 0.5, 0.5}), 0.0, 1e-12);
    EXPECT_NEAR(hp::winding_number(inv, {0.5, 0.5, 0.5}), -1.0, 1e-12);
    // The open box (no top face) seen from its centre: the missing face subtends 1/6 of the sphere.
    EXPECT_NEAR(hp::winding_number(open, {0.5, 0.5, 0.5}), 5.0 / 6.0, 1e-12);
}

TEST(Winding, SphereInsideAndOutside) {
    const hp::TriMesh sphere = hp::test::uv_sphere(30, 40);
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> u(-2, 2);
    int inside = 0;
    for (int n = 0; n < 2000; ++n) {
        const Vec3d p{u(rng), u(rng), u(rng)};
        const double r = hp::length(p);
        if (std::abs(r - 1) < 0.02) continue;  // the faceted surface is within 0.01 of the unit sphere
        const double want = r < 1 ? 1.0 : 0.0;
        inside += r < 1;
        ASSERT_NEAR(hp::winding_number(sphere, p), want, 1e-10) << p.x << " " << p.y << " " << p.z;
    }
    EXPECT_GT(inside, 50);
}

TEST(Winding, OpenHemisphereOnItsAxis) {
    // Upper unit hemisphere, open at the equator. On the axis at height z (0 < z != 1):
    // w = w_sphere - w_lower cap, and the lower cap subtends what the equator disk does:
    // w_lower = (1 - z / sqrt(1 + z^2)) / 2. So w = (1 + z/sqrt(1+z^2))/2 inside (0.5 at the
    // centre), -(1 - z/sqrt(1+z^2))/2 above the pole. The mesh's rim is a 512-gon: the closed
    // form holds to about 1e-4.
    const hp::TriMesh cap = hp::test::uv_sphere(64, 512, true);
    for (double z : {0.0, 0.1, 0.3, 0.6, 0.9, 1.2, 2.0, 5.0}) {
        const double k = z / std::sqrt(1 + z * z);
        const double want = z < 1 ? (1 + k) / 2 : -(1 - k) / 2;
        EXPECT_NEAR(hp::winding_number(cap, {0, 0, z}), want, 2e-4) << z;
    }
    EXPECT_NEAR(hp::winding_number(cap, {0, 0, 0}), 0.5, 2e-4);
}

namespace {
// Fast vs exact at points spread over the mesh's box and near its surface.
void expect_fast_within_tolerance(const hp::TriMesh& mesh, double beta, double tolerance, unsigned seed) {
    const hp::TriangleBvh bvh(mesh);
    const hp::FastWinding fast(bvh, beta);
    const hp::Aabb box = mesh.bounds();
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<Vec3d> points;
    for (int n = 0; n < 600; ++n) {
        const Vec3d t{u(rng), u(rng), u(rng)};
        points.push_back(box.min - box.size() * 0.25 + Vec3d{t.x * box.size().x, t.y * box.size().y, t.z * box.size().z} * 1.5);
    }
    for (int n = 0; n < 400; ++n) {  // near the surface: a vertex plus a small offset
        const Vec3d& v = mesh.vertices[rng() % mesh.vertices.size()];
        points.push_back(v + Vec3d{u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5} * (0.02 * box.diagonal()));
    }
    std::vector<double> batch(points.size());
    fast.at(points, batch);
    hp::FastWinding::Stats stats;
    double worst = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const double exact = hp::winding_number(mesh, points[i]);
        const double approx = fast.at(points[i], stats);
        ASSERT_EQ(batch[i], approx);
        worst = std::max(worst, std::abs(approx - exact));
        ASSERT_LE(std::abs(approx - exact), tolerance) << i;
    }
    // The expansion is used (most of the mesh is summed by clusters, not triangle by triangle).
    EXPECT_GT(stats.far_clusters, 0u);
    EXPECT_LT(stats.exact_triangles, points.size() * mesh.triangles.size() * 3 / 4);
    std::printf("  fast winding, beta %g: worst error %.3g, %.1f clusters + %.1f triangles per point (of %zu)\n", beta,
                worst, double(stats.far_clusters) / double(points.size()), double(stats.exact_triangles) / double(points.size()),
                mesh.triangles.size());
}
}  // namespace

TEST(FastWinding, AgreesWithTheExactSumWithinTheTolerance) {
    // The errors the header states for points near the surface: <= 0.1 at beta 2, <= 0.04 at 3.
    for (auto [beta, tol] : {std::pair{2.0, 0.1}, std::pair{3.0, 0.04}}) {
        expect_fast_within_tolerance(hp::test::uv_sphere(40, 60), beta, tol, 1);
        expect_fast_within_tolerance(hp::test::uv_sphere(40, 60, true), beta, tol, 2);
        expect_fast_within_tolerance(sample("torus.off"), beta, tol, 3);
        expect_fast_within_tolerance(sample("gear.obj"), beta, tol, 4);
        expect_fast_within_tolerance(hp::test::random_soup(3000, 5), beta, tol, 5);
    }
    // Far from the mesh the expansion is much better than that.
    const hp::TriMesh torus = sample("torus.off");
    const hp::TriangleBvh bvh(torus);
    const hp::FastWinding fast(bvh);
    for (const Vec3d& p : {Vec3d{5, 0, 0}, Vec3d{0, 7, 1}, Vec3d{-3, -3, 3}})
        EXPECT_NEAR(fast.at(p), hp::winding_number(torus, p), 1e-3);
}

TEST(FastWinding, ClassifiesClosedMeshes) {
    const hp::TriMesh sphere = hp::test::uv_sphere(100, 150);
    const hp::TriangleBvh bvh(sphere);
    const hp::FastWinding fast(bvh);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1.5, 1.5);
    for (int n = 0; n < 20000; ++n) {
        const Vec3d p{u(rng), u(rng), u(rng)};
        if (std::abs(hp::length(p) - 1) < 1e-3) continue;
        ASSERT_EQ(fast.at(p) > 0.5, hp::length(p) < 1) << n;
    }
}

TEST(FastWinding, InsideByWindingFallsBackToTheExactSumNearOneHalf) {
    // The open box's hole: points across the missing face have w near 0.5; classification must
    // equal the exact sum's everywhere.
    const hp::TriMesh open = sample("open-box.obj");
    const hp::WindingTree tree(open);
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> u(-0.2, 1.2);
    int near_half = 0;
    for (int n = 0; n < 5000; ++n) {
        const Vec3d p{u(rng), u(rng), u(rng)};
        const double exact = hp::winding_number(open, p);
        near_half += std::abs(std::abs(exact) - 0.5) < hp::kWindingTolerance;
        ASSERT_EQ(hp::inside_by_winding(tree, open, p), std::abs(exact) > 0.5) << n;
        ASSERT_NEAR(tree(p), tree.fast().at(p), 0.0);
    }
    EXPECT_GT(near_half, 20);
}
TEST(Winding, WindingTreeClassifiesLikeTheExactSumOnSampleMeshes) {
    std::mt19937 rng(5);
    for (const char* name : {"sphere.obj", "torus.off", "open-box.obj", "inverted-box.obj", "gear.obj", "bracket.obj"}) {
        hp::TriMesh mesh = sample(name);
        hp::WindingTree tree(mesh);
        const hp::Aabb box = mesh.bounds();
        const hp::Vec3d lo = box.min - box.size() * 0.25, span = box.size() * 1.5;
        std::uniform_real_distribution<double> u(0, 1);
        double worst = 0;
        for (int n = 0; n < 2000; ++n) {
            const hp::Vec3d p = lo + hp::Vec3d{span.x * u(rng), span.y * u(rng), span.z * u(rng)};
            const double exact = hp::winding_number(mesh, p), fast = tree(p);
            worst = std::max(worst, std::abs(exact - fast));
            ASSERT_EQ(std::abs(exact) > 0.5, hp::inside_by_winding(tree, mesh, p)) << name;
        }
        EXPECT_LT(worst, 0.05) << name;
        EXPECT_LT(worst, hp::kWindingTolerance) << name;
    }
}

TEST(BoundaryWinding, EqualsThePlainSumNearOpenMeshes) {
    // An open hemisphere (rim: the equator; w is near 1/2 across its opening) and a sphere with a
    // band of triangles removed (two rims), fine enough that the BVH has many inner nodes whose
    // boundary replaces their triangles: points near the surface, near the rims and across the
    // openings. The value must match the plain sum to rounding, the inside bit exactly.
    hp::TriMesh holed = hp::test::uv_sphere(24, 32);
    std::vector<std::array<std::uint32_t, 3>> kept;
    for (std::size_t t = 0; t < holed.triangles.size(); ++t) {
        const auto& tri = holed.triangles[t];
        const double z = (holed.vertices[tri[0]].z + holed.vertices[tri[1]].z + holed.vertices[tri[2]].z) / 3;
        if (std::abs(z - 0.2) > 0.15) kept.push_back(tri);
    }
    ASSERT_LT(kept.size(), holed.triangles.size());
    holed.triangles = kept;
    std::mt19937 rng(17);
    std::uniform_real_distribution<double> u(0, 1), off(-0.08, 0.08);
    for (const hp::TriMesh* mesh : std::array<const hp::TriMesh*, 2>{&holed, nullptr}) {
        const hp::TriMesh hemi = hp::test::uv_sphere(24, 32, true);
        const hp::TriMesh& m = mesh ? *mesh : hemi;
        const hp::BoundaryWinding exact(m);
        const hp::WindingTree tree(m);
        int near_half = 0, inside = 0;
        for (int n = 0; n < 3000; ++n) {
            // A random point of a random triangle, moved off it by up to 0.08 along each axis.
            const auto& tri = m.triangles[static_cast<std::size_t>(u(rng) * static_cast<double>(m.triangles.size())) % m.triangles.size()];
            double a = u(rng), b = u(rng);
            if (a + b > 1) a = 1 - a, b = 1 - b;
            const Vec3d on = m.vertices[tri[0]] + (m.vertices[tri[1]] - m.vertices[tri[0]]) * a + (m.vertices[tri[2]] - m.vertices[tri[0]]) * b;
            const Vec3d p = n % 3 == 0 ? Vec3d{off(rng) * 10, off(rng) * 10, 0.2 + off(rng)}  // across the openings
                                       : on + Vec3d{off(rng), off(rng), off(rng)};
            const double plain = hp::winding_number(m, p), value = exact.value(p);
            ASSERT_NEAR(value, plain, 1e-9) << n;
            ASSERT_EQ(exact.inside(p), std::abs(plain) > 0.5) << n;
            ASSERT_EQ(hp::inside_by_winding(tree, exact, p), std::abs(plain) > 0.5) << n;
            near_half += std::abs(std::abs(plain) - 0.5) < hp::kWindingTolerance;
            inside += std::abs(plain) > 0.5;
        }
        EXPECT_GT(near_half, 50);
        EXPECT_GT(inside, 300);
        EXPECT_LT(inside, 2700);
    }
}

TEST(FastWinding, PacketsGiveTheSameValuesBitForBit) {
    // Packets of neighbours (a small grid near the rim of an open hemisphere, where clusters are
    // opened for some points and not others), of scattered points, and of every size up to 64.
    const hp::TriMesh hemi = hp::test::uv_sphere(24, 32, true);
    const hp::TriangleBvh bvh(hemi);
    const hp::FastWinding fast(bvh, 3.0);
    std::mt19937 rng(23);
    std::uniform_real_distribution<double> u(-1.2, 1.2), d(-0.05, 0.05);
    std::size_t opened = 0;
    for (int packet = 0; packet < 200; ++packet) {
        const std::size_t m = 1 + static_cast<std::size_t>(packet) % hp::FastWinding::kPacket;
        const bool scattered = packet % 2 == 1;
        const Vec3d base{u(rng), u(rng), d(rng) * 4};
        std::vector<Vec3d> points(m);
        for (std::size_t i = 0; i < m; ++i)
            points[i] = scattered ? Vec3d{u(rng), u(rng), u(rng)} : base + Vec3d{0.01 * static_cast<double>(i % 8), 0.01 * static_cast<double>(i / 8), d(rng)};
        std::vector<double> out(m, -7.0);
        fast.at_packet(points, out);
        for (std::size_t i = 0; i < m; ++i) {
            hp::FastWinding::Stats stats;
            ASSERT_EQ(out[i], fast.at(points[i], stats)) << packet << " " << i;
            opened += stats.exact_triangles > 0;
        }
    }
    EXPECT_GT(opened, 500u);  // points near enough to the mesh that the walk opens leaves
}
