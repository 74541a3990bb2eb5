#include "pointshell/pointshell.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include "core/error.hpp"
#include "distance/distance.hpp"
#include "geometry/closest_point.hpp"
#include "voxel/voxelize.hpp"
#include "../core/usage_error.hpp"

// Golden values here are derived by hand (lattice counts of a square and a cube whose faces lie on
// voxel faces) or by brute force over all points and triangles, never taken from the sampler.
namespace {

using hp::Vec3d;

// Unit square in z = 0, two triangles, counter-clockwise seen from +z.
hp::TriMesh square() {
    hp::TriMesh m;
    m.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
    m.triangles = {{0, 1, 2}, {0, 2, 3}};
    return m;
}

// Unit cube [0,1]^3, 12 triangles wound outward (or inward when `inverted`).
hp::TriMesh cube(bool inverted = false) {
    hp::TriMesh m;
    for (int i = 0; i < 8; ++i) m.vertices.push_back({double(i & 1), double((i >> 1) & 1), double((i >> 2) & 1)});
    m.triangles = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6}, {0, 1, 4}, {1, 5, 4},
                   {2, 6, 3}, {3, 6, 7}, {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
    if (inverted)
        for (auto& t : m.triangles) std::swap(t[1], t[2]);
    return m;
}

// Closed-form signed distance to the unit cube, inside positive.
double cube_distance(const Vec3d& p) {
    double out2 = 0, in = INFINITY;
    for (int a = 0; a < 3; ++a) {
        double d = std::max({0.0, -p[a], p[a] - 1});
        out2 += d * d;
        in = std::min({in, p[a], 1 - p[a]});
    }
    return out2 > 0 ? -std::sqrt(out2) : in;
}

// Grid of voxel size 1/8 whose voxel faces contain the planes x, y, z = 0 and 1 (exact in binary).
hp::GridSpec eighth_grid(int nz = 12, double oz = -0.25) {
    hp::GridSpec g;
    g.origin = {-0.25, -0.25, oz};
    g.voxel_size = 0.125;
    g.dims = {12, 12, nz};
    return g;
}

// Layers by hand: a voxel is a surface voxel when its closed cube meets the closed set `touches`
// describes; others get +1 inside, -1 outside.
template <class Touches, class Inside>
hp::ShellField field_by_hand(const hp::GridSpec& g, Touches touches, Inside inside) {
    hp::ShellField f;
    f.grid = g;
    f.layers.resize(g.count());
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                Vec3d lo = g.corner(i, j, k), hi = g.corner(i + 1, j + 1, k + 1);
                f.layers[g.index(i, j, k)] = touches(lo, hi) ? 0 : (inside(g.center(i, j, k)) ? 1 : -1);
            }
    return f;
}

hp::ShellField square_field() {
    // One voxel layer centred on z = 0.
    hp::GridSpec g = eighth_grid(1, -0.0625);
    return field_by_hand(
        g, [](Vec3d lo, Vec3d hi) { return hi.x >= 0 && lo.x <= 1 && hi.y >= 0 && lo.y <= 1; },
        [](Vec3d) { return false; });
}

hp::ShellField cube_field(bool with_distance) {
    hp::GridSpec g = eighth_grid();
    hp::ShellField f = field_by_hand(
        g,
        [](Vec3d lo, Vec3d hi) {
            bool meets = true, strictly_inside = true;
            for (int a = 0; a < 3; ++a) {
                meets = meets && hi[a] >= 0 && lo[a] <= 1;
                strictly_inside = strictly_inside && lo[a] > 0 && hi[a] < 1;
            }
            return meets && !strictly_inside;
        },
        [](Vec3d c) { return cube_distance(c) > 0; });
    if (with_distance) {
        f.distance.resize(g.count());
        for (int k = 0; k < g.dims[2]; ++k)
            for (int j = 0; j < g.dims[1]; ++j)
                for (int i = 0; i < g.dims[0]; ++i) f.distance[g.index(i, j, k)] = cube_distance(g.center(i, j, k));
    }
    return f;
}

hp::TriMesh sample_mesh(const char* name) {
    return hp::load_mesh(std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / name).mesh;
}

