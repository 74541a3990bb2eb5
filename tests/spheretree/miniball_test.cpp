#include "spheretree/miniball.hpp"

#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include <gtest/gtest.h>

using hp::Vec3d;

namespace {

// Independent reference: the circumsphere of 1-4 points by closed formulas (not the solver under
// test), and the minimal ball as the smallest such sphere that contains every point.
std::optional<hp::Ball> reference_circumsphere(const std::vector<Vec3d>& s) {
    if (s.size() == 1) return hp::Ball{s[0], 0};
    if (s.size() == 2) return hp::Ball{(s[0] + s[1]) * 0.5, hp::length(s[1] - s[0]) * 0.5};
    if (s.size() == 3) {
        // Circumcentre of a triangle: a + [ |ac|^2 (ab x ac) x ab + |ab|^2 ac x (ab x ac) ] / (2 |ab x ac|^2).
        Vec3d ab = s[1] - s[0], ac = s[2] - s[0], n = hp::cross(ab, ac);
        double n2 = hp::length2(n);
        if (n2 < 1e-20) return std::nullopt;
        Vec3d off = (hp::cross(n, ab) * hp::length2(ac) + hp::cross(ac, n) * hp::length2(ab)) / (2 * n2);
        return hp::Ball{s[0] + off, hp::length(off)};
    }
    // Tetrahedron: Cramer's rule on 2 (p_i - p_0) . x = |p_i|^2 - |p_0|^2.
    Vec3d a = (s[1] - s[0]) * 2, b = (s[2] - s[0]) * 2, c = (s[3] - s[0]) * 2;
    double det = hp::dot(a, hp::cross(b, c));
    if (std::abs(det) < 1e-12) return std::nullopt;
    double ra = hp::length2(s[1]) - hp::length2(s[0]), rb = hp::length2(s[2]) - hp::length2(s[0]),
           rc = hp::length2(s[3]) - hp::length2(s[0]);
    Vec3d x = (hp::cross(b, c) * ra + hp::cross(c, a) * rb + hp::cross(a, b) * rc) / det;
    return hp::Ball{x, hp::length(x - s[0])};
}

double brute_force_radius(const std::vector<Vec3d>& pts) {
    double best = INFINITY;
    std::size_t n = pts.size();
    std::vector<Vec3d> subset;
    for (unsigned mask = 1; mask < (1u << n); ++mask) {
        if (__builtin_popcount(mask) > 4) continue;
        subset.clear();
        for (std::size_t i = 0; i < n; ++i)
            if (mask & (1u << i)) subset.push_back(pts[i]);
        auto ball = reference_circumsphere(subset);
        if (!ball || ball->radius >= best) continue;
        bool contains = true;
        for (const Vec3d& p : pts)
            if (hp::length(p - ball->center) > ball->radius * (1 + 1e-9) + 1e-12) contains = false;
        if (contains) best = ball->radius;
    }
    return best;
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
        EXPECT_NEAR(b.radius, brute_force_radius(pts), 1e-9) << "trial " << trial;
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
    hp::Ball b = hp::minimal_enclosing_ball(pts);
    expect_contains_all(b, pts);
    EXPECT_LE(b.radius, 2.0 + 1e-12);
    EXPECT_GT(b.radius, 1.99);  // 5000 points cover the sphere densely

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
