#include "cfm/cfm.hpp"

#include <cmath>
#include <random>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include "core/error.hpp"
#include "geometry/closest_point.hpp"

using hp::FeatureType;
using hp::Vec3d;
namespace cfm = hp::cfm;

namespace {

// The cube [-1, 1]^3, outward counter-clockwise, two triangles per face. Vertex v = 4x + 2y + z
// for the corner (x, y, z) in {-1, 1} mapped to {0, 1}.
hp::TriMesh cube() {
    hp::TriMesh m;
    for (int v = 0; v < 8; ++v) m.vertices.push_back({v & 4 ? 1.0 : -1.0, v & 2 ? 1.0 : -1.0, v & 1 ? 1.0 : -1.0});
    m.triangles = {{0, 1, 3}, {0, 3, 2},   // x = -1
                   {4, 6, 7}, {4, 7, 5},   // x = +1
                   {0, 4, 5}, {0, 5, 1},   // y = -1
                   {2, 3, 7}, {2, 7, 6},   // y = +1
                   {0, 2, 6}, {0, 6, 4},   // z = -1
                   {1, 5, 7}, {1, 7, 3}};  // z = +1
    return m;
}

// The diagonal of the face that `q` (on the cube's surface, one coordinate +-1) lies on, as
// the two coordinates that are equal (or opposite) along it: from the triangles above, every
// face is split along the diagonal through the corners 0-3, 4-7, 0-5, 2-7, 0-6, 1-7.
bool on_face_diagonal(const Vec3d& q) {
    const double e = 1e-12;
    if (std::abs(std::abs(q.x) - 1) < e) return std::abs(q.y - q.z) < e;  // 0-3 and 4-7: y = z
    if (std::abs(std::abs(q.y) - 1) < e) return std::abs(q.x - q.z) < e;  // 0-5 and 2-7: x = z
    return std::abs(q.x - q.y) < e;                                        // 0-6 and 1-7: x = y
}

// A tree of one sphere (the root) around `center`.
hp::PointSphereTree one_sphere(Vec3d center, double radius) {
    hp::PointSphereTree t;
    t.k = 4;
    t.levels = 1;
    t.thresholds = {0};
    hp::TreeCluster c;
    c.level = 1;
    c.sphere = {center, radius};
    c.points = {0};
    t.clusters.push_back(c);
    return t;
}

Vec3d as_vec(const std::array<float, 3>& n) { return {n[0], n[1], n[2]}; }

// Edge id by the documented rule, found by scanning (3 t + i of the first triangle with it).
std::uint32_t edge_id(const hp::TriMesh& m, std::uint32_t a, std::uint32_t b) {
    for (std::uint32_t t = 0; t < m.triangles.size(); ++t)
        for (std::uint32_t i = 0; i < 3; ++i) {
            std::uint32_t p = m.triangles[t][i], q = m.triangles[t][(i + 1) % 3];
            if ((p == a && q == b) || (p == b && q == a)) return 3 * t + i;
        }
    return UINT32_MAX;
}

cfm::Options full_options(int stacks, cfm::Sampling s = cfm::Sampling::adaptive) {
    cfm::Options o;
    o.stacks = stacks;
    o.min_stacks = std::min(stacks, 4);
    o.sampling = s;
    o.store = cfm::Store::full;
    return o;
}

}  // namespace

