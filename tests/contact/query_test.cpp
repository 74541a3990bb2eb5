#include "contact/query.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "../core/sampled_field.hpp"
#include "../core/point_object.hpp"

using hp::Vec3d;
using hp::test::cube_grid;
using hp::test::sampled;  // fields sampled from an analytic signed distance (inside positive)

namespace {

using Shell = hp::test::PointObject;

// Points on a sphere of radius r around the origin, inward normals.
Shell sphere_shell(double r, std::size_t n) {
    std::mt19937 rng(1);
    std::normal_distribution<double> g;
    return hp::test::sphere_shell(rng, g, n, r);
}

}  // namespace

TEST(DistanceSampler, TrilinearIsExactForAPlane) {
    hp::GridSpec g = cube_grid(-1, 1, 0.1);
    Vec3d n = hp::normalized(Vec3d{0.3, -0.5, 0.8});
    auto plane = [&](Vec3d p) { return 0.2 - hp::dot(n, p); };
    hp::DistanceSampler f = sampled(g, plane);
    std::mt19937 rng(2);
    std::uniform_real_distribution<double> u(-0.94, 0.94);  // inside the box of voxel centres
    for (int i = 0; i < 1000; ++i) {
        Vec3d p{u(rng), u(rng), u(rng)};
        ASSERT_NEAR(f.value(p), plane(p), 1e-12);
        ASSERT_NEAR(f.gradient_value(p), plane(p), 1e-12);
    }
    // Outside the centre box: value at the clamped point minus the distance to it.
    Vec3d far{3.0, 0.0, 0.0}, clamped{0.95, 0.0, 0.0};
    EXPECT_NEAR(f.value(far), plane(clamped) - 2.05, 1e-12);
    // Lipschitz bound: per-axis differences of a plane are |n_a| s, so L_in = |n| = 1 and
    // L = sqrt(L_in^2 + 1) = sqrt 2.
    EXPECT_NEAR(f.lipschitz(), std::sqrt(2.0), 1e-6);
    // The bound holds across the grid's border: random pairs inside, outside and across.
    std::uniform_real_distribution<double> wide(-2.5, 2.5);
    for (int i = 0; i < 20000; ++i) {
        Vec3d p{wide(rng), wide(rng), wide(rng)}, q{wide(rng), wide(rng), wide(rng)};
        ASSERT_LE(std::abs(f.value(p) - f.value(q)), f.lipschitz() * hp::length(p - q) + 1e-12);
    }
}

// A field with a jump (as across an open mesh's hole): a sphere's distance, but +1 instead of the
// true value in a slab x > 0.6. The local bound must hold for every pair in a ball (checked
// on random balls inside, across the jump and across the border), stay near 1 far from the jump,
// and be large only for balls that reach it.
TEST(DistanceSampler, LocalLipschitzBoundsHoldAndStayLocal) {
    hp::GridSpec g = cube_grid(-1, 1, 0.05);
    auto field = [](Vec3d p) { return p.x > 0.6 ? 1.0 : 0.5 - hp::length(p); };
    hp::DistanceSampler f = sampled(g, field);
    EXPECT_GT(f.lipschitz(), 10.0);  // the jump of ~1.4 over one voxel dominates the global bound
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> c(-1.3, 1.3), r01(0, 1);
    std::normal_distribution<double> gauss;
    auto in_ball = [&](Vec3d x, double r) {
        Vec3d d = hp::normalized(Vec3d{gauss(rng), gauss(rng), gauss(rng)});
        return x + d * (r * std::cbrt(r01(rng)));
    };
    int near_jump = 0;
    for (int b = 0; b < 3000; ++b) {
        const Vec3d x{c(rng), c(rng), c(rng)};
        const double r = 0.01 + 0.3 * r01(rng);
        const double l = f.lipschitz(x, r);
        ASSERT_LE(l, f.lipschitz());
        for (int t = 0; t < 30; ++t) {
            const Vec3d p = in_ball(x, r), q = in_ball(x, r);
            ASSERT_LE(std::abs(f.value(p) - f.value(q)), l * hp::length(p - q) + 1e-12)
                << "ball " << x.x << " " << x.y << " " << x.z << " r " << r;
        }
        near_jump += x.x + r > 0.5;
    }
    EXPECT_GT(near_jump, 100);
    // Far from the jump (and the sphere's centre, where the field has its kink) inside the grid:
    // close to the true slope 1 of a distance function.
    EXPECT_LT(f.lipschitz({-0.6, 0.0, 0.0}, 0.05), 1.8);
    EXPECT_LT(f.lipschitz({-0.6, 0.0, 0.0}, 0.05), f.lipschitz() / 5);
}

