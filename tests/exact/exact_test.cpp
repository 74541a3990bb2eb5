// lib/exact: continuous contact times against closed forms worked out by hand, the expel zone,
// internal edges counted by hand, and random triangle pairs against a bisection over the exact
// static triangle test (an independent route to the same time).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "exact/exact.hpp"
#include "exact/predicates.hpp"

using namespace hp;
using namespace hp::exact;

namespace {

TriMesh tri(Vec3d a, Vec3d b, Vec3d c) {
    TriMesh m;
    m.vertices = {a, b, c};
    m.triangles = {{0, 1, 2}};
    return m;
}

// Axis-aligned box [lo, hi], outward counter-clockwise, two triangles per face.
TriMesh box(Vec3d lo, Vec3d hi) {
    TriMesh m;
    for (int i = 0; i < 8; ++i) m.vertices.push_back({i & 1 ? hi.x : lo.x, i & 2 ? hi.y : lo.y, i & 4 ? hi.z : lo.z});
    const std::uint32_t q[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    for (const auto& f : q) {
        m.triangles.push_back({f[0], f[1], f[2]});
        m.triangles.push_back({f[0], f[2], f[3]});
    }
    return m;
}

// The L-shaped prism: the polygon (0,0) (2,0) (2,1) (1,1) (1,2) (0,2), height 1; the L faces fanned
// from the reflex corner (1,1).
TriMesh l_prism() {
    const double xy[6][2] = {{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}};
    TriMesh m;
    for (int z = 0; z < 2; ++z)
        for (const auto& p : xy) m.vertices.push_back({p[0], p[1], static_cast<double>(z)});
    const std::uint32_t fan[4][2] = {{4, 5}, {5, 0}, {0, 1}, {1, 2}};
    for (const auto& f : fan) {
        m.triangles.push_back({3 + 6, f[0] + 6, f[1] + 6});  // top, +z
        m.triangles.push_back({3, f[1], f[0]});              // bottom, -z
    }
    for (std::uint32_t i = 0; i < 6; ++i) {
        const std::uint32_t j = (i + 1) % 6;
        m.triangles.push_back({i, j, j + 6});
        m.triangles.push_back({i, j + 6, i + 6});
    }
    return m;
}

const RigidPose kIdentity{};

}  // namespace

TEST(ExactPredicates, Orient3dSignsAndExactDegeneracy) {
    EXPECT_EQ(orient3d({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}), 1);
    EXPECT_EQ(orient3d({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, -1}), -1);
    // Coplanar points whose rounded determinant is not zero: 0.1 is not a double, but the four
    // points below are exactly coplanar (z = x + y on doubles whose sums are exact).
    EXPECT_EQ(orient3d({0.5, 0.25, 0.75}, {1.5, 0.25, 1.75}, {0.5, 2.25, 2.75}, {8.5, 4.25, 12.75}), 0);
    // One unit in the last place off the plane.
    EXPECT_EQ(orient3d({0.5, 0.25, 0.75}, {1.5, 0.25, 1.75}, {0.5, 2.25, 2.75}, {8.5, 4.25, std::nextafter(12.75, 20.0)}), 1);
}

TEST(ExactPredicates, TrianglesTouchingAndApart) {
    const Triangle a{Vec3d{0, 0, 0}, Vec3d{1, 0, 0}, Vec3d{0, 1, 0}};
    EXPECT_TRUE(triangles_intersect(a, {Vec3d{0.2, 0.2, 0}, Vec3d{0.2, 0.2, 1}, Vec3d{0.3, 0.2, 1}}));  // vertex on face
    EXPECT_FALSE(triangles_intersect(a, {Vec3d{0.2, 0.2, 1e-300}, Vec3d{0.2, 0.2, 1}, Vec3d{0.3, 0.2, 1}}));
    EXPECT_TRUE(triangles_intersect(a, {Vec3d{0.5, -1, 0}, Vec3d{0.5, 1, 0}, Vec3d{0.5, 0, 1}}));    // edge through
    EXPECT_TRUE(triangles_intersect(a, {Vec3d{0.1, 0.1, 0}, Vec3d{0.3, 0.1, 0}, Vec3d{0.1, 0.3, 0}}));  // coplanar inside
    EXPECT_FALSE(triangles_intersect(a, {Vec3d{1, 1, 0}, Vec3d{2, 1, 0}, Vec3d{1, 2, 0}}));           // coplanar apart
    EXPECT_TRUE(triangles_intersect(a, {Vec3d{0.5, 0.5, 0}, Vec3d{2, 1, 0}, Vec3d{1, 2, 0}}));        // coplanar touch
}

// A vertex falls on a face: (0.5, 0.5, 1) by (0, 0, -2) reaches z = 0 at 1/2.
TEST(ExactTranslate, VertexFace) {
    const ExactMesh fixed(tri({0, 0, 0}, {2, 0, 0}, {0, 2, 0}));
    const ExactMesh moving(tri({0.5, 0.5, 1}, {3, 3, 3}, {-3, 4, 3}));
    const Contact c = translate(fixed, moving, kIdentity, {0, 0, -2});
    ASSERT_TRUE(c.hit);
    EXPECT_EQ(c.feature, Feature::vertex_face);
    EXPECT_NEAR(c.fraction, 0.5, 1e-15);
    EXPECT_EQ(c.moving_index, 0u);
    // Too short a step: no contact.
    EXPECT_FALSE(translate(fixed, moving, kIdentity, {0, 0, -0.9}).hit);
}

// A static apex at the origin meets the falling face z = 1 after 1/4 of a fall of 4.
TEST(ExactTranslate, FaceVertex) {
    const ExactMesh fixed(tri({0.5, 0.5, 0}, {-3, -3, -2}, {4, -3, -2}));
    const ExactMesh moving(tri({0, 0, 1}, {2, 0, 1}, {0, 2, 1}));
    const Contact c = translate(fixed, moving, kIdentity, {0, 0, -4});
    ASSERT_TRUE(c.hit);
    EXPECT_EQ(c.feature, Feature::face_vertex);
    EXPECT_NEAR(c.fraction, 0.25, 1e-15);
}

// Crossed edges: the moving edge along y at z = 1 falls on the ridge along x at z = 0.
TEST(ExactTranslate, EdgeEdge) {
    const ExactMesh fixed(tri({-1, 0, 0}, {1, 0, 0}, {0, -1, -1}));
    const ExactMesh moving(tri({0, -1, 1}, {0, 1, 1}, {0, 0, 2}));
    const Contact c = translate(fixed, moving, kIdentity, {0.25, 0, -2});
    ASSERT_TRUE(c.hit);
    EXPECT_EQ(c.feature, Feature::edge_edge);
    EXPECT_NEAR(c.fraction, 0.5, 1e-15);
    // Shifted so that the crossing point lies beyond the ridge's end (x = 1): no contact.
    EXPECT_FALSE(translate(fixed, moving, kIdentity, {3, 0, -2}).hit);
}

// Parallel edges: a moving edge along x falls onto the ridge along x; the edge-edge test skips the
// pair and the end points' vertex-face tests (on the triangle's edge) find the touch.
TEST(ExactTranslate, ParallelEdges) {
    const ExactMesh fixed(tri({-1, 0, 0}, {1, 0, 0}, {0, -1, -1}));
    const ExactMesh moving(tri({-0.5, 0, 1}, {0.5, 0, 1}, {0, 0.3, 2}));
    const Contact c = translate(fixed, moving, kIdentity, {0, 0, -2});
    ASSERT_TRUE(c.hit);
    EXPECT_NE(c.feature, Feature::edge_edge);
    EXPECT_NEAR(c.fraction, 0.5, 1e-15);
}

// A vertex whose trail passes exactly through the diagonal shared by two triangles of a square.
TEST(ExactTranslate, VertexOnSharedEdge) {
    TriMesh sq;
    sq.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
    sq.triangles = {{0, 1, 2}, {0, 2, 3}};
    const ExactMesh fixed(sq);
    const ExactMesh moving(tri({0.5, 0.5, 1}, {0.5, 3, 4}, {3, 0.5, 4}));
    const Contact c = translate(fixed, moving, kIdentity, {0, 0, -2});
    ASSERT_TRUE(c.hit);
    EXPECT_EQ(c.feature, Feature::vertex_face);
    EXPECT_NEAR(c.fraction, 0.5, 1e-15);
    // The same at a vertex of the square (0, 0).
    const ExactMesh corner(tri({0, 0, 1}, {0, 3, 4}, {3, 0, 4}));
    const Contact d = translate(fixed, corner, kIdentity, {0, 0, -4});
    ASSERT_TRUE(d.hit);
    EXPECT_NEAR(d.fraction, 0.25, 1e-15);
}

// Rotation about +y through the origin: (x, z) = (1, 1) reaches z = 0 at 45 degrees (tan = z/x),
// half of a 90-degree step; the other corners have z/x = 2.
TEST(ExactRotate, VertexFace) {
    const ExactMesh fixed(tri({-10, -10, 0}, {10, -10, 0}, {0, 10, 0}));
    const ExactMesh moving(tri({1, 0, 1}, {1, 0.2, 2}, {1, -0.2, 2}));
    const Contact c = rotate(fixed, moving, kIdentity, {0, 0, 0}, {0, 1, 0}, std::numbers::pi / 2);
    ASSERT_TRUE(c.hit);
    EXPECT_EQ(c.feature, Feature::vertex_face);
    EXPECT_NEAR(c.fraction, 0.5, 1e-14);
    // A 30-degree step stops short.
    EXPECT_FALSE(rotate(fixed, moving, kIdentity, {0, 0, 0}, {0, 1, 0}, std::numbers::pi / 6).hit);
}

// The rotation axis (the x axis) lies in the face's plane z = 0: (y, z) = (1, 1) turned by -45
// degrees reaches the plane; a step of -90 degrees: 1/2.
TEST(ExactRotate, AxisInFacePlane) {
    const ExactMesh fixed(tri({-5, -5, 0}, {5, -5, 0}, {0, 5, 0}));
    const ExactMesh moving(tri({0.5, 1, 1}, {0.5, 1.2, 2}, {0.7, 1, 2}));
    const Contact c = rotate(fixed, moving, kIdentity, {0, 0, 0}, {1, 0, 0}, -std::numbers::pi / 2);
    ASSERT_TRUE(c.hit);
    EXPECT_EQ(c.feature, Feature::vertex_face);
    EXPECT_NEAR(c.fraction, 0.5, 1e-14);
}

// An edge parallel to the axis (along y, axis through (-1, 0, 0)) at (x, z) = (1, 1) relative to
// the axis meets the ridge along x at 45 degrees.
TEST(ExactRotate, EdgeEdge) {
    const ExactMesh fixed(tri({-1, 0, 0}, {1, 0, 0}, {0, -1, -1}));
    const ExactMesh moving(tri({0, -1, 1}, {0, 1, 1}, {0, 0, 2}));
    const Contact c = rotate(fixed, moving, kIdentity, {-1, 0, 0}, {0, 1, 0}, std::numbers::pi / 2);
    ASSERT_TRUE(c.hit);
    EXPECT_EQ(c.feature, Feature::edge_edge);
    EXPECT_NEAR(c.fraction, 0.5, 1e-14);
}

// Internal edges of the L prism, by hand: 12 triangles' worth of sides and 4 + 4 fan triangles
// make 20 triangles and 30 edges; flat: 3 fan diagonals on top, 3 below, 6 side diagonals = 12;
// concave: the vertical edge at the reflex corner = 1. No vertex has only internal edges.
TEST(ExactInternalEdges, LPrismCountedByHand) {
    const EdgeStats s = edge_stats(l_prism());
    EXPECT_EQ(s.edges, 30u);
    EXPECT_EQ(s.concave, 1u);
    EXPECT_EQ(s.flat, 12u);
    EXPECT_EQ(s.internal, 13u);
    EXPECT_EQ(s.internal_vertices, 0u);
    EXPECT_DOUBLE_EQ(s.internal_share(), 13.0 / 30.0);
    // A box has only its 6 face diagonals internal (flat) of 18 edges.
    const EdgeStats b = edge_stats(box({0, 0, 0}, {1, 1, 1}));
    EXPECT_EQ(b.edges, 18u);
    EXPECT_EQ(b.flat, 6u);
    EXPECT_EQ(b.concave, 0u);
}

// Skipping internal edges does not change a contact time: a box in the L prism's notch moves
// into the concave corner (the faces x = 1 and y = 1 are 0.2 away).
TEST(ExactInternalEdges, SkippingKeepsTheTime) {
    const ExactMesh fixed(l_prism());
    const ExactMesh moving(box({1.2, 1.2, 0.2}, {1.6, 1.6, 0.6}));
    const RigidPose start{};
    ASSERT_FALSE(meshes_intersect(fixed, moving, start));
    const std::pair<Vec3d, double> cases[] = {
        {Vec3d{-0.5, -0.5, 0}, 0.4}, {Vec3d{-0.5, -0.3, 0}, 0.4}, {Vec3d{-0.1, -0.5, -0.1}, 0.4}, {Vec3d{-0.5, -0.8, 0.2}, 0.25}};
    for (const auto& [d, expected] : cases) {
        const Contact a = translate(fixed, moving, start, d, {.skip_internal = true});
        const Contact b = translate(fixed, moving, start, d, {.skip_internal = false});
        ASSERT_TRUE(a.hit);
        ASSERT_TRUE(b.hit);
        EXPECT_NEAR(a.fraction, expected, 1e-14);
        EXPECT_NEAR(b.fraction, expected, 1e-14);
    }
}

// Expel zone: a box falls onto a box in long steps, each taken only up to safe_fraction. It never
// penetrates, ends within eps of the floor and stays there (later steps do not sink).
TEST(ExactExpel, TranslationNeverPenetratesNorSinks) {
    const ExactMesh fixed(box({-2, -2, -1}, {2, 2, 0}));
    const ExactMesh moving(box({0, 0, 0}, {1, 1, 1}));
    const double eps = 1e-3;
    RigidPose pose;
    pose.t = {0.1, 0.2, 0.7};
    for (int step = 0; step < 8; ++step) {
        const Vec3d d{0.01, -0.02, -0.3};
        const Contact c = translate(fixed, moving, pose, d, {.eps = eps});
        EXPECT_LE(c.safe_fraction, c.fraction);
        pose.t += d * c.safe_fraction;
        EXPECT_FALSE(meshes_intersect(fixed, moving, pose)) << "step " << step;
        EXPECT_GE(pose.t.z, eps * (1 - 1e-9)) << "step " << step;
        if (step >= 3) {
            EXPECT_LE(pose.t.z, eps * (1 + 1e-9));
            EXPECT_EQ(c.safe_fraction, 0.0);
        }
    }
    // Moving away from inside the zone is allowed in full.
    EXPECT_EQ(translate(fixed, moving, pose, {0, 0, 0.3}, {.eps = eps}).safe_fraction, 1.0);
}

TEST(ExactExpel, RotationNeverPenetrates) {
    const ExactMesh fixed(box({-2, -2, -1}, {2, 2, 0}));
    const ExactMesh moving(box({0, 0, 0}, {1, 1, 1}));
    const double eps = 1e-3;
    RigidPose pose;
    pose.t = {0, 0, 0.3};
    for (int step = 0; step < 6; ++step) {
        // Tip over about the axis through the box's corner edge (x = 0 side) along y.
        const Vec3d origin = pose.apply({0, 0, 0});
        const Contact c = rotate(fixed, moving, pose, origin, {0, 1, 0}, -0.4, {.eps = eps});
        EXPECT_LE(c.safe_fraction, c.fraction);
        const double a = -0.4 * c.safe_fraction;
        RigidPose next = pose;
        for (int k = 0; k < 3; ++k) {
            const Vec3d col{pose.rows[0][k], pose.rows[1][k], pose.rows[2][k]};
            const Vec3d r = rotate_about(col, {0, 0, 0}, {0, 1, 0}, a);
            next.rows[0][k] = r.x;
            next.rows[1][k] = r.y;
            next.rows[2][k] = r.z;
        }
        next.t = rotate_about(pose.t, origin, {0, 1, 0}, a);
        pose = next;
        EXPECT_FALSE(meshes_intersect(fixed, moving, pose)) << "step " << step;
    }
}

namespace {
Vec3d random_point(std::mt19937_64& rng, double r) {
    std::uniform_real_distribution<double> u(-r, r);
    return {u(rng), u(rng), u(rng)};
}
}  // namespace

// Random triangle pairs: the exact time against 2000 samples plus bisection of the exact static
// test. The sampled reference can only be later (it may step over a short contact), never earlier.
TEST(ExactRandom, TranslationAgreesWithBisection) {
    std::mt19937_64 rng(7);
    int hits = 0, agree = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const ExactMesh fixed(tri(random_point(rng, 1), random_point(rng, 1), random_point(rng, 1)));
        const Vec3d off = random_point(rng, 1) + Vec3d{0, 0, 2};
        const ExactMesh moving(tri(random_point(rng, 1) + off, random_point(rng, 1) + off, random_point(rng, 1) + off));
        const Vec3d d = Vec3d{0, 0, -4} + random_point(rng, 1.5);
        if (meshes_intersect(fixed, moving, kIdentity)) continue;
        const Contact c = translate(fixed, moving, kIdentity, d);
        const double ref = bisect_first_contact(
            fixed, moving, [&](double s) { RigidPose p; p.t = d * s; return p; }, 2000, 1e-13);
        if (!c.hit) {
            EXPECT_EQ(ref, 2.0) << "trial " << trial;
            continue;
        }
        ++hits;
        EXPECT_LE(c.fraction, ref + 1e-9) << "trial " << trial;
        agree += std::fabs(c.fraction - ref) <= 1e-9;
    }
    EXPECT_GT(hits, 60);
    EXPECT_EQ(agree, hits);
}

