// The sparse (narrow-band) DistanceSampler against the dense one over the same field expanded:
// the same values and gradients bit for bit, sphere bounds that hold over their balls and prune
// far balls by the floor's bound, and queries with the same contacts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "contact/query.hpp"
#include "core/error.hpp"
#include "field/field.hpp"
#include "spheretree/tree.hpp"
#include "voxel/brick.hpp"
#include "../core/point_object.hpp"

namespace {

// A ball of radius 0.3 centred off the grid's centre, on a grid whose sizes are not multiples of
// the 8-voxel blocks, as a narrow band of `band` voxels: exact distances where |d| < band s,
// +-band s beyond; the blocks whose voxels all lie beyond are tiles.
struct BandBall {
    hp::GridSpec grid;
    std::vector<double> dense;  // the band field expanded
    hp::BrickField<double> sparse;

    // `clamped` false: the blocks that hold a band voxel keep every voxel's exact distance, beyond
    // +-band s too (a band of layers reaches up to sqrt(3) band voxel sizes); only `dense` holds them all.
    BandBall(int band, bool as_float, bool clamped = true) {
        grid.voxel_size = 0.01;
        grid.origin = {-0.7, -0.65, -0.6};
        grid.dims = {134, 122, 118};
        const double s = grid.voxel_size, far = band * s;
        const double stored_far = as_float ? static_cast<double>(static_cast<float>(far)) : far;
        auto value = [&](int i, int j, int k) {
            const hp::Vec3d p = grid.center(i, j, k);
            double d = 0.3 - hp::length(p - hp::Vec3d{0.05, -0.03, 0.02});
            if (clamped && std::abs(d) >= far) d = d > 0 ? far : -far;
            return as_float ? static_cast<double>(static_cast<float>(d)) : d;
        };
        dense.resize(grid.count());
        for (int k = 0; k < grid.dims[2]; ++k)
            for (int j = 0; j < grid.dims[1]; ++j)
                for (int i = 0; i < grid.dims[0]; ++i) dense[grid.index(i, j, k)] = value(i, j, k);
        sparse.reset(grid, 0);
        for (std::size_t b = 0; b < sparse.block_count(); ++b) {
            const auto c = sparse.block_coords(b);
            std::vector<double> v(hp::kBrickVoxels, 0);
            bool constant = true;
            for (int z = 0; z < 8; ++z)
                for (int y = 0; y < 8; ++y)
                    for (int x = 0; x < 8; ++x) {
                        // Voxels beyond the grid repeat the block's first value (never read).
                        const int i = c[0] * 8 + x, j = c[1] * 8 + y, k = c[2] * 8 + z;
                        const bool in = i < grid.dims[0] && j < grid.dims[1] && k < grid.dims[2];
                        const double w = in ? dense[grid.index(i, j, k)] : dense[grid.index(c[0] * 8, c[1] * 8, c[2] * 8)];
                        v[hp::BrickField<double>::offset_in(x, y, z)] = w;
                        constant = constant && std::abs(w) >= stored_far && (w > 0) == (v[0] > 0);
                    }
            if (constant) {
                sparse.tile[b] = v[0] > 0 ? stored_far : -stored_far;
            } else {
                sparse.index[b] = static_cast<std::uint32_t>(sparse.brick_count());
                sparse.bricks.insert(sparse.bricks.end(), v.begin(), v.end());
            }
        }
    }
};

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(SparseField, ValuesAndGradientsAreTheDenseOnesBitForBit) {
    for (bool as_float : {true, false}) {
        const BandBall f(3, as_float);
        ASSERT_GT(f.sparse.brick_count(), 0u);
        ASSERT_LT(f.sparse.brick_count(), f.sparse.block_count());  // some tiles
        const hp::DistanceSampler dense(f.grid, f.dense);
        const hp::DistanceSampler sparse(f.sparse);
        EXPECT_TRUE(sparse.sparse());
        EXPECT_EQ(sparse.float_samples(), as_float);
        EXPECT_EQ(dense.max_value(), sparse.max_value());
        EXPECT_EQ(dense.lipschitz(), sparse.lipschitz());
        EXPECT_EQ(dense.border_max_value(), sparse.border_max_value());
        // Memory in proportion to the band (a shell of bricks around the ball), not to the grid.
        EXPECT_LT(sparse.memory_bytes() * 4, dense.memory_bytes());
        for (int k = 0; k < f.grid.dims[2]; k += 5)
            for (int j = 0; j < f.grid.dims[1]; ++j)
                for (int i = 0; i < f.grid.dims[0]; ++i) ASSERT_EQ(dense.sample(i, j, k), sparse.sample(i, j, k));
        std::mt19937 rng(3);
        std::uniform_real_distribution<double> u(-0.8, 0.8);
        for (int n = 0; n < 20000; ++n) {
            const hp::Vec3d p{u(rng), u(rng), u(rng)};  // some outside the grid
            ASSERT_TRUE(same_bits(dense.value(p), sparse.value(p))) << p.x << " " << p.y << " " << p.z;
            const hp::Vec3d gd = dense.gradient(p), gs = sparse.gradient(p);
            for (int a = 0; a < 3; ++a) ASSERT_TRUE(same_bits(gd[a], gs[a]));
            ASSERT_TRUE(same_bits(dense.gradient_value(p), sparse.gradient_value(p)));
            hp::DistanceSampler::CellRef cell;
            sparse.probe_value(p, cell);
            ASSERT_TRUE(same_bits(sparse.value(cell), sparse.value(p)));
        }
    }
}

TEST(SparseField, SphereBoundsHoldAndFarBallsArePrunedByTheFloor) {
    const BandBall f(3, true);
    const hp::DistanceSampler dense(f.grid, f.dense);
    const hp::DistanceSampler sparse(f.sparse);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-0.8, 0.8), rad(0.001, 0.4), unit(-1, 1);
    for (int n = 0; n < 3000; ++n) {
        const hp::Vec3d c{u(rng), u(rng), u(rng)};
        const double r = rad(rng);
        const double bound = sparse.upper_bound(c, r);
        hp::DistanceSampler::SphereProbe probe;
        sparse.probe_sphere(c, r, probe);
        ASSERT_TRUE(same_bits(sparse.upper_bound(probe), bound));
        ASSERT_TRUE(same_bits(sparse.upper_bound_lazy(probe), bound));
        // The bound holds at the centre, on the sphere and inside (brute force over points).
        double top = sparse.value(c);
        for (int m = 0; m < 200; ++m) {
            hp::Vec3d d{unit(rng), unit(rng), unit(rng)};
            const double len = hp::length(d);
            if (!(len > 0)) continue;
            d = d * (1 / len);
            top = std::max(top, sparse.value(c + d * r));
            top = std::max(top, sparse.value(c + d * (r * std::abs(unit(rng)))));
        }
        ASSERT_LE(top, bound + 1e-12) << "centre " << c.x << " " << c.y << " " << c.z << " radius " << r;
    }
    // A ball centred 0.5 from the ball's surface with radius 0.12: the band's far value (-0.03)
    // plus the slope times the radius does not keep it below zero, the floor's bound does (its
    // gap, counted in whole blocks of 0.08, loses less than 0.16 per axis of the 0.47 to the band).
    const hp::Vec3d far_centre{0.05 + 0.8 / std::sqrt(3.0), -0.03 + 0.8 / std::sqrt(3.0), 0.02 + 0.8 / std::sqrt(3.0)};
    EXPECT_GT(dense.upper_bound(far_centre, 0.12), 0);
    EXPECT_LT(sparse.upper_bound(far_centre, 0.12), 0);
}

