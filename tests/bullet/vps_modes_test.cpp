// lib/bullet's traversal modes: segmented manifolds against the segmented query, the coherent
// fronts against a descent from the root (plane and box, growing boxes, NaN poses), the
// time-critical budget, and bad options.
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

namespace {

// The manifolds between two objects with at least one point, after one collision pass.
std::vector<const btPersistentManifold*> touching_manifolds(World& w, const btCollisionObject* a,
                                                            const btCollisionObject* b) {
    w.world.performDiscreteCollisionDetection();
    std::vector<const btPersistentManifold*> out;
    for (int i = 0; i < w.dispatcher.getNumManifolds(); ++i) {
        const btPersistentManifold* m = w.dispatcher.getManifoldByIndexInternal(i);
        const bool pair = (m->getBody0() == a && m->getBody1() == b) || (m->getBody0() == b && m->getBody1() == a);
        if (pair && m->getNumContacts() > 0) out.push_back(m);
    }
    return out;
}

// A world whose dispatcher runs the algorithms with `options`.
struct ModeWorld : World {
    hb::VpsAlgorithms algorithms;
    explicit ModeWorld(const hb::AlgorithmOptions& options) : algorithms(options) { algorithms.register_on(dispatcher); }
};

// The same object over the same ground in two worlds: `coherent` keeps its front from step to
// step, `root` descends from the root every step. place() moves the object in both and returns
// both manifolds after one collision pass.
struct Twins {
    ModeWorld coherent{{}}, root{{.coherent = false}};
    btCollisionObject *a, *b;    // the object in each world
    btCollisionObject *ga, *gb;  // the ground in each world
    Twins(btCollisionShape* object, const btTransform& at, btCollisionShape* ground, const btTransform& ground_at)
        : a(coherent.add(object, at)), b(root.add(object, at)), ga(coherent.add(ground, ground_at)), gb(root.add(ground, ground_at)) {}
    std::pair<const btPersistentManifold*, const btPersistentManifold*> place(const btTransform& at) {
        a->setWorldTransform(at);
        b->setWorldTransform(at);
        return {manifold_of(coherent, a, ga), manifold_of(root, b, gb)};
    }
};

}  // namespace

TEST(BulletModes, SegmentedGivesOneManifoldPerTouchingClusterOfTheLevel) {
    const auto data = hb::load_vps_data(files("sphere", "sphere.obj"));
    auto vps = hb::make_vps_shape(data);
    btStaticPlaneShape plane(btVector3(0, 0, 1), 0);
    const btTransform mesh_pose(btQuaternion(btVector3(1, 2, 3).normalized(), btScalar(0.7)), btVector3(0.1, 0.2, 0.85));
    const hp::PointSphereTree& tree = data->moving.tree;
    for (int level : {1, 3, tree.levels}) {
        ModeWorld w({.traversal = hb::Traversal::segmented, .level = level});
        btCollisionObject* s = w.add(vps.get(), body_at(*data, mesh_pose));
        btCollisionObject* p = w.add(&plane, btTransform::getIdentity());
        const auto manifolds = touching_manifolds(w, s, p);
        // Independently: the clusters of the level with a point below the plane (points within 1e-5
        // of it may go either way in single precision).
        std::size_t surely = 0, maybe = 0;
        double deepest_point = 0;
        for (const hp::TreeCluster& c : tree.clusters) {
            if (c.level != level) continue;
            double deepest_here = -1e9;
            std::vector<std::uint32_t> todo{static_cast<std::uint32_t>(&c - tree.clusters.data())};
            while (!todo.empty()) {
                const hp::TreeCluster& k = tree.clusters[todo.back()];
                todo.pop_back();
                if (!k.children.empty()) {
                    todo.insert(todo.end(), k.children.begin(), k.children.end());
                    continue;
                }
                for (std::uint32_t i : k.points) {
                    const hp::Vec3d q = data->moving.points[i];
                    const btVector3 world = mesh_pose * btVector3(btScalar(q.x), btScalar(q.y), btScalar(q.z));
                    deepest_here = std::max(deepest_here, -double(world.z()));
                }
            }
            surely += deepest_here > 1e-5;
            maybe += deepest_here > -1e-5;
            deepest_point = std::max(deepest_point, deepest_here);
        }
        std::printf("level %d: %zu manifolds, %zu to %zu clusters below the plane\n", level, manifolds.size(), surely, maybe);
        EXPECT_GE(manifolds.size(), surely) << "level " << level;
        EXPECT_LE(manifolds.size(), maybe) << "level " << level;
        EXPECT_GT(surely, 0u);
        double deepest = 0;
        for (const btPersistentManifold* m : manifolds) {
            EXPECT_EQ(m->getNumContacts(), 1);
            deepest = std::max(deepest, -double(m->getContactPoint(0).getDistance()));
        }
        EXPECT_NEAR(deepest, deepest_point, 1e-5) << "level " << level;
        if (level == 1) {
            EXPECT_EQ(manifolds.size(), 1u);  // the root: the whole object
        }
    }
}

