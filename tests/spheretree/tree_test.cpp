#include "spheretree/tree.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include "core/error.hpp"

using hp::Vec3d;

namespace {

// Points on a sphere of radius 1 (a pointshell-like surface sampling), fixed seed.
std::vector<Vec3d> sphere_points(std::size_t n, unsigned seed = 5) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> g;
    std::vector<Vec3d> pts(n);
    for (Vec3d& p : pts) p = hp::normalized(Vec3d{g(rng), g(rng), g(rng)});
    return pts;
}

// Leaf points below cluster `id`, gathered by walking the tree (independent of the builder).
void gather(const hp::PointSphereTree& t, std::uint32_t id, std::vector<std::uint32_t>& out) {
    const auto& c = t.clusters[id];
    if (c.children.empty()) out.insert(out.end(), c.points.begin(), c.points.end());
    for (std::uint32_t ch : c.children) gather(t, ch, out);
}

void check_structure(const hp::PointSphereTree& t, std::size_t n_points) {
    ASSERT_FALSE(t.clusters.empty());
    EXPECT_EQ(t.clusters[0].level, 1);
    EXPECT_EQ(t.clusters[0].parent, -1);
    std::vector<int> leaf_count(n_points, 0);
    for (std::size_t id = 0; id < t.clusters.size(); ++id) {
        const auto& c = t.clusters[id];
        ASSERT_FALSE(c.points.empty());
        if (c.children.empty()) {
            EXPECT_EQ(c.level, t.levels) << "leaves are all on the deepest level";
            for (std::uint32_t p : c.points) ++leaf_count[p];
        } else {
            // A cluster's points are the parent points of its children, its own parent first.
            std::multiset<std::uint32_t> child_parents, own(c.points.begin(), c.points.end());
            for (std::uint32_t ch : c.children) {
                EXPECT_EQ(t.clusters[ch].parent, static_cast<std::int32_t>(id));
                EXPECT_EQ(t.clusters[ch].level, c.level + 1);
                child_parents.insert(t.clusters[ch].points[0]);
            }
            EXPECT_EQ(child_parents, own);
            for (std::size_t i = 1; i < c.children.size(); ++i)
                EXPECT_EQ(c.children[i], c.children[i - 1] + 1) << "children ids are consecutive";
        }
    }
    for (std::size_t p = 0; p < n_points; ++p) ASSERT_EQ(leaf_count[p], 1) << "point " << p;
}

}  // namespace

TEST(PointSphereTree, StructureOnASphereSampling) {
    auto pts = sphere_points(3000);
    hp::PointSphereTree t = hp::build_point_sphere_tree(pts, {});
    check_structure(t, pts.size());
    // Roughly K points per cluster: 3000 points at K = 4 give about 6 levels.
    EXPECT_GE(t.levels, 5);
    EXPECT_LE(t.levels, 9);
    std::size_t leaves = 0, leaf_points = 0;
    for (const auto& c : t.clusters)
        if (c.children.empty()) {
            ++leaves;
            leaf_points += c.points.size();
        }
    double mean = static_cast<double>(leaf_points) / static_cast<double>(leaves);
    EXPECT_GT(mean, 2.5);
    EXPECT_LE(mean, 4.5);
}

TEST(PointSphereTree, SpheresContainAllPointsBelow) {
    auto pts = sphere_points(1500, 9);
    hp::PointSphereTree t = hp::build_point_sphere_tree(pts, {.k = 5, .seed = 3});
    for (std::size_t id = 0; id < t.clusters.size(); ++id) {
        std::vector<std::uint32_t> below;
        gather(t, static_cast<std::uint32_t>(id), below);
        const hp::Ball& b = t.clusters[id].sphere;
        double farthest = 0;
        for (std::uint32_t p : below) farthest = std::max(farthest, hp::length(pts[p] - b.center));
        ASSERT_LE(farthest, b.radius) << "cluster " << id;
        // Minimal: no point-free slack, some point is on the sphere.
        ASSERT_NEAR(farthest, b.radius, 1e-12 * (1 + b.radius));
    }
    // The root sphere of points on a unit sphere has radius close to 1.
    EXPECT_NEAR(t.clusters[0].sphere.radius, 1.0, 0.02);
}

TEST(PointSphereTree, DeterministicForASeedWhateverTheThreads) {
    auto pts = sphere_points(2000, 4);
    hp::PointSphereTree a, b, c;
    {
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        a = hp::build_point_sphere_tree(pts, {.k = 4, .seed = 42});
    }
    b = hp::build_point_sphere_tree(pts, {.k = 4, .seed = 42});
    c = hp::build_point_sphere_tree(pts, {.k = 4, .seed = 43});
    ASSERT_EQ(a.clusters.size(), b.clusters.size());
    for (std::size_t i = 0; i < a.clusters.size(); ++i) {
        EXPECT_EQ(a.clusters[i].points, b.clusters[i].points);
        EXPECT_EQ(a.clusters[i].children, b.clusters[i].children);
        EXPECT_EQ(a.clusters[i].sphere.center, b.clusters[i].sphere.center);
        EXPECT_EQ(a.clusters[i].sphere.radius, b.clusters[i].sphere.radius);
    }
    bool differs = a.clusters.size() != c.clusters.size();
    for (std::size_t i = 0; !differs && i < a.clusters.size(); ++i) differs = a.clusters[i].points != c.clusters[i].points;
    EXPECT_TRUE(differs) << "another seed gives another clustering";
}

TEST(PointSphereTree, ThresholdKeepsFarGroupsApart) {
    // Two groups far apart, sizes not multiples of K: greedy sequential clustering without a
    // threshold has to finish one group with points of the other.
    std::vector<Vec3d> pts;
    for (int i = 0; i < 10; ++i) pts.push_back({i * 1.0, 0, 0});
    for (int i = 0; i < 7; ++i) pts.push_back({1000.0 + i, 0, 0});
    auto mixes = [&](const hp::PointSphereTree& t) {
        for (const auto& c : t.clusters) {
            if (!c.children.empty()) continue;
            bool left = false, right = false;
            for (std::uint32_t p : c.points) (pts[p].x < 500 ? left : right) = true;
            if (left && right) return true;
        }
        return false;
    };
    int mixed_without = 0;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        hp::PointSphereTree with = hp::build_point_sphere_tree(pts, {.k = 4, .seed = seed});
        check_structure(with, pts.size());
        EXPECT_FALSE(mixes(with)) << "seed " << seed;
        hp::PointSphereTree without = hp::build_point_sphere_tree(pts, {.k = 4, .seed = seed, .threshold = 0});
        mixed_without += mixes(without) ? 1 : 0;
    }
    EXPECT_GT(mixed_without, 0) << "the case must be one where the threshold matters";
}

TEST(PointSphereTree, TinyInputsAndErrors) {
    std::vector<Vec3d> one{{1, 1, 1}};
    hp::PointSphereTree t = hp::build_point_sphere_tree(one, {});
    ASSERT_EQ(t.clusters.size(), 1u);
    EXPECT_EQ(t.levels, 1);
    EXPECT_EQ(t.clusters[0].sphere.radius, 0);

    std::vector<Vec3d> dup(50, Vec3d{2, 2, 2});  // all points equal
    hp::PointSphereTree d = hp::build_point_sphere_tree(dup, {});
    check_structure(d, dup.size());

    EXPECT_THROW(hp::build_point_sphere_tree({}, {}), hp::Error);
    try {
        hp::build_point_sphere_tree(one, {.k = 1});
        FAIL();
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::usage);
    }
}