// The sphere test's bound: upper_bound(X, r) >= V(P) for every P in the ball, on a field with a
// jump (an open mesh's hole) and for balls inside, across the jump and outside the grid. It must
// also prune: a ball well away from the surface gets a negative bound, and near a smooth part of
// the surface the bound stays close to the exact maximum V(X) + r of a distance function.
TEST(DistanceSampler, UpperBoundHoldsOverTheBallAndPrunes) {
    hp::GridSpec g = cube_grid(-1, 1, 0.05);
    auto field = [](Vec3d p) { return p.x > 0.6 ? 1.0 : 0.5 - hp::length(p); };
    hp::DistanceSampler f = sampled(g, field);
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> c(-1.6, 1.6), r01(0, 1);
    std::normal_distribution<double> gauss;
    int pruned = 0;
    for (int b = 0; b < 3000; ++b) {
        const Vec3d x{c(rng), c(rng), c(rng)};
        const double r = 0.01 + 0.4 * r01(rng);
        const double bound = f.upper_bound(x, r);
        double best = -1e300;
        for (int t = 0; t < 60; ++t) {
            // Points on the sphere and inside it (the maximum of V over a ball is often on its surface).
            const Vec3d d = hp::normalized(Vec3d{gauss(rng), gauss(rng), gauss(rng)});
            const Vec3d p = x + d * (t % 2 ? r : r * std::cbrt(r01(rng)));
            best = std::max(best, f.value(p));
        }
        ASSERT_GE(bound, best) << "ball " << x.x << " " << x.y << " " << x.z << " r " << r;
        pruned += bound < 0;
    }
    EXPECT_GT(pruned, 300);
    // Far outside the object (V about -0.4 at the centre), a small ball: pruned, and the bound is
    // not looser than the global bound would make it.
    EXPECT_LT(f.upper_bound({-0.9, 0.0, 0.0}, 0.05), 0.0);
    // Near the smooth part of the surface: exact maximum 0.5 - 0.7 + 0.1 = -0.1; the bound must be
    // close (the local slope of the sampled field is near 1 there, the global one above 10).
    const double near = f.upper_bound({-0.7, 0.0, 0.0}, 0.1);
    EXPECT_GE(near, -0.1 - 1e-9);
    EXPECT_LT(near, -0.07);
    // Closer still, where the ball's blocks hold inside samples (largest sample > 0), so the
    // slope term decides: exact maximum 0.5 - 0.62 + 0.08 = -0.04.
    EXPECT_GT(f.ball_bound({-0.62, 0.0, 0.0}, 0.08).max_value, 0.0);
    const double closer = f.upper_bound({-0.62, 0.0, 0.0}, 0.08);
    EXPECT_GE(closer, -0.04 - 1e-9);
    EXPECT_LT(closer, -0.03);
    EXPECT_GT(f.lipschitz(), 10.0);
}

