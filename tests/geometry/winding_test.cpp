#include "geometry/winding.hpp"

#include <filesystem>
#include <random>

#include <gtest/gtest.h>

namespace {
hp::TriMesh sample(const char* name) {
    return hp::load_mesh(std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / name).mesh;
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

TEST(Winding, TreeAgreesWithTheExactSum) {
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
