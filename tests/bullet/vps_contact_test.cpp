// lib/bullet's contacts against closed forms and the pair query: depth and normal of a VPS sphere
// on a plane, the plane's pruning against brute force, a VPS cube on a box and on a VPS sphere.
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

#include "bullet/data.hpp"
#include "query/session.hpp"

using namespace hp_bullet_test;

TEST(BulletContact, SphereOnPlaneDepthAndNormalAreAnalytic) {
    const auto data = hb::load_vps_data(files("sphere", "sphere.obj"));
    auto vps = hb::make_vps_shape(data);
    // A tilted plane n . x = 0.3 and the sphere's centre 0.88 above it (depth 0.12), turned.
    const btVector3 n = btVector3(0, 0.6, 0.8);
    btStaticPlaneShape plane(n, btScalar(0.3));
    for (bool sphere_first : {true, false}) {
        World w;
        const btVector3 centre = n * btScalar(0.3 + 0.88) + btVector3(0.4, 0.8, -0.6);
        btTransform mesh_pose(btQuaternion(btVector3(1, 2, 3).normalized(), btScalar(0.7)), centre);
        btCollisionObject *s, *p;
        if (sphere_first) {
            s = w.add(vps.get(), body_at(*data, mesh_pose));
            p = w.add(&plane, btTransform::getIdentity());
        } else {
            p = w.add(&plane, btTransform::getIdentity());
            s = w.add(vps.get(), body_at(*data, mesh_pose));
        }
        const btPersistentManifold* m = manifold_of(w, s, p);
        ASSERT_NE(m, nullptr);
        ASSERT_GE(m->getNumContacts(), 1);
        EXPECT_LE(m->getNumContacts(), 4);
        const Deepest d = deepest(*m, s);
        // The icosphere's points lie within a voxel of the ball; the depth is analytic from them.
        EXPECT_NEAR(d.depth, 0.12, kVoxel);
        EXPECT_NEAR(d.normal.dot(n), 1, 1e-6);
        // The deepest point lies on the plane below the centre, within a voxel.
        const btVector3 foot = centre - n * btScalar(0.88);
        EXPECT_NEAR((d.point_on_other - foot).length(), 0, 2 * kVoxel);
        EXPECT_NEAR(d.point_on_other.dot(n), 0.3, 1e-5);
    }
}

TEST(BulletContact, PlanePruningKeepsEveryPenetratingPoint) {
    // The plane algorithm skips clusters by a bound tighter than their spheres. Against a brute
    // force over all points: with the plane between the k-th and (k+1)-th lowest point (k = 1, 2,
    // 3) the manifold holds exactly those k points (at least two when the three are in a row, as
    // along a cube's edge), and with the plane anywhere through the object its deepest point is the
    // deepest of all points. Flat faces (the cube, resting) and a curved surface (the sphere).
    for (const auto& [name, mesh] : {std::pair{"cube", "seam-cube.obj"}, std::pair{"sphere", "sphere.obj"}}) {
        const auto data = hb::load_vps_data(files(name, mesh));
        auto vps = hb::make_vps_shape(data);
        const btVector3 up(0, 0, 1);
        btStaticPlaneShape plane(up, 0);
        for (int pose = 0; pose < 24; ++pose) {
            SCOPED_TRACE(std::string(name) + " pose " + std::to_string(pose));
            const btTransform rot = pruning_pose(pose);
            const Heights heights(*data, rot);
            const double span = heights.span;
            for (int k = 1; k <= 4; ++k) {
                const std::optional<double> lift = heights.lift(k);
                if (!lift) continue;
                World w;
                btTransform at = rot;
                at.setOrigin(rot.getOrigin() + btVector3(0, 0, btScalar(*lift)));
                btCollisionObject* s = w.add(vps.get(), body_at(*data, at));
                btCollisionObject* g = w.add(&plane, btTransform::getIdentity());
                const btPersistentManifold* m = manifold_of(w, s, g);
                ASSERT_NE(m, nullptr);
                // Brute force: the depths below z = 0 in the pose as Bullet holds it.
                double deepest_all = 0;
                std::size_t below = 0;
                const btTransform mesh_world = s->getWorldTransform() * hb::local_from_mesh(*data);
                for (const hp::Vec3d& p : data->moving.points) {
                    const double z = double((mesh_world * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z))).z());
                    if (z < 0) ++below, deepest_all = std::max(deepest_all, -z);
                }
                EXPECT_NEAR(deepest(*m, s).depth, deepest_all, 1e-5 * (1 + span));
                expect_pruning_case(*m, heights, *data, below, k);
            }
        }
    }
}

