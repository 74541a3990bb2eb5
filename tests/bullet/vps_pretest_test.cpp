// lib/bullet's pre-test of a VPS pair (boxes_apart): the box of the pointshell's points against the
// box outside which the other object's field holds no V > 0. It may answer "apart" only where no
// point lies inside: checked by brute force over every point and against the pair query at random
// poses, among them poses whose boxes just touch.
#include "vps_fixture.hpp"

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bullet/data.hpp"
#include "bullet/vps_contacts.hpp"
#include "bullet/vps_front.hpp"
#include "contact/query.hpp"

using namespace hp_bullet_test;

namespace {

// The points of `shell` with V > 0 in `other`'s field, placed as the pair query places them.
std::size_t points_inside(const hb::VpsData& shell, const hb::VpsData& other, const hb::Rigid& placed) {
    std::size_t n = 0;
    for (const hp::Vec3d& p : shell.moving.points) n += other.field.field.value(placed(p)) > 0;
    return n;
}

// The voxel centre with a sample above 0 that lies farthest along `sign` times axis `a`.
hp::Vec3d outermost_positive(const hp::DistanceSampler& field, int a, double sign) {
    const hp::GridSpec& g = field.grid();
    hp::Vec3d best;
    double far = -INFINITY;
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i)
                if (field.sample(i, j, k) > 0 && sign * g.center(i, j, k)[a] > far) {
                    best = g.center(i, j, k);
                    far = sign * best[a];
                }
    return best;
}

// A uniformly random rotation (Shoemake).
std::array<double, 4> random_quaternion(std::mt19937& rng) {
    std::uniform_real_distribution<double> u(0, 1);
    const double a = u(rng), b = 2 * M_PI * u(rng), c = 2 * M_PI * u(rng);
    return {std::sqrt(a) * std::cos(c), std::sqrt(1 - a) * std::sin(b), std::sqrt(1 - a) * std::cos(b), std::sqrt(a) * std::sin(c)};
}

}  // namespace

TEST(BulletPairPretest, InsideBoxHoldsEveryPositiveValue) {
    // Every voxel with a sample above 0, and every point of a random cloud over the grid and 3
    // voxels around it where V > 0, lies in the inside box; the box lies within the grid.
    for (const auto& [name, mesh] : {std::pair{"sphere", "sphere.obj"}, {"cube", "seam-cube.obj"}, {"openbox", nullptr}}) {
        SCOPED_TRACE(name);
        const auto data = hb::load_vps_data(files(name, mesh));
        const hp::DistanceSampler& field = data->field.field;
        const hp::GridSpec& g = field.grid();
        const hp::Aabb& box = data->inside_box;
        ASSERT_FALSE(box.empty());
        const auto inside = [&](hp::Vec3d p) {
            return p.x >= box.min.x && p.x <= box.max.x && p.y >= box.min.y && p.y <= box.max.y && p.z >= box.min.z && p.z <= box.max.z;
        };
        std::size_t positive = 0;
        for (int k = 0; k < g.dims[2]; ++k)
            for (int j = 0; j < g.dims[1]; ++j)
                for (int i = 0; i < g.dims[0]; ++i)
                    if (field.sample(i, j, k) > 0) {
                        ++positive;
                        EXPECT_TRUE(inside(g.center(i, j, k))) << i << " " << j << " " << k;
                    }
        EXPECT_GT(positive, 0u);
        const hp::Aabb grid = g.bounds();
        EXPECT_GE(box.min.x, grid.min.x);
        EXPECT_LE(box.max.z, grid.max.z);
        std::mt19937 rng(3);
        const double s = g.voxel_size;
        std::uniform_real_distribution<double> ux(grid.min.x - 3 * s, grid.max.x + 3 * s), uy(grid.min.y - 3 * s, grid.max.y + 3 * s),
            uz(grid.min.z - 3 * s, grid.max.z + 3 * s);
        std::size_t above = 0;
        for (int n = 0; n < 200000; ++n) {
            const hp::Vec3d p{ux(rng), uy(rng), uz(rng)};
            if (!(field.value(p) > 0)) continue;
            ++above;
            EXPECT_TRUE(inside(p)) << p.x << " " << p.y << " " << p.z;
        }
        EXPECT_GT(above, 1000u);
        // The sphere's and the cube's fields keep their inside off the grid's border: the pre-test
        // applies to them. The open box's inside reaches the border at its open top: none against it.
        EXPECT_EQ(data->inside_bounded, mesh != nullptr);
    }
}

