// lib/bullet's coherent VPS-VPS pair: the front kept from step to step against the other object's
// distance field gives, at every pose, the contacts of the pair query run afresh at that pose.
#include "vps_fixture.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <btBulletCollisionCommon.h>
#include <gtest/gtest.h>

#include "bullet/data.hpp"
#include "bullet/vps_contacts.hpp"
#include "contact/query.hpp"

using namespace hp_bullet_test;

namespace {

// The placed points' distance from the sphere's centre (the sphere's mesh frame: its centre at the
// origin, radius 1): the least of them and that point.
struct Nearest {
    double distance = 1e9;
    btVector3 point;
};
Nearest nearest_to_centre(const hb::VpsData& cube, const btTransform& cube_in_sphere) {
    Nearest n;
    for (const hp::Vec3d& p : cube.moving.points) {
        const btVector3 x = cube_in_sphere * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z));
        if (double(x.length()) < n.distance) n = {double(x.length()), x};
    }
    return n;
}

// The points of the cube whose value in the sphere's field lies above `level` at a pose (mesh frames).
std::size_t points_above(const hb::VpsData& cube, const hb::VpsData& sphere, const btTransform& cube_in_sphere, double level) {
    std::size_t n = 0;
    for (const hp::Vec3d& p : cube.moving.points) {
        const btVector3 x = cube_in_sphere * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z));
        n += sphere.field.field.value(hp::Vec3d{double(x.x()), double(x.y()), double(x.z())}) > level;
    }
    return n;
}

// The contacts of the pair query run alone (no pre-test, no front) at the pose the algorithm
// places `shell`'s points at in `other`'s mesh frame, as the algorithm's trace gives them: the
// point in world coordinates and its depth, by point index.
std::vector<std::array<double, 4>> plain_query_contacts(hp::VpsQuery& query, const hb::VpsData& shell, const hb::VpsData& other,
                                                        const btTransform& shell_at, const btTransform& other_at) {
    const auto rigid = [](const btTransform& t) {
        hb::Rigid r;
        for (int i = 0; i < 3; ++i) r.r[i] = {double(t.getBasis()[i].x()), double(t.getBasis()[i].y()), double(t.getBasis()[i].z())};
        r.t = {double(t.getOrigin().x()), double(t.getOrigin().y()), double(t.getOrigin().z())};
        return r;
    };
    const hb::Rigid other_world = rigid(other_at) * other.local_from_mesh;
    const hb::Rigid pose = other_world.inverse() * (rigid(shell_at) * shell.local_from_mesh);
    std::vector<std::array<double, 4>> out;
    for (const hp::Contact& c : query({pose.t, hb::detail::quaternion_of(pose.r)}).contacts) {
        const hp::Vec3d w = other_world(c.position);
        out.push_back({w.x, w.y, w.z, c.value});
    }
    return out;
}

}  // namespace