// ball_bound reads one pyramid entry: the blocks of the finest level where the ball's box spans
// at most two blocks per axis. Against a brute-force reading of that rule: the box's cells
// (clamped to the grid), the finest block size 4 * 2^m that covers them with at most two blocks
// per axis, and the largest sample and the largest corner gradient over every cell of those
// blocks, taken cell by cell. Equal up to the float rounding of the stored bounds; a coarser
// level than needed, a wrong block or a wrong axis mask gives other numbers on this wavy field.
// The grid is not a power of two along any axis (clipped blocks, a one-block top level) and the
// voxel is 1/16, so the box's cell coordinates are exact.
TEST(DistanceSampler, BallBoundIsTheFinestBlocksBound) {
    hp::GridSpec g;
    g.voxel_size = 1.0 / 16;
    g.origin = {-1.25, -0.75, -1.5};
    g.dims = {38, 30, 46};
    // Double samples, and the same field rounded to float (held as float: the other layout).
    for (const bool as_float : {false, true}) {
        SCOPED_TRACE(as_float ? "float samples" : "double samples");
        hp::DistanceSampler f = sampled(g, [as_float](Vec3d p) {
            const double v = 0.6 - hp::length(p) + 0.15 * std::sin(7 * p.x) * std::cos(5 * p.y + 2 * p.z);
            return as_float ? static_cast<double>(static_cast<float>(v)) : v;
        });
        ASSERT_EQ(f.float_samples(), as_float);
        const double s = g.voxel_size;
        std::mt19937 rng(17);
        std::uniform_real_distribution<double> cx(-1.6, 1.4), cy(-1.0, 1.2), cz(-1.8, 1.5), r01(0, 1);
        std::map<int, int> block_edges;  // how often each block size was the answer
        for (int b = 0; b < 1500; ++b) {
            const Vec3d x{cx(rng), cy(rng), cz(rng)};
            const double r = 0.005 + 1.5 * r01(rng) * r01(rng);
            int lo[3], hi[3];
            for (int a = 0; a < 3; ++a) {
                const double u = (x[a] - g.origin[a]) / s - 0.5, rc = r / s + 1e-7, last = g.dims[a] - 2;
                lo[a] = static_cast<int>(std::floor(std::clamp(u - rc, 0.0, last)));
                hi[a] = static_cast<int>(std::floor(std::clamp(u + rc, 0.0, last)));
            }
            int edge = 4;
            auto fits = [&](int e) {
                for (int a = 0; a < 3; ++a)
                    if (hi[a] / e - lo[a] / e > 1) return false;
                return true;
            };
            while (!fits(edge)) edge *= 2;
            ++block_edges[edge];
            double top = -1e300, slope = 0;
            int first[3], end[3];  // the cells of the blocks, clipped to the grid's cells
            for (int a = 0; a < 3; ++a) {
                first[a] = lo[a] / edge * edge;
                end[a] = std::min((hi[a] / edge + 1) * edge, g.dims[a] - 1);
            }
            for (int k = first[2]; k < end[2]; ++k)
                for (int j = first[1]; j < end[1]; ++j)
                    for (int i = first[0]; i < end[0]; ++i) {
                        double c[8];
                        for (int n = 0; n < 8; ++n) c[n] = f.sample(i + (n & 1), j + ((n >> 1) & 1), k + (n >> 2));
                        for (int n = 0; n < 8; ++n) {
                            top = std::max(top, c[n]);
                            const double dx = c[n | 1] - c[n & ~1], dy = c[n | 2] - c[n & ~2], dz = c[n | 4] - c[n & ~4];
                            slope = std::max(slope, std::sqrt(dx * dx + dy * dy + dz * dz) / s);
                        }
                    }
            const hp::BallBound bb = f.ball_bound(x, r);
            ASSERT_GE(bb.max_value, top) << b;
            ASSERT_LE(bb.max_value, top + 1e-6 * std::abs(top) + 1e-12) << b;
            ASSERT_GE(bb.interior_lipschitz, slope) << b;
            ASSERT_LE(bb.interior_lipschitz, slope * (1 + 1e-6)) << b;
        }
        // The balls reach every level that can be the answer: blocks of 4, 8, 16 and 32 cells (any
        // box spans at most two blocks of 32 here, so the top level, one block of 64, never is).
        for (int edge : {4, 8, 16, 32}) EXPECT_GT(block_edges[edge], 20) << edge;
        EXPECT_EQ(block_edges[64], 0);
    }
}

