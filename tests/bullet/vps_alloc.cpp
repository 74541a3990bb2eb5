// No allocation per step once warm: a VPS pair's algorithm (its front, the contacts, the pair query
// it hands over to) keeps its buffers from step to step, so a pile of many pairs allocates nothing
// in Bullet's narrow phase once its pairs exist.
//
// This binary replaces the global operator new/delete (every form) with counting versions that
// forward to malloc/free, so it is kept apart from hp_bullet_tests (as tests/alloc/query_alloc.cpp
// from hp_unit_tests). The test runs the same walk of poses several times to warm the buffers up,
// then once more, and requires that no operator new ran in that last pass.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "bullet/data.hpp"
#include "vps_fixture.hpp"

#include "../alloc/counting_new.hpp"

using namespace hp_bullet_test;

TEST(BulletNoAllocation, CounterSeesAllocations) {
    // The replacement is in effect: a vector's storage counts.
    const long before = g_allocations.load();
    std::vector<int> v(1000, 1);
    EXPECT_EQ(v.size(), 1000u);
    EXPECT_GE(g_allocations.load() - before, 1);
}

TEST(BulletNoAllocation, VpsPairStepsAfterWarmUp) {
    // The cube on the sphere (both VPS, the cube the pointshell), 300 poses of a walk: small moves
    // and turns (a pile at rest: the front is kept), larger ones now and then (the front is
    // overrun and the pair query takes over), 0.3 clear for a few steps (a front of pruned
    // clusters only). The walk runs four times; the fourth allocates nothing, with the front and
    // with the query from the root.
    const auto sphere = hb::load_vps_data(files("sphere", "sphere.obj"));
    const auto cube = hb::load_vps_data(files("cube", "seam-cube.obj"));
    auto vs = hb::make_vps_shape(sphere), vc = hb::make_vps_shape(cube);
    std::vector<btTransform> walk;
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1, 1), scale(0, 1);
    btTransform local(btQuaternion(btVector3(0.2, -0.1, 1).normalized(), 0.3), btVector3(-0.5, -0.5, 0.97));
    const hp::Vec3d& c = hb::mass_properties(*cube).center_of_mass;
    const btVector3 com(btScalar(c.x), btScalar(c.y), btScalar(c.z));
    for (int step = 0; step < 300; ++step) {
        const double move = 1e-6 * std::pow(3e4, scale(rng)), turn = 1e-5 * std::pow(3e4, scale(rng));
        const btQuaternion dq(btVector3(btScalar(u(rng)), btScalar(u(rng)), btScalar(u(rng)) + 1e-3).normalized(),
                              btScalar(turn * u(rng)));
        const btVector3 centre = local * com;  // turned about its centre of mass
        local = btTransform(dq, centre - quatRotate(dq, centre)) * local;
        local.setRotation(local.getRotation().normalized());
        local.setOrigin(local.getOrigin() + btVector3(btScalar(move * u(rng)), btScalar(move * u(rng)), btScalar(move * u(rng))));
        // The point nearest the sphere's centre 1 to 50 mm inside the sphere (radius 1), or 0.3 clear.
        btVector3 nearest(0, 0, 1e9);
        for (const hp::Vec3d& p : cube->moving.points) {
            const btVector3 x = local * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z));
            if (x.length() < nearest.length()) nearest = x;
        }
        const double target = step % 50 >= 45 ? 1.3 : 0.975 + 0.024 * u(rng);
        local.setOrigin(local.getOrigin() + nearest.normalized() * btScalar(target - double(nearest.length())));
        walk.push_back(body_at(*cube, local));
    }
    const btTransform sphere_at = body_at(*sphere, btTransform::getIdentity());
    for (const bool coherent : {true, false}) {
        SCOPED_TRACE(coherent ? "front" : "from the root");
        DrivenPair pair({.coherent = coherent}, vc.get(), vs.get());
        ASSERT_NE(pair.algorithm, nullptr);
        int touching = 0;
        for (int pass = 0; pass < 3; ++pass)
            for (const btTransform& at : walk) touching += pair.step(at, sphere_at)->getNumContacts() > 0;
        const long before = g_allocations.load();
        for (const btTransform& at : walk) pair.step(at, sphere_at);
        EXPECT_EQ(g_allocations.load() - before, 0);
        EXPECT_GT(touching, 3 * 250);
        const hb::AlgorithmTrace t = hb::trace_of(pair.algorithm);
        if (coherent) {
            EXPECT_GT(t.fronts_kept, 0u);
            EXPECT_GT(t.fronts_made, 1u);
            EXPECT_LT(t.fronts_made + t.fronts_kept, 4 * walk.size());  // some calls ran the pair query
        }
    }
}