TEST(BulletPairFront, CoherentVpsPairContactsEqualTheQueryAtEveryPose) {
    // The cube (fewer points: the pointshell) against the sphere's field, both VPS, along a random
    // walk: the cube turns by 1e-5 to 0.3 rad a step about a random axis through its centre of mass
    // and moves by 1 micrometre to 3 cm (log-uniform: most steps small, as in a pile coming to
    // rest, some large enough to overrun the front, after which the pair query runs), then moves along the sphere's radius so that its point
    // nearest the sphere's centre lies 0.001 to 0.06 inside the sphere; every 61st step clear, by
    // 0.3 and 0.03 in turn, then four steps of the walk alone while it stays 0.2 or 0.02 clear
    // (nothing touches: 0.3 out the two objects' boxes are apart and the pre-test answers, 0.03
    // out they overlap and the front holds pruned clusters only), every 53rd step 0.3 deep. The sphere moves too (its pose turns
    // slowly): only the pose between the two matters. At every step the full list of contacts
    // (before the manifold keeps four) equals, point for point and bit for bit, that of the pair
    // query run afresh (the algorithm with coherent = false, and the pair query alone, without the
    // algorithm's pre-test), and so does the manifold; its size is the number of points with V > 0
    // by brute force. Both orders of the bodies.
    const auto sphere = hb::load_vps_data(files("sphere", "sphere.obj"));
    const auto cube = hb::load_vps_data(files("cube", "seam-cube.obj"));
    ASSERT_LT(hb::point_count(*cube), hb::point_count(*sphere));
    auto vs = hb::make_vps_shape(sphere), vc = hb::make_vps_shape(cube);
    const hp::Vec3d& c = hb::mass_properties(*cube).center_of_mass;
    const btVector3 com(btScalar(c.x), btScalar(c.y), btScalar(c.z));
    for (const bool cube_first : {true, false}) {
        SCOPED_TRACE(cube_first ? "cube first" : "sphere first");
        btCollisionShape* first = cube_first ? vc.get() : vs.get();
        btCollisionShape* second = cube_first ? vs.get() : vc.get();
        DrivenPair coherent({}, first, second), fresh({.coherent = false}, first, second);
        hp::VpsQuery plain(sphere->field.field, cube->moving.view(), {.mode = hp::QueryMode::full});
        ASSERT_NE(coherent.algorithm, nullptr);
        ASSERT_NE(fresh.algorithm, nullptr);
        std::mt19937 rng(cube_first ? 5 : 6);
        std::uniform_real_distribution<double> u(-1, 1), scale(0, 1);
        // The cube's bottom face over the sphere's pole, 0.02 deep (sphere frame).
        btTransform local(btQuaternion(btVector3(0.2, -0.1, 1).normalized(), 0.3), btVector3(-0.5, -0.5, 0.98));
        btTransform sphere_pose(btQuaternion(btVector3(0, 1, 1).normalized(), btScalar(0.4)), btVector3(1, 2, 3));
        int touching = 0, clear = 0, compared = 0;
        std::size_t all_contacts = 0, kept_before = 0, kept_clear = 0, apart_before = 0, apart_clear = 0;
        int clear_left = 0;
        double clear_to = 1.3;
        for (int step = 0; step < 500; ++step) {
            SCOPED_TRACE("step " + std::to_string(step));
            const double move = 1e-6 * std::pow(3e4, scale(rng)), turn = 1e-5 * std::pow(3e4, scale(rng));
            const btQuaternion dq(btVector3(btScalar(u(rng)), btScalar(u(rng)), btScalar(u(rng)) + 1e-3).normalized(),
                                  btScalar(turn * u(rng)));
            const btVector3 centre = local * com;
            const btTransform about(dq, centre - quatRotate(dq, centre));
            local = about * local;
            local.setRotation(local.getRotation().normalized());
            local.setOrigin(local.getOrigin() + btVector3(btScalar(move * u(rng)), btScalar(move * u(rng)), btScalar(move * u(rng))));
            if (step % 61 == 30) clear_left = 5, clear_to = clear_to > 1.1 ? 1.03 : 1.3;
            const Nearest n = nearest_to_centre(*cube, local);
            double target = std::clamp(n.distance, 0.94, 0.999);
            bool creep = false;  // clear: left where the walk took it while it stays 0.2 (0.02) clear
            if (clear_left > 0) target = clear_to, creep = n.distance > 1 + (clear_to - 1) * 2 / 3, --clear_left;
            if (step % 53 == 20) target = 0.7, creep = false;
            if (!creep) local.setOrigin(local.getOrigin() + n.point.normalized() * btScalar(target - n.distance));
            sphere_pose.setRotation((sphere_pose.getRotation() * btQuaternion(btVector3(1, 0, 0), btScalar(1e-3))).normalized());
            const btTransform cube_at = body_at(*cube, sphere_pose * local), sphere_at = body_at(*sphere, sphere_pose);
            const btPersistentManifold* ma = cube_first ? coherent.step(cube_at, sphere_at) : coherent.step(sphere_at, cube_at);
            const btPersistentManifold* mb = cube_first ? fresh.step(cube_at, sphere_at) : fresh.step(sphere_at, cube_at);
            ASSERT_NE(ma, nullptr);
            ASSERT_NE(mb, nullptr);
            const hb::AlgorithmTrace ta = hb::trace_of(coherent.algorithm), tb = hb::trace_of(fresh.algorithm);
            EXPECT_EQ(ta.contacts, tb.contacts);  // every contact, in order, bit for bit
            EXPECT_EQ(ta.contacts, plain_query_contacts(plain, *cube, *sphere, cube_at, sphere_at));
            EXPECT_EQ(tb.fronts_made, 0u);
            compared += expect_same_manifold(*ma, *mb);
            // Brute force: the points inside the sphere's field (up to the float transforms' rounding).
            const btTransform in_sphere = local;
            EXPECT_GE(ta.contacts.size(), points_above(*cube, *sphere, in_sphere, 1e-5));
            EXPECT_LE(ta.contacts.size(), points_above(*cube, *sphere, in_sphere, -1e-5));
            touching += !ta.contacts.empty();
            all_contacts += ta.contacts.size();
            if (target > 1) {  // 0.02 clear at least
                ++clear;
                EXPECT_TRUE(ta.contacts.empty());
                kept_clear += ta.fronts_kept > kept_before;
                apart_clear += ta.boxes_apart > apart_before;
            } else {
                EXPECT_EQ(ta.boxes_apart, apart_before);  // touching: never answered by the boxes
            }
            kept_before = ta.fronts_kept;
            apart_before = ta.boxes_apart;
            if (step == 499) {
                std::printf("%s: %zu fronts made, %zu kept, %zu pruned clusters tested again; %d of 500 poses touching, "
                            "%d clear (the front kept in %zu, the boxes apart in %zu), %zu contacts, %d manifold points compared\n",
                            cube_first ? "cube first" : "sphere first", ta.fronts_made, ta.fronts_kept, ta.entries_tested,
                            touching, clear, kept_clear, apart_clear, all_contacts, compared);
                EXPECT_GT(ta.fronts_kept, 80u);
                EXPECT_GT(ta.entries_tested, 0u);
            }
        }
        EXPECT_GT(touching, 350);
        EXPECT_GT(clear, 20);
        EXPECT_GT(kept_clear, 0u);
        EXPECT_GT(apart_clear, 0u);
        EXPECT_GT(all_contacts, static_cast<std::size_t>(compared));
    }
}