// A ball far outside the grid is pruned even where the grid's border cells are steep (an open
// mesh's hole at the border, as under the bunny's bottom): for P in the ball V(P) = V(c(P)) -
// |P - c(P)| is at most the border's largest sample minus the ball's least distance to the grid.
// The slope bound alone (V(c(X)) + L r, L about 30 here) let such a ball through.
TEST(DistanceSampler, UpperBoundPrunesBallsFarOutsideASteepBorder) {
    hp::GridSpec g = cube_grid(-1, 1, 0.05);
    hp::DistanceSampler f = sampled(g, [](Vec3d p) { return p.x > 0.9 ? 1.0 : 0.5 - hp::length(p); });
    ASSERT_GT(f.lipschitz(), 20.0);
    const double edge = g.origin.x + (g.dims[0] - 0.5) * g.voxel_size;  // the last voxel centres' x
    for (double x : {1.2, 2.0, 3.0}) {
        const Vec3d c{x, 0.1, -0.05};
        const double r = 0.1;
        const double bound = f.upper_bound(c, r);
        double best = -1e300;
        for (int t = 0; t <= 200; ++t) {  // along the ball's diameter towards the grid, where V is largest
            const Vec3d p = c + Vec3d{-r + 2 * r * t / 200.0, 0, 0};
            best = std::max(best, f.value(p));
        }
        EXPECT_GE(bound, best) << x;
        // Exact: the border's samples are 1 there, the ball's nearest point is x - r - edge away.
        EXPECT_NEAR(best, 1.0 - (x - r - edge), 1e-9) << x;
        EXPECT_LT(bound, 1.0 - (x - r - edge) + 1e-9) << x;
    }
}

// gradient() is the slope of value() itself: against central differences of value() over a
// millionth of a voxel, on a curved field (a sphere's distance, so the slope changes from cell to
// cell), at points inside the grid and beyond its border (the extension's slope). Points within
// 1e-4 voxel of a cell face, where the slope of the interpolant jumps, are skipped.
TEST(DistanceSampler, GradientIsTheSlopeOfValue) {
    hp::GridSpec g = cube_grid(-1, 1, 0.1);
    hp::DistanceSampler f = sampled(g, [](Vec3d p) { return 0.6 - hp::length(p - Vec3d{0.1, -0.05, 0.02}); });
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> c(-1.4, 1.4);
    const double h = 1e-6 * g.voxel_size;
    int checked = 0, outside = 0;
    for (int i = 0; i < 4000; ++i) {
        const Vec3d p{c(rng), c(rng), c(rng)};
        bool near_face = false;
        for (int a = 0; a < 3; ++a) {
            const double u = (p[a] - g.origin[a]) / g.voxel_size - 0.5;  // beyond the border: no face
            near_face = near_face || (u > -1e-4 && u < g.dims[a] - 1 + 1e-4 && std::abs(u - std::round(u)) < 1e-4);
        }
        if (near_face) continue;
        const Vec3d grad = f.gradient(p);
        for (int a = 0; a < 3; ++a) {
            Vec3d lo = p, hi = p;
            lo[a] -= h;
            hi[a] += h;
            ASSERT_NEAR(grad[a], (f.value(hi) - f.value(lo)) / (2 * h), 1e-6)
                << "axis " << a << " at " << p.x << " " << p.y << " " << p.z;
        }
        ++checked;
        outside += std::abs(p.x) > 0.95 || std::abs(p.y) > 0.95 || std::abs(p.z) > 0.95;
    }
    EXPECT_GT(checked, 3000);
    EXPECT_GT(outside, 1000);
}

