// Vertex penetration depth (exact/penetration.hpp): depths worked out by hand for boxes, and a
// sphere into a slab against the lowest vertex found by a scan of the vertex list.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "../geometry/shapes.hpp"
#include "exact/exact.hpp"
#include "exact/penetration.hpp"

using namespace hp;
using namespace hp::exact;

namespace {

TriMesh axis_box(Vec3d lo, Vec3d hi) {
    TriMesh m;
    for (int i = 0; i < 8; ++i) m.vertices.push_back({i & 1 ? hi.x : lo.x, i & 2 ? hi.y : lo.y, i & 4 ? hi.z : lo.z});
    const std::uint32_t q[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    for (const auto& f : q) {
        m.triangles.push_back({f[0], f[1], f[2]});
        m.triangles.push_back({f[0], f[2], f[3]});
    }
    return m;
}

RigidPose at(Vec3d t) {
    RigidPose p;
    p.t = t;
    return p;
}

// Rotation by `angle` about z, then the translation t.
RigidPose turned_z(double angle, Vec3d t) {
    RigidPose p;
    const double c = std::cos(angle), s = std::sin(angle);
    p.rows[0] = {c, -s, 0};
    p.rows[1] = {s, c, 0};
    p.rows[2] = {0, 0, 1};
    p.t = t;
    return p;
}

}  // namespace

// A unit cube (body [-0.5, 0.5]^3) pushed down into the top face z = 2 of the box [0, 2]^3,
// centred over it: its bottom at z = 2 - d. Its four bottom corners are inside at depth
// min(d, 0.5 to the side faces) = d; no corner of the big box is inside the cube.
TEST(ExactPenetration, CubePushedIntoCubeAlongAnAxis) {
    const ExactMesh fixed(axis_box({0, 0, 0}, {2, 2, 2}));
    const ExactMesh moving(axis_box({-0.5, -0.5, -0.5}, {0.5, 0.5, 0.5}));
    const PenetrationDepth depth(fixed, moving);
    for (double d : {0.05, 0.3, 0.45}) {
        const Penetration p = depth(at({1, 1, 2.5 - d}));
        EXPECT_NEAR(p.depth, d, 1e-12) << d;
        EXPECT_EQ(p.vertices_inside, 4u) << d;
        EXPECT_TRUE(p.deepest_moving);
        EXPECT_LT(moving.mesh().vertices[p.deepest_vertex].z, 0.0);  // a bottom corner
    }
    // Turned 45 degrees about z: the corners reach 0.707 from the centre, still 0.29 inside the
    // side faces, so the depth is d again (this exercises the rotation of the pose).
    const Penetration t = depth(turned_z(std::numbers::pi / 4, {1, 1, 2.5 - 0.2}));
    EXPECT_NEAR(t.depth, 0.2, 1e-12);
    EXPECT_EQ(t.vertices_inside, 4u);
    // Along x into the side face x = 0 by 0.15: the cube's four corners at x = 0.15.
    const Penetration x = depth(at({0.15 - 0.5, 1, 1}));
    EXPECT_NEAR(x.depth, 0.15, 1e-12);
    EXPECT_EQ(x.vertices_inside, 4u);
    // Apart, and just touching: nothing inside (touching corners lie on the surface: depth 0).
    EXPECT_EQ(depth(at({1, 1, 3})).vertices_inside, 0u);
    EXPECT_NEAR(depth(at({1, 1, 2.5})).depth, 0.0, 1e-12);
}

// The other way round: the static cube's corners inside a large moving slab (body
// [-2, 2] x [-2, 2] x [-0.5, 0.5]) turned 30 degrees about z, its bottom at z = 0.8 over the static
// [0, 1]^3. The four top corners (z = 1) are 0.2 above the slab's bottom face, farther from the
// others; the slab's corners are all outside the small cube.
TEST(ExactPenetration, StaticCornersInsideTheMovingMesh) {
    const ExactMesh fixed(axis_box({0, 0, 0}, {1, 1, 1}));
    const ExactMesh moving(axis_box({-2, -2, -0.5}, {2, 2, 0.5}));
    const PenetrationDepth depth(fixed, moving);
    const Penetration p = depth(turned_z(std::numbers::pi / 6, {0.5, 0.5, 1.3}));
    EXPECT_NEAR(p.depth, 0.2, 1e-12);
    EXPECT_EQ(p.vertices_inside, 4u);
    EXPECT_FALSE(p.deepest_moving);
    EXPECT_EQ(fixed.mesh().vertices[p.deepest_vertex].z, 1.0);
}

// A sphere mesh (radius 1, 24 x 32 latitude/longitude, turned so that no pole points down) into a
// slab [-50, 50]^2 x [-1, 0] whose top face is z = 0. The depth is the largest -z over the
// sphere's vertices below the plane (their nearest slab face is the top one), found by a scan of
// the vertices.
TEST(ExactPenetration, SphereIntoAPlaneLikeBox) {
    const ExactMesh fixed(axis_box({-50, -50, -1}, {50, 50, 0}));
    const ExactMesh moving(hp::test::uv_sphere(24, 32));
    const PenetrationDepth depth(fixed, moving);
    RigidPose pose;
    const double a = 0.37;  // about x
    pose.rows[0] = {1, 0, 0};
    pose.rows[1] = {0, std::cos(a), -std::sin(a)};
    pose.rows[2] = {0, std::sin(a), std::cos(a)};
    for (double h : {0.9, 0.75, 0.5}) {
        pose.t = {3, -2, h};
        double lowest = 0;
        std::size_t below = 0;
        for (const Vec3d& v : moving.mesh().vertices) {
            const double z = pose.apply(v).z;
            lowest = std::min(lowest, z);
            below += z < 0;
        }
        const Penetration p = depth(pose);
        EXPECT_NEAR(p.depth, -lowest, 1e-12) << h;
        EXPECT_EQ(p.vertices_inside, below) << h;
        EXPECT_GT(p.depth, 0.0);
        EXPECT_LE(p.depth, 1 - h + 1e-12);  // the vertices lie on the sphere
        EXPECT_TRUE(p.deepest_moving);
    }
}

// Two boxes that cross as a plus sign (each pierces the other's long faces, no vertex of either
// inside the other): the overlap is real, the vertex depth misses it.
TEST(ExactPenetration, EdgesOnlyOverlapHasNoVertexInside) {
    const ExactMesh fixed(axis_box({-3, -0.5, -0.5}, {3, 0.5, 0.5}));
    const ExactMesh moving(axis_box({-0.5, -3, -0.4}, {0.5, 3, 0.4}));
    const PenetrationDepth depth(fixed, moving);
    ASSERT_TRUE(meshes_intersect(fixed, moving, RigidPose{}));
    const Penetration p = depth(RigidPose{});
    EXPECT_EQ(p.vertices_inside, 0u);
    EXPECT_EQ(p.depth, 0.0);
}
