#pragma once
// What the tests of lib/bullet's VPS algorithms share (vps_*_test.cpp): the objects the toolchain
// prepared (tests/bullet/prepare.sh, voxel 0.05) in the directory HP_BULLET_DATA, a collision
// world with the VPS algorithms, its manifolds, a pair's algorithm driven by hand and the
// comparison of two manifolds, and the poses and heights of the pruning tests.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <btBulletCollisionCommon.h>
#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <gtest/gtest.h>

#include "bullet/data.hpp"  // the shape's tree, for independent counts
#include "bullet/vps.hpp"

namespace hp_bullet_test {

namespace fs = std::filesystem;
namespace hb = hp::bullet;

inline constexpr double kVoxel = 0.05;  // prepare.sh

inline fs::path data_dir() {
    const char* d = std::getenv("HP_BULLET_DATA");
    return d ? fs::path(d) : fs::path("bullet-data");
}
inline fs::path sample(const char* name) { return fs::path(HP_SOURCE_DIR) / "sample_meshes" / name; }

inline hb::VpsFiles files(const char* name, const char* mesh) {
    return {data_dir() / (std::string(name) + ".dist.vdb"), data_dir() / (std::string(name) + ".hps"),
            mesh ? sample(mesh) : fs::path()};
}

// The body transform that puts the object's mesh frame at `world_from_mesh`.
inline btTransform body_at(const hb::VpsData& data, const btTransform& world_from_mesh) {
    return world_from_mesh * hb::local_from_mesh(data).inverse();
}

// A collision world with the VPS algorithms registered.
struct World {
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher{&config};
    btDbvtBroadphase broadphase;
    btCollisionWorld world{&dispatcher, &broadphase, &config};
    std::vector<std::unique_ptr<btCollisionObject>> objects;
    World() { hb::register_vps_algorithms(dispatcher); }
    ~World() {
        for (auto& o : objects) world.removeCollisionObject(o.get());
    }
    btCollisionObject* add(btCollisionShape* shape, const btTransform& t) {
        objects.push_back(std::make_unique<btCollisionObject>());
        objects.back()->setCollisionShape(shape);
        objects.back()->setWorldTransform(t);
        world.addCollisionObject(objects.back().get());
        return objects.back().get();
    }
};

// One pair's algorithm driven by hand, step by step, without a broadphase (any transform, NaN
// too); `vps` is a VPS object, `side` a plane, a box or another VPS object.
struct DrivenPair {
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher{&config};
    hb::VpsAlgorithms algorithms;
    btCollisionObject shell, other;
    btCollisionAlgorithm* algorithm = nullptr;
    DrivenPair(const hb::AlgorithmOptions& options, btCollisionShape* vps, btCollisionShape* side) : algorithms(options) {
        algorithms.register_on(dispatcher);
        shell.setCollisionShape(vps);
        other.setCollisionShape(side);
        const btCollisionObjectWrapper a(nullptr, vps, &shell, shell.getWorldTransform(), -1, -1);
        const btCollisionObjectWrapper b(nullptr, side, &other, other.getWorldTransform(), -1, -1);
        algorithm = dispatcher.findAlgorithm(&a, &b, nullptr, BT_CONTACT_POINT_ALGORITHMS);
    }
    DrivenPair(const DrivenPair&) = delete;
    DrivenPair& operator=(const DrivenPair&) = delete;
    ~DrivenPair() {
        if (!algorithm) return;
        algorithm->~btCollisionAlgorithm();
        dispatcher.freeCollisionAlgorithm(algorithm);
    }
    // The manifold after one step at these world transforms.
    const btPersistentManifold* step(const btTransform& shell_at, const btTransform& other_at) {
        shell.setWorldTransform(shell_at);
        other.setWorldTransform(other_at);
        const btCollisionObjectWrapper a(nullptr, shell.getCollisionShape(), &shell, shell_at, -1, -1);
        const btCollisionObjectWrapper b(nullptr, other.getCollisionShape(), &other, other_at, -1, -1);
        btManifoldResult result(&a, &b);
        const btDispatcherInfo info;
        algorithm->processCollision(&a, &b, info, &result);
        btManifoldArray manifolds;
        algorithm->getAllContactManifolds(manifolds);
        return manifolds.size() > 0 ? manifolds[0] : nullptr;
    }
};

// Two manifolds hold the same points, bit for bit, in the same order; returns how many.
inline int expect_same_manifold(const btPersistentManifold& a, const btPersistentManifold& b) {
    EXPECT_EQ(a.getNumContacts(), b.getNumContacts());
    const int n = std::min(a.getNumContacts(), b.getNumContacts());
    for (int i = 0; i < n; ++i) {
        const btManifoldPoint &x = a.getContactPoint(i), &y = b.getContactPoint(i);
        EXPECT_EQ(x.getDistance(), y.getDistance()) << "point " << i;
        for (int k = 0; k < 3; ++k) {
            EXPECT_EQ(x.m_positionWorldOnA[k], y.m_positionWorldOnA[k]) << "point " << i;
            EXPECT_EQ(x.m_positionWorldOnB[k], y.m_positionWorldOnB[k]) << "point " << i;
            EXPECT_EQ(x.m_normalWorldOnB[k], y.m_normalWorldOnB[k]) << "point " << i;
        }
    }
    return n;
}

// The manifold between two objects after one collision pass (null when there is none).
inline const btPersistentManifold* manifold_of(World& w, const btCollisionObject* a, const btCollisionObject* b) {
    w.world.performDiscreteCollisionDetection();
    for (int i = 0; i < w.dispatcher.getNumManifolds(); ++i) {
        const btPersistentManifold* m = w.dispatcher.getManifoldByIndexInternal(i);
        if ((m->getBody0() == a && m->getBody1() == b) || (m->getBody0() == b && m->getBody1() == a)) return m;
    }
    return nullptr;
}

// The algorithm that the last collision pass ran for two objects (null when there is none).
inline const btCollisionAlgorithm* algorithm_of(World& w, btCollisionObject* a, btCollisionObject* b) {
    const btBroadphasePair* p = w.world.getPairCache()->findPair(a->getBroadphaseHandle(), b->getBroadphaseHandle());
    return p ? p->m_algorithm : nullptr;
}

// The deepest point of a manifold and its normal pointing towards `towards` (one of the bodies).
struct Deepest {
    double depth = 0;
    btVector3 normal, point_on_other;
};
inline Deepest deepest(const btPersistentManifold& m, const btCollisionObject* towards) {
    Deepest d;
    for (int i = 0; i < m.getNumContacts(); ++i) {
        const btManifoldPoint& p = m.getContactPoint(i);
        if (-p.getDistance() <= d.depth) continue;
        d.depth = -p.getDistance();
        // m_normalWorldOnB points from body1 towards body0.
        d.normal = m.getBody0() == towards ? p.m_normalWorldOnB : -p.m_normalWorldOnB;
        d.point_on_other = m.getBody0() == towards ? p.m_positionWorldOnB : p.m_positionWorldOnA;
    }
    return d;
}

// The poses of the pruning tests: 0-3 put a face (or the sphere's pole) flat on the ground, turned
// about the vertical; the others turn the object about tilted axes.
inline btTransform pruning_pose(int pose) {
    const btVector3 up(0, 0, 1);
    const btQuaternion q = pose < 4 ? btQuaternion(up, btScalar(0.5 * pose))
                                    : btQuaternion(btVector3(btScalar(std::sin(pose)), btScalar(std::cos(3 * pose)), 0.5).normalized(),
                                                   btScalar(0.37 * pose));
    return btTransform(q, btVector3(0.2, -0.1, 0));
}

// The heights of an object's points at `rot` (mesh frame -> world), lowest first, each with its
// point's index, and the lifts of the pruning tests.
struct Heights {
    std::vector<std::pair<double, std::size_t>> sorted;
    double span = 0;  // highest - lowest
    Heights(const hb::VpsData& data, const btTransform& rot) {
        for (std::size_t i = 0; i < data.moving.points.size(); ++i) {
            const hp::Vec3d& p = data.moving.points[i];
            sorted.push_back({double((rot * btVector3(btScalar(p.x), btScalar(p.y), btScalar(p.z))).z()), i});
        }
        std::sort(sorted.begin(), sorted.end());
        span = sorted.back().first - sorted.front().first;
    }
    // k <= 3: the lift that leaves the k lowest points below z = 0, none when the k-th and
    // (k+1)-th lie within 1e-4 of each other; k = 4: the lift that puts z = 0 at 30% of the
    // object's height.
    std::optional<double> lift(int k) const {
        if (k > 3) return -(sorted.front().first + 0.3 * span);
        const double below = sorted[static_cast<std::size_t>(k - 1)].first, above = sorted[static_cast<std::size_t>(k)].first;
        if (above - below < 1e-4) return std::nullopt;
        return -0.5 * (below + above);
    }
    // Whether the three lowest points lie in a row (up to rounding).
    bool lowest_three_in_a_row(const hb::VpsData& data) const {
        const hp::Vec3d &a = data.moving.points[sorted[0].second], &b = data.moving.points[sorted[1].second],
                        &c = data.moving.points[sorted[2].second];
        return hp::length(hp::cross(b - a, c - a)) < 1e-9;
    }
};

// The manifold of a pruning test's case k with `below` points inside by brute force: k <= 3,
// exactly those k points (two or three when three lie in a row); k = 4, Bullet's four.
inline void expect_pruning_case(const btPersistentManifold& m, const Heights& heights, const hb::VpsData& data,
                         std::size_t below, int k) {
    if (k <= 3) {
        ASSERT_EQ(below, static_cast<std::size_t>(k));
        if (k == 3 && heights.lowest_three_in_a_row(data)) EXPECT_GE(m.getNumContacts(), 2) << "k " << k;
        else EXPECT_EQ(m.getNumContacts(), k) << "k " << k;
    } else {
        ASSERT_GE(below, 4u);
        EXPECT_EQ(m.getNumContacts(), 4);  // the points inside span an area
    }
}

}  // namespace hp_bullet_test