TEST(ExactRandom, RotationAgreesWithBisection) {
    std::mt19937_64 rng(11);
    int hits = 0, agree = 0;
    for (int trial = 0; trial < 600; ++trial) {
        const ExactMesh fixed(tri(random_point(rng, 1), random_point(rng, 1), random_point(rng, 1)));
        const Vec3d off = random_point(rng, 1) + Vec3d{0, 0, 1.5};
        const ExactMesh moving(tri(random_point(rng, 1) + off, random_point(rng, 1) + off, random_point(rng, 1) + off));
        const Vec3d origin = Vec3d{0, 0, 0.75} + random_point(rng, 0.5);
        const Vec3d axis = normalized(random_point(rng, 1));
        const double angle = std::uniform_real_distribution<double>(-1.4, 1.4)(rng);
        if (meshes_intersect(fixed, moving, kIdentity)) continue;
        const Contact c = rotate(fixed, moving, kIdentity, origin, axis, angle);
        const double ref = bisect_first_contact(
            fixed, moving,
            [&](double s) {
                RigidPose p;
                for (int k = 0; k < 3; ++k) {
                    Vec3d e{};
                    e[k] = 1;
                    const Vec3d r = rotate_about(e, {0, 0, 0}, axis, angle * s);
                    p.rows[0][k] = r.x;
                    p.rows[1][k] = r.y;
                    p.rows[2][k] = r.z;
                }
                p.t = rotate_about({0, 0, 0}, origin, axis, angle * s);
                return p;
            },
            2000, 1e-13);
        if (!c.hit) {
            EXPECT_EQ(ref, 2.0) << "trial " << trial;
            continue;
        }
        ++hits;
        EXPECT_LE(c.fraction, ref + 1e-9) << "trial " << trial;
        agree += std::fabs(c.fraction - ref) <= 1e-9;
    }
    EXPECT_GT(hits, 15);
    EXPECT_EQ(agree, hits);
}