// Sample 0 of polar sampling is the north pole, so the sample point is centre + (0, 0, r).
TEST(Cfm, CubeFaceEdgeAndCornerByHand) {
    const hp::TriMesh m = cube();
    const cfm::Options o = full_options(4, cfm::Sampling::polar);
    struct Case {
        Vec3d center;
        FeatureType type;
        std::uint32_t index;
        Vec3d point, normal;
    };
    const double r2 = std::sqrt(0.5), r3 = std::sqrt(1.0 / 3);
    const Case cases[] = {
        // Facing the +z face at (0.3, -0.2), away from its diagonal x = y: triangle 10 (1,5,7)
        // holds the points with x > y.
        {{0.3, -0.2, 0}, FeatureType::face, 10, {0.3, -0.2, 1}, {0, 0, 1}},
        // Facing the edge x = z = 1 (corners 5 and 7): the two face normals summed.
        {{2, 0.25, 0}, FeatureType::edge, edge_id(m, 5, 7), {1, 0.25, 1}, {r2, 0, r2}},
        // Facing the corner (1, 1, 1) = vertex 7: each face meets it with 90 degrees in all.
        {{2, 2, 0}, FeatureType::vertex, 7, {1, 1, 1}, {r3, r3, r3}},
        // Facing the face diagonal of +z (x = y): an edge inside a flat face, the face normal.
        {{0.4, 0.4, 0}, FeatureType::edge, edge_id(m, 1, 7), {0.4, 0.4, 1}, {0, 0, 1}},
    };
    for (const Case& c : cases) {
        const cfm::ClosestFeatureMap map = cfm::build_cfm(m, one_sphere(c.center, 2), o);
        ASSERT_EQ(map.spheres.size(), 1u);
        EXPECT_EQ(map.types[0], c.type) << c.center.x << " " << c.center.y;
        EXPECT_EQ(map.features[0], c.index);
        EXPECT_NEAR(hp::length(map.points[0] - c.point), 0, 1e-14);
        EXPECT_NEAR(hp::length(as_vec(map.normals[0]) - c.normal), 0, 1e-7);
    }
}

// Every sample of a sphere around the cube against the hand rule: the closest point is the
// sample point clamped to the cube; one clamped coordinate = a face (or its diagonal edge),
// two = a cube edge, three = a corner; normals the axis, the sum of two axes, of three.
TEST(Cfm, CubeAllSamplesAgainstClamping) {
    const hp::TriMesh m = cube();
    for (cfm::Sampling s : {cfm::Sampling::adaptive, cfm::Sampling::polar}) {
        const cfm::ClosestFeatureMap map = cfm::build_cfm(m, one_sphere({0.05, -0.1, 0.02}, 3), full_options(16, s));
        const cfm::SampleLayout& l = map.layout(1);
        ASSERT_FALSE(map.spheres[0].single_feature);
        ASSERT_EQ(map.spheres[0].count, l.size());
        for (std::size_t k = 0; k < l.size(); ++k) {
            const Vec3d p = map.spheres[0].center + l.direction(k) * 3.0;
            Vec3d q, n;
            int clamped = 0;
            for (int a = 0; a < 3; ++a) {
                q[a] = std::clamp(p[a], -1.0, 1.0);
                if (q[a] != p[a]) ++clamped, n[a] = p[a] > 0 ? 1 : -1;
            }
            n = hp::normalized(n);
            FeatureType want = clamped == 3 ? FeatureType::vertex : clamped == 2 ? FeatureType::edge : FeatureType::face;
            if (clamped == 1 && on_face_diagonal(q)) want = FeatureType::edge;
            EXPECT_EQ(map.types[k], want) << "sample " << k;
            EXPECT_NEAR(hp::length(map.points[k] - q), 0, 1e-12) << "sample " << k;
            EXPECT_NEAR(hp::length(as_vec(map.normals[k]) - n), 0, 1e-7) << "sample " << k;
        }
    }
}

