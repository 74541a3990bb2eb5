// haptic-sim's runs: one Bullet world per run, the collision shapes of each method, the timed
// narrow phase, and the exact penetration from the objects' own geometry (docs/sim.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numbers>
#include <sstream>

#include <btBulletDynamicsCommon.h>
#include <BulletCollision/CollisionShapes/btShapeHull.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>

#include "bullet/data.hpp"
#include "bullet/hacd.hpp"
#include "bullet/sim.hpp"
#include "bullet/sim_objects.hpp"
#include "core/error.hpp"
#include "geometry/bvh.hpp"
#include "geometry/pseudo_normals.hpp"
#include "mesh/mesh.hpp"

namespace hp::bullet {

namespace {

using detail::applies_to;
using detail::bounding_diameter;
using detail::GeometryCache;
using detail::height;
using detail::median;
using detail::ObjectGeometry;
using detail::penetration_into;
using detail::principal_frame;
using detail::random_rotation;
using detail::rigid_of;

btVector3 to_bt(Vec3d v) { return btVector3(btScalar(v.x), btScalar(v.y), btScalar(v.z)); }
Vec3d from_bt(const btVector3& v) { return {double(v.x()), double(v.y()), double(v.z())}; }

btTransform to_bt(const Rigid& f) {
    btMatrix3x3 b(btScalar(f.r[0].x), btScalar(f.r[0].y), btScalar(f.r[0].z), btScalar(f.r[1].x), btScalar(f.r[1].y),
                  btScalar(f.r[1].z), btScalar(f.r[2].x), btScalar(f.r[2].y), btScalar(f.r[2].z));
    return btTransform(b, to_bt(f.t));
}
Rigid from_bt(const btTransform& t) {
    Rigid r;
    const btMatrix3x3& b = t.getBasis();
    for (int i = 0; i < 3; ++i) r.r[i] = from_bt(b[i]);
    r.t = from_bt(t.getOrigin());
    return r;
}

// The narrow phase of a step: Bullet's dispatcher, timed.
class TimedDispatcher final : public btCollisionDispatcher {
public:
    using btCollisionDispatcher::btCollisionDispatcher;
    void dispatchAllCollisionPairs(btOverlappingPairCache* pairs, const btDispatcherInfo& info,
                                   btDispatcher* dispatcher) override {
        const auto start = std::chrono::steady_clock::now();
        btCollisionDispatcher::dispatchAllCollisionPairs(pairs, info, dispatcher);
        last_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    }
    double last_us = 0;
};

// One body of a run with what its shape needs kept alive.
struct Body {
    const SceneObject* object = nullptr;
    const ObjectGeometry* geometry = nullptr;
    std::vector<std::unique_ptr<btCollisionShape>> shapes;  // [0] is the body's
    std::unique_ptr<btTriangleIndexVertexArray> triangles;
    std::vector<int> indices;
    std::vector<btScalar> coords;
    std::unique_ptr<btRigidBody> body;
    Rigid local_from_mesh;  // body frame from the mesh (or shape) frame
    std::size_t points = 0, parts = 0;
};

// Vertices of the mesh in the body frame.
std::vector<btVector3> body_vertices(const ObjectGeometry& g, const Rigid& local_from_mesh) {
    std::vector<btVector3> out;
    out.reserve(g.mesh->mesh.vertices.size());
    for (const Vec3d& v : g.mesh->mesh.vertices) out.push_back(to_bt(local_from_mesh(v)));
    return out;
}

std::unique_ptr<btConvexHullShape> hull_of(const std::vector<btVector3>& points, double margin) {
    auto hull = std::make_unique<btConvexHullShape>(&points[0].x(), int(points.size()), int(sizeof(btVector3)));
    hull->setMargin(btScalar(margin));
    hull->recalcLocalAabb();  // else the box keeps the default margin of 4 cm
    return hull;
}

// The VPS data of the runs so far, by their files: loaded once per scene.
struct VpsCache {
    std::vector<std::pair<std::string, std::shared_ptr<const VpsData>>> loaded;
    std::shared_ptr<const VpsData> get(const VpsFiles& f) {
        const std::string key = f.field.string() + "\n" + f.tree.string() + "\n" + f.mesh.string();
        for (const auto& [k, d] : loaded)
            if (k == key) return d;
        loaded.emplace_back(key, load_vps_data(f));
        return loaded.back().second;
    }
};

void make_shape(Body& b, const MethodSpec& m, const SimHooks& hooks, VpsCache& cache) {
    const SceneObject& o = *b.object;
    const ObjectGeometry& g = *b.geometry;
    b.local_from_mesh = principal_frame(g.mass);
    switch (m.method) {
    case Method::native:
        if (o.shape == SceneObject::Shape::sphere) b.shapes.push_back(std::make_unique<btSphereShape>(btScalar(o.radius)));
        else if (o.shape == SceneObject::Shape::box) b.shapes.push_back(std::make_unique<btBoxShape>(to_bt(o.half_extents)));
        else b.shapes.push_back(std::make_unique<btStaticPlaneShape>(to_bt(o.normal), btScalar(o.offset)));
        return;
    case Method::vps: {
        VpsFiles files{m.field, m.tree, {}};
        if (files.field.empty()) {
            if (!hooks.prepare) fail_usage("scene: method '" + m.name + "' needs prepared files and nothing can prepare them");
            files = hooks.prepare(o, *m.prepare);
        }
        // The mesh for the mass properties when it is the tree's source and closed.
        if (o.shape == SceneObject::Shape::mesh && g.mesh && g.mesh->diagnostics.watertight && o.scale == 1) files.mesh = o.mesh;
        const auto data = cache.get(files);
        b.points = point_count(*data);
        b.shapes.push_back(make_vps_shape(data));
        b.local_from_mesh = data->local_from_mesh;
        return;
    }
    case Method::gimpact: {
        const auto verts = body_vertices(g, b.local_from_mesh);
        for (const btVector3& v : verts) b.coords.insert(b.coords.end(), {v.x(), v.y(), v.z()});
        for (const auto& t : g.mesh->mesh.triangles)
            b.indices.insert(b.indices.end(), {int(t[0]), int(t[1]), int(t[2])});
        b.triangles = std::make_unique<btTriangleIndexVertexArray>(
            int(g.mesh->mesh.triangles.size()), b.indices.data(), int(3 * sizeof(int)), int(verts.size()), b.coords.data(),
            int(3 * sizeof(btScalar)));
        auto shape = std::make_unique<btGImpactMeshShape>(b.triangles.get());
        shape->setMargin(btScalar(m.margin));
        shape->updateBound();
        b.parts = g.mesh->mesh.triangles.size();
        b.shapes.push_back(std::move(shape));
        return;
    }
    case Method::hull: {
        // Bullet's own simplification (btShapeHull: the support points along 42 directions).
        auto full = hull_of(body_vertices(g, b.local_from_mesh), 0);
        btShapeHull simplified(full.get());
        simplified.buildHull(0);
        std::vector<btVector3> points(simplified.getVertexPointer(), simplified.getVertexPointer() + simplified.numVertices());
        b.points = points.size();
        b.shapes.push_back(hull_of(points, m.margin));
        return;
    }
    case Method::hacd: {
        const HacdParams params{m.clusters, m.max_vertices, m.concavity};
        const std::vector<std::vector<Vec3d>> hulls =
            hacd_decomposition(g.mesh->mesh, g.mesh->source_hash + "/scale=" + std::to_string(o.scale), params,
                               hooks.cache_dir, hooks.note);
        auto compound = std::make_unique<btCompoundShape>();
        for (const auto& hull : hulls) {
            std::vector<btVector3> points;
            for (const Vec3d& p : hull) points.push_back(to_bt(b.local_from_mesh(p)));
            b.points += points.size();
            auto child = hull_of(points, m.margin);
            compound->addChildShape(btTransform::getIdentity(), child.get());
            b.shapes.push_back(std::move(child));
        }
        b.parts = hulls.size();
        b.shapes.insert(b.shapes.begin(), std::move(compound));
        return;
    }
    }
}

double kinetic_energy(const btRigidBody& b) {
    const double m = b.getMass() > 0 ? 1.0 / double(b.getInvMass()) : 0;
    const Vec3d v = from_bt(b.getLinearVelocity());
    const Vec3d w_local = from_bt(b.getAngularVelocity() * b.getWorldTransform().getBasis());  // R^T w
    const btVector3& inv = b.getInvInertiaDiagLocal();
    double rot = 0;
    for (int i = 0; i < 3; ++i)
        if (inv[i] > 0) rot += w_local[i] * w_local[i] / double(inv[i]);
    return 0.5 * m * dot(v, v) + 0.5 * rot;
}

struct RunSpec {
    const MethodSpec* variant = nullptr;  // null: the objects' own methods
    int rotation = -1;
    double rate = 0, restitution = -1;
};

using Geometries = std::vector<std::shared_ptr<ObjectGeometry>>;

// The world pose of object o's mesh frame at the start: its placement (a plane is placed by its
// normal and offset alone); random rotations turn dynamic objects about their centre of mass.
Rigid start_pose(const Scene& scene, const SceneObject& o, const ObjectGeometry& g, int rotation) {
    Rigid world_from_mesh = o.shape == SceneObject::Shape::plane ? Rigid{} : rigid_of(o.quaternion, o.position);
    const Vec3d com = g.mass.center_of_mass;
    if (o.position_is_center_of_mass) world_from_mesh.t = o.position - world_from_mesh.rotate(com);
    if (o.mass > 0 && rotation >= 0) {
        const Vec3d com_world = world_from_mesh(com);
        const Rigid turn = rigid_of(random_rotation(scene.rotation_seed, rotation), {});
        world_from_mesh = turn * world_from_mesh;
        world_from_mesh.t = com_world - world_from_mesh.rotate(com);
    }
    return world_from_mesh;
}

// The scene's objects as bodies in `world`, each with the shape of its method (the run's variant
// where it applies); the run's method, label and sizes are those of the first object the variant
// applies to (without a variant, the first dynamic one). Returns the dynamic objects' indices.
std::vector<std::size_t> add_bodies(btDiscreteDynamicsWorld& world, const Scene& scene, const Geometries& geometry,
                                    const RunSpec& spec, const SimHooks& hooks, VpsCache& cache, std::vector<Body>& bodies,
                                    RunResult& result) {
    std::vector<std::size_t> dynamic;
    for (std::size_t i = 0; i < scene.objects.size(); ++i) {
        const SceneObject& o = scene.objects[i];
        Body& b = bodies[i];
        b.object = &o;
        b.geometry = geometry[i].get();
        const MethodSpec& m = spec.variant && applies_to(*spec.variant, o) ? *spec.variant : o.method;
        make_shape(b, m, hooks, cache);
        if (result.method.empty() && (spec.variant ? applies_to(*spec.variant, o) : o.mass > 0)) {
            result.method = method_name(m.method);
            result.label = spec.variant ? spec.variant->name : m.name;
            result.points = b.points;
            result.parts = b.parts;
        }
        const Rigid world_from_mesh = start_pose(scene, o, *geometry[i], spec.rotation);
        btVector3 inertia(0, 0, 0);
        if (o.mass > 0) {
            if (m.method == Method::vps || m.method == Method::native) {
                b.shapes[0]->calculateLocalInertia(btScalar(o.mass), inertia);
            } else {
                const MassProperties& mp = geometry[i]->mass;
                inertia = to_bt(mp.principal_moments * (o.mass / mp.volume));
            }
        }
        btRigidBody::btRigidBodyConstructionInfo info(btScalar(o.mass), nullptr, b.shapes[0].get(), inertia);
        info.m_restitution = btScalar(o.mass > 0 && spec.restitution >= 0 ? spec.restitution : o.restitution);
        info.m_friction = btScalar(o.friction);
        info.m_startWorldTransform = to_bt(world_from_mesh * b.local_from_mesh.inverse());
        b.body = std::make_unique<btRigidBody>(info);
        // Bullet's convex algorithms report points up to the contact breaking threshold apart (1.7 cm
        // for the ball) and the solver, by default, turns them into speculative constraints: a new one
        // reverses e times the approach speed less gap / dt, so a fast ball bounces off the gap with
        // little speed and later touches down as a resting contact, without restitution. Only
        // touching or penetrating points become constraints, as VPS reports only those.
        b.body->setContactProcessingThreshold(0);
        if (!scene.deactivation) b.body->setActivationState(DISABLE_DEACTIVATION);
        world.addRigidBody(b.body.get());
        if (o.mass > 0) {
            dynamic.push_back(i);
            result.dynamic_objects.push_back(o.name);
        }
    }
    if (result.label.empty()) result.label = "scene";
    return dynamic;
}

// What a run measures after each step: the contacts, motion, kinetic energy and exact
// penetrations of the dynamic objects (into the statics every step; between moving bodies every
// pile_every steps and at the last), and their drift across gravity (along z without gravity).
class StepMeter {
public:
    StepMeter(const Scene& scene, const Geometries& geometry, const std::vector<Body>& bodies, std::vector<std::size_t> dynamic)
        : scene_(scene), geometry_(geometry), bodies_(bodies), dynamic_(std::move(dynamic)),
          down_(length(scene.gravity) > 0 ? normalized(scene.gravity) : Vec3d{0, 0, -1}), world_of_(bodies.size()),
          aabb_min_(bodies.size()), aabb_max_(bodies.size()) {
        for (std::size_t i : dynamic_) start_.push_back(from_bt(bodies[i].body->getWorldTransform().getOrigin()));
        for (const Body& b : bodies) static_start_.push_back(from_bt(b.body->getWorldTransform().getOrigin()));
    }