TEST(BulletModes, SegmentedVpsPairEqualsTheSegmentedQuery) {
    const auto sphere = hb::load_vps_data(files("sphere", "sphere.obj"));
    const auto cube = hb::load_vps_data(files("cube", "seam-cube.obj"));
    auto vs = hb::make_vps_shape(sphere), vc = hb::make_vps_shape(cube);
    const int level = 4;
    ModeWorld w({.traversal = hb::Traversal::segmented, .level = level});
    const btTransform cube_in_sphere(btQuaternion(btVector3(1, 0, 0), btScalar(0.2)), btVector3(-0.5, -0.5, 0.85));
    btCollisionObject* s = w.add(vs.get(), body_at(*sphere, btTransform::getIdentity()));
    btCollisionObject* c = w.add(vc.get(), body_at(*cube, cube_in_sphere));
    const auto manifolds = touching_manifolds(w, c, s);

    hp::QuerySession session(data_dir() / "sphere.dist.vdb", data_dir() / "cube.hps",
                             {.mode = hp::QueryMode::segmented, .level = level});
    const btQuaternion q = cube_in_sphere.getRotation();
    const btVector3 t = cube_in_sphere.getOrigin();
    const hp::QueryResult& r = session.query({{t.x(), t.y(), t.z()}, {q.w(), q.x(), q.y(), q.z()}});
    ASSERT_GT(r.contacts.size(), 1u);
    std::printf("level %d: %zu manifolds, the query %zu segment contacts\n", level, manifolds.size(), r.contacts.size());
    EXPECT_EQ(manifolds.size(), r.contacts.size());
    double deepest = 0;
    for (const btPersistentManifold* m : manifolds) deepest = std::max(deepest, -double(m->getContactPoint(0).getDistance()));
    EXPECT_NEAR(deepest, r.max_penetration, 1e-5);
}