// The traversal reads the field through probes made a few tests earlier (probe_sphere,
// probe_value: located once, prefetched, read later) and tests a sphere with or without a branch
// (upper_bound, upper_bound_lazy); what they give must be what the direct calls give, bit for
// bit, inside the grid, across the jump and outside the grid, for double and float samples,
// however many other probes were made in between.
TEST(DistanceSampler, ProbedReadsAreTheDirectReads) {
    hp::GridSpec g = cube_grid(-1, 1, 0.05);
    auto jump = [](Vec3d p) { return p.x > 0.6 ? 1.0 : 0.5 - hp::length(p); };
    hp::DistanceSampler exact = sampled(g, jump);
    hp::DistanceSampler compact = sampled(g, [&](Vec3d p) { return static_cast<double>(static_cast<float>(jump(p))); });
    ASSERT_FALSE(exact.float_samples());
    ASSERT_TRUE(compact.float_samples());
    for (const hp::DistanceSampler* f : {&exact, &compact}) {
        std::mt19937 rng(5);
        std::uniform_real_distribution<double> c(-1.5, 1.5), r01(0, 1);
        std::vector<Vec3d> centers;
        std::vector<double> radii;
        std::vector<hp::DistanceSampler::SphereProbe> spheres;
        std::vector<hp::DistanceSampler::CellRef> cells;
        for (int i = 0; i < 2000; ++i) {
            centers.push_back({c(rng), c(rng), c(rng)});
            radii.push_back(0.001 + 0.5 * r01(rng));
            f->probe_sphere(centers.back(), radii.back(), spheres.emplace_back());
            f->probe_value(centers.back(), cells.emplace_back());
        }
        int pruned = 0, outside = 0;
        for (int i = 0; i < 2000; ++i) {
            const double bound = f->upper_bound(spheres[static_cast<std::size_t>(i)]);
            ASSERT_EQ(bound, f->upper_bound(centers[static_cast<std::size_t>(i)], radii[static_cast<std::size_t>(i)])) << i;
            ASSERT_EQ(bound, f->upper_bound_lazy(spheres[static_cast<std::size_t>(i)])) << i;
            ASSERT_EQ(f->value(cells[static_cast<std::size_t>(i)]), f->value(centers[static_cast<std::size_t>(i)])) << i;
            pruned += bound < 0;
            const Vec3d& x = centers[static_cast<std::size_t>(i)];
            outside += std::abs(x.x) > 1 || std::abs(x.y) > 1 || std::abs(x.z) > 1;
        }
        EXPECT_GT(pruned, 200);
        EXPECT_LT(pruned, 1800);
        EXPECT_GT(outside, 500);
    }
}

// A NaN point or ball (a corrupt pose) is clamped like any other: its NaN coordinates go to the
// grid's first cell, a NaN ball takes every cell along its NaN axes, and no NaN reaches an integer
// conversion (UBSan) or the result.
TEST(DistanceSampler, NaNPointsAndBallsGiveFiniteClampedValues) {
    hp::GridSpec g = cube_grid(-1, 1, 0.1);
    hp::DistanceSampler f = sampled(g, [](Vec3d p) { return 0.5 - hp::length(p - Vec3d{0.3, -0.2, 0.1}); });
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // Voxel centre (i, j, k) is at origin + (i + 0.5) s: x = NaN reads x index 0.
    EXPECT_EQ(f.value(Vec3d{nan, nan, nan}), f.sample(0, 0, 0));
    const Vec3d on_voxel = g.center(7, 4, 9);
    EXPECT_NEAR(f.value(Vec3d{nan, on_voxel.y, on_voxel.z}), f.sample(0, 4, 9), 1e-12);
    for (const Vec3d& c : {Vec3d{nan, nan, nan}, Vec3d{0.2, nan, -0.1}, Vec3d{0.2, 0.1, 0.3}}) {
        for (double r : {0.05, nan}) {
            const double bound = f.upper_bound(c, r);
            hp::DistanceSampler::SphereProbe probe;
            f.probe_sphere(c, r, probe);
            EXPECT_EQ(bound, f.upper_bound(probe));
            EXPECT_FALSE(std::isnan(bound));
            // NaN on every axis (a NaN radius, or a NaN centre) spans the whole grid: the ball's
            // blocks hold the largest sample.
            if (std::isnan(r) || (std::isnan(c.x) && std::isnan(c.y) && std::isnan(c.z))) {
                EXPECT_GE(f.ball_bound(c, r).max_value, f.max_value()) << c.x << " " << c.y << " " << c.z << " " << r;
            }
        }
    }
}

// Samples are held as float when that loses nothing, as double otherwise; values are exact either way.
TEST(DistanceSampler, KeepsDoubleFieldsExactAndFloatFieldsCompact) {
    hp::GridSpec g = cube_grid(-1, 1, 0.1);
    auto plane = [](Vec3d p) { return 0.3 * p.x - 0.4 * p.y + std::sqrt(0.75) * p.z + 0.05; };
    hp::DistanceSampler exact = sampled(g, plane);
    EXPECT_FALSE(exact.float_samples());
    hp::DistanceSampler compact = sampled(g, [&](Vec3d p) { return static_cast<double>(static_cast<float>(plane(p))); });
    EXPECT_TRUE(compact.float_samples());
    for (int k = 0; k < g.dims[2]; k += 3)
        for (int j = 0; j < g.dims[1]; j += 2)
            for (int i = 0; i < g.dims[0]; ++i) {
                ASSERT_EQ(exact.sample(i, j, k), plane(g.center(i, j, k)));
                ASSERT_EQ(compact.sample(i, j, k), static_cast<double>(static_cast<float>(plane(g.center(i, j, k)))));
            }
}