hp::ShellField field_of(const hp::TriMesh& mesh, double s, bool with_distance) {
    hp::GridSpec g = hp::grid_around(mesh.bounds(), s, 3);
    hp::LayerMap map = hp::voxelize(mesh, g, {});
    hp::ShellField f;
    f.grid = g;
    f.layers = map.values();
    if (with_distance) f.distance = hp::compute_distance(mesh, g, f.layers, {}).values;
    return f;
}

double mesh_distance(const hp::TriMesh& m, const Vec3d& p) {
    double best = INFINITY;
    for (const auto& t : m.triangles)
        best = std::min(best, hp::closest_point_on_triangle(p, m.vertices[t[0]], m.vertices[t[1]], m.vertices[t[2]]).distance2);
    return std::sqrt(best);
}

// Brute-force checks of the sampling rule on any mesh and field:
//  - every point lies on its source triangle;
//  - any two points are at least alpha*s apart (all pairs, whatever their triangles);
//  - maximality: every candidate of every triangle (surface voxel centres among the voxels of
//    its box, projected onto it; enumerated here independently) is within alpha*s of a point
//    (else the greedy rule would have kept it).
void check_sampling_rule(const hp::TriMesh& m, const hp::ShellField& f, double alpha, const hp::Pointshell& sh) {
    const double as = alpha * f.grid.voxel_size;
    ASSERT_EQ(sh.points.size(), sh.normals.size());
    ASSERT_EQ(sh.points.size(), sh.triangles.size());
    for (std::size_t i = 0; i < sh.points.size(); ++i) {
        const auto& t = m.triangles[sh.triangles[i]];
        const auto cp = hp::closest_point_on_triangle(sh.points[i], m.vertices[t[0]], m.vertices[t[1]], m.vertices[t[2]]);
        EXPECT_LE(std::sqrt(cp.distance2), 1e-12) << "point " << i << " is off its triangle";
        EXPECT_NEAR(hp::length(sh.normals[i]), 1.0, 1e-12);
    }
    for (std::size_t i = 0; i < sh.points.size(); ++i)
        for (std::size_t j = i + 1; j < sh.points.size(); ++j)
            EXPECT_GE(hp::length(sh.points[i] - sh.points[j]), as * (1 - 1e-12)) << "points " << i << ", " << j;
    const hp::GridSpec& g = f.grid;
    const double s = g.voxel_size;
    for (std::uint32_t t = 0; t < m.triangles.size(); ++t) {
        const Vec3d &a = m.vertices[m.triangles[t][0]], &b = m.vertices[m.triangles[t][1]], &c = m.vertices[m.triangles[t][2]];
        for (int k = 0; k < g.dims[2]; ++k)
            for (int j = 0; j < g.dims[1]; ++j)
                for (int i = 0; i < g.dims[0]; ++i) {
                    if (f.layers[g.index(i, j, k)] != 0) continue;
                    Vec3d lo = g.corner(i, j, k), hi = lo + Vec3d{s, s, s};
                    bool in_box = true;
                    for (int ax = 0; ax < 3; ++ax)
                        in_box = in_box && hi[ax] >= std::min({a[ax], b[ax], c[ax]}) && lo[ax] <= std::max({a[ax], b[ax], c[ax]});
                    if (!in_box) continue;
                    const Vec3d q = hp::closest_point_on_triangle(g.center(i, j, k), a, b, c).point;
                    bool covered = false;
                    for (std::size_t n = 0; n < sh.points.size() && !covered; ++n) covered = hp::length(q - sh.points[n]) < as;
                    EXPECT_TRUE(covered) << "candidate of triangle " << t << " from voxel " << i << "," << j << "," << k;
                }
    }
}

}  // namespace

TEST(Pointshell, FlatSquareKeepsExactlyTheVoxelCentreLattice) {
    // s = 1/8, alpha = 0.9: the 8 x 8 voxel centres in the square are 0.125 >= 0.1125 apart and
    // every other candidate (projections onto the border and the diagonal) lies within 0.0884 of
    // one of them, so exactly those 64 points remain, whatever the triangle order.
    const hp::TriMesh m = square();
    const hp::ShellField f = square_field();
    hp::PointshellOptions opt;
    opt.alpha = 0.9;
    opt.normals = hp::ShellNormals::surface;
    const hp::PointshellResult r = hp::sample_pointshell(m, f, opt);
    ASSERT_EQ(r.shell.points.size(), 64u);
    std::set<std::tuple<double, double, double>> got, want;
    for (const Vec3d& p : r.shell.points) got.insert({p.x, p.y, p.z});
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) want.insert({0.0625 + 0.125 * i, 0.0625 + 0.125 * j, 0.0});
    EXPECT_EQ(got, want);
    check_sampling_rule(m, f, opt.alpha, r.shell);
    // An open sheet has no inside: the winding convention holds (counter-clockwise from +z,
    // so inward = -z).
    for (const Vec3d& n : r.shell.normals) EXPECT_EQ(n, (Vec3d{0, 0, -1}));
}

