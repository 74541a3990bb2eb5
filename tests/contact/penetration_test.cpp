// Penetration accuracy of the VPS query on the peg-in-hole pair: with the peg
// tilted and pressed against the wall of the block's hole, the reported maximum penetration is
// within one voxel of the exact value computed from the meshes for the same shell points.
//
// The whole pipeline runs in process: the block's layered voxelmap and distance field, the peg's
// pointshell and tree, the full query. The golden value is independent of all of it: for every
// shell point placed by the pose (rotation by Rodrigues' formula, not the library's quaternion
// code), the exact distance to the block's triangles by brute force (closest point on each
// triangle written here), signed by the generalized winding number (solid angles, written here),
// maximum over the points.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <numbers>

#include <gtest/gtest.h>

#include "distance/distance.hpp"
#include "mesh/mesh.hpp"
#include "pointshell/pointshell.hpp"
#include "contact/query.hpp"
#include "spheretree/tree.hpp"
#include "voxel/voxelize.hpp"

using hp::Vec3d;

namespace {

hp::TriMesh sample(const char* name) {
    return hp::load_mesh(std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / name).mesh;
}

// Layered voxelmap + signed distance of `mesh` on grid_around(bounds, s, 2).
struct Built {
    hp::GridSpec grid;
    std::vector<std::int32_t> layers;
    std::vector<double> distance;
};

Built build_field(const hp::TriMesh& mesh, double s) {
    Built b;
    b.grid = hp::grid_around(mesh.bounds(), s, 2);
    b.layers = hp::voxelize(mesh, b.grid, {}).values();
    b.distance = hp::compute_distance(mesh, b.grid, b.layers, {}).values;
    return b;
}

// ---- the exact reference, written for this test ----

double segment_distance(Vec3d p, Vec3d a, Vec3d b) {
    const Vec3d ab = b - a;
    const double t = std::clamp(hp::dot(p - a, ab) / hp::dot(ab, ab), 0.0, 1.0);
    return hp::length(p - (a + ab * t));
}

// Distance from p to the closed triangle abc: the plane distance when p projects inside (all three
// edge functions of the projection agree with the normal), else the nearest of the three edges.
double triangle_distance(Vec3d p, Vec3d a, Vec3d b, Vec3d c) {
    const Vec3d n = hp::cross(b - a, c - a);
    const double nn = hp::dot(n, n);
    const Vec3d q = p - n * (hp::dot(p - a, n) / nn);
    if (hp::dot(hp::cross(b - a, q - a), n) >= 0 && hp::dot(hp::cross(c - b, q - b), n) >= 0 &&
        hp::dot(hp::cross(a - c, q - c), n) >= 0)
        return std::abs(hp::dot(p - a, n)) / std::sqrt(nn);
    return std::min({segment_distance(p, a, b), segment_distance(p, b, c), segment_distance(p, c, a)});
}

// Generalized winding number: the sum of the triangles' signed solid angles seen from p over 4 pi
// (Van Oosterom and Strackee's formula); 1 inside a closed outward-wound mesh, 0 outside.
double winding_number(const hp::TriMesh& m, Vec3d p) {
    double sum = 0;
    for (const auto& t : m.triangles) {
        const Vec3d a = m.vertices[t[0]] - p, b = m.vertices[t[1]] - p, c = m.vertices[t[2]] - p;
        const double la = hp::length(a), lb = hp::length(b), lc = hp::length(c);
        const double num = hp::dot(a, hp::cross(b, c));
        const double den = la * lb * lc + hp::dot(a, b) * lc + hp::dot(b, c) * la + hp::dot(c, a) * lb;
        sum += 2 * std::atan2(num, den);
    }
    return sum / (4 * std::numbers::pi);
}

double unsigned_distance(const hp::TriMesh& m, Vec3d p) {
    double d = std::numeric_limits<double>::infinity();
    for (const auto& t : m.triangles)
        d = std::min(d, triangle_distance(p, m.vertices[t[0]], m.vertices[t[1]], m.vertices[t[2]]));
    return d;
}

// Signed distance to the mesh, inside positive.
double exact_signed_distance(const hp::TriMesh& m, Vec3d p) {
    const double d = unsigned_distance(m, p);
    return winding_number(m, p) > 0.5 ? d : -d;
}

// Rotation by `angle` about the unit `axis` (Rodrigues): v cos + (k x v) sin + k (k . v)(1 - cos).
Vec3d rotate(Vec3d v, Vec3d axis, double angle) {
    return v * std::cos(angle) + hp::cross(axis, v) * std::sin(angle) + axis * (hp::dot(axis, v) * (1 - std::cos(angle)));
}

struct PegPose {
    Vec3d axis;       // unit rotation axis
    double angle = 0;
    Vec3d t;          // world = R p + t
    hp::Pose pose() const {
        const double h = angle / 2;
        return {t, {std::cos(h), axis.x * std::sin(h), axis.y * std::sin(h), axis.z * std::sin(h)}};
    }
    Vec3d place(Vec3d p) const { return rotate(p, axis, angle) + t; }
};

// The exact maximum penetration of the placed shell points into the block.
double exact_max_penetration(const hp::TriMesh& block, const std::vector<Vec3d>& points, const PegPose& pose) {
    double best = -std::numeric_limits<double>::infinity();
    for (const Vec3d& p : points) {
        const Vec3d w = pose.place(p);
        const double d = unsigned_distance(block, w);
        if (d <= best) continue;  // the signed value is at most d: cannot be the maximum
        if (winding_number(block, w) > 0.5) best = d;
        else best = std::max(best, -d);
    }
    return best;
}

}  // namespace