TEST(SparseField, QueriesFindTheDenseContacts) {
    const BandBall f(4, true);
    const hp::DistanceSampler dense(f.grid, f.dense);
    const hp::DistanceSampler sparse(f.sparse);
    std::mt19937 rng(11);
    std::normal_distribution<double> gauss;
    const hp::test::PointObject shell = hp::test::sphere_shell(rng, gauss, 1500, 0.15);
    const hp::MovingObject moving = shell.view();
    hp::VpsQuery qd(dense, moving, {}), qs(sparse, moving, {});
    std::uniform_real_distribution<double> dist(0.4, 0.6);
    std::size_t touching = 0, fewer_tests = 0;
    for (int n = 0; n < 200; ++n) {
        const hp::Vec3d d = hp::normalized(hp::Vec3d{gauss(rng), gauss(rng), gauss(rng)});
        const hp::Pose pose{hp::Vec3d{0.05, -0.03, 0.02} + d * dist(rng), {gauss(rng), gauss(rng), gauss(rng), gauss(rng)}};
        const hp::QueryResult a = qd(pose);
        const hp::QueryResult b = qs(pose);
        ASSERT_EQ(a.contacts.size(), b.contacts.size()) << "pose " << n;
        for (std::size_t c = 0; c < a.contacts.size(); ++c) {
            ASSERT_EQ(a.contacts[c].point, b.contacts[c].point);
            ASSERT_TRUE(same_bits(a.contacts[c].value, b.contacts[c].value));
        }
        for (int a3 = 0; a3 < 3; ++a3) ASSERT_TRUE(same_bits(a.force[a3], b.force[a3]));
        touching += !a.contacts.empty();
        fewer_tests += b.spheres_tested < a.spheres_tested;
    }
    EXPECT_GT(touching, 20u);
    EXPECT_LT(touching, 190u);
    EXPECT_GT(fewer_tests, 0u);  // the floor's bound prunes spheres the expanded field cannot
}

