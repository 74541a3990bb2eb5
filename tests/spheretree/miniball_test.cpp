#include "spheretree/miniball.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "reference_ball.hpp"

using hp::Vec3d;
using hp_test::brute_force_radius;

namespace {

// The accuracy bar: within 1e-6 of the true minimum, relative.
void expect_minimal(const hp::Ball& b, const std::vector<Vec3d>& pts, const std::string& what) {
    double ref = brute_force_radius(pts);
    EXPECT_LE(std::abs(b.radius - ref), 1e-6 * ref + 1e-300) << what << ": radius " << b.radius << ", brute force " << ref;
}

void expect_contains_all(const hp::Ball& b, const std::vector<Vec3d>& pts) {
    for (const Vec3d& p : pts) ASSERT_LE(hp::length(p - b.center), b.radius);
}

}  // namespace

TEST(Miniball, EmptyAndSingle) {
    EXPECT_LT(hp::minimal_enclosing_ball({}).radius, 0);
    std::vector<Vec3d> one{{1, 2, 3}};
    hp::Ball b = hp::minimal_enclosing_ball(one);
    EXPECT_EQ(b.radius, 0);
    EXPECT_EQ(b.center, (Vec3d{1, 2, 3}));
}

TEST(Miniball, MatchesBruteForceOnRandomSmallSets) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int trial = 0; trial < 300; ++trial) {
        std::vector<Vec3d> pts(2 + trial % 10);
        for (Vec3d& p : pts) p = {u(rng), u(rng), u(rng)};
        hp::Ball b = hp::minimal_enclosing_ball(pts);
        expect_contains_all(b, pts);
        expect_minimal(b, pts, "trial " + std::to_string(trial));
    }
}

TEST(Miniball, MatchesBruteForceOnDegenerateSmallSets) {
    std::mt19937 rng(17);
    std::uniform_real_distribution<double> u(-1, 1);
    const double pi = std::acos(-1.0);
    for (int trial = 0; trial < 100; ++trial) {
        const std::size_t n = 3 + static_cast<std::size_t>(trial % 10);
        const std::string tag = " (trial " + std::to_string(trial) + ")";
        // A tilted plane through a random point: co-planar sets.
        Vec3d o{u(rng), u(rng), u(rng)}, e1 = hp::normalized(Vec3d{u(rng), u(rng), u(rng)});
        Vec3d e2 = hp::normalized(hp::cross(e1, Vec3d{u(rng), u(rng), u(rng)}));
        std::vector<Vec3d> plane, circle, sphere, line, dup;
        for (std::size_t i = 0; i < n; ++i) {
            plane.push_back(o + e1 * u(rng) + e2 * u(rng));
            double a = 2 * pi * (u(rng) + 1) / 2;  // co-circular points, some inside the circle
            circle.push_back(o + (e1 * std::cos(a) + e2 * std::sin(a)) * (i % 3 == 0 ? 0.5 : 1.0));
            sphere.push_back(o + hp::normalized(Vec3d{u(rng), u(rng), u(rng)}) * 0.7);  // co-spherical
            line.push_back(o + e1 * u(rng));
            dup.push_back(i % 2 == 0 || dup.empty() ? Vec3d{u(rng), u(rng), u(rng)} : dup.back());
        }
        for (auto* set : {&plane, &circle, &sphere, &line, &dup}) {
            hp::Ball b = hp::minimal_enclosing_ball(*set);
            expect_contains_all(b, *set);
            expect_minimal(b, *set, "degenerate set" + tag);
        }
    }
}

TEST(Miniball, ScaleAndOffsetDoNotMatter) {
    // Millimetre-sized clusters far from the origin (a pointshell in metres, placed off-centre).
    std::mt19937 rng(23);
    std::uniform_real_distribution<double> u(-1e-3, 1e-3);
    for (int trial = 0; trial < 100; ++trial) {
        std::vector<Vec3d> pts(2 + trial % 11);
        for (Vec3d& p : pts) p = Vec3d{1000, -250, 40} + Vec3d{u(rng), u(rng), trial % 2 ? 0.0 : u(rng)};
        hp::Ball b = hp::minimal_enclosing_ball(pts);
        expect_contains_all(b, pts);
        expect_minimal(b, pts, "offset trial " + std::to_string(trial));
    }
}