// Mesh diagnostics count the same internal edges (lib/mesh shares the rule with lib/exact).
TEST(ExactInternalEdges, MeshDiagnostics) {
    const MeshDiagnostics d = diagnose(l_prism());
    EXPECT_EQ(d.edges, 30u);
    EXPECT_EQ(d.internal_edges, 13u);
    EXPECT_EQ(d.concave_edges, 1u);
    EXPECT_TRUE(d.watertight);
}

// Distances between boxes worked out by hand: faces 0.3 apart; corner to corner.
TEST(ExactDistance, Boxes) {
    const ExactMesh fixed(box({0, 0, 0}, {1, 1, 1}));
    const ExactMesh moving(box({0, 0, 0}, {1, 1, 1}));
    RigidPose p;
    p.t = {0.2, 0.4, 1.3};
    EXPECT_NEAR(mesh_distance(fixed, moving, p, 10), 0.3, 1e-15);
    p.t = {2, 3, 1};  // corner (1, 1, 1) to corner (2, 3, 1): sqrt(1 + 4)
    EXPECT_NEAR(mesh_distance(fixed, moving, p, 10), std::sqrt(5.0), 1e-15);
    EXPECT_EQ(mesh_distance(fixed, moving, p, 1.5), 1.5);  // beyond the bound
    p.t = {0.5, 0.5, 0.5};
    EXPECT_EQ(mesh_distance(fixed, moving, p, 10), 0.0);
    // Turned 45 degrees about z above the top face: still 0.3 between the faces.
    RigidPose q = pose_from_quaternion({std::cos(std::numbers::pi / 8), 0, 0, std::sin(std::numbers::pi / 8)}, {0.5, 0, 1.3});
    EXPECT_NEAR(mesh_distance(fixed, moving, q, 10), 0.3, 1e-12);
}

// A general step (translation and rotation) through pose_from_quaternion: the split path's first
// contact agrees with bisection along the same split path.
TEST(ExactMove, SplitStepAgreesWithBisection) {
    const ExactMesh fixed(box({-2, -2, -1}, {2, 2, 0}));
    const ExactMesh moving(l_prism());
    const RigidPose from = pose_from_quaternion({1, 0, 0, 0}, {-1, -1, 0.4});
    const RigidPose to = pose_from_quaternion({std::cos(0.2), std::sin(0.2), 0, 0}, {-0.8, -1, -0.3});
    const StepContact c = move(fixed, moving, from, to);
    ASSERT_TRUE(c.hit);
    const double ref = bisect_first_contact(fixed, moving, [&](double s) { return split_path_pose(moving, from, to, s); }, 1000, 1e-13);
    EXPECT_NEAR(c.fraction, ref, 1e-9);
}