// Reference checks of the exact distance: points on the block's axis and beside its outer wall.
TEST(PegInHole, ExactReferenceOnKnownPoints) {
    const hp::TriMesh block = sample("block-with-hole.stl");  // [-20, 20]^2 x [0, 20], hole r 6
    // The file stores float32 coordinates: 1e-6 mm tolerance.
    // On the axis of the hole: outside, 6 mm from the wall's vertices (a 32-gon inscribed in r 6,
    // so the wall's faces are 6 cos(pi / 32) away).
    EXPECT_NEAR(exact_signed_distance(block, {0, 0, 10}), -6 * std::cos(std::numbers::pi / 32), 1e-6);
    // Inside the solid, 2 mm under the top face, far from the hole and the outer walls.
    EXPECT_NEAR(exact_signed_distance(block, {15, 0, 18}), 2.0, 1e-6);
    // Outside, 3 mm beyond the outer wall x = 20, and 1 mm above the top face.
    EXPECT_NEAR(exact_signed_distance(block, {23, 0, 10}), -3.0, 1e-6);
    EXPECT_NEAR(exact_signed_distance(block, {10, 10, 21}), -1.0, 1e-6);
}

TEST(PegInHole, TiltedPegMaxPenetrationWithinOneVoxelOfExact) {
    const hp::TriMesh block = sample("block-with-hole.stl");  // mm: hole r 6 through z in [0, 20]
    const hp::TriMesh peg = sample("peg.stl");                // mm: r 5, z in [0, 30]
    const double s = 0.5;                                     // the block's voxel size, mm

    Built bf = build_field(block, s);
    const hp::DistanceSampler field(bf.grid, std::move(bf.distance));
    Built pf = build_field(peg, 0.5);
    const hp::PointshellResult ps = hp::sample_pointshell(peg, {pf.grid, std::move(pf.layers), std::move(pf.distance)}, {});
    const std::vector<Vec3d>& points = ps.shell.points;
    ASSERT_GT(points.size(), 1000u);
    const hp::PointSphereTree tree = hp::build_point_sphere_tree(points, {});
    hp::VpsQuery query(field, {points, ps.shell.normals, &tree}, {.mode = hp::QueryMode::full});

    // Poses: the peg leans by `tilt` towards azimuth phi, its bottom `depth` mm down the hole,
    // centred so that the middle of its axis inside the hole is on the hole's axis; then it is
    // pushed sideways (the push direction at `push` from the lean) until the exact maximum
    // penetration reaches `target` mm: against the wall at the peg's bottom (push 180 deg), at the
    // hole's top rim (push 0) or along its side (push 90).
    struct Case {
        double tilt_deg, depth, push_deg, target;
    };
    const Case cases[] = {{4, 12, 0, 0.3},   {4, 12, 180, 0.8}, {8, 9, 90, 0.5},
                          {8, 9, 180, 1.2},  {15, 4, 0, 0.6},   {15, 4, 90, 0.25}};
    const double phi = 0.3;  // radians, off the polygons' vertex directions
    double worst = 0;
    for (const Case& c : cases) {
        const double tilt = c.tilt_deg * std::numbers::pi / 180;
        const Vec3d lean{std::cos(phi), std::sin(phi), 0};
        PegPose base;
        base.axis = {-std::sin(phi), std::cos(phi), 0};  // tilting about it moves +z towards `lean`
        base.angle = tilt;
        const Vec3d up = rotate({0, 0, 1}, base.axis, tilt);
        const double half_inside = (c.depth / std::cos(tilt)) / 2;  // axis length inside the hole / 2
        base.t = Vec3d{0, 0, 20 - c.depth} - Vec3d{up.x, up.y, 0} * half_inside;
        const Vec3d push = rotate(lean, {0, 0, 1}, c.push_deg * std::numbers::pi / 180);
        auto at = [&](double shift) {
            PegPose p = base;
            p.t = base.t + push * shift;
            return p;
        };
        // Centred, the peg is clear of the block (1 mm of clearance minus the lean); 3 mm further
        // it is well into the wall. Bisect the push between the two.
        double lo = 0, hi = 3;
        ASSERT_LT(exact_max_penetration(block, points, at(lo)), 0) << "tilt " << c.tilt_deg << ": centred peg touches";
        ASSERT_GT(exact_max_penetration(block, points, at(hi)), c.target);
        for (int it = 0; it < 14; ++it) {
            const double mid = (lo + hi) / 2;
            (exact_max_penetration(block, points, at(mid)) < c.target ? lo : hi) = mid;
        }
        const PegPose pose = at(hi);
        const double exact = exact_max_penetration(block, points, pose);
        ASSERT_GT(exact, 0);

        const hp::QueryResult& r = query(pose.pose());
        ASSERT_FALSE(r.contacts.empty()) << "tilt " << c.tilt_deg << " push " << c.push_deg;
        const double error = std::abs(r.max_penetration - exact);
        worst = std::max(worst, error);
        EXPECT_LE(error, s) << "tilt " << c.tilt_deg << " deg, depth " << c.depth << " mm, push " << c.push_deg
                            << " deg: reported " << r.max_penetration << " mm, exact " << exact << " mm";
        std::printf("peg tilt %4.1f deg depth %4.1f mm push %5.1f deg: exact %.4f mm, reported %.4f mm, "
                    "error %.4f mm (%.3f voxel), %zu contacts\n",
                    c.tilt_deg, c.depth, c.push_deg, exact, r.max_penetration, error, error / s, r.contacts.size());
    }
    std::printf("peg in hole: largest |reported - exact| max penetration %.4f mm = %.3f voxel of %.1f mm\n", worst,
                worst / s, s);
    RecordProperty("max_error_voxels", std::to_string(worst / s));
}