TEST(BulletPairFront, CoherentVpsPairFollowsAnotherField) {
    // The pair's front belongs to one static field: when the algorithm is asked about the same
    // pointshell against another object's field (a shape swapped under a body), it starts anew and
    // gives that field's contacts, those of the pair query made for that object. The open box (the
    // fewest points: the pointshell) against the cube's field, then against the sphere's.
    const auto sphere = hb::load_vps_data(files("sphere", "sphere.obj"));
    const auto cube = hb::load_vps_data(files("cube", "seam-cube.obj"));
    const auto openbox = hb::load_vps_data(files("openbox", nullptr));
    auto vs = hb::make_vps_shape(sphere), vc = hb::make_vps_shape(cube), vo = hb::make_vps_shape(openbox);
    ASSERT_LT(hb::point_count(*openbox), hb::point_count(*cube));
    ASSERT_LT(hb::point_count(*cube), hb::point_count(*sphere));
    DrivenPair coherent({}, vo.get(), vc.get()), fresh_cube({.coherent = false}, vo.get(), vc.get()),
        fresh_sphere({.coherent = false}, vo.get(), vs.get());
    const btTransform box_at = body_at(*openbox, btTransform(btQuaternion(btVector3(1, 0.3, 0.2).normalized(), btScalar(0.25)),
                                                             btVector3(0, 0, 0)));
    const btTransform cube_at = body_at(*cube, btTransform(btQuaternion::getIdentity(), btVector3(0.3, 0.2, -0.6)));
    ASSERT_NE(coherent.step(box_at, cube_at), nullptr);
    ASSERT_NE(fresh_cube.step(box_at, cube_at), nullptr);
    const std::vector<std::array<double, 4>> in_cube = hb::trace_of(coherent.algorithm).contacts;
    EXPECT_EQ(in_cube, hb::trace_of(fresh_cube.algorithm).contacts);
    EXPECT_GT(in_cube.size(), 4u);
    // The sphere (radius 1 about its mesh frame's origin) in place of the cube.
    coherent.other.setCollisionShape(vs.get());
    const btTransform sphere_at = body_at(*sphere, btTransform(btQuaternion::getIdentity(), btVector3(0.5, 0.5, -0.5)));
    const btPersistentManifold* ma = coherent.step(box_at, sphere_at);
    const btPersistentManifold* mb = fresh_sphere.step(box_at, sphere_at);
    ASSERT_NE(ma, nullptr);
    ASSERT_NE(mb, nullptr);
    const hb::AlgorithmTrace ta = hb::trace_of(coherent.algorithm), tb = hb::trace_of(fresh_sphere.algorithm);
    EXPECT_EQ(ta.contacts, tb.contacts);
    EXPECT_GT(ta.contacts.size(), 4u);
    EXPECT_NE(ta.contacts, in_cube);
    EXPECT_EQ(ta.fronts_made, 2u);
    expect_same_manifold(*ma, *mb);
    std::printf("%zu contacts in the cube, %zu in the sphere\n", in_cube.size(), ta.contacts.size());
}
