// haptic-dump --check of tree files: spheres written by hand, then one shrunk.

#include <cmath>
#include <filesystem>

#include <gtest/gtest.h>

#include "formats/shell.hpp"
#include "inspect/check.hpp"
#include "../core/temp_dir.hpp"

namespace {

// Four points of the unit square; root {0, 2} over leaves {0, 1} and {2, 3}.
void write_square_tree(const std::filesystem::path& path, double root_radius) {
    hp::Pointshell s;
    for (int i = 0; i < 4; ++i) {
        s.points.push_back({double(i % 2), double(i / 2), 0});
        s.normals.push_back({0, 0, -1});
        s.triangles.push_back(0);
    }
    hp::PointSphereTree t;
    t.k = 2;
    t.levels = 2;
    t.thresholds = {0, 0};
    hp::TreeCluster root, a, b;
    root.level = 1;
    root.sphere = {{0.5, 0.5, 0}, root_radius};
    root.points = {0, 2};
    root.children = {1, 2};
    a.level = b.level = 2;
    a.parent = b.parent = 0;
    a.sphere = {{0.5, 0, 0}, 0.5};
    a.points = {0, 1};
    b.sphere = {{0.5, 1, 0}, 0.5};
    b.points = {2, 3};
    t.clusters = {root, a, b};
    hp::write_shell_file(path, {{"tool", "test"}}, s, &t);
}

}  // namespace

TEST(CheckShell, TreeSpheresMustContainThePointsBelowThem) {
    const std::filesystem::path dir = hp::test::temp_dir("hp_check_shell_");
    // The root's minimal sphere has radius sqrt(0.5): every corner is on it.
    write_square_tree(dir / "good.hps", std::sqrt(0.5));
    hp::inspect::CheckReport good = hp::inspect::check(dir / "good.hps");
    EXPECT_TRUE(good.ok()) << (good.problems.empty() ? "" : good.problems.front());
    // 1% too small: all four corners are outside the root's sphere.
    write_square_tree(dir / "bad.hps", 0.99 * std::sqrt(0.5));
    hp::inspect::CheckReport bad = hp::inspect::check(dir / "bad.hps");
    EXPECT_FALSE(bad.ok());
    EXPECT_EQ(bad.problems.size(), 4u);
    EXPECT_NE(bad.problems.front().find("outside the sphere of cluster 0"), std::string::npos) << bad.problems.front();
    std::filesystem::remove_all(dir);
}