TEST(BulletModes, CoherentPlaneContactsEqualADescentFromTheRoot) {
    // The plane algorithm keeps its front from step to step (AlgorithmOptions::coherent). Along a
    // random walk of poses around a resting contact, with steps from 10 micrometres to 3 cm and
    // turns from 1e-4 to 0.3 rad (the front kept, partly descended again, or made anew), now and
    // then lifted off the plane or pushed deep into it, the manifold equals, point for point and
    // bit for bit, that of the algorithm that descends from the root at every step.
    for (const auto& [name, mesh] : {std::pair{"cube", "seam-cube.obj"}, std::pair{"sphere", "sphere.obj"}}) {
        const auto data = hb::load_vps_data(files(name, mesh));
        auto vps = hb::make_vps_shape(data);
        btStaticPlaneShape plane(btVector3(0, 0, 1), 0);
        btTransform pose(btQuaternion(btVector3(0.3, -0.2, 1).normalized(), 0.4), btVector3(0.1, 0.2, 0.5));
        Twins twins(vps.get(), body_at(*data, pose), &plane, btTransform::getIdentity());
        ASSERT_TRUE(twins.coherent.algorithms.options().coherent);
        std::mt19937 rng(7);
        std::uniform_real_distribution<double> u(-1, 1), scale(0, 1);
        int touching = 0, compared = 0;
        for (int step = 0; step < 600; ++step) {
            SCOPED_TRACE(std::string(name) + " step " + std::to_string(step));
            const double move = 1e-5 * std::pow(3000.0, scale(rng)), turn = 1e-4 * std::pow(3000.0, scale(rng));
            btQuaternion q = pose.getRotation() *
                             btQuaternion(btVector3(btScalar(u(rng)), btScalar(u(rng)), btScalar(u(rng)) + 1e-3).normalized(), btScalar(turn * u(rng)));
            btVector3 t = pose.getOrigin() + btVector3(btScalar(move * u(rng)), btScalar(move * u(rng)), btScalar(move * u(rng)));
            // Keep the object's lowest point between 0.06 and 0.001 below the plane (touching);
            // every 97th step lift it 0.3 clear, every 89th push it 0.3 deep.
            pose = btTransform(q.normalized(), t);
            double lowest = 1e9;
            for (const hp::Vec3d& p : data->moving.points)
                lowest = std::min(lowest, double((pose * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z))).z()));
            double target = std::clamp(lowest, -0.06, -0.001);
            if (step % 97 == 50) target = 0.3;
            if (step % 89 == 40) target = -0.3;
            pose.setOrigin(pose.getOrigin() + btVector3(0, 0, btScalar(target - lowest)));
            const auto [ma, mb] = twins.place(body_at(*data, pose));
            ASSERT_NE(ma, nullptr);
            ASSERT_NE(mb, nullptr);
            ASSERT_EQ(ma->getNumContacts(), mb->getNumContacts());
            touching += ma->getNumContacts() > 0;
            compared += expect_same_manifold(*ma, *mb);
        }
        std::printf("%s: %d of 600 poses touching, %d points compared\n", name, touching, compared);
        EXPECT_GT(touching, 400);
    }
}

TEST(BulletModes, BoxPruningKeepsEveryPenetratingPoint) {
    // Against a box, clusters are skipped by their spheres and by a disc bound against one face's
    // plane. Against a brute force over all points (the box's depth computed here): with the box's
    // top face between the k-th and (k+1)-th lowest point (k = 1, 2, 3) the manifold holds exactly
    // those k points, and with the face anywhere through the object its deepest point is the
    // deepest of all points; from the root and with the front made anew (coherent, one step: this
    // checks only the descent that makes the front, side_descent, not a front kept from step to
    // step). The k <= 3 cases skip poses whose k-th and (k+1)-th lowest points lie at nearly the
    // same height; the cases checked are counted.
    for (const bool coherent : {false, true}) {
        int checked = 0, checked_k = 0;
        for (const auto& [name, mesh] : {std::pair{"cube", "seam-cube.obj"}, std::pair{"sphere", "sphere.obj"}}) {
            const auto data = hb::load_vps_data(files(name, mesh));
            auto vps = hb::make_vps_shape(data);
            btBoxShape box(btVector3(3, 2, btScalar(0.5)));
            const btTransform box_pose(btQuaternion::getIdentity(), btVector3(0.3, -0.2, -0.5));  // top face at z = 0
            const btVector3 half = box.getHalfExtentsWithMargin();
            for (int pose = 0; pose < 12; ++pose) {
                SCOPED_TRACE(std::string(name) + " pose " + std::to_string(pose) + (coherent ? " coherent" : " root"));
                const btTransform rot = pruning_pose(pose);
                const Heights heights(*data, rot);
                const double span = heights.span;
                for (int k = 1; k <= 4; ++k) {
                    const std::optional<double> lift = heights.lift(k);
                    if (!lift) continue;
                    ModeWorld w({.coherent = coherent});
                    btTransform at = rot;
                    at.setOrigin(rot.getOrigin() + btVector3(0, 0, btScalar(*lift)));
                    btCollisionObject* s = w.add(vps.get(), body_at(*data, at));
                    btCollisionObject* b = w.add(&box, box_pose);
                    const btPersistentManifold* m = manifold_of(w, s, b);
                    ASSERT_NE(m, nullptr);
                    // Brute force: the box's depth of every point (inside: the distance to the nearest face).
                    double deepest_all = 0;
                    std::size_t below = 0;
                    const btTransform box_from_mesh = box_pose.inverse() * s->getWorldTransform() * hb::local_from_mesh(*data);
                    for (const hp::Vec3d& p : data->moving.points) {
                        const btVector3 x = box_from_mesh * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z));
                        double depth = 1e9;
                        for (int a = 0; a < 3; ++a) depth = std::min(depth, double(half[a]) - std::abs(double(x[a])));
                        if (depth > 0) ++below, deepest_all = std::max(deepest_all, depth);
                    }
                    EXPECT_NEAR(deepest(*m, s).depth, deepest_all, 1e-5 * (1 + span));
                    ++checked;
                    checked_k += k <= 3;
                    expect_pruning_case(*m, heights, *data, below, k);
                }
            }
        }
        std::printf("%s: %d cases checked, %d of them with k <= 3 points below\n", coherent ? "coherent" : "root", checked,
                    checked_k);
        EXPECT_GT(checked_k, 2 * 12);  // k <= 3: more than one case per pose on average
    }
}