TEST(BulletPairPretest, BoxesApartOnlyWhereNoPointIsInside) {
    // Each object as the pointshell against each other one's field, at random rotations, with the
    // points' box centre at random offsets from the inside box's centre up to 1.3 times the sum of
    // the two boxes' half diagonals (most poses overlap in the boxes, many touch), and at poses
    // whose boxes touch along one of the inside box's axes, off by -1e-6 to 1e-6 of a unit, and at
    // poses that put the shell's outermost point towards the other object on the other's
    // outermost voxel with V > 0 along an axis (one point inside, the boxes overlapping by about
    // a voxel: a bound too tight by more than that answers "apart" there). Where the pre-test
    // says apart, brute force finds no point with V > 0; the pair query's contacts are the brute
    // force's count at every pose.
    const auto sphere = hb::load_vps_data(files("sphere", "sphere.obj"));
    const auto cube = hb::load_vps_data(files("cube", "seam-cube.obj"));
    const auto openbox = hb::load_vps_data(files("openbox", nullptr));
    const hb::VpsData* objects[] = {sphere.get(), cube.get(), openbox.get()};
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(-1, 1), unit(0, 1);
    std::size_t apart = 0, touching = 0, grazing = 0, outermost = 0, poses = 0;
    for (const hb::VpsData* shell : objects)
        for (const hb::VpsData* other : objects) {
            if (shell == other) continue;
            hp::VpsQuery query(other->field.field, shell->moving.view(), {.mode = hp::QueryMode::full});
            const hp::Vec3d ah = (shell->point_box.max - shell->point_box.min) * 0.5;
            const hp::Vec3d bh = (other->inside_box.max - other->inside_box.min) * 0.5;
            const double reach = hp::length(ah) + hp::length(bh);
            for (int n = 0; n < 600; ++n) {
                const hp::Pose pose0{{}, random_quaternion(rng)};
                const hb::Rigid turn{hp::rotation_rows(pose0.quaternion), {}};
                // Where the points' box centre goes: from the inside box's centre by `offset`.
                hp::Vec3d offset;
                hp::Vec3d t;
                if (n % 3 == 1) {
                    // The shell point farthest along -sign e_a (turned) onto the other's outermost
                    // positive voxel along sign e_a.
                    const int a = n % 9 / 3;
                    const double sign = n % 2 ? 1 : -1;
                    const hp::Vec3d x = outermost_positive(other->field.field, a, sign);
                    std::size_t q = 0;
                    for (std::size_t i = 1; i < shell->moving.points.size(); ++i)
                        if (sign * turn.rotate(shell->moving.points[i])[a] < sign * turn.rotate(shell->moving.points[q])[a]) q = i;
                    t = x - turn.rotate(shell->moving.points[q]);
                } else if (n % 3 == 2) {
                    // Touching along axis a: the box's extent along it plus the inside box's, off by eps.
                    const int a = n % 9 / 3;
                    double extent = bh[a];
                    for (int j = 0; j < 3; ++j) extent += std::abs(turn.r[a][j]) * ah[j];
                    const double eps = 1e-6 * u(rng) * (n % 2 ? 1 : 1e-6);
                    offset = {u(rng) * bh.x, u(rng) * bh.y, u(rng) * bh.z};
                    offset[a] = (u(rng) < 0 ? -1 : 1) * (extent + eps);
                } else {
                    const hp::Vec3d dir{u(rng), u(rng), u(rng)};
                    offset = dir / hp::length(dir) * (1.3 * reach * unit(rng));
                }
                if (n % 3 != 1) t = other->inside_box.center() + offset - turn.rotate(shell->point_box.center());
                const hp::Pose pose{t, pose0.quaternion};
                const hb::Rigid placed{hp::rotation_rows(pose.quaternion), pose.position};
                const std::size_t inside = points_inside(*shell, *other, placed);
                const bool is_apart = hb::detail::boxes_apart(*shell, *other, placed);
                SCOPED_TRACE("pose " + std::to_string(n));
                if (is_apart) {
                    EXPECT_EQ(inside, 0u);
                }
                if (!other->inside_bounded) {
                    EXPECT_FALSE(is_apart);
                }
                EXPECT_EQ(query(pose).contacts.size(), inside);
                ++poses;
                apart += is_apart;
                touching += inside > 0;
                grazing += n % 3 == 2 && !is_apart;
                outermost += n % 3 == 1 && inside > 0;
            }
        }
    std::printf("%zu poses: %zu apart by the boxes, %zu with a point inside (%zu on an outermost voxel), %zu touching boxes kept\n",
                poses, apart, touching, outermost, grazing);
    EXPECT_GT(apart, poses / 8);
    EXPECT_GT(touching, poses / 5);
    EXPECT_GT(grazing, 0u);
    EXPECT_GT(outermost, poses / 4);
}