TEST(SparseField, BandVoxelsBeyondTheTilesReadTheTilesValueAndKeepTheContacts) {
    const BandBall f(3, true, false);
    const hp::DistanceSampler dense(f.grid, f.dense);  // every exact distance
    const hp::DistanceSampler sparse(f.sparse);
    const double far = static_cast<double>(static_cast<float>(0.03));
    std::size_t beyond = 0;
    for (int k = 0; k < f.grid.dims[2]; ++k)
        for (int j = 0; j < f.grid.dims[1]; ++j)
            for (int i = 0; i < f.grid.dims[0]; ++i) {
                const double d = dense.sample(i, j, k);
                ASSERT_EQ(sparse.sample(i, j, k), std::clamp(d, -far, far));
                beyond += f.sparse.at(i, j, k) != sparse.sample(i, j, k);
            }
    EXPECT_GT(beyond, 1000u);  // band voxels beyond +-3 voxel sizes, read as +-3
    // Points no deeper than (3 - sqrt 3) voxel sizes and no farther outside read the same values.
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> u(-0.6, 0.6);
    std::size_t checked = 0;
    for (int n = 0; n < 20000; ++n) {
        const hp::Vec3d p{u(rng), u(rng), u(rng)};
        const double v = dense.value(p);
        if (std::abs(v) >= (3 - std::sqrt(3.0)) * 0.01) continue;
        ++checked;
        ASSERT_TRUE(same_bits(v, sparse.value(p)));
    }
    EXPECT_GT(checked, 50u);
    // The same contact points on every pose (values differ only deeper than that).
    std::mt19937 g(13);
    std::normal_distribution<double> gauss;
    const hp::test::PointObject shell = hp::test::sphere_shell(g, gauss, 1000, 0.15);
    const hp::MovingObject moving = shell.view();
    hp::VpsQuery qd(dense, moving, {}), qs(sparse, moving, {});
    std::uniform_real_distribution<double> dist(0.3, 0.5);
    for (int n = 0; n < 100; ++n) {
        const hp::Vec3d d = hp::normalized(hp::Vec3d{gauss(g), gauss(g), gauss(g)});
        const hp::Pose pose{hp::Vec3d{0.05, -0.03, 0.02} + d * dist(g), {gauss(g), gauss(g), gauss(g), gauss(g)}};
        const hp::QueryResult& a = qd(pose);
        const std::vector<hp::Contact> ca = a.contacts;
        const hp::QueryResult& b = qs(pose);
        ASSERT_EQ(ca.size(), b.contacts.size()) << "pose " << n;
        for (std::size_t c = 0; c < ca.size(); ++c) ASSERT_EQ(ca[c].point, b.contacts[c].point);
    }
}

TEST(SparseField, RejectsATableThatDoesNotMatchItsGrid) {
    BandBall f(3, true);
    hp::BrickField<double> bad = f.sparse;
    bad.index.pop_back();
    EXPECT_THROW(hp::DistanceSampler{bad}, hp::Error);
    bad = f.sparse;
    bad.index[0] = static_cast<std::uint32_t>(bad.brick_count());
    EXPECT_THROW(hp::DistanceSampler{bad}, hp::Error);
}

}  // namespace