TEST(BulletModes, CoherentBoxContactsEqualADescentFromTheRoot) {
    // The box algorithm keeps its front from step to step as the plane's does. Along a random walk
    // over a turned box (half extents 0.6 x 0.4 x 0.3): the object slides across the top face and
    // over its edges and corners (its centre at most 0.05 beyond an edge along x and y), turns
    // by 1e-4 to 0.3 rad a step, every other step about its lowest point and else about its origin
    // while it moves by 10 micrometres to 3 cm; every step then slides it by up to 1 cm across the
    // face (5 cm back towards the face beyond an edge) and moves it up or down so that its lowest
    // point lies between 0.06 and 0.001 below the top face. The turns about the lowest point move
    // the front's pivot (the kept leaves' mean centre when made, not the lowest point) by the turn
    // and that slide and re-target: these steps lean on the turn term more than the others, but
    // the shift term is not zero in them either. Every 97th step
    // lifted 0.3 clear, every 89th pushed 0.3 deep; the manifold equals, point for point and bit for
    // bit, that of the descent from the root, and so does the full list of contacts before the
    // manifold keeps four, whose size is the number of points inside the box by brute force. The
    // front is kept (not made anew) in many of the steps that touch at an edge, and pruned clusters
    // are tested again.
    for (const auto& [name, mesh] : {std::pair{"cube", "seam-cube.obj"}, std::pair{"sphere", "sphere.obj"}}) {
        const auto data = hb::load_vps_data(files(name, mesh));
        auto vps = hb::make_vps_shape(data);
        btBoxShape box(btVector3(btScalar(0.6), btScalar(0.4), btScalar(0.3)));
        const btTransform box_pose(btQuaternion(btVector3(0.2, 1, 0.4).normalized(), btScalar(0.3)), btVector3(0.5, -0.3, 0.2));
        btTransform local(btQuaternion(btVector3(0.3, -0.2, 1).normalized(), 0.4), btVector3(0.1, 0.2, 1));  // in the box frame
        Twins twins(vps.get(), body_at(*data, box_pose * local), &box, box_pose);
        const hp::Vec3d& c = hb::mass_properties(*data).center_of_mass;
        const btVector3 com(btScalar(c.x), btScalar(c.y), btScalar(c.z));
        std::mt19937 rng(11);
        std::uniform_real_distribution<double> u(-1, 1), scale(0, 1);
        int touching = 0, at_edge = 0, compared = 0, kept_at_edge = 0;
        std::size_t kept_before = 0, all_contacts = 0;
        const btVector3 half = box.getHalfExtentsWithMargin();
        for (int step = 0; step < 600; ++step) {
            SCOPED_TRACE(std::string(name) + " step " + std::to_string(step));
            const double move = 1e-5 * std::pow(3000.0, scale(rng)), turn = 1e-4 * std::pow(3000.0, scale(rng));
            const btQuaternion dq(btVector3(btScalar(u(rng)), btScalar(u(rng)), btScalar(u(rng)) + 1e-3).normalized(), btScalar(turn * u(rng)));
            if (step % 2 == 0) {
                // Turned about the mesh's origin and moved.
                btVector3 t = local.getOrigin() + btVector3(btScalar(move * u(rng)), btScalar(move * u(rng)), btScalar(move * u(rng)));
                local = btTransform((local.getRotation() * dq).normalized(), t);
            } else {
                // Turned about its lowest point, which the turn leaves where it is (the slide and the
                // height below move it).
                btVector3 low(0, 0, 1e9);
                for (const hp::Vec3d& p : data->moving.points) {
                    const btVector3 x = local * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z));
                    if (x.z() < low.z()) low = x;
                }
                const btTransform about(dq, low - quatRotate(dq, low));
                local = about * local;
                local.setRotation(local.getRotation().normalized());
            }
            // The mesh's centre of mass wanders over the top face and past its edges.
            const btVector3 centre = local * com;
            btVector3 pull(0, 0, 0);
            for (int k = 0; k < 2; ++k)
                if (std::abs(double(centre[k])) > double(box.getHalfExtentsWithMargin()[k]) + 0.05)
                    pull[k] = btScalar(std::copysign(0.05, -double(centre[k])));
                else pull[k] = btScalar(0.01 * u(rng));
            double lowest = 1e9;
            for (const hp::Vec3d& p : data->moving.points)
                lowest = std::min(lowest, double((local * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z))).z()));
            const double top = 0.3;
            double target = std::clamp(lowest, top - 0.06, top - 0.001);
            if (step % 97 == 50) target = top + 0.3;
            if (step % 89 == 40) target = top - 0.3;
            local.setOrigin(local.getOrigin() + pull + btVector3(0, 0, btScalar(target - lowest)));
            const auto [ma, mb] = twins.place(body_at(*data, box_pose * local));
            ASSERT_NE(ma, nullptr);
            ASSERT_NE(mb, nullptr);
            ASSERT_EQ(ma->getNumContacts(), mb->getNumContacts());
            touching += ma->getNumContacts() > 0;
            // Touching with the centre of mass within 0.1 of an edge or beyond it.
            const bool edge = ma->getNumContacts() > 0 && (std::abs(double(centre.x())) > 0.5 || std::abs(double(centre.y())) > 0.3);
            at_edge += edge;
            const hb::AlgorithmTrace ta = hb::trace_of(algorithm_of(twins.coherent, twins.a, twins.ga));
            const hb::AlgorithmTrace tb = hb::trace_of(algorithm_of(twins.root, twins.b, twins.gb));
            EXPECT_EQ(ta.contacts, tb.contacts);  // every contact, in order, bit for bit
            EXPECT_EQ(tb.fronts_made, 0u);
            kept_at_edge += edge && ta.fronts_kept > kept_before;
            kept_before = ta.fronts_kept;
            if (step == 599) {
                std::printf("%s: %zu fronts made, %zu kept, %zu pruned clusters tested again\n", name, ta.fronts_made,
                            ta.fronts_kept, ta.entries_tested);
                EXPECT_GT(ta.entries_tested, 0u);
            }
            // Brute force: the points inside the box (up to the float transforms' rounding).
            std::size_t surely = 0, maybe = 0;
            for (const hp::Vec3d& p : data->moving.points) {
                const btVector3 x = local * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z));
                double depth = 1e9;
                for (int k = 0; k < 3; ++k) depth = std::min(depth, double(half[k]) - std::abs(double(x[k])));
                surely += depth > 1e-5;
                maybe += depth > -1e-5;
            }
            EXPECT_GE(ta.contacts.size(), surely);
            EXPECT_LE(ta.contacts.size(), maybe);
            all_contacts += ta.contacts.size();
            compared += expect_same_manifold(*ma, *mb);
        }
        std::printf("%s: %d of 600 poses touching, %d of them at an edge (the front kept in %d), %d points compared, %zu "
                    "contacts in all\n", name, touching, at_edge, kept_at_edge, compared, all_contacts);
        EXPECT_GT(touching, 300);
        EXPECT_GT(at_edge, 50);
        EXPECT_GT(kept_at_edge, at_edge / 4);
        EXPECT_GT(all_contacts, static_cast<std::size_t>(compared));
    }
}