TEST(BulletContact, CubeOnBoxTouchesWithItsWholeBottomFace) {
    const auto data = hb::load_vps_data(files("cube", "seam-cube.obj"));
    EXPECT_EQ(hb::mass_properties(*data).source, "mesh");
    EXPECT_NEAR(hb::mass_properties(*data).volume, 1, 1e-9);
    auto vps = hb::make_vps_shape(data);
    btBoxShape box(btVector3(2, 2, btScalar(0.5)));  // top face at z = 0 below
    World w;
    btCollisionObject* b = w.add(&box, btTransform(btQuaternion::getIdentity(), btVector3(0.3, -0.2, -0.5)));
    // The unit cube [0,1]^3 with its bottom 0.08 below the box's top.
    btCollisionObject* c =
        w.add(vps.get(), body_at(*data, btTransform(btQuaternion::getIdentity(), btVector3(-0.5, -0.5, -0.08))));
    const btPersistentManifold* m = manifold_of(w, c, b);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(m->getNumContacts(), 4);
    const Deepest d = deepest(*m, c);
    EXPECT_NEAR(d.depth, 0.08, kVoxel);
    EXPECT_NEAR(d.normal.z(), 1, 1e-6);
    // The four points span the bottom face (area 1), within a voxel along each side.
    btVector3 p[4];
    for (int i = 0; i < 4; ++i) {
        p[i] = m->getBody0() == c ? m->getContactPoint(i).m_positionWorldOnA : m->getContactPoint(i).m_positionWorldOnB;
        // The deepest first, then points chosen for the area they span: any depth up to the deepest.
        EXPECT_GT(-m->getContactPoint(i).getDistance(), 0);
        EXPECT_LE(-m->getContactPoint(i).getDistance(), d.depth);
    }
    double hull = 0;  // the largest of the quadrilateral's triangle-pair areas
    for (int skip = 0; skip < 4; ++skip) {
        btVector3 q[3];
        for (int i = 0, k = 0; i < 4; ++i)
            if (i != skip) q[k++] = p[i];
        hull = std::max(hull, double((q[1] - q[0]).cross(q[2] - q[0]).length()) / 2);
    }
    EXPECT_GT(hull, 0.5 * (1 - 2 * kVoxel) * (1 - 2 * kVoxel) - 1e-9);  // a triangle of the face's corners
}

TEST(BulletContact, CubeIntoSphereEqualsTheQuery) {
    // Both VPS: the cube has fewer points, so it is the pointshell against the sphere's field.
    const auto sphere = hb::load_vps_data(files("sphere", "sphere.obj"));
    const auto cube = hb::load_vps_data(files("cube", "seam-cube.obj"));
    ASSERT_LT(hb::point_count(*cube), hb::point_count(*sphere));
    auto vs = hb::make_vps_shape(sphere), vc = hb::make_vps_shape(cube);
    World w;
    const btTransform sphere_pose(btQuaternion(btVector3(0, 1, 1).normalized(), btScalar(0.4)), btVector3(1, 2, 3));
    // The cube's bottom face 0.9 above the sphere's centre, centred over it (sphere frame): the
    // deepest point is the face's centre, 1 - 0.9 = 0.1 deep.
    const btTransform cube_in_sphere(btQuaternion::getIdentity(), btVector3(-0.5, -0.5, 0.9));
    btCollisionObject* s = w.add(vs.get(), body_at(*sphere, sphere_pose));
    btCollisionObject* c = w.add(vc.get(), body_at(*cube, sphere_pose * cube_in_sphere));
    const btPersistentManifold* m = manifold_of(w, c, s);
    ASSERT_NE(m, nullptr);
    const Deepest d = deepest(*m, c);
    EXPECT_NEAR(d.depth, 0.1, kVoxel);
    const btVector3 up = sphere_pose.getBasis() * btVector3(0, 0, 1);
    EXPECT_GT(d.normal.dot(up), 0.95);  // the cube's inward normal there, up in the sphere's frame

    // The same pose through the query of haptic-query: the same deepest contact.
    hp::QuerySession session(data_dir() / "sphere.dist.vdb", data_dir() / "cube.hps");
    const hp::QueryResult& r = session.query({{-0.5, -0.5, 0.9}, {1, 0, 0, 0}});
    ASSERT_FALSE(r.contacts.empty());
    EXPECT_NEAR(d.depth, r.max_penetration, 1e-5);
}

