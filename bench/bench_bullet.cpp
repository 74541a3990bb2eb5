// bench_bullet DIR [--passes N]
// What lib/bullet's narrow phase costs inside Bullet, next to Bullet's own sphere-plane algorithm:
// a btCollisionWorld with two objects at a fixed pose in contact, performDiscreteCollisionDetection
// run N times (default 20000, after 100 untimed passes) in batches of 100: the median batch's time per
// pass (what a busy machine's scheduler leaves alone) and the mean over all passes (broadphase
// included; the last line times a pass whose pair does not touch). Names give the overlap in m. DIR holds the objects of
// tests/bullet/prepare.sh (the icosphere of radius 1 and the unit cube, voxel 0.05). One thread;
// run it pinned (taskset -c 1) on a quiet machine. Not part of make bench yet (docs/bullet.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <btBulletCollisionCommon.h>

#include "bullet/vps.hpp"
#include "core/error.hpp"

namespace hb = hp::bullet;

namespace {

void time_pair(const char* name, int passes, btCollisionShape* a, const btTransform& ta, btCollisionShape* b,
               const btTransform& tb) {
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher(&config);
    hb::register_vps_algorithms(dispatcher);
    btDbvtBroadphase broadphase;
    btCollisionWorld world(&dispatcher, &broadphase, &config);
    btCollisionObject oa, ob;
    oa.setCollisionShape(a);
    oa.setWorldTransform(ta);
    ob.setCollisionShape(b);
    ob.setWorldTransform(tb);
    world.addCollisionObject(&oa);
    world.addCollisionObject(&ob);
    for (int i = 0; i < 100; ++i) world.performDiscreteCollisionDetection();
    std::vector<double> batches;
    double total = 0;
    for (int done = 0; done < passes;) {
        const int n = std::min(100, passes - done);
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < n; ++i) world.performDiscreteCollisionDetection();
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
        batches.push_back(us / n);
        total += us;
        done += n;
    }
    std::nth_element(batches.begin(), batches.begin() + static_cast<std::ptrdiff_t>(batches.size() / 2), batches.end());
    const double median = batches[batches.size() / 2];
    const int points = dispatcher.getNumManifolds() > 0 ? dispatcher.getManifoldByIndexInternal(0)->getNumContacts() : 0;
    std::printf("%-30s %9.2f us per pass (median batch), %9.2f mean  %d manifold points\n", name, median, total / passes,
                points);
    world.removeCollisionObject(&oa);
    world.removeCollisionObject(&ob);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2 && !(argc == 4 && std::string(argv[2]) == "--passes")) {
        std::fprintf(stderr, "usage: bench_bullet DIR [--passes N]\n");
        return 2;
    }
    const int passes = argc == 4 ? std::atoi(argv[3]) : 20000;
    if (passes <= 0) {
        std::fprintf(stderr, "bench_bullet: --passes must be a positive integer\n");
        return 2;
    }
    try {
        const std::string dir = argv[1];
        const auto sphere = hb::load_vps_data({dir + "/sphere.dist.vdb", dir + "/sphere.hps", ""});
        const auto cube = hb::load_vps_data({dir + "/cube.dist.vdb", dir + "/cube.hps", ""});
        auto vps_sphere = hb::make_vps_shape(sphere), vps_sphere2 = hb::make_vps_shape(sphere);
        auto vps_cube = hb::make_vps_shape(cube);
        btStaticPlaneShape plane(btVector3(0, 0, 1), 0);
        btSphereShape ball(1);
        btBoxShape box(btVector3(2, 2, btScalar(0.5)));
        const btTransform id = btTransform::getIdentity();
        auto at = [](double z) { return btTransform(btQuaternion::getIdentity(), btVector3(0, 0, btScalar(z))); };
        std::printf("points: sphere %zu, cube %zu; %d passes each\n", hb::point_count(*sphere), hb::point_count(*cube),
                    passes);
        time_pair("VPS sphere - plane (0.01)", passes, vps_sphere.get(), at(0.99), &plane, id);
        time_pair("btSphereShape - plane", passes, &ball, at(0.99), &plane, id);
        time_pair("VPS cube - box (0.01)", passes, vps_cube.get(), at(0.49), &box, at(-0.5));
        time_pair("VPS cube - VPS sphere (0.11)", passes, vps_cube.get(), at(1.39), vps_sphere.get(), id);
        time_pair("VPS sphere - VPS sphere (0.02)", passes, vps_sphere2.get(), at(1.98), vps_sphere.get(), id);
        time_pair("VPS pair apart (broadphase)", passes, vps_sphere2.get(), at(5), vps_sphere.get(), id);
        return 0;
    } catch (const hp::Error& e) {
        std::fprintf(stderr, "bench_bullet: %s\n", e.what());
        return e.exit_code();
    }
}
