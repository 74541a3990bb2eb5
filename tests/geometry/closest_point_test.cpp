#include "geometry/closest_point.hpp"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

using hp::Vec3d;

namespace {
// Independent reference: the plane projection when it falls inside the triangle (barycentric
// coordinates from the 2x2 normal equations), and the three clamped segment projections and the
// three vertices; the minimum of those squared distances.
double reference_distance2(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    Vec3d e0 = b - a, e1 = c - a, w = p - a;
    double a00 = hp::dot(e0, e0), a01 = hp::dot(e0, e1), a11 = hp::dot(e1, e1);
    double b0 = hp::dot(w, e0), b1 = hp::dot(w, e1), det = a00 * a11 - a01 * a01;
    double best = std::min({hp::length2(p - a), hp::length2(p - b), hp::length2(p - c)});
    if (det > 1e-300) {
        double u = (a11 * b0 - a01 * b1) / det, v = (a00 * b1 - a01 * b0) / det;
        if (u >= 0 && v >= 0 && u + v <= 1) best = std::min(best, hp::length2(p - (a + e0 * u + e1 * v)));
    }
    auto seg = [&](const Vec3d& s, const Vec3d& t) {
        Vec3d d = t - s;
        double l = hp::dot(d, d), x = l > 0 ? std::clamp(hp::dot(p - s, d) / l, 0.0, 1.0) : 0.0;
        return hp::length2(p - (s + d * x));
    };
    return std::min({best, seg(a, b), seg(b, c), seg(c, a)});
}

struct Rng {
    std::mt19937 gen;
    std::uniform_real_distribution<double> u{-1, 1};
    explicit Rng(unsigned seed) : gen(seed) {}
    double operator()() { return u(gen); }
    double in(double lo, double hi) { return lo + (hi - lo) * 0.5 * (u(gen) + 1); }
    Vec3d vec() { return {u(gen), u(gen), u(gen)}; }
};

// A random triangle that is not too thin (so that the constructed regions below are clean).
void random_triangle(Rng& r, Vec3d v[3]) {
    do {
        for (int i = 0; i < 3; ++i) v[i] = r.vec();
    } while (hp::length(hp::cross(v[1] - v[0], v[2] - v[0])) < 0.2);
}
}  // namespace

TEST(ClosestPoint, RandomPointsMatchTheReference) {
    Rng r(5);
    int regions[3] = {0, 0, 0};
    for (int n = 0; n < 100000; ++n) {
        Vec3d a = r.vec(), b = r.vec(), c = r.vec();
        Vec3d p = r.vec() * 2.0;
        hp::ClosestPoint cp = hp::closest_point_on_triangle(p, a, b, c);
        ASSERT_NEAR(cp.distance2, reference_distance2(p, a, b, c), 1e-12) << n;
        ASSERT_NEAR(cp.distance2, hp::length2(p - cp.point), 1e-12);
        ++regions[static_cast<int>(cp.type)];
    }
    for (int k : regions) EXPECT_GT(k, 1000) << "every feature type is exercised";
}

// Points built inside a known Voronoi region: the expected point and feature are known exactly.
TEST(ClosestPoint, ConstructedFaceEdgeAndVertexRegions) {
    Rng r(11);
    for (int n = 0; n < 20000; ++n) {
        Vec3d v[3];
        random_triangle(r, v);
        const Vec3d normal = hp::normalized(hp::cross(v[1] - v[0], v[2] - v[0]));
        const double h = r.in(-1, 1);
        // Face: barycentric (u, w) strictly inside, lifted along the normal.
        double u = r.in(0.05, 0.9), w = r.in(0.05, 0.95 - u);
        Vec3d q = v[0] + (v[1] - v[0]) * u + (v[2] - v[0]) * w;
        hp::ClosestPoint cp = hp::closest_point_on_triangle(q + normal * h, v[0], v[1], v[2]);
        ASSERT_EQ(cp.type, hp::FeatureType::face) << n;
        ASSERT_NEAR(cp.distance2, h * h, 1e-12);
        ASSERT_NEAR(hp::length(cp.point - q), 0, 1e-9);
        for (int i = 0; i < 3; ++i) {
            // Edge i: a point of the open edge, pushed out of the triangle in its plane.
            const Vec3d e = v[(i + 1) % 3] - v[i];
            Vec3d out = hp::normalized(hp::cross(e, normal));  // in-plane, away from the opposite corner
            ASSERT_LT(hp::dot(out, v[(i + 2) % 3] - v[i]), 0);
            const double t = r.in(0.05, 0.95), s = r.in(0.01, 1);
            q = v[i] + e * t;
            cp = hp::closest_point_on_triangle(q + out * s + normal * h, v[0], v[1], v[2]);
            ASSERT_EQ(cp.type, hp::FeatureType::edge) << n << " edge " << i;
            ASSERT_EQ(cp.index, i);
            ASSERT_NEAR(cp.distance2, s * s + h * h, 1e-12);
            ASSERT_NEAR(hp::length(cp.point - q), 0, 1e-9);
            // Vertex i: away from both of its edges, inside its normal cone.
            const Vec3d d = -hp::normalized(hp::normalized(v[(i + 1) % 3] - v[i]) + hp::normalized(v[(i + 2) % 3] - v[i]));
            cp = hp::closest_point_on_triangle(v[i] + d * s + normal * h, v[0], v[1], v[2]);
            ASSERT_EQ(cp.type, hp::FeatureType::vertex) << n << " vertex " << i;
            ASSERT_EQ(cp.index, i);
            ASSERT_NEAR(cp.distance2, s * s + h * h, 1e-12);
            ASSERT_EQ(cp.point, v[i]);
        }
    }
}

TEST(ClosestPoint, DegenerateTriangles) {
    // A needle (two equal corners), a point, and collinear corners.
    hp::ClosestPoint cp = hp::closest_point_on_triangle({0, 1, 0}, {-1, 0, 0}, {1, 0, 0}, {1, 0, 0});
    EXPECT_NEAR(cp.distance2, 1.0, 1e-15);
    EXPECT_EQ(cp.type, hp::FeatureType::edge);
    EXPECT_EQ(cp.index, 0);
    EXPECT_NEAR(hp::closest_point_on_triangle({0, 0, 2}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}).distance2, 4.0, 1e-15);
    cp = hp::closest_point_on_triangle({3, 1, 0}, {0, 0, 0}, {1, 0, 0}, {2, 0, 0});
    EXPECT_NEAR(cp.distance2, 2.0, 1e-15);
    EXPECT_EQ(cp.type, hp::FeatureType::vertex);
    EXPECT_EQ(cp.point, (Vec3d{2, 0, 0}));
    // Slivers: nearly collinear corners at every scale of thinness; never NaN, and within the
    // sliver's width of the reference.
    Rng r(3);
    for (int n = 0; n < 20000; ++n) {
        const Vec3d a = r.vec(), dir = r.vec(), side = r.vec();
        const double thin = std::pow(10.0, -r.in(3, 16));
        const Vec3d b = a + dir * r.in(0.1, 1), c = a + dir * r.in(-1, 2) + side * thin;
        const Vec3d p = r.vec() * 2.0;
        cp = hp::closest_point_on_triangle(p, a, b, c);
        ASSERT_TRUE(std::isfinite(cp.distance2) && hp::is_finite(cp.point)) << n;
        ASSERT_NEAR(cp.distance2, hp::length2(p - cp.point), 1e-12);
        const double ref = reference_distance2(p, a, b, c);
        ASSERT_NEAR(std::sqrt(cp.distance2), std::sqrt(ref), 1e-9 + 4 * thin) << n;
    }
}