TEST(Query, RotationFromQuaternion) {
    double h = std::sqrt(0.5);
    auto r = hp::rotation_rows({h, 0, 0, h});  // 90 degrees about z
    Vec3d x{1, 0, 0};
    Vec3d rx{hp::dot(r[0], x), hp::dot(r[1], x), hp::dot(r[2], x)};
    EXPECT_NEAR(rx.x, 0, 1e-15);
    EXPECT_NEAR(rx.y, 1, 1e-15);
    EXPECT_THROW(hp::rotation_rows({0, 0, 0, 0}), hp::Error);
}

TEST(Query, PlaneContactForceByHand) {
    // Static half-space z < 0 (V = -z); moving: a 5 x 5 patch at z = -0.01 around the pose origin,
    // inward normals +z. Every point penetrates 0.01: f = 25 * 0.01 * (0,0,1), torque 0 by symmetry.
    hp::GridSpec g = cube_grid(-1, 1, 0.05);
    hp::DistanceSampler f = sampled(g, [](Vec3d p) { return -p.z; });
    Shell s;
    for (int i = -2; i <= 2; ++i)
        for (int j = -2; j <= 2; ++j) {
            s.points.push_back({i * 0.02, j * 0.02, 0});
            s.normals.push_back({0, 0, 1});
        }
    s.tree = hp::build_point_sphere_tree(s.points, {});
    hp::Pose pose{{0.1, 0.2, -0.01}, {1, 0, 0, 0}};
    for (hp::QueryMode mode : {hp::QueryMode::full, hp::QueryMode::brute}) {
        hp::QueryResult r = hp::run_query(f, s.view(), pose, {.mode = mode});
        ASSERT_EQ(r.contacts.size(), 25u);
        EXPECT_NEAR(r.force.z, 0.25, 1e-12);
        EXPECT_NEAR(r.force.x, 0, 1e-15);
        EXPECT_NEAR(hp::length(r.torque), 0, 1e-14);
        EXPECT_NEAR(r.max_penetration, 0.01, 1e-12);
    }
}

TEST(Query, FullTraversalFindsExactlyTheBruteForceContacts) {
    // Static: a ball of radius 0.5 (V = 0.5 - |p|). Moving: a sphere shell of radius 0.2.
    hp::GridSpec g = cube_grid(-1, 1, 0.04);
    hp::DistanceSampler f = sampled(g, [](Vec3d p) { return 0.5 - hp::length(p); });
    Shell s = sphere_shell(0.2, 4000);
    std::mt19937 rng(9);
    std::normal_distribution<double> gauss;
    std::uniform_real_distribution<double> depth(0.6, 0.72);
    int colliding_poses = 0;
    for (int trial = 0; trial < 60; ++trial) {
        Vec3d dir = hp::normalized(Vec3d{gauss(rng), gauss(rng), gauss(rng)});
        hp::Pose pose{dir * depth(rng), {gauss(rng), gauss(rng), gauss(rng), gauss(rng)}};
        hp::QueryResult full = hp::run_query(f, s.view(), pose, {.mode = hp::QueryMode::full});
        hp::QueryResult brute = hp::run_query(f, s.view(), pose, {.mode = hp::QueryMode::brute});
        ASSERT_EQ(full.contacts.size(), brute.contacts.size()) << "trial " << trial;
        for (std::size_t i = 1; i < full.contacts.size(); ++i) ASSERT_LT(full.contacts[i - 1].point, full.contacts[i].point);
        for (std::size_t i = 0; i < full.contacts.size(); ++i) {
            ASSERT_EQ(full.contacts[i].point, brute.contacts[i].point);
            ASSERT_EQ(full.contacts[i].value, brute.contacts[i].value);
        }
        EXPECT_EQ(full.max_penetration, brute.max_penetration);
        EXPECT_EQ(full.force, brute.force);
        if (!full.contacts.empty()) {
            ++colliding_poses;
            EXPECT_LT(full.points_tested, brute.points_tested) << "the tree must prune something";
            // Independent check of the deepest point against the analytic distance (the
            // trilinear error of |p| on a 0.04 grid is below 1e-3 here).
            double deepest = 0;
            for (const Vec3d& p : s.points) {
                auto r = hp::rotation_rows(pose.quaternion);
                Vec3d w = Vec3d{hp::dot(r[0], p), hp::dot(r[1], p), hp::dot(r[2], p)} + pose.position;
                deepest = std::max(deepest, 0.5 - hp::length(w));
            }
            EXPECT_NEAR(full.max_penetration, deepest, 1e-3);
        } else {
            EXPECT_LE(full.min_distance_bound, full.min_distance_checked);
        }
    }
    EXPECT_GT(colliding_poses, 10);
    EXPECT_LT(colliding_poses, 60);
}