TEST(BulletContact, EveryManifoldPointIsAPairQueryContact) {
    // The cube (the pointshell) tilted about a skew axis into the sphere: its contacts spread over a
    // patch, so the manifold holds several. Each manifold point is one of the contacts the pair
    // query gives for the same pose, with its position (the pointshell's point), normal and depth.
    const auto sphere = hb::load_vps_data(files("sphere", "sphere.obj"));
    const auto cube = hb::load_vps_data(files("cube", "seam-cube.obj"));
    auto vs = hb::make_vps_shape(sphere), vc = hb::make_vps_shape(cube);
    World w;
    const btTransform sphere_pose(btQuaternion(btVector3(0, 1, 1).normalized(), btScalar(0.4)), btVector3(1, 2, 3));
    const btTransform cube_in_sphere(btQuaternion(btVector3(1, 0.3, 0.2).normalized(), btScalar(0.25)),
                                     btVector3(-0.45, -0.55, 0.8));
    btCollisionObject* s = w.add(vs.get(), body_at(*sphere, sphere_pose));
    btCollisionObject* c = w.add(vc.get(), body_at(*cube, sphere_pose * cube_in_sphere));
    const btPersistentManifold* m = manifold_of(w, c, s);
    ASSERT_NE(m, nullptr);

    hp::QuerySession session(data_dir() / "sphere.dist.vdb", data_dir() / "cube.hps");
    const btQuaternion q = cube_in_sphere.getRotation();
    const btVector3 t = cube_in_sphere.getOrigin();
    const hp::QueryResult& r = session.query({{t.x(), t.y(), t.z()}, {q.w(), q.x(), q.y(), q.z()}});
    ASSERT_GE(r.contacts.size(), 4u);
    // Four points spanning an area (the manifold's capacity), the deepest among them.
    ASSERT_EQ(m->getNumContacts(), 4);

    // The query's contacts in the world: positions and normals are in the sphere's mesh frame.
    auto world = [&](const hp::Vec3d& v) { return sphere_pose * btVector3(btScalar(v.x), btScalar(v.y), btScalar(v.z)); };
    auto world_dir = [&](const hp::Vec3d& v) { return sphere_pose.getBasis() * btVector3(btScalar(v.x), btScalar(v.y), btScalar(v.z)); };
    const bool cube_is_body0 = m->getBody0() == c;
    std::vector<bool> used(r.contacts.size(), false);
    double deepest_point = 0;
    for (int i = 0; i < m->getNumContacts(); ++i) {
        const btManifoldPoint& p = m->getContactPoint(i);
        // The pointshell's point and the normal that pushes it out of the sphere.
        const btVector3 point = cube_is_body0 ? p.m_positionWorldOnA : p.m_positionWorldOnB;
        const btVector3 normal = cube_is_body0 ? p.m_normalWorldOnB : -p.m_normalWorldOnB;
        const double depth = -double(p.getDistance());
        deepest_point = std::max(deepest_point, depth);
        std::size_t match = r.contacts.size();
        double nearest = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < r.contacts.size(); ++k) {
            const double d = double((world(r.contacts[k].position) - point).length());
            if (d < nearest) nearest = d, match = k;
        }
        ASSERT_LT(nearest, 1e-4) << "manifold point " << i << " is no contact of the query";
        EXPECT_FALSE(used[match]) << "manifold point " << i << " repeats contact " << match;
        used[match] = true;
        const hp::Contact& k = r.contacts[match];
        EXPECT_LT(double((world_dir(k.normal) - normal).length()), 1e-4) << "manifold point " << i;
        EXPECT_NEAR(depth, k.value, 1e-5) << "manifold point " << i;
    }
    EXPECT_NEAR(deepest_point, r.max_penetration, 1e-5);
}