TEST(Miniball, LargeSetsWithinTheirBruteForceBound) {
    // Thousands of points: the brute force over the 10 points farthest from the returned centre
    // gives a lower bound of the true minimum; the radius must be within 1e-6 of it.
    std::mt19937 rng(29);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int trial = 0; trial < 20; ++trial) {
        std::vector<Vec3d> pts(1000 + 200 * static_cast<std::size_t>(trial));
        const double flat = trial % 3 == 0 ? 0.0 : (trial % 3 == 1 ? 1e-3 : 1.0);  // planar, slab, box
        for (Vec3d& p : pts) p = Vec3d{u(rng), u(rng) * flat, u(rng)} * 0.05 + Vec3d{0.3, 0.1, -0.2};
        hp::Ball b = hp::minimal_enclosing_ball(pts);
        expect_contains_all(b, pts);
        double lower = hp_test::lower_bound_radius(pts, b.center);
        EXPECT_LE(b.radius - lower, 1e-6 * b.radius) << "trial " << trial;
    }
}

TEST(Miniball, CoplanarGridHasHalfDiagonalRadius) {
    std::vector<Vec3d> pts;
    for (int i = 0; i <= 10; ++i)
        for (int j = 0; j <= 10; ++j) pts.push_back({i * 0.1, j * 0.1, 0.5});
    hp::Ball b = hp::minimal_enclosing_ball(pts);
    expect_contains_all(b, pts);
    EXPECT_NEAR(b.radius, std::sqrt(2.0) / 2, 1e-12);
    EXPECT_NEAR(hp::length(b.center - Vec3d{0.5, 0.5, 0.5}), 0, 1e-12);
}

TEST(Miniball, ColinearAndDuplicatePoints) {
    std::vector<Vec3d> pts;
    for (int i = 0; i < 50; ++i) pts.push_back({1.0 + (i % 7) * 0.5, 2.0 + (i % 7), 3.0});
    for (int i = 0; i < 20; ++i) pts.push_back(pts[static_cast<std::size_t>(i)]);  // duplicates
    hp::Ball b = hp::minimal_enclosing_ball(pts);
    expect_contains_all(b, pts);
    // The segment from (1,2,3) to (4,8,3) has length sqrt(9 + 36).
    EXPECT_NEAR(b.radius, std::sqrt(45.0) / 2, 1e-12);

    std::vector<Vec3d> same(100, Vec3d{0.25, -4, 8});
    EXPECT_EQ(hp::minimal_enclosing_ball(same).radius, 0);
}

TEST(Miniball, PointsOnASphereAndCubeCorners) {
    std::mt19937 rng(3);
    std::normal_distribution<double> g;
    std::vector<Vec3d> pts;
    for (int i = 0; i < 5000; ++i) pts.push_back(hp::normalized(Vec3d{g(rng), g(rng), g(rng)}) * 2.0 + Vec3d{5, 5, 5});
    // A regular tetrahedron inscribed in the sphere: its minimal ball is the sphere, so the
    // minimum for the whole set is exactly 2.
    for (Vec3d v : {Vec3d{1, 1, 1}, Vec3d{1, -1, -1}, Vec3d{-1, 1, -1}, Vec3d{-1, -1, 1}})
        pts.push_back(Vec3d{5, 5, 5} + v * (2.0 / std::sqrt(3.0)));
    hp::Ball b = hp::minimal_enclosing_ball(pts);
    expect_contains_all(b, pts);
    EXPECT_NEAR(b.radius, 2.0, 1e-12);
    EXPECT_NEAR(hp::length(b.center - Vec3d{5, 5, 5}), 0, 1e-9);

    // Cube corners plus its interior points: radius = half the space diagonal.
    std::vector<Vec3d> cube;
    for (int i = 0; i < 8; ++i) cube.push_back({double(i & 1), double((i >> 1) & 1), double((i >> 2) & 1)});
    for (int i = 0; i < 100; ++i) cube.push_back({0.5 + 0.004 * i, 0.5, 0.5 - 0.004 * i});
    hp::Ball c = hp::minimal_enclosing_ball(cube);
    EXPECT_NEAR(c.radius, std::sqrt(3.0) / 2, 1e-12);
}

TEST(Miniball, DeterministicForTheSameInput) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<Vec3d> pts(2000);
    for (Vec3d& p : pts) p = {u(rng), u(rng) * 0.01, u(rng)};  // nearly flat cloud
    hp::Ball a = hp::minimal_enclosing_ball(pts), b = hp::minimal_enclosing_ball(pts);
    EXPECT_EQ(a.center, b.center);
    EXPECT_EQ(a.radius, b.radius);
    expect_contains_all(a, pts);
}