// A cluster's parent point is the parent point of one of its children, down to a leaf: the
// traversal checks it once, where the chain starts. With every point inside the static object
// every cluster opens, and each point is checked exactly once (brute force's count), in full and
// in segmented mode (each segment checks its own start's parent point).
TEST(Query, EveryPointIsCheckedOnceWhenEverythingCollides) {
    hp::GridSpec g = cube_grid(-1, 1, 0.05);
    hp::DistanceSampler f = sampled(g, [](Vec3d p) { return 0.8 - hp::length(p); });
    Shell s = sphere_shell(0.2, 3000);
    ASSERT_GE(s.tree.levels, 4);
    const hp::Pose pose{{0.05, -0.02, 0.01}, {1, 0.1, 0.2, 0.3}};
    hp::QueryResult full = hp::run_query(f, s.view(), pose, {.mode = hp::QueryMode::full});
    EXPECT_EQ(full.contacts.size(), s.points.size());
    EXPECT_EQ(full.points_tested, s.points.size());
    EXPECT_EQ(full.spheres_tested, s.tree.clusters.size());
    // The contacts come ordered by point, each once (3,000 of them, found in the tree's order):
    // with every point colliding, contact i is point i.
    for (std::size_t i = 0; i < full.contacts.size(); ++i) ASSERT_EQ(full.contacts[i].point, i);
    hp::QueryResult seg = hp::run_query(f, s.view(), pose, {.mode = hp::QueryMode::segmented, .level = 2});
    EXPECT_EQ(seg.points_tested, s.points.size());
}

TEST(Query, SeparationBoundsBracketTheTrueDistance) {
    hp::GridSpec g = cube_grid(-1, 1, 0.04);
    hp::DistanceSampler f = sampled(g, [](Vec3d p) { return 0.3 - hp::length(p); });
    Shell s = sphere_shell(0.1, 1000);
    hp::Pose pose{{0.7, 0, 0}, {1, 0, 0, 0}};  // closest point of the shell at x = 0.6
    hp::QueryResult r = hp::run_query(f, s.view(), pose, {});
    ASSERT_TRUE(r.contacts.empty());
    double truth = 0.3;  // 0.6 - 0.3, up to the shell's sampling and the grid's interpolation
    EXPECT_LE(r.min_distance_bound, truth + 1e-3);
    EXPECT_GE(r.min_distance_checked, truth - 1e-3);
    EXPECT_GT(r.min_distance_bound, 0.0);
}

