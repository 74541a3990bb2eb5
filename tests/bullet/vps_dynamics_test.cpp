// lib/bullet in a btDiscreteDynamicsWorld: bodies dropped on a plane or on a static VPS cube come
// to rest where closed forms say.
#include "vps_fixture.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <vector>

#include <btBulletCollisionCommon.h>
#include <btBulletDynamicsCommon.h>
#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <gtest/gtest.h>

using namespace hp_bullet_test;

namespace {

// Drops a body of 1 kg with `shape`, its mesh frame translated by `mesh_offset`, onto the plane
// z = 0 at 200 Hz with g = 10: the lowest and final height of its centre of mass (the body's origin),
// the highest after the first contact, and its final speed.
struct Drop {
    double lowest = 1e9, final_height = 0, final_speed = 0, final_vertical_speed = 0, highest_after_contact = -1e9;
    double energy_before_contact = 0, max_energy_after_contact = 0;  // kinetic, J
};
Drop drop(btCollisionShape* shape, const hb::VpsData& data, const btVector3& mesh_offset, int steps) {
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher(&config);
    hb::register_vps_algorithms(dispatcher);
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
    world.setGravity(btVector3(0, 0, -10));

    btStaticPlaneShape ground_shape(btVector3(0, 0, 1), 0);
    btRigidBody ground(0, nullptr, &ground_shape);
    world.addRigidBody(&ground);

    btVector3 inertia;
    shape->calculateLocalInertia(1, inertia);
    btRigidBody body(1, nullptr, shape, inertia);
    body.setWorldTransform(body_at(data, btTransform(btQuaternion::getIdentity(), mesh_offset)));
    body.setActivationState(DISABLE_DEACTIVATION);
    world.addRigidBody(&body);

    Drop d;
    bool touched = false;
    for (int i = 0; i < steps; ++i) {
        world.stepSimulation(btScalar(1.0 / 200), 0);
        const double z = body.getWorldTransform().getOrigin().z();
        d.lowest = std::min(d.lowest, z);
        const double energy = 0.5 * body.getLinearVelocity().length2() +
                              0.5 * body.getAngularVelocity().dot(body.getInvInertiaTensorWorld().inverse() * body.getAngularVelocity());
        touched = touched || (dispatcher.getNumManifolds() > 0 && dispatcher.getManifoldByIndexInternal(0)->getNumContacts() > 0);
        if (touched) {
            d.highest_after_contact = std::max(d.highest_after_contact, z);
            d.max_energy_after_contact = std::max(d.max_energy_after_contact, energy);
        } else {
            d.energy_before_contact = energy;
        }
    }
    d.final_height = body.getWorldTransform().getOrigin().z();
    d.final_speed = body.getLinearVelocity().length();
    d.final_vertical_speed = std::abs(body.getLinearVelocity().z());
    world.removeRigidBody(&body);
    world.removeRigidBody(&ground);
    std::printf("lowest %.5f, final %.5f m, speed %.5f m/s (vertical %.5f), highest after contact %.5f m, "
                "kinetic energy before contact %.4f J, largest after %.4f J\n",
                d.lowest, d.final_height, d.final_speed, d.final_vertical_speed, d.highest_after_contact,
                d.energy_before_contact, d.max_energy_after_contact);
    return d;
}

}  // namespace

TEST(BulletDynamics, SphereDroppedOnPlaneRestsAtItsRadius) {
    const auto data = hb::load_vps_data(files("sphere", "sphere.obj"));
    auto vps = hb::make_vps_shape(data);
    // 1 m fall, 5 s: the icosphere rolls on its facets for a while after the impact before it stops.
    const Drop d = drop(vps.get(), *data, btVector3(0, 0, 2), 1000);
    EXPECT_NEAR(d.final_height, 1, kVoxel);
    EXPECT_GT(d.lowest, 1 - kVoxel);               // never sinks a voxel deep
    EXPECT_LT(d.highest_after_contact, 1 + kVoxel);  // restitution 0: no bounce, no explosion
    EXPECT_LE(d.max_energy_after_contact, d.energy_before_contact);
    EXPECT_LT(d.final_vertical_speed, 0.01);
    // The icosphere may still roll slowly on its 1,280 facets (no rolling friction), never fast.
    EXPECT_LT(d.final_speed, 0.1);
}

TEST(BulletDynamics, CubeDroppedOnPlaneRestsAtItsHalfHeight) {
    const auto data = hb::load_vps_data(files("cube", "seam-cube.obj"));
    auto vps = hb::make_vps_shape(data);
    const Drop d = drop(vps.get(), *data, btVector3(-0.5, -0.5, 0.5), 600);  // centre at 1: 0.5 m fall
    EXPECT_NEAR(d.final_height, 0.5, kVoxel);
    EXPECT_GT(d.lowest, 0.5 - kVoxel);
    EXPECT_LT(d.highest_after_contact, 0.5 + kVoxel);
    EXPECT_LE(d.max_energy_after_contact, d.energy_before_contact);
    EXPECT_LT(d.final_speed, 0.01);
}

TEST(BulletDynamics, SphereDroppedOnAStaticVpsCubeRestsOnItsTop) {
    // Both VPS: the cube (fewer points) is the pointshell against the falling sphere's field.
    const auto sphere = hb::load_vps_data(files("sphere", "sphere.obj"));
    const auto cube = hb::load_vps_data(files("cube", "seam-cube.obj"));
    auto vs = hb::make_vps_shape(sphere), vc = hb::make_vps_shape(cube);
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher(&config);
    hb::register_vps_algorithms(dispatcher);
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
    world.setGravity(btVector3(0, 0, -10));
    // The cube [-0.5, 0.5]^2 x [0, 1], static; the sphere's centre 1 m above its top.
    btRigidBody ground(0, nullptr, vc.get());
    ground.setWorldTransform(body_at(*cube, btTransform(btQuaternion::getIdentity(), btVector3(-0.5, -0.5, 0))));
    world.addRigidBody(&ground);
    btVector3 inertia;
    vs->calculateLocalInertia(1, inertia);
    btRigidBody ball(1, nullptr, vs.get(), inertia);
    ball.setWorldTransform(body_at(*sphere, btTransform(btQuaternion::getIdentity(), btVector3(0, 0, 3))));
    ball.setActivationState(DISABLE_DEACTIVATION);
    world.addRigidBody(&ball);
    double lowest = 1e9;
    for (int i = 0; i < 600; ++i) {
        world.stepSimulation(btScalar(1.0 / 200), 0);
        lowest = std::min(lowest, double(ball.getWorldTransform().getOrigin().z()));
    }
    const btVector3 at = ball.getWorldTransform().getOrigin();
    std::printf("sphere on the VPS cube: lowest %.5f, final (%.5f, %.5f, %.5f), speed %.5f\n", lowest, at.x(), at.y(),
                at.z(), ball.getLinearVelocity().length());
    world.removeRigidBody(&ball);
    world.removeRigidBody(&ground);
    EXPECT_NEAR(at.z(), 2, kVoxel);   // the top at 1, the radius 1
    EXPECT_GT(lowest, 2 - kVoxel);
    EXPECT_LT(std::abs(ball.getLinearVelocity().z()), 0.01);
}
