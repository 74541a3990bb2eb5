#include "formats/shell.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace {

hp::Pointshell square_shell() {
    hp::Pointshell s;
    for (int i = 0; i < 4; ++i) {
        s.points.push_back({double(i % 2), double(i / 2), 0});
        s.normals.push_back({0, 0, -1});
        s.triangles.push_back(static_cast<std::uint32_t>(i / 2));
    }
    return s;
}

// Root {0} with two leaves {0, 1} and {2, 3}; spheres written by hand.
hp::PointSphereTree square_tree() {
    hp::PointSphereTree t;
    t.k = 2;
    t.levels = 2;
    t.thresholds = {0, 2};
    hp::TreeCluster root;
    root.level = 1;
    root.sphere = {{0.5, 0.5, 0}, std::sqrt(0.5)};
    root.points = {0, 2};
    root.children = {1, 2};
    hp::TreeCluster a, b;
    a.level = b.level = 2;
    a.parent = b.parent = 0;
    a.sphere = {{0.5, 0, 0}, 0.5};
    a.points = {0, 1};
    b.sphere = {{0.5, 1, 0}, 0.5};
    b.points = {2, 3};
    t.clusters = {root, a, b};
    return t;
}

int exit_code_of(const std::string& bytes, bool require_tree = false) {
    try {
        hp::parse_shell_file(bytes, "f.hps", require_tree);
    } catch (const hp::Error& e) {
        return static_cast<int>(e.code());
    }
    return 0;
}

}  // namespace

TEST(ShellFile, PointshellRoundTripsExactly) {
    const hp::Pointshell s = square_shell();
    const std::string bytes = hp::serialize_shell_file({{"tool", "test"}}, s);
    const hp::ShellFile f = hp::parse_shell_file(bytes, "f.hps");
    EXPECT_EQ(f.kind, hp::container::Kind::pointshell);
    EXPECT_FALSE(f.tree.has_value());
    ASSERT_EQ(f.shell.points.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(f.shell.points[i].x, s.points[i].x);
        EXPECT_EQ(f.shell.points[i].y, s.points[i].y);
        EXPECT_EQ(f.shell.normals[i].z, -1.0);
        EXPECT_EQ(f.shell.triangles[i], s.triangles[i]);
    }
    EXPECT_EQ(f.metadata["tool"], "test");
    EXPECT_EQ(hp::serialize_shell_file({{"tool", "test"}}, s), bytes);  // deterministic
    EXPECT_EQ(exit_code_of(bytes, /*require_tree=*/true), 3);
}

TEST(ShellFile, TreeRoundTripsExactly) {
    const hp::PointSphereTree t = square_tree();
    const hp::ShellFile f = hp::parse_shell_file(hp::serialize_shell_file({}, square_shell(), &t), "f.hps", true);
    EXPECT_EQ(f.kind, hp::container::Kind::tree);
    ASSERT_TRUE(f.tree.has_value());
    EXPECT_EQ(f.tree->k, 2);
    EXPECT_EQ(f.tree->levels, 2);
    ASSERT_EQ(f.tree->clusters.size(), 3u);
    EXPECT_EQ(f.tree->clusters[0].children, (std::vector<std::uint32_t>{1, 2}));
    EXPECT_EQ(f.tree->clusters[2].points, (std::vector<std::uint32_t>{2, 3}));
    EXPECT_EQ(f.tree->clusters[2].parent, 0);
    EXPECT_EQ(f.tree->clusters[0].sphere.radius, std::sqrt(0.5));
    EXPECT_EQ(f.tree->thresholds, (std::vector<double>{0, 2}));
}

TEST(ShellFile, EveryTruncationAndManyBitFlipsAreBadInput) {
    const hp::PointSphereTree t = square_tree();
    const std::string bytes = hp::serialize_shell_file({{"tool", "test"}}, square_shell(), &t);
    for (std::size_t len = 0; len < bytes.size(); ++len) ASSERT_EQ(exit_code_of(bytes.substr(0, len)), 3) << len;
    for (std::size_t i = 0; i < bytes.size(); i += 7) {
        std::string flipped = bytes;
        flipped[i] = static_cast<char>(flipped[i] ^ (1 << (i % 8)));
        ASSERT_EQ(exit_code_of(flipped), 3) << "flip at byte " << i;
    }
}

TEST(ShellFile, WrongKindIsBadInput) {
    hp::container::Writer w(hp::container::Kind::cfm, {{"tool", "test"}});
    w.add_bytes("points", std::string(24, '\0'));
    EXPECT_EQ(exit_code_of(w.serialize()), 3);
}

TEST(ShellFile, StructurallyBrokenTreesAreBadInput) {
    const hp::Pointshell s = square_shell();
    auto code = [&](const hp::PointSphereTree& t) { return exit_code_of(hp::serialize_shell_file({}, s, &t)); };
    hp::PointSphereTree t = square_tree();
    t.clusters[2].points = {2};  // point 3 in no leaf
    EXPECT_EQ(code(t), 3);
    t = square_tree();
    t.clusters[2].points = {1, 2, 3};  // point 1 in two leaves
    EXPECT_EQ(code(t), 3);
    t = square_tree();
    t.clusters[2].points = {2, 9};  // out of range
    EXPECT_EQ(code(t), 3);
    t = square_tree();
    t.clusters[1].level = 3;  // level does not step by one
    EXPECT_EQ(code(t), 3);
    t = square_tree();
    t.clusters[2].parent = 1;  // parent does not list it
    EXPECT_EQ(code(t), 3);
    t = square_tree();
    t.levels = 3;
    EXPECT_EQ(code(t), 3);
    t = square_tree();
    t.clusters[1].sphere.radius = std::nan("");
    EXPECT_EQ(code(t), 3);
    hp::Pointshell bad = s;
    bad.normals[1] = {0, 0, 2};
    EXPECT_EQ(exit_code_of(hp::serialize_shell_file({}, bad)), 3);
    bad = s;
    bad.points[0].x = INFINITY;
    EXPECT_EQ(exit_code_of(hp::serialize_shell_file({}, bad)), 3);
    EXPECT_EQ(exit_code_of(hp::serialize_shell_file({}, hp::Pointshell{})), 3);
}
