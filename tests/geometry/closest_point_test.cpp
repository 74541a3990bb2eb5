#include "geometry/closest_point.hpp"

#include <random>

#include <gtest/gtest.h>

#include "geometry/bvh.hpp"

using hp::Vec3d;

namespace {
// Independent reference: the plane projection if it falls inside (barycentric coordinates from
// the 2x2 normal equations), else the nearest of the three clamped segment projections.
double reference_distance2(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    Vec3d e0 = b - a, e1 = c - a, w = p - a;
    double a00 = hp::dot(e0, e0), a01 = hp::dot(e0, e1), a11 = hp::dot(e1, e1);
    double b0 = hp::dot(w, e0), b1 = hp::dot(w, e1), det = a00 * a11 - a01 * a01;
    double best = INFINITY;
    if (det > 1e-300) {
        double u = (a11 * b0 - a01 * b1) / det, v = (a00 * b1 - a01 * b0) / det;
        if (u >= 0 && v >= 0 && u + v <= 1) best = hp::length2(p - (a + e0 * u + e1 * v));
    }
    auto seg = [&](const Vec3d& s, const Vec3d& t) {
        Vec3d d = t - s;
        double l = hp::dot(d, d), x = l > 0 ? std::clamp(hp::dot(p - s, d) / l, 0.0, 1.0) : 0.0;
        return hp::length2(p - (s + d * x));
    };
    return std::min({best, seg(a, b), seg(b, c), seg(c, a)});
}
}  // namespace

TEST(ClosestPoint, MatchesTheReferenceInEveryRegion) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-1, 1);
    int regions[3] = {0, 0, 0};
    for (int n = 0; n < 100000; ++n) {
        Vec3d a{u(rng), u(rng), u(rng)}, b{u(rng), u(rng), u(rng)}, c{u(rng), u(rng), u(rng)};
        Vec3d p = Vec3d{u(rng), u(rng), u(rng)} * 2.0;
        hp::ClosestPoint cp = hp::closest_point_on_triangle(p, a, b, c);
        ASSERT_NEAR(cp.distance2, reference_distance2(p, a, b, c), 1e-12) << n;
        ASSERT_NEAR(cp.distance2, hp::length2(p - cp.point), 1e-12);
        ++regions[static_cast<int>(cp.type)];
    }
    for (int r : regions) EXPECT_GT(r, 1000) << "every feature type is exercised";
    // Degenerate triangles: a needle and a point.
    EXPECT_NEAR(hp::closest_point_on_triangle({0, 1, 0}, {-1, 0, 0}, {1, 0, 0}, {1, 0, 0}).distance2, 1.0, 1e-15);
    EXPECT_NEAR(hp::closest_point_on_triangle({0, 0, 2}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}).distance2, 4.0, 1e-15);
}

TEST(ClosestPoint, BvhEqualsBruteForce) {
    std::mt19937 rng(8);
    std::uniform_real_distribution<double> u(-1, 1);
    hp::TriMesh mesh;
    for (int t = 0; t < 3000; ++t) {
        Vec3d c{u(rng), u(rng), u(rng)};
        for (int k = 0; k < 3; ++k) mesh.vertices.push_back(c + Vec3d{u(rng), u(rng), u(rng)} * 0.1);
        mesh.triangles.push_back({static_cast<std::uint32_t>(3 * t), static_cast<std::uint32_t>(3 * t + 1),
                                  static_cast<std::uint32_t>(3 * t + 2)});
    }
    hp::TriangleBvh bvh(mesh);
    for (int n = 0; n < 2000; ++n) {
        Vec3d p = Vec3d{u(rng), u(rng), u(rng)} * 1.5;
        double best = INFINITY;
        for (const auto& t : mesh.triangles)
            best = std::min(best, reference_distance2(p, mesh.vertices[t[0]], mesh.vertices[t[1]], mesh.vertices[t[2]]));
        hp::MeshHit hit = bvh.closest(p);
        ASSERT_NEAR(hit.closest.distance2, best, 1e-12);
        // A bound below the answer finds nothing; a bound at it still finds it.
        EXPECT_EQ(bvh.closest(p, best * 0.5).triangle, UINT32_MAX);
        EXPECT_NE(bvh.closest(p, best * (1 + 1e-9)).triangle, UINT32_MAX);
    }
}