TEST(BulletModes, CoherentBoxFollowsABoxThatGrows) {
    // The box's half extents may change between steps (setLocalScaling, setMargin): the front kept
    // from a step against the smaller box must not keep clusters pruned that now lie inside it.
    // The cube, turned to stand on a corner 1 mm deep in the top face; then the box grows by 0.2
    // upwards (the corner's whole neighbourhood inside): the manifold equals that of the descent
    // from the root, and holds the points of that wider patch.
    const auto data = hb::load_vps_data(files("cube", "seam-cube.obj"));
    auto vps = hb::make_vps_shape(data);
    btBoxShape box(btVector3(btScalar(0.6), btScalar(0.4), btScalar(0.3)));
    const btTransform box_pose(btQuaternion::getIdentity(), btVector3(0, 0, 0));
    btTransform pose(btQuaternion(btVector3(1, 1, 0).normalized(), btScalar(0.9553)) * btQuaternion(btVector3(0, 0, 1), 0.3),
                     btVector3(0, 0, 0));
    btVector3 low(0, 0, 1e9);  // the lowest point, moved to 1 mm below the top face's centre
    for (const hp::Vec3d& p : data->moving.points) {
        const btVector3 x = pose * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z));
        if (x.z() < low.z()) low = x;
    }
    pose.setOrigin(btVector3(0, 0, btScalar(0.3 - 0.001)) - low);
    Twins twins(vps.get(), body_at(*data, pose), &box, box_pose);
    auto [ma, mb] = twins.place(body_at(*data, pose));
    ASSERT_NE(ma, nullptr);
    ASSERT_NE(mb, nullptr);
    ASSERT_GE(ma->getNumContacts(), 1);
    expect_same_manifold(*ma, *mb);
    const double top_before = double(box.getHalfExtentsWithMargin().z());
    box.setLocalScaling(btVector3(1, 1, btScalar(0.5 / 0.3)));
    const double top_after = double(box.getHalfExtentsWithMargin().z());
    ASSERT_NEAR(top_after - top_before, 0.2, 1e-5);
    // Brute force: the points now inside the box.
    std::size_t inside = 0;
    const btVector3 half = box.getHalfExtentsWithMargin();
    for (const hp::Vec3d& p : data->moving.points) {
        const btVector3 x = pose * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z));
        inside += std::abs(x.x()) < half.x() && std::abs(x.y()) < half.y() && std::abs(x.z()) < half.z();
    }
    ASSERT_GT(inside, 20u);
    std::tie(ma, mb) = twins.place(body_at(*data, pose));
    ASSERT_NE(ma, nullptr);
    ASSERT_NE(mb, nullptr);
    EXPECT_EQ(mb->getNumContacts(), 4);
    expect_same_manifold(*ma, *mb);
    EXPECT_NEAR(deepest(*ma, twins.a).depth, 0.201, 1e-4);
}