// The regular tetrahedron with corners (1,1,1), (1,-1,-1), (-1,1,-1), (-1,-1,1): by symmetry
// the vertex pseudo-normal at (1,1,1) is (1,1,1)/sqrt 3, the edge normal at the midpoint (1,0,0)
// of (1,1,1)-(1,-1,-1) is (1,0,0), and the face opposite (1,1,1) has normal -(1,1,1)/sqrt 3.
TEST(Cfm, TetrahedronByHand) {
    hp::TriMesh m;
    m.vertices = {{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}};
    m.triangles = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};  // outward
    const double r3 = std::sqrt(1.0 / 3);
    const cfm::Options o = full_options(4, cfm::Sampling::polar);
    // Sample 0 sits at centre + (0, 0, 2).
    auto at = [&](Vec3d sample_point) { return cfm::build_cfm(m, one_sphere(sample_point - Vec3d{0, 0, 2}, 2), o); };
    cfm::ClosestFeatureMap v = at(Vec3d{1, 1, 1} * 3.0);
    EXPECT_EQ(v.types[0], FeatureType::vertex);
    EXPECT_EQ(v.features[0], 0u);
    EXPECT_NEAR(hp::length(as_vec(v.normals[0]) - Vec3d{r3, r3, r3}), 0, 1e-7);
    cfm::ClosestFeatureMap e = at({3, 0, 0});
    EXPECT_EQ(e.types[0], FeatureType::edge);
    EXPECT_EQ(e.features[0], edge_id(m, 0, 1));
    EXPECT_NEAR(hp::length(e.points[0] - Vec3d{1, 0, 0}), 0, 1e-14);
    EXPECT_NEAR(hp::length(as_vec(e.normals[0]) - Vec3d{1, 0, 0}), 0, 1e-7);
    const Vec3d centroid{-1.0 / 3, -1.0 / 3, -1.0 / 3};
    cfm::ClosestFeatureMap f = at(centroid - Vec3d{r3, r3, r3} * 2.0);
    EXPECT_EQ(f.types[0], FeatureType::face);
    EXPECT_EQ(f.features[0], 3u);
    EXPECT_NEAR(hp::length(f.points[0] - centroid), 0, 1e-14);
    EXPECT_NEAR(hp::length(as_vec(f.normals[0]) + Vec3d{r3, r3, r3}), 0, 1e-7);
}

TEST(Cfm, InwardMeshGetsOutwardNormals) {
    hp::TriMesh m = cube();
    for (auto& t : m.triangles) std::swap(t[1], t[2]);
    cfm::Options o = full_options(4, cfm::Sampling::polar);
    o.outward_sign = -1;
    const cfm::ClosestFeatureMap map = cfm::build_cfm(m, one_sphere({0.3, -0.2, 0}, 2), o);
    EXPECT_NEAR(hp::length(as_vec(map.normals[0]) - Vec3d{0, 0, 1}), 0, 1e-7);
}

// A small sphere over the middle of one triangle: every sample sees that face, so it keeps one
// record (sample 0's); a sphere over a corner sees several features.
TEST(Cfm, SingleFeatureStoredOnce) {
    const hp::TriMesh m = cube();
    for (cfm::Store store : {cfm::Store::full, cfm::Store::normal}) {
        cfm::Options o = full_options(10);
        o.store = store;
        const cfm::ClosestFeatureMap one = cfm::build_cfm(m, one_sphere({0.3, -0.2, 1.5}, 0.1), o);
        EXPECT_TRUE(one.spheres[0].single_feature);
        EXPECT_EQ(one.spheres[0].count, 1u);
        EXPECT_EQ(one.records(), 1u);
        EXPECT_NEAR(hp::length(as_vec(one.normals[0]) - Vec3d{0, 0, 1}), 0, 1e-7);
        EXPECT_EQ(one.lookup(0, {0, 0, -1}), 0u);
        if (store == cfm::Store::full) {
            EXPECT_EQ(one.types[0], FeatureType::face);
            EXPECT_EQ(one.features[0], 10u);
            const Vec3d p0 = Vec3d{0.3, -0.2, 1.5} + one.layout(1).direction(0) * 0.1;
            EXPECT_NEAR(hp::length(one.points[0] - Vec3d{p0.x, p0.y, 1}), 0, 1e-14);
        } else {
            EXPECT_TRUE(one.types.empty());
            EXPECT_TRUE(one.points.empty());
        }
        const cfm::ClosestFeatureMap corner = cfm::build_cfm(m, one_sphere({1.2, 1.2, 1.2}, 0.5), o);
        EXPECT_FALSE(corner.spheres[0].single_feature);
        EXPECT_EQ(corner.records(), cfm::sample_count(cfm::Sampling::adaptive, 10));
    }
}