TEST(Pointshell, TinySpacingStillFollowsTheRule) {
    // alpha*s = 1/800 over a grid 1.5 wide: more cells of that size than the sampler keeps in an
    // array (it hashes them). Every distinct candidate is kept; the rule holds by brute force.
    const hp::TriMesh m = square();
    const hp::ShellField f = square_field();
    hp::PointshellOptions opt;
    opt.alpha = 0.01;
    opt.normals = hp::ShellNormals::surface;
    const hp::PointshellResult r = hp::sample_pointshell(m, f, opt);
    EXPECT_GT(r.shell.points.size(), 64u);  // the lattice and the projections onto edges and diagonal
    check_sampling_rule(m, f, opt.alpha, r.shell);
}

TEST(Pointshell, CubeCountFollowsFromTheFaceLattices) {
    // Faces on voxel faces, s = 1/8, alpha = 0.9 (alpha*s = 0.1125). Each face offers its 8 x 8
    // lattice of projected voxel centres. Across a cube edge, the two rows next to it are
    // s/sqrt 2 = 0.088 apart, so one point of each such pair survives (6 inner pairs per edge);
    // at a corner, the three lattice corners are pairwise 0.088 apart and one survives; everything
    // else is >= 0.125 apart. Edge, corner and diagonal projections lie within 0.088 of a survivor.
    // Count: 6 * 6 * 6 (face interiors) + 12 * 6 (edges) + 8 (corners) = 296.
    for (bool inverted : {false, true}) {
        const hp::TriMesh m = cube(inverted);
        const hp::ShellField f = cube_field(true);
        hp::PointshellOptions opt;
        opt.alpha = 0.9;
        for (auto mode : {hp::ShellNormals::surface, hp::ShellNormals::gradient}) {
            opt.normals = mode;
            const hp::PointshellResult r = hp::sample_pointshell(m, f, opt);
            EXPECT_EQ(r.shell.points.size(), 296u) << "inverted " << inverted;
            EXPECT_EQ(r.inverted_components, inverted ? 1u : 0u);
            const Vec3d centre{0.5, 0.5, 0.5};
            for (std::size_t i = 0; i < r.shell.points.size(); ++i) {
                const Vec3d& p = r.shell.points[i];
                EXPECT_GT(hp::dot(r.shell.normals[i], centre - p), 0) << "outward normal at point " << i;
                // Away from the edges the inward normal is the face's (exact for surface normals;
                // the closed-form field's gradient is exact there too).
                int on_face = -1, near_edge = 0;
                for (int a = 0; a < 3; ++a) {
                    if (p[a] == 0 || p[a] == 1) on_face = a;
                    else if (p[a] < 0.2 || p[a] > 0.8) near_edge = 1;
                }
                ASSERT_GE(on_face, 0);
                if (!near_edge) {
                    Vec3d want;
                    want[on_face] = p[on_face] == 0 ? 1 : -1;
                    EXPECT_NEAR(hp::length(r.shell.normals[i] - want), 0, 1e-9) << "point " << i;
                }
            }
            if (mode == hp::ShellNormals::surface) check_sampling_rule(m, f, opt.alpha, r.shell);
        }
    }
}

TEST(Pointshell, SpacingAtLeastAlphaSAndEveryCandidateCoveredOnASphere) {
    const hp::TriMesh m = sample_mesh("sphere.obj");
    const hp::ShellField f = field_of(m, 0.1, true);
    hp::PointshellOptions opt;  // default alpha sqrt 2, gradient normals
    const hp::PointshellResult r = hp::sample_pointshell(m, f, opt);
    ASSERT_GT(r.shell.points.size(), 100u);
    check_sampling_rule(m, f, opt.alpha, r.shell);
    for (const Vec3d& p : r.shell.points) EXPECT_LE(mesh_distance(m, p), 1e-12);
}