    // The record of step `step` (1-based) after the world stepped, its narrow phase's time given;
    // the run's pile, drift and final figures updated.
    StepRecord measure(int step, btDispatcher& dispatcher, double collision_us, RunResult& result) {
        StepRecord rec;
        rec.collision_us = collision_us;
        for (int k = 0; k < dispatcher.getNumManifolds(); ++k)
            rec.contacts += dispatcher.getManifoldByIndexInternal(k)->getNumContacts();
        for (std::size_t s = 0; s < bodies_.size(); ++s) {
            world_of_[s] = from_bt(bodies_[s].body->getWorldTransform()) * bodies_[s].local_from_mesh;
            bodies_[s].body->getCollisionShape()->getAabb(bodies_[s].body->getWorldTransform(), aabb_min_[s], aabb_max_[s]);
        }
        // Between moving bodies every pile_every steps and at the last (each costs a BVH query per
        // vertex in the other's box: seconds a step for a pile of 64 bunnies); the statics every step.
        const bool pile_step = step % scene_.pile_every == 0 || step == scene_.steps;
        for (std::size_t d = 0; d < dynamic_.size(); ++d) {
            const std::size_t i = dynamic_[d];
            const Body& b = bodies_[i];
            ObjectStep os;
            for (int k = 0; k < dispatcher.getNumManifolds(); ++k) {
                const btPersistentManifold* pm = dispatcher.getManifoldByIndexInternal(k);
                if (pm->getBody0() == b.body.get() || pm->getBody1() == b.body.get()) os.contacts += pm->getNumContacts();
            }
            const btTransform& t = b.body->getWorldTransform();
            os.position = from_bt(t.getOrigin());
            os.velocity = from_bt(b.body->getLinearVelocity());
            os.kinetic = kinetic_energy(*b.body);
            const Rigid world_a = from_bt(t) * b.local_from_mesh;
            const btQuaternion q = to_bt(world_a).getRotation();
            os.quaternion = {double(q.w()), double(q.x()), double(q.y()), double(q.z())};
            for (std::size_t s = 0; s < bodies_.size(); ++s) {
                if (s == i) continue;
                const bool other_dynamic = scene_.objects[s].mass > 0;
                // Another dynamic object only where the boxes overlap (a static plane's box is all space).
                if (other_dynamic && !pile_step) continue;
                if (other_dynamic && !TestAabbAgainstAabb2(aabb_min_[i], aabb_max_[i], aabb_min_[s], aabb_max_[s])) continue;
                const double depth =
                    penetration_into(*b.object, *b.geometry, world_a, scene_.objects[s], *geometry_[s], world_of_[s]);
                if (!other_dynamic) os.penetration = std::max(os.penetration, depth);
                os.pile_penetration = std::max(os.pile_penetration, depth);
            }
            result.max_pile_penetration = std::max(result.max_pile_penetration, os.pile_penetration);
            Vec3d moved = os.position - start_[d];
            moved = moved - down_ * dot(moved, down_);
            result.max_drift = std::max(result.max_drift, length(moved));
            if (!result.drift_step && length(moved) > 0.01) result.drift_step = step;
            if (step == scene_.steps) {
                result.drift = std::max(result.drift, length(moved));
                result.final_pile_penetration = std::max(result.final_pile_penetration, os.pile_penetration);
            }
            rec.objects.push_back(os);
        }
        return rec;
    }