// A real tree on points of a sphere mesh-like surface: every stored point is the exact closest
// point (brute force over all triangles), face records carry the face normal, stacks follow the
// refinement rule, and the result does not depend on the thread count.
TEST(Cfm, TreeExactAndDeterministic) {
    // An octahedron refined twice and pushed onto the unit sphere: 128 triangles.
    hp::TriMesh m;
    m.vertices = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    m.triangles = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4}, {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
    for (int round = 0; round < 2; ++round) {
        std::vector<std::array<std::uint32_t, 3>> next;
        for (const auto& t : m.triangles) {
            std::uint32_t mid[3];
            for (int i = 0; i < 3; ++i) {
                m.vertices.push_back(hp::normalized(m.vertices[t[i]] + m.vertices[t[(i + 1) % 3]]));
                mid[i] = static_cast<std::uint32_t>(m.vertices.size() - 1);
            }
            next.push_back({t[0], mid[0], mid[2]});
            next.push_back({mid[0], t[1], mid[1]});
            next.push_back({mid[2], mid[1], t[2]});
            next.push_back({mid[0], mid[1], mid[2]});
        }
        m.triangles = next;
    }
    std::mt19937 rng(3);
    std::normal_distribution<double> g;
    std::vector<Vec3d> pts(400);
    for (Vec3d& p : pts) p = hp::normalized(Vec3d{g(rng), g(rng), g(rng)});
    const hp::PointSphereTree tree = hp::build_point_sphere_tree(pts, {});
    ASSERT_GE(tree.levels, 3);
    cfm::Options o = full_options(12);
    o.min_stacks = 3;
    cfm::ClosestFeatureMap a;
    {
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        a = cfm::build_cfm(m, tree, o);
    }
    const cfm::ClosestFeatureMap b = cfm::build_cfm(m, tree, o);
    ASSERT_EQ(a.records(), b.records());
    for (std::size_t k = 0; k < a.records(); ++k) {
        ASSERT_EQ(a.normals[k], b.normals[k]);
        ASSERT_EQ(a.points[k], b.points[k]);
        ASSERT_EQ(a.features[k], b.features[k]);
    }
    ASSERT_EQ(a.spheres.size(), tree.clusters.size());
    std::size_t next = 0;
    for (std::size_t s = 0; s < a.spheres.size(); ++s) {
        const cfm::Sphere& sp = a.spheres[s];
        EXPECT_EQ(sp.stacks, cfm::stacks_for_level(tree.clusters[s].level, tree.levels, 12, 3));
        EXPECT_EQ(sp.first, next);
        const cfm::SampleLayout& l = a.layout(sp.level);
        EXPECT_EQ(l.stacks(), sp.stacks);
        EXPECT_EQ(sp.count, sp.single_feature ? 1u : l.size());
        next += sp.count;
        for (std::uint32_t k = 0; k < sp.count; ++k) {
            const std::size_t rec = sp.first + k;
            const Vec3d p = sp.center + l.direction(k) * sp.radius;
            double best = INFINITY;
            for (const auto& t : m.triangles)
                best = std::min(best, hp::closest_point_on_triangle(p, m.vertices[t[0]], m.vertices[t[1]], m.vertices[t[2]]).distance2);
            EXPECT_NEAR(hp::length(a.points[rec] - p), std::sqrt(best), 1e-12);
            if (a.types[rec] == FeatureType::face) {
                const auto& t = m.triangles[a.features[rec]];
                const Vec3d fn = hp::normalized(hp::cross(m.vertices[t[1]] - m.vertices[t[0]], m.vertices[t[2]] - m.vertices[t[0]]));
                EXPECT_NEAR(hp::length(as_vec(a.normals[rec]) - fn), 0, 1e-7);
            }
            // Lookup of a sample's own direction returns its record.
            if (!sp.single_feature) {
                EXPECT_EQ(a.lookup(s, l.direction(k)), rec);
            }
        }
    }
    EXPECT_EQ(next, a.records());
}

TEST(Cfm, RejectsBadParameters) {
    const hp::TriMesh m = cube();
    const hp::PointSphereTree t = one_sphere({0, 0, 0}, 2);
    cfm::Options o;
    o.stacks = 1;
    o.min_stacks = 1;
    EXPECT_THROW(cfm::build_cfm(m, t, o), hp::Error);
    o.stacks = 8;
    o.min_stacks = 9;
    EXPECT_THROW(cfm::build_cfm(m, t, o), hp::Error);
    hp::PointSphereTree nan_tree = one_sphere({0, NAN, 0}, 2);
    EXPECT_THROW(cfm::build_cfm(m, nan_tree, {}), hp::Error);
    try {
        cfm::build_cfm(hp::TriMesh{}, t, {});
        FAIL() << "no throw";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
    }
}