// The unit cube with every face cut into n x n squares of two triangles each (outward winding):
// triangles far smaller than the spacing, so points two or more rings of triangles apart meet.
hp::TriMesh fine_cube(int n) {
    hp::TriMesh m;
    auto vertex = [&](int face, int i, int j) {
        const int axis = face / 2;
        Vec3d p;
        p[axis] = face % 2;
        p[(axis + 1) % 3] = double(i) / n;
        p[(axis + 2) % 3] = double(j) / n;
        m.vertices.push_back(p);
        return static_cast<std::uint32_t>(m.vertices.size() - 1);
    };
    for (int face = 0; face < 6; ++face) {
        const std::uint32_t base = static_cast<std::uint32_t>(m.vertices.size());
        for (int i = 0; i <= n; ++i)
            for (int j = 0; j <= n; ++j) vertex(face, i, j);
        auto at = [&](int i, int j) { return base + static_cast<std::uint32_t>(i * (n + 1) + j); };
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                std::array<std::uint32_t, 3> t1{at(i, j), at(i + 1, j), at(i + 1, j + 1)}, t2{at(i, j), at(i + 1, j + 1), at(i, j + 1)};
                if (face % 2 == 0) std::swap(t1[1], t1[2]), std::swap(t2[1], t2[2]);  // the low face looks down its axis
                m.triangles.push_back(t1);
                m.triangles.push_back(t2);
            }
    }
    return m;
}

TEST(Pointshell, SpacingHoldsAcrossTrianglesSmallerThanIt) {
    // Faces of 1/32 squares under voxels of 1/8: alpha*s spans 6 to 16 triangles.
    const hp::TriMesh m = fine_cube(32);
    const hp::ShellField f = cube_field(true);
    std::size_t previous = SIZE_MAX;
    for (double alpha : {1.4142135623730951, 2.0, 3.0, 4.0}) {
        hp::PointshellOptions opt;
        opt.alpha = alpha;
        opt.normals = hp::ShellNormals::surface;
        const hp::PointshellResult r = hp::sample_pointshell(m, f, opt);
        SCOPED_TRACE(alpha);
        ASSERT_GT(r.shell.points.size(), 0u);
        double closest = INFINITY;  // brute force over all pairs
        for (std::size_t i = 0; i < r.shell.points.size(); ++i)
            for (std::size_t j = i + 1; j < r.shell.points.size(); ++j)
                closest = std::min(closest, hp::length(r.shell.points[i] - r.shell.points[j]));
        EXPECT_GE(closest, alpha * f.grid.voxel_size * (1 - 1e-12));
        // Points at least alpha*s apart on the cube's area 6: each owns a disc of radius alpha*s/2
        // that overlaps no other (up to the cube's edges), so the count is bounded by area.
        const double disc = M_PI * 0.25 * alpha * alpha * f.grid.voxel_size * f.grid.voxel_size;
        EXPECT_LE(double(r.shell.points.size()), 2 * 6 / disc);
        EXPECT_LT(r.shell.points.size(), previous);
        previous = r.shell.points.size();
        if (alpha == 2.0) check_sampling_rule(m, f, alpha, r.shell);
    }
}

TEST(Pointshell, SphereNormalsPointToTheCentre) {
    const hp::TriMesh m = sample_mesh("sphere.obj");  // icosphere r = 1 around the origin
    for (bool with_distance : {true, false})
        for (auto mode : {hp::ShellNormals::gradient, hp::ShellNormals::surface}) {
            if (!with_distance && mode == hp::ShellNormals::surface) continue;
            hp::PointshellOptions opt;
            opt.normals = mode;
            const hp::PointshellResult r = hp::sample_pointshell(m, field_of(m, 0.05, with_distance), opt);
            std::vector<double> angles;
            for (std::size_t i = 0; i < r.shell.points.size(); ++i) {
                const Vec3d to_centre = hp::normalized(-r.shell.points[i]);
                angles.push_back(std::acos(std::clamp(hp::dot(to_centre, r.shell.normals[i]), -1.0, 1.0)) * 180 / M_PI);
            }
            std::sort(angles.begin(), angles.end());
            // The icosphere's faces deviate up to ~5 deg from the radial direction; the layer
            // gradient (a Chebyshev distance) is coarser.
            const double median_limit = with_distance ? 5 : 15, max_limit = with_distance ? 15 : 45;
            EXPECT_LE(angles[angles.size() / 2], median_limit) << r.normal_source;
            EXPECT_LE(angles.back(), max_limit) << r.normal_source;
        }
}