    // How far any static object's frame moved since the start.
    double static_moved() const {
        double moved = 0;
        for (std::size_t s = 0; s < bodies_.size(); ++s)
            if (scene_.objects[s].mass == 0)
                moved = std::max(moved, length(from_bt(bodies_[s].body->getWorldTransform().getOrigin()) - static_start_[s]));
        return moved;
    }

private:
    const Scene& scene_;
    const Geometries& geometry_;
    const std::vector<Body>& bodies_;
    std::vector<std::size_t> dynamic_;
    Vec3d down_;
    std::vector<Vec3d> start_, static_start_;
    std::vector<Rigid> world_of_;
    std::vector<btVector3> aabb_min_, aabb_max_;
};

// The summary of the first dynamic object over the steps and the scene's window.
void summarize_first_object(const Scene& scene, RunResult& result) {
    std::vector<double> times;
    double contacts = 0;
    result.lowest_height = std::numeric_limits<double>::infinity();
    for (int step = 1; step <= scene.steps; ++step) {
        const StepRecord& r = result.steps[static_cast<std::size_t>(step - 1)];
        const ObjectStep& o = r.objects.front();
        if (!result.first_contact_step && o.contacts > 0) result.first_contact_step = step;
        result.max_penetration = std::max(result.max_penetration, o.penetration);
        result.lowest_height = std::min(result.lowest_height, height(scene, o.position));
        if (step < scene.window_first || step > scene.window_last) continue;
        times.push_back(r.collision_us);
        contacts += o.contacts;
        result.mean_step_contacts += r.contacts;
        result.max_penetration_window = std::max(result.max_penetration_window, o.penetration);
    }
    for (double t : times) result.mean_collision_us += t / double(times.size());
    result.median_collision_us = median(times);
    result.mean_contacts = times.empty() ? 0 : contacts / double(times.size());
    result.mean_step_contacts = times.empty() ? 0 : result.mean_step_contacts / double(times.size());
    result.final_penetration = result.steps.back().objects.front().penetration;
    result.fell_through = height(scene, result.steps.back().objects.front().position) < 0;
}

// One run: a Bullet world of the scene's bodies stepped scene.steps times at spec.rate.
RunResult run_one(const Scene& scene, const Geometries& geometry, const RunSpec& spec, int count, const SimHooks& hooks,
                  VpsCache& cache) {
    btDefaultCollisionConfiguration config;
    TimedDispatcher dispatcher(&config);
    // VPS-VPS, VPS-plane, VPS-box with this variant's traversal; GImpact's algorithm for its shapes.
    const AlgorithmOptions traversal = spec.variant ? spec.variant->traversal : AlgorithmOptions{};
    const VpsAlgorithms algorithms(traversal);
    algorithms.register_on(dispatcher);
    btGImpactCollisionAlgorithm::registerAlgorithm(&dispatcher);
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
    world.setGravity(to_bt(scene.gravity));
    // Bullet's default solver settings, the same for every method (docs/sim.md, "Solver settings").

    RunResult result;
    result.rotation = spec.rotation;
    result.rate = spec.rate;
    result.restitution = spec.restitution;
    result.count = count;
    std::vector<Body> bodies(scene.objects.size());
    StepMeter meter(scene, geometry, bodies, add_bodies(world, scene, geometry, spec, hooks, cache, bodies, result));

    const double dt = 1.0 / spec.rate;
    result.steps.reserve(static_cast<std::size_t>(scene.steps));
    for (int step = 1; step <= scene.steps; ++step) {
        dispatcher.last_us = 0;
        world.stepSimulation(btScalar(dt), 0, btScalar(dt));
        result.steps.push_back(meter.measure(step, dispatcher, dispatcher.last_us, result));
    }
    result.static_moved = meter.static_moved();
    for (Body& b : bodies) world.removeRigidBody(b.body.get());
    summarize_first_object(scene, result);
    return result;
}

}  // namespace

std::vector<RunResult> run_scene(const Scene& scene, const SimHooks& hooks) {
    GeometryCache geometries;
    std::vector<Vec3d> coms;
    std::vector<double> diameters;
    for (const SceneObject& o : scene.objects) {
        const auto g = geometries.get(o, false);
        coms.push_back(g->mass.center_of_mass);
        diameters.push_back(bounding_diameter(o, *g));
    }
    std::vector<const MethodSpec*> variants;
    for (const MethodSpec& m : scene.methods) variants.push_back(&m);
    if (variants.empty()) variants.push_back(nullptr);
    std::vector<double> restitutions = scene.restitutions;
    if (restitutions.empty()) restitutions.push_back(-1);
    std::vector<RunResult> runs;
    VpsCache cache;
    for (int count : copy_counts(scene)) {
        const Scene s = count > 0 ? expand_copies(scene, count, coms, diameters) : scene;
        std::size_t dynamic = 0;
        for (const SceneObject& o : s.objects) dynamic += o.mass > 0;
        // Each object's geometry, shared by copies and instances; the exact distance of every static
        // mesh, and of every mesh when several bodies move (the pile's penetrations).
        std::vector<std::shared_ptr<ObjectGeometry>> geometry;
        for (const SceneObject& o : s.objects) geometry.push_back(geometries.get(o, o.mass == 0 || dynamic > 1));
    for (double rate : s.rates)
        for (double restitution : restitutions)
            for (const MethodSpec* variant : variants)
                for (int rot = s.rotations > 0 ? 0 : -1; rot < std::max(s.rotations, 0); ++rot) {
                    if (variant && variant->max_count > 0 && count > variant->max_count) continue;
                    if (hooks.note) {
                        std::ostringstream line;
                        line << "run " << (variant ? variant->name : std::string("scene"));
                        if (count > 0) line << " with " << count << " copies";
                        line << " at " << rate << " Hz";
                        if (restitution >= 0) line << ", restitution " << restitution;
                        if (rot >= 0) line << ", rotation " << rot + 1 << "/" << scene.rotations;
                        hooks.note(line.str());
                    }
                    runs.push_back(run_one(s, geometry, RunSpec{variant, rot, rate, restitution}, count, hooks, cache));
                }
    }
    return runs;
}

}  // namespace hp::bullet