TEST(Query, SegmentedKeepsTheDeepestContactPerCluster) {
    hp::GridSpec g = cube_grid(-1, 1, 0.04);
    hp::DistanceSampler f = sampled(g, [](Vec3d p) { return 0.5 - hp::length(p); });
    Shell s = sphere_shell(0.2, 2000);
    hp::Pose pose{{0.62, 0.1, 0}, {1, 0, 0, 0}};
    hp::QueryResult brute = hp::run_query(f, s.view(), pose, {.mode = hp::QueryMode::brute});
    ASSERT_FALSE(brute.contacts.empty());
    const int level = 3;
    hp::QueryResult seg = hp::run_query(f, s.view(), pose, {.mode = hp::QueryMode::segmented, .level = level});
    ASSERT_FALSE(seg.contacts.empty());
    // Independent: for each level-3 cluster, the deepest brute-force contact among its points.
    std::vector<int> owner(s.points.size(), -1);
    for (std::size_t id = 0; id < s.tree.clusters.size(); ++id) {
        if (s.tree.clusters[id].level != level) continue;
        std::vector<std::uint32_t> stack{static_cast<std::uint32_t>(id)};
        while (!stack.empty()) {
            auto c = stack.back();
            stack.pop_back();
            for (auto p : s.tree.clusters[c].points) owner[p] = static_cast<int>(id);
            for (auto ch : s.tree.clusters[c].children) stack.push_back(ch);
        }
    }
    std::map<int, double> deepest;
    for (const hp::Contact& c : brute.contacts) deepest[owner[c.point]] = std::max(deepest[owner[c.point]], c.value);
    ASSERT_EQ(seg.contacts.size(), deepest.size());
    for (const hp::Contact& c : seg.contacts) EXPECT_EQ(c.value, deepest[c.segment]);
    EXPECT_THROW(hp::run_query(f, s.view(), pose, {.mode = hp::QueryMode::segmented, .level = 99}), hp::Error);
}

// A moving object with fewer normals than points is an input error in every mode and for every
// entry point, never a read past the normals (the traversal keeps its own copy of them).
TEST(Query, MissingNormalsAreAnInputError) {
    hp::GridSpec g = cube_grid(-1, 1, 0.1);
    hp::DistanceSampler f = sampled(g, [](Vec3d p) { return 0.5 - hp::length(p); });
    Shell s = sphere_shell(0.2, 300);
    s.normals.resize(250);
    const hp::Pose pose{{0.2, 0, 0}, {1, 0, 0, 0}};
    for (hp::QueryMode mode : {hp::QueryMode::full, hp::QueryMode::brute, hp::QueryMode::time_critical}) {
        EXPECT_THROW(hp::run_query(f, s.view(), pose, {.mode = mode}), hp::Error);
        EXPECT_THROW(
            {
                hp::VpsQuery q(f, s.view(), {.mode = mode});
                q(pose);
            },
            hp::Error);
    }
    EXPECT_THROW(hp::MaxPointValue(f, s.view()), hp::Error);
}

TEST(Query, TimeCriticalStopsAtTheBudget) {
    hp::GridSpec g = cube_grid(-1, 1, 0.04);
    hp::DistanceSampler f = sampled(g, [](Vec3d p) { return 0.5 - hp::length(p); });
    Shell s = sphere_shell(0.2, 4000);
    hp::Pose pose{{0.6, 0, 0}, {1, 0, 0, 0}};
    hp::QueryResult none = hp::run_query(f, s.view(), pose, {.mode = hp::QueryMode::time_critical, .budget_us = 0});
    EXPECT_TRUE(none.interrupted);
    EXPECT_EQ(none.spheres_tested, 0u);
    hp::QueryResult all = hp::run_query(f, s.view(), pose, {.mode = hp::QueryMode::time_critical, .budget_us = 1e9});
    hp::QueryResult full = hp::run_query(f, s.view(), pose, {});
    EXPECT_FALSE(all.interrupted);
    EXPECT_EQ(all.level_reached, s.tree.levels);
    EXPECT_EQ(all.contacts.size(), full.contacts.size());
    EXPECT_EQ(all.force, full.force);
    // Separated by 0.9 - 0.2 - 0.5 = 0.2: a finished query proves a separation, an interrupted one
    // proves none (it stops at the deadline instead of bounding what is left in its queue).
    const hp::Pose apart{{0.9, 0, 0}, {1, 0, 0, 0}};
    hp::QueryResult cut = hp::run_query(f, s.view(), apart, {.mode = hp::QueryMode::time_critical, .budget_us = 0});
    EXPECT_TRUE(cut.interrupted);
    EXPECT_TRUE(cut.contacts.empty());
    EXPECT_EQ(cut.min_distance_bound, 0.0);
    hp::QueryResult done = hp::run_query(f, s.view(), apart, {.mode = hp::QueryMode::time_critical, .budget_us = 1e9});
    EXPECT_FALSE(done.interrupted);
    EXPECT_GT(done.min_distance_bound, 0.1);
    EXPECT_LE(done.min_distance_bound, 0.2 + 1e-9);
}
