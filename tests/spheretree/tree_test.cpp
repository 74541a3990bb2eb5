#include "spheretree/tree.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include "core/error.hpp"
#include "reference_ball.hpp"

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

// Every sphere contains the points below it, and its radius is within 1e-6 (relative) of the
// true minimum: at least the brute-force minimum of its 10 points farthest from its centre.
void check_spheres(const hp::PointSphereTree& t, const std::vector<Vec3d>& pts) {
    for (std::size_t id = 0; id < t.clusters.size(); ++id) {
        std::vector<std::uint32_t> below;
        gather(t, static_cast<std::uint32_t>(id), below);
        const hp::Ball& b = t.clusters[id].sphere;
        std::vector<Vec3d> below_pts;
        for (std::uint32_t p : below) {
            below_pts.push_back(pts[p]);
            ASSERT_LE(hp::length(pts[p] - b.center), b.radius) << "cluster " << id << " point " << p;
        }
        double lower = hp_test::lower_bound_radius(below_pts, b.center);
        ASSERT_LE(b.radius - lower, 1e-6 * b.radius) << "cluster " << id << " of " << below.size() << " points";
    }
}

std::vector<std::size_t> clusters_per_level(const hp::PointSphereTree& t) {
    std::vector<std::size_t> count(static_cast<std::size_t>(t.levels), 0);
    for (const auto& c : t.clusters) ++count[static_cast<std::size_t>(c.level - 1)];
    return count;
}

std::set<std::vector<std::uint32_t>> leaf_sets(const hp::PointSphereTree& t) {
    std::set<std::vector<std::uint32_t>> out;
    for (const auto& c : t.clusters)
        if (c.children.empty()) {
            std::vector<std::uint32_t> s = c.points;
            std::sort(s.begin(), s.end());
            out.insert(s);
        }
    return out;
}

bool same_tree(const hp::PointSphereTree& a, const hp::PointSphereTree& b) {
    if (a.levels != b.levels || a.clusters.size() != b.clusters.size() || a.thresholds != b.thresholds) return false;
    for (std::size_t i = 0; i < a.clusters.size(); ++i) {
        const auto &x = a.clusters[i], &y = b.clusters[i];
        if (x.level != y.level || x.points != y.points || x.children != y.children || x.parent != y.parent ||
            !(x.sphere.center == y.sphere.center) || x.sphere.radius != y.sphere.radius)
            return false;
    }
    return true;
}

}  // namespace

TEST(PointSphereTree, HierarchicalGridGivesTheCountsExpectedByHand) {
    // 2D: unit squares of 4 points, 4 of them on a square of side 10, 4 of those on a square of
    // side 100 (64 points). Whatever the start, K = 4 groups each unit square (its 3 mates lie
    // within sqrt 2, any other point at least 9 away), then each side-10 square, then the root:
    // 16, 4 and 1 clusters.
    std::vector<Vec3d> grid;
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
            for (int c = 0; c < 4; ++c)
                grid.push_back({100.0 * (a & 1) + 10.0 * (b & 1) + (c & 1), 100.0 * (a >> 1) + 10.0 * (b >> 1) + (c >> 1), 0});
    std::set<std::vector<std::uint32_t>> squares;
    for (std::uint32_t g = 0; g < 16; ++g) squares.insert({4 * g, 4 * g + 1, 4 * g + 2, 4 * g + 3});
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        hp::PointSphereTree t = hp::build_point_sphere_tree(grid, {.k = 4, .seed = seed});
        check_structure(t, grid.size());
        EXPECT_EQ(clusters_per_level(t), (std::vector<std::size_t>{1, 4, 16})) << "seed " << seed;
        EXPECT_EQ(leaf_sets(t), squares) << "seed " << seed;
        EXPECT_NEAR(t.clusters[0].sphere.radius, std::sqrt(2.0) * 111 / 2, 1e-9);  // half the diagonal
        for (std::size_t id = 1; id < 5; ++id)  // the side-10 squares: half of 11 sqrt 2
            EXPECT_NEAR(t.clusters[id].sphere.radius, std::sqrt(2.0) * 11 / 2, 1e-9);
    }
    // 3D, K = 8: unit cubes of 8 points on a cube of side 10 (64 points): 8 leaves and the root.
    std::vector<Vec3d> cubes;
    for (int a = 0; a < 8; ++a)
        for (int c = 0; c < 8; ++c)
            cubes.push_back({10.0 * (a & 1) + (c & 1), 10.0 * ((a >> 1) & 1) + ((c >> 1) & 1), 10.0 * (a >> 2) + (c >> 2)});
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        hp::PointSphereTree t = hp::build_point_sphere_tree(cubes, {.k = 8, .seed = seed});
        check_structure(t, cubes.size());
        EXPECT_EQ(clusters_per_level(t), (std::vector<std::size_t>{1, 8})) << "seed " << seed;
        for (const auto& leaf : leaf_sets(t)) EXPECT_EQ(leaf.front() / 8, leaf.back() / 8) << "one unit cube per leaf";
        for (std::size_t id = 1; id < 9; ++id) EXPECT_NEAR(t.clusters[id].sphere.radius, std::sqrt(3.0) / 2, 1e-12);
    }
}