TEST(BulletModes, CoherentFrontsRecoverFromANanPose) {
    // A pose that is not a number for one step (a body that blew up, a caller's bug), then finite
    // poses again: from resting 1 mm deep, and from 1 cm clear (the whole object one pruned cluster
    // far out), through a NaN pose, to pushed 0.3 deep. Against a plane and a box, the manifold
    // equals that of the descent from the root at every finite step: the front is not read from a
    // path that went through NaN.
    const auto data = hb::load_vps_data(files("sphere", "sphere.obj"));
    auto vps = hb::make_vps_shape(data);
    btStaticPlaneShape plane(btVector3(0, 0, 1), 0);
    btBoxShape box(btVector3(3, 2, btScalar(0.5)));
    const btTransform box_pose(btQuaternion::getIdentity(), btVector3(0.3, -0.2, -0.5));  // top face at z = 0
    const btScalar nan = std::numeric_limits<btScalar>::quiet_NaN();
    for (btCollisionShape* side : {static_cast<btCollisionShape*>(&plane), static_cast<btCollisionShape*>(&box)}) {
        SCOPED_TRACE(side == &plane ? "plane" : "box");
        const btTransform side_at = side == &plane ? btTransform::getIdentity() : box_pose;
        DrivenPair coherent({}, vps.get(), side), root({.coherent = false}, vps.get(), side);
        ASSERT_NE(coherent.algorithm, nullptr);
        ASSERT_NE(root.algorithm, nullptr);
        const btTransform turned(btQuaternion(btVector3(0.3, -0.2, 1).normalized(), 0.4), btVector3(0.1, 0.2, 0));
        double lowest = 1e9;
        for (const hp::Vec3d& p : data->moving.points)
            lowest = std::min(lowest, double((turned * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z))).z()));
        const auto at = [&](double depth) {
            btTransform t = turned;
            t.setOrigin(t.getOrigin() - btVector3(0, 0, btScalar(lowest + depth)));
            return body_at(*data, t);
        };
        btTransform broken = at(0.001);
        broken.setOrigin(btVector3(nan, nan, nan));
        int compared = 0;
        const double none = std::numeric_limits<double>::quiet_NaN();  // the broken pose
        for (const double depth : {0.001, none, 0.3, 0.002, -0.01, none, 0.3, -0.01, none, none, 0.002}) {
            SCOPED_TRACE("depth " + std::to_string(depth));
            const btTransform pose = std::isnan(depth) ? broken : at(depth);
            const btPersistentManifold* ma = coherent.step(pose, side_at);
            const btPersistentManifold* mb = root.step(pose, side_at);
            ASSERT_NE(ma, nullptr);
            ASSERT_NE(mb, nullptr);
            if (std::isnan(depth)) continue;
            EXPECT_EQ(mb->getNumContacts() > 0, depth > 0);
            compared += expect_same_manifold(*ma, *mb);
        }
        EXPECT_GE(compared, 2 * 4 + 3);  // four points at each of the two deep poses, one at least at the others
    }
}

