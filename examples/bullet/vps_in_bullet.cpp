// VPS in your own Bullet program: an object prepared by the toolchain (distance field and
// point-sphere tree) falls onto a ground plane. The lines marked VPS are all a Bullet program adds.
//
//   haptic-voxelize part.obj --voxel-size 0.01 -o part.vox.vdb
//   haptic-distance part.obj part.vox.vdb -o part.dist.vdb
//   haptic-pointshell part.obj part.dist.vdb -o part.ps.hps
//   haptic-spheretree part.ps.hps -o part.hps
//   vps_in_bullet part.dist.vdb part.hps part.obj
//
// Prints the height of the object's centre of mass every 0.25 s; exits 0 when after 3 s it is at rest
// (below 1 cm/s) above the ground, 1 when not, 2 for bad arguments, 3 for a bad file.
#include <cstdio>
#include <exception>
#include <memory>

#include <btBulletDynamicsCommon.h>

#include "bullet/vps.hpp"  // VPS (installed below include/hapticprep/)
#include "core/error.hpp"

int main(int argc, char** argv) {
    if (argc < 3 || argc > 4) {
        std::fprintf(stderr, "usage: vps_in_bullet FIELD.vdb TREE.hps [MESH]\n");
        return 2;
    }
    try {
        btDefaultCollisionConfiguration config;
        btCollisionDispatcher dispatcher(&config);
        hp::bullet::register_vps_algorithms(dispatcher);  // VPS: before the first step
        btDbvtBroadphase broadphase;
        btSequentialImpulseConstraintSolver solver;
        btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
        world.setGravity(btVector3(0, 0, -9.81));

        btStaticPlaneShape ground_shape(btVector3(0, 0, 1), 0);
        btRigidBody ground(0, nullptr, &ground_shape);
        world.addRigidBody(&ground);

        // VPS: the object's haptic data and a shape over them (local frame: centre of mass, principal axes).
        const auto data = hp::bullet::load_vps_data({argv[1], argv[2], argc > 3 ? argv[3] : ""});
        std::unique_ptr<btCollisionShape> shape = hp::bullet::make_vps_shape(data);

        const btScalar mass = 1;
        btVector3 inertia;
        shape->calculateLocalInertia(mass, inertia);
        btRigidBody body(mass, nullptr, shape.get(), inertia);
        // The mesh 0.5 m above the ground: world-from-mesh = body transform * local_from_mesh.
        btVector3 lo, hi;  // the shape's box in the mesh frame
        shape->getAabb(hp::bullet::local_from_mesh(*data).inverse(), lo, hi);
        const btTransform mesh_pose(btQuaternion::getIdentity(), btVector3(0, 0, btScalar(0.5) - lo.z()));
        body.setWorldTransform(mesh_pose * hp::bullet::local_from_mesh(*data).inverse());
        world.addRigidBody(&body);

        const hp::bullet::MassProperties& m = hp::bullet::mass_properties(*data);
        std::printf("%zu points, voxel %g, volume %g (from the %s), drop from 0.5 m\n", hp::bullet::point_count(*data),
                    hp::bullet::voxel_size(*data), m.volume, m.source.c_str());
        const int rate = 200, steps = 3 * rate;
        for (int i = 1; i <= steps; ++i) {
            world.stepSimulation(btScalar(1.0) / rate, 0);
            if (i % (rate / 4) == 0)
                std::printf("t %.2f s  centre of mass at %.4f m  speed %.4f m/s\n", double(i) / rate,
                            double(body.getWorldTransform().getOrigin().z()), double(body.getLinearVelocity().length()));
        }
        world.removeRigidBody(&body);
        world.removeRigidBody(&ground);
        const bool rests = body.getWorldTransform().getOrigin().z() > 0 && body.getLinearVelocity().length() < 0.01;
        std::printf("%s\n", rests ? "at rest on the ground" : "NOT at rest on the ground");
        return rests ? 0 : 1;
    } catch (const hp::Error& e) {
        std::fprintf(stderr, "vps_in_bullet: %s\n", e.what());
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "vps_in_bullet: %s\n", e.what());
        return 1;
    }
}