TEST(PointSphereTree, TaggedPointRejoinsItsGroupByHand) {
    // x = 0..4 and x = 1000..1002 on a line, K = 4. By hand: the level's typical extent (median
    // distance to the 4th nearest other point) is 4, so the threshold is 8. Whatever the start,
    // greedy clustering puts one point of the first group with the second group; it is tagged
    // (about 1000 from that parent) and joins its own group's parent (within 4). Leaves: {0..4}
    // and {5, 6, 7}; two parents make the root.
    std::vector<Vec3d> pts;
    for (int i = 0; i < 5; ++i) pts.push_back({double(i), 0, 0});
    for (int i = 0; i < 3; ++i) pts.push_back({1000.0 + i, 0, 0});
    const std::set<std::vector<std::uint32_t>> expected{{0, 1, 2, 3, 4}, {5, 6, 7}};
    for (std::uint64_t seed = 1; seed <= 16; ++seed) {
        hp::PointSphereTree t = hp::build_point_sphere_tree(pts, {.k = 4, .seed = seed});
        check_structure(t, pts.size());
        EXPECT_EQ(leaf_sets(t), expected) << "seed " << seed;
        EXPECT_EQ(t.levels, 2);
        ASSERT_EQ(t.thresholds.size(), 2u);
        EXPECT_DOUBLE_EQ(t.thresholds[1], 8.0);
        // Without tagging, some leaf mixes the groups (4 + 4 points).
        hp::PointSphereTree plain = hp::build_point_sphere_tree(pts, {.k = 4, .seed = seed, .threshold = 0});
        check_structure(plain, pts.size());
        EXPECT_NE(leaf_sets(plain), expected);
        EXPECT_EQ(plain.thresholds[1], 0.0);
    }
}

TEST(PointSphereTree, SpheresAreMinimalOnRandomClouds) {
    std::mt19937 rng(31);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int k : {2, 4, 8}) {
        std::vector<Vec3d> box(1500), slab(1500);
        for (Vec3d& p : box) p = {u(rng), u(rng), u(rng)};
        for (Vec3d& p : slab) p = {u(rng), 0.25, u(rng)};  // co-planar
        for (const auto* pts : {&box, &slab}) {
            hp::PointSphereTree t = hp::build_point_sphere_tree(*pts, {.k = k, .seed = 5});
            check_structure(t, pts->size());
            check_spheres(t, *pts);
            // About log_K(N) levels: at least that many, and not much more.
            double log_k = std::log(1500.0) / std::log(double(k));
            EXPECT_GE(t.levels, static_cast<int>(std::floor(log_k))) << "K " << k;
            EXPECT_LE(t.levels, static_cast<int>(std::ceil(log_k)) + 3) << "K " << k;
        }
    }
}

TEST(PointSphereTree, DuplicateAndCoplanarPoints) {
    // 60 distinct positions, each 5 times: equal points cluster together, spheres of radius 0.
    std::mt19937 rng(37);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<Vec3d> dup;
    for (int i = 0; i < 60; ++i) {
        Vec3d p{u(rng), u(rng), u(rng)};
        for (int c = 0; c < 5; ++c) dup.push_back(p);
    }
    for (int k : {4, 5, 8}) {
        hp::PointSphereTree t = hp::build_point_sphere_tree(dup, {.k = k, .seed = 2});
        check_structure(t, dup.size());
        check_spheres(t, dup);
        if (k == 5)  // K equals the multiplicity: every leaf is one position
            for (const auto& c : t.clusters)
                if (c.children.empty()) {
                    EXPECT_EQ(c.sphere.radius, 0.0);
                }
    }
    // A jittered planar grid in a tilted plane.
    std::vector<Vec3d> plane;
    const Vec3d e1 = hp::normalized(Vec3d{1, 2, 0.5}), e2 = hp::normalized(hp::cross(e1, Vec3d{0, 0, 1}));
    for (int i = 0; i < 40; ++i)
        for (int j = 0; j < 40; ++j) plane.push_back(Vec3d{3, 4, 5} + e1 * (i + 0.3 * u(rng)) + e2 * (j + 0.3 * u(rng)));
    hp::PointSphereTree t = hp::build_point_sphere_tree(plane, {.k = 4, .seed = 9});
    check_structure(t, plane.size());
    check_spheres(t, plane);
}

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
    auto pts = sphere_points(4000, 4);
    hp::PointSphereTree reference;
    {
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        reference = hp::build_point_sphere_tree(pts, {.k = 4, .seed = 42});
    }
    for (std::size_t threads : {2, 4, 8}) {
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        EXPECT_TRUE(same_tree(reference, hp::build_point_sphere_tree(pts, {.k = 4, .seed = 42}))) << threads << " threads";
    }
    EXPECT_TRUE(same_tree(reference, hp::build_point_sphere_tree(pts, {.k = 4, .seed = 42}))) << "default threads";
    EXPECT_FALSE(same_tree(reference, hp::build_point_sphere_tree(pts, {.k = 4, .seed = 43}))) << "another seed, another tree";
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
    for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) EXPECT_THROW(hp::build_point_sphere_tree(one, {.threshold = bad}), hp::Error);
    try {
        hp::build_point_sphere_tree(one, {.k = 1});
        FAIL();
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::usage);
    }
}
