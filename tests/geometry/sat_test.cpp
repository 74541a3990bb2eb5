#include "geometry/sat.hpp"

#include <random>

#include <gtest/gtest.h>

using hp::Vec3d;

namespace {

// Independent reference: clip the triangle against the six slabs of the box
// (Sutherland-Hodgman); they overlap iff something is left. Exact up to rounding.
bool clip_reference(const Vec3d& c, const Vec3d& h, const Vec3d& a, const Vec3d& b, const Vec3d& d) {
    std::vector<Vec3d> poly{a, b, d};
    for (int axis = 0; axis < 3; ++axis)
        for (int side = -1; side <= 1; side += 2) {
            const double bound = c[axis] + side * h[axis];
            auto inside = [&](const Vec3d& p) { return side < 0 ? p[axis] >= bound : p[axis] <= bound; };
            std::vector<Vec3d> out;
            for (std::size_t i = 0; i < poly.size(); ++i) {
                const Vec3d& p = poly[i];
                const Vec3d& q = poly[(i + 1) % poly.size()];
                if (inside(p)) out.push_back(p);
                if (inside(p) != inside(q)) {
                    double t = (bound - p[axis]) / (q[axis] - p[axis]);
                    Vec3d x = p + (q - p) * t;
                    x[axis] = bound;
                    out.push_back(x);
                }
            }
            poly = std::move(out);
            if (poly.empty()) return false;
        }
    return true;
}

}  // namespace

TEST(Sat, AgreesWithClippingOnRandomTrianglesAndBoxes) {
    std::mt19937 rng(12);
    std::uniform_real_distribution<double> u(-2, 2);
    const Vec3d c{0.1, -0.2, 0.3}, h{0.5, 0.5, 0.5};
    int overlaps = 0;
    for (int i = 0; i < 200000; ++i) {
        Vec3d a{u(rng), u(rng), u(rng)};
        Vec3d b = a + Vec3d{u(rng), u(rng), u(rng)} * 0.6, d = a + Vec3d{u(rng), u(rng), u(rng)} * 0.6;
        bool sat = hp::triangle_box_overlap(c, h, a, b, d);
        ASSERT_EQ(sat, clip_reference(c, h, a, b, d)) << "triangle " << i;
        overlaps += sat;
    }
    EXPECT_GT(overlaps, 5000);    // both outcomes are well represented
    EXPECT_LT(overlaps, 195000);
}

TEST(Sat, TouchingCountsAsOverlap) {
    const Vec3d c{0, 0, 0}, h{1, 1, 1};
    // A triangle lying in the box's top face plane, a triangle touching only a corner, an edge.
    EXPECT_TRUE(hp::triangle_box_overlap(c, h, {-3, -3, 1}, {3, -3, 1}, {0, 3, 1}));
    EXPECT_TRUE(hp::triangle_box_overlap(c, h, {1, 1, 1}, {2, 1, 1}, {1, 2, 3}));
    EXPECT_TRUE(hp::triangle_box_overlap(c, h, {1, 1, -5}, {1, 1, 5}, {4, 4, 0}));
    // Just off by a hair: separated.
    EXPECT_FALSE(hp::triangle_box_overlap(c, h, {-3, -3, 1 + 1e-9}, {3, -3, 1 + 1e-9}, {0, 3, 1 + 1e-9}));
    // A tall triangle in the plane x + y = d cuts the box edge x = y = 1 when d <= 2.
    EXPECT_TRUE(hp::triangle_box_overlap(c, h, {2.0, 0, -5}, {0, 2.0, -5}, {1.0, 1.0, 5}));
    EXPECT_FALSE(hp::triangle_box_overlap(c, h, {2.1, 0, -5}, {0, 2.1, -5}, {1.05, 1.05, 5}));
}

TEST(Sat, DegenerateTriangles) {
    const Vec3d c{0, 0, 0}, h{1, 1, 1};
    EXPECT_TRUE(hp::triangle_box_overlap(c, h, {-5, 0, 0}, {5, 0, 0}, {5, 0, 0}));     // segment through
    EXPECT_FALSE(hp::triangle_box_overlap(c, h, {-5, 2, 0}, {5, 2, 0}, {0, 2, 0}));    // collinear, outside
    EXPECT_TRUE(hp::triangle_box_overlap(c, h, {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}));  // point in
    EXPECT_FALSE(hp::triangle_box_overlap(c, h, {1.5, 0, 0}, {1.5, 0, 0}, {1.5, 0, 0}));  // point out
    // A segment passing near the box edge diagonally, outside: only edge-cross axes separate it.
    EXPECT_FALSE(hp::triangle_box_overlap(c, h, {2.5, 0, 0}, {0, 2.5, 0}, {0, 2.5, 0}));
}