TEST(Pointshell, SameOutputWhateverTheThreadCount) {
    const hp::TriMesh m = sample_mesh("torus.off");
    const hp::ShellField f = field_of(m, 0.03, true);
    hp::PointshellResult one, many;
    {
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
        one = hp::sample_pointshell(m, f, {});
    }
    many = hp::sample_pointshell(m, f, {});
    ASSERT_GT(one.shell.points.size(), 0u);
    EXPECT_EQ(one.shell.points, many.shell.points);
    EXPECT_EQ(one.shell.normals, many.shell.normals);
    EXPECT_EQ(one.shell.triangles, many.shell.triangles);
}

TEST(ShellNormals, NamesRoundTripAndAnUnknownNameIsAUsageError) {
    EXPECT_STREQ(hp::shell_normals_name(hp::ShellNormals::gradient), "gradient");
    EXPECT_STREQ(hp::shell_normals_name(hp::ShellNormals::surface), "surface");
    for (const hp::ShellNormals n : {hp::ShellNormals::gradient, hp::ShellNormals::surface})
        EXPECT_EQ(hp::parse_shell_normals(hp::shell_normals_name(n)), n);
    const std::string what = hp::test::usage_error([] { hp::parse_shell_normals("area"); });
    EXPECT_NE(what.find("'area' (use gradient or surface)"), std::string::npos) << what;
}

TEST(Pointshell, BadInputs) {
    const hp::TriMesh m = square();
    hp::ShellField f = square_field();
    hp::PointshellOptions opt;
    opt.alpha = 0;
    try {
        hp::sample_pointshell(m, f, opt);
        FAIL() << "alpha 0 accepted";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::usage);
    }
    std::fill(f.layers.begin(), f.layers.end(), -1);
    try {
        hp::sample_pointshell(m, f, {});
        FAIL() << "a field without surface voxels accepted";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find("no surface voxels"), std::string::npos);
    }
    f.layers.pop_back();
    EXPECT_THROW(hp::sample_pointshell(m, f, {}), hp::Error);
    // A mesh far outside the grid (a forced mismatch): no candidates, no points, no overflow.
    hp::TriMesh far = square();
    for (Vec3d& v : far.vertices) v = v * 1e15 + Vec3d{-3e15, 2e15, 1e15};
    EXPECT_TRUE(hp::sample_pointshell(far, square_field(), {}).shell.points.empty());
}

TEST(PointshellStats, SpacingOfALattice) {
    std::vector<Vec3d> pts;
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 4; ++j) pts.push_back({0.5 * i, 0.5 * j, 0});
    pts.push_back({10, 0, 0});  // a lone point: its nearest neighbour is (2, 0, 0), 8 away
    const hp::SpacingStats s = hp::nearest_neighbour_spacing(pts);
    EXPECT_DOUBLE_EQ(s.min, 0.5);
    EXPECT_DOUBLE_EQ(s.median, 0.5);
    EXPECT_DOUBLE_EQ(s.max, 8.0);
    EXPECT_EQ(hp::nearest_neighbour_spacing(std::vector<Vec3d>{{1, 2, 3}}).min, 0.0);
}

TEST(PointshellStats, CoverageOfTheSquareLattice) {
    // The 8 x 8 centre lattice of the unit square: the farthest surface points are the corners of
    // the lattice's cells (and of the square), sqrt(2) / 16 = 0.0884 from the nearest point.
    std::vector<Vec3d> pts;
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) pts.push_back({0.0625 + 0.125 * i, 0.0625 + 0.125 * j, 0});
    const hp::CoverageStats c = hp::sampled_coverage(square(), pts, 100000, 7);
    EXPECT_EQ(c.samples, 100000u);
    EXPECT_LE(c.max, std::sqrt(2.0) / 16 + 1e-12);
    EXPECT_GT(c.max, 0.075);  // about 5% of the area is farther than 0.075
    EXPECT_LE(c.p99, c.max);
}