TEST(BulletModes, TimeCriticalStopsAtItsBudgetOfSphereTests) {
    const auto data = hb::load_vps_data(files("cube", "seam-cube.obj"));
    auto vps = hb::make_vps_shape(data);
    btBoxShape box(btVector3(2, 2, btScalar(0.5)));
    const btTransform on_box(btQuaternion::getIdentity(), btVector3(-0.5, -0.5, -0.08));
    const btTransform box_pose(btQuaternion::getIdentity(), btVector3(0.3, -0.2, -0.5));
    // One sphere test: the root collides, its children are queued, nothing is checked: no contact.
    {
        ModeWorld w({.traversal = hb::Traversal::time_critical, .budget_us = 1e6, .budget_tests = 1});
        btCollisionObject* b = w.add(&box, box_pose);
        btCollisionObject* c = w.add(vps.get(), body_at(*data, on_box));
        EXPECT_TRUE(touching_manifolds(w, c, b).empty());
    }
    // A budget the traversal never reaches: the full traversal's manifold.
    double full_depth = 0, tc_depth = 0;
    {
        World w;
        btCollisionObject* b = w.add(&box, box_pose);
        btCollisionObject* c = w.add(vps.get(), body_at(*data, on_box));
        full_depth = deepest(*manifold_of(w, c, b), c).depth;
    }
    {
        ModeWorld w({.traversal = hb::Traversal::time_critical, .budget_us = 1e6, .budget_tests = 1000000});
        btCollisionObject* b = w.add(&box, box_pose);
        btCollisionObject* c = w.add(vps.get(), body_at(*data, on_box));
        const auto m = touching_manifolds(w, c, b);
        ASSERT_EQ(m.size(), 1u);
        EXPECT_EQ(m[0]->getNumContacts(), 4);
        tc_depth = deepest(*m[0], c).depth;
    }
    EXPECT_EQ(tc_depth, full_depth);
    EXPECT_NEAR(full_depth, 0.08, kVoxel);
}

TEST(BulletModes, BadOptionsAreUsageErrors) {
    EXPECT_THROW(hb::VpsAlgorithms({.traversal = hb::Traversal::segmented, .level = 0}), hp::Error);
    EXPECT_THROW(hb::VpsAlgorithms({.traversal = hb::Traversal::time_critical, .budget_us = 0}), hp::Error);
    try {
        hb::VpsAlgorithms a({.traversal = hb::Traversal::segmented, .level = 0});
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::usage);
    }
}
