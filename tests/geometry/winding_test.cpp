#include "geometry/winding.hpp"

#include <filesystem>

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
