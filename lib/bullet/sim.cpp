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
#include "core/error.hpp"
#include "geometry/bvh.hpp"
#include "geometry/pseudo_normals.hpp"
#include "mesh/mesh.hpp"

namespace hp::bullet {

namespace {

btVector3 to_bt(Vec3d v) { return btVector3(btScalar(v.x), btScalar(v.y), btScalar(v.z)); }
Vec3d from_bt(const btVector3& v) { return {double(v.x()), double(v.y()), double(v.z())}; }

Rigid rigid_of(const std::array<double, 4>& q, Vec3d t) {
    Rigid r;
    r.r = rotation_rows(q);
    r.t = t;
    return r;
}
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

// splitmix64: the rotations' random numbers, the same on every platform.
std::uint64_t splitmix(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
// Rotation `index` of the seed: Shoemake's uniform random unit quaternion (w, x, y, z).
std::array<double, 4> random_rotation(std::uint64_t seed, int index) {
    std::uint64_t s = seed * 0x100000001b3ULL + static_cast<std::uint64_t>(index) + 1;
    auto u = [&] { return double(splitmix(s) >> 11) * 0x1.0p-53; };
    const double u1 = u(), u2 = u(), u3 = u();
    const double a = std::sqrt(1 - u1), b = std::sqrt(u1), tau = 2 * std::numbers::pi;
    return {b * std::cos(tau * u3), a * std::sin(tau * u2), a * std::cos(tau * u2), b * std::sin(tau * u3)};
}

// What an object is, shared by every run: its mesh and mass properties (density 1, mesh frame).
struct ObjectGeometry {
    std::optional<LoadedMesh> mesh;
    MassProperties mass;
    std::unique_ptr<TriangleBvh> bvh;           // static meshes: the exact signed distance
    std::unique_ptr<PseudoNormals> normals;
    double outward = 1;                          // -1 when the mesh is wound inward
};

MassProperties analytic_mass(const SceneObject& o) {
    MassProperties m;
    m.source = "analytic";
    m.principal_axes = {Vec3d{1, 0, 0}, Vec3d{0, 1, 0}, Vec3d{0, 0, 1}};
    for (int i = 0; i < 3; ++i) m.inertia[i] = Vec3d{};
    if (o.shape == SceneObject::Shape::sphere) {
        m.volume = 4.0 / 3.0 * std::numbers::pi * o.radius * o.radius * o.radius;
        const double i = 0.4 * m.volume * o.radius * o.radius;
        m.principal_moments = {i, i, i};
    } else if (o.shape == SceneObject::Shape::box) {
        const Vec3d h = o.half_extents;
        m.volume = 8 * h.x * h.y * h.z;
        m.principal_moments = {m.volume / 3 * (h.y * h.y + h.z * h.z), m.volume / 3 * (h.x * h.x + h.z * h.z),
                               m.volume / 3 * (h.x * h.x + h.y * h.y)};
    }
    for (int i = 0; i < 3; ++i) m.inertia[i][i] = m.principal_moments[i];
    return m;
}

// The exact signed distance of a mesh object: its BVH and pseudo-normals (a static mesh, or any
// mesh of a scene with several dynamic objects: the pile's penetrations).
void add_distance(ObjectGeometry& g) {
    if (g.bvh || !g.mesh) return;
    // Signed volume of the triangles as wound: its sign says which way the pseudo-normals point.
    double v = 0;
    const auto& m = g.mesh->mesh;
    for (const auto& t : m.triangles) v += dot(m.vertices[t[0]], cross(m.vertices[t[1]], m.vertices[t[2]]));
    g.outward = v >= 0 ? 1 : -1;
    g.bvh = std::make_unique<TriangleBvh>(m);
    g.normals = std::make_unique<PseudoNormals>(m);
}

std::shared_ptr<ObjectGeometry> make_geometry(const SceneObject& o) {
    auto g = std::make_shared<ObjectGeometry>();
    if (!o.mesh.empty()) {
        MeshLoadOptions options;
        options.scale = o.scale;
        options.units = o.units;
        options.part = o.part;
        g->mesh = load_mesh(o.mesh, options);
        if (g->mesh->mesh.triangles.empty()) fail_input(o.mesh.string(), "the mesh has no triangles");
    }
    if (o.shape != SceneObject::Shape::mesh) {
        g->mass = analytic_mass(o);
    } else if (g->mesh) {
        g->mass = mass_properties_of_mesh(g->mesh->mesh.vertices, g->mesh->mesh.triangles);
        if (!(g->mass.volume > 0)) fail_input(o.mesh.string(), "the mesh encloses no volume: not a solid for Bullet");
    }
    return g;
}

// Geometries by what they are made of: the copies of an object and the instances of a scene.json
// geometry load their mesh (and build its distance) once.
struct GeometryCache {
    std::vector<std::pair<std::string, std::shared_ptr<ObjectGeometry>>> loaded;
    std::shared_ptr<ObjectGeometry> get(const SceneObject& o, bool distance) {
        std::shared_ptr<ObjectGeometry> g;
        if (o.shape != SceneObject::Shape::mesh || o.mesh.empty()) {
            g = make_geometry(o);  // analytic or nothing to load
        } else {
            std::ostringstream key;
            key.precision(17);
            key << o.mesh.string() << '\n' << o.scale << '\n' << o.units << '\n' << o.part;
            for (const auto& [k, loaded_g] : loaded)
                if (k == key.str()) g = loaded_g;
            if (!g) {
                g = make_geometry(o);
                loaded.emplace_back(key.str(), g);
            }
        }
        if (distance && o.shape == SceneObject::Shape::mesh) add_distance(*g);
        return g;
    }
};

double bounding_diameter(const SceneObject& o, const ObjectGeometry& g) {
    switch (o.shape) {
    case SceneObject::Shape::sphere: return 2 * o.radius;
    case SceneObject::Shape::box: return 2 * length(o.half_extents);
    case SceneObject::Shape::plane: return 0;
    case SceneObject::Shape::mesh: break;
    }
    if (!g.mesh) return 0;
    Aabb box;
    for (const Vec3d& v : g.mesh->mesh.vertices) box.extend(v);
    return box.diagonal();
}

std::array<double, 4> quaternion_product(const std::array<double, 4>& a, const std::array<double, 4>& b) {
    return {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3], a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1], a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
}

// Whether a run variant replaces this object's method (the object itself or a copy of it).
bool applies_to(const MethodSpec& variant, const SceneObject& o) {
    return variant.object == o.name || (!o.group.empty() && variant.object == o.group);
}

// The principal frame of the mass properties: local = R (p - c).
Rigid principal_frame(const MassProperties& m) {
    Rigid f;
    f.r = m.principal_axes;
    f.t = -f.rotate(m.center_of_mass);
    return f;
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

// The exact penetration of a dynamic object into a static one (m, >= 0).
struct Penetration {
    // The dynamic object's surface samples in its mesh frame: the mesh's vertices, a box's corners,
    // or nothing for a sphere (analytic).
    static double into(const SceneObject& a, const ObjectGeometry& ga, const Rigid& world_a, const SceneObject& s,
                       const ObjectGeometry& gs, const Rigid& world_s) {
        // Depth of a world point in the static object (> 0 inside).
        const Rigid s_from_world = world_s.inverse();
        double deepest = 0;
        if (a.shape == SceneObject::Shape::sphere) {
            const Vec3d c = world_a.t;  // the sphere's centre
            switch (s.shape) {
            case SceneObject::Shape::plane: return std::max(0.0, a.radius - (dot(s.normal, c) - s.offset));
            case SceneObject::Shape::sphere: return std::max(0.0, a.radius + s.radius - length(c - world_s.t));
            case SceneObject::Shape::box: {
                const Vec3d q = s_from_world(c);
                const Vec3d h = s.half_extents;
                const Vec3d d{std::abs(q.x) - h.x, std::abs(q.y) - h.y, std::abs(q.z) - h.z};
                const double outside = length(Vec3d{std::max(d.x, 0.0), std::max(d.y, 0.0), std::max(d.z, 0.0)});
                const double inside = std::min(0.0, std::max({d.x, d.y, d.z}));
                return std::max(0.0, a.radius - (outside + inside));
            }
            case SceneObject::Shape::mesh: break;  // the mesh's vertices below
            }
        }
        std::vector<Vec3d> corners;
        const std::vector<Vec3d>* samples = nullptr;
        if (ga.mesh) {
            samples = &ga.mesh->mesh.vertices;
        } else if (a.shape == SceneObject::Shape::box) {
            const Vec3d h = a.half_extents;
            for (int k = 0; k < 8; ++k) corners.push_back({k & 1 ? h.x : -h.x, k & 2 ? h.y : -h.y, k & 4 ? h.z : -h.z});
            samples = &corners;
        } else {
            return 0;  // an analytic sphere against a mesh: not measured
        }
        const Rigid s_from_a = s_from_world * world_a;
        for (const Vec3d& v : *samples) {
            const Vec3d q = s_from_a(v);
            double depth = 0;
            switch (s.shape) {
            case SceneObject::Shape::plane: depth = s.offset - dot(s.normal, world_a(v)); break;
            case SceneObject::Shape::sphere: depth = s.radius - length(q); break;
            case SceneObject::Shape::box: {
                const Vec3d h = s.half_extents;
                depth = std::min({h.x - std::abs(q.x), h.y - std::abs(q.y), h.z - std::abs(q.z)});
                break;
            }
            case SceneObject::Shape::mesh: {
                if (!gs.bvh || box_distance2(gs.bvh->nodes()[0].box, q) > 0) continue;
                const MeshHit hit = gs.bvh->closest(q);
                if (hit.triangle == UINT32_MAX) continue;
                const Vec3d n = gs.normals->at(hit.triangle, hit.closest) * gs.outward;
                if (dot(q - hit.closest.point, n) < 0) depth = std::sqrt(hit.closest.distance2);
                break;
            }
            }
            deepest = std::max(deepest, depth);
        }
        return deepest;
    }
};

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

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Height of a point above the ground: the first static plane's or box top's up direction, else z.
double height(const Scene& scene, Vec3d p) {
    for (const SceneObject& o : scene.objects) {
        if (o.mass > 0) continue;
        if (o.shape == SceneObject::Shape::plane) return dot(o.normal, p) - o.offset;
        if (o.shape == SceneObject::Shape::box) {
            const Rigid w = rigid_of(o.quaternion, o.position);
            const Vec3d up{w.r[0].z, w.r[1].z, w.r[2].z};  // the box's local z in the world
            return dot(up, p - w.t) - o.half_extents.z;
        }
    }
    return p.z;
}

struct RunSpec {
    const MethodSpec* variant = nullptr;  // null: the objects' own methods
    int rotation = -1;
    double rate = 0, restitution = -1;
};

RunResult run_one(const Scene& scene, const std::vector<std::shared_ptr<ObjectGeometry>>& geometry, const RunSpec& spec,
                  int count, const SimHooks& hooks, VpsCache& cache) {
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
        // World pose of the mesh frame; random rotations turn dynamic objects about their centre of mass.
        // A plane is placed by its normal and offset alone.
        Rigid world_from_mesh = o.shape == SceneObject::Shape::plane ? Rigid{} : rigid_of(o.quaternion, o.position);
        const Vec3d com = geometry[i]->mass.center_of_mass;
        if (o.position_is_center_of_mass) world_from_mesh.t = o.position - world_from_mesh.rotate(com);
        if (o.mass > 0 && spec.rotation >= 0) {
            const Vec3d com_world = world_from_mesh(com);
            const Rigid turn = rigid_of(random_rotation(scene.rotation_seed, spec.rotation), {});
            world_from_mesh = turn * world_from_mesh;
            world_from_mesh.t = com_world - world_from_mesh.rotate(com);
        }
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

    const double dt = 1.0 / spec.rate;
    result.steps.reserve(static_cast<std::size_t>(scene.steps));
    // The drift is measured across gravity (along z without gravity).
    const Vec3d down = length(scene.gravity) > 0 ? normalized(scene.gravity) : Vec3d{0, 0, -1};
    std::vector<Vec3d> start;
    for (std::size_t i : dynamic) start.push_back(from_bt(bodies[i].body->getWorldTransform().getOrigin()));
    std::vector<Vec3d> static_start;
    for (const Body& b : bodies) static_start.push_back(from_bt(b.body->getWorldTransform().getOrigin()));
    std::vector<Rigid> world_of(bodies.size());
    std::vector<btVector3> aabb_min(bodies.size()), aabb_max(bodies.size());
    for (int step = 1; step <= scene.steps; ++step) {
        dispatcher.last_us = 0;
        world.stepSimulation(btScalar(dt), 0, btScalar(dt));
        StepRecord rec;
        rec.collision_us = dispatcher.last_us;
        for (int k = 0; k < dispatcher.getNumManifolds(); ++k)
            rec.contacts += dispatcher.getManifoldByIndexInternal(k)->getNumContacts();
        for (std::size_t s = 0; s < bodies.size(); ++s) {
            world_of[s] = from_bt(bodies[s].body->getWorldTransform()) * bodies[s].local_from_mesh;
            bodies[s].body->getCollisionShape()->getAabb(bodies[s].body->getWorldTransform(), aabb_min[s], aabb_max[s]);
        }
        // Between moving bodies every pile_every steps and at the last (each costs a BVH query per
        // vertex in the other's box: seconds a step for a pile of 64 bunnies); the statics every step.
        const bool pile_step = step % scene.pile_every == 0 || step == scene.steps;
        for (std::size_t d = 0; d < dynamic.size(); ++d) {
            const std::size_t i = dynamic[d];
            const Body& b = bodies[i];
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
            for (std::size_t s = 0; s < bodies.size(); ++s) {
                if (s == i) continue;
                const bool other_dynamic = scene.objects[s].mass > 0;
                // Another dynamic object only where the boxes overlap (a static plane's box is all space).
                if (other_dynamic && !pile_step) continue;
                if (other_dynamic && !TestAabbAgainstAabb2(aabb_min[i], aabb_max[i], aabb_min[s], aabb_max[s])) continue;
                const double depth =
                    Penetration::into(*b.object, *b.geometry, world_a, scene.objects[s], *geometry[s], world_of[s]);
                if (!other_dynamic) os.penetration = std::max(os.penetration, depth);
                os.pile_penetration = std::max(os.pile_penetration, depth);
            }
            result.max_pile_penetration = std::max(result.max_pile_penetration, os.pile_penetration);
            Vec3d moved = os.position - start[d];
            moved = moved - down * dot(moved, down);
            result.max_drift = std::max(result.max_drift, length(moved));
            if (!result.drift_step && length(moved) > 0.01) result.drift_step = step;
            if (step == scene.steps) {
                result.drift = std::max(result.drift, length(moved));
                result.final_pile_penetration = std::max(result.final_pile_penetration, os.pile_penetration);
            }
            rec.objects.push_back(os);
        }
        result.steps.push_back(std::move(rec));
    }
    for (std::size_t s = 0; s < bodies.size(); ++s)
        if (scene.objects[s].mass == 0)
            result.static_moved = std::max(
                result.static_moved, length(from_bt(bodies[s].body->getWorldTransform().getOrigin()) - static_start[s]));
    for (Body& b : bodies) world.removeRigidBody(b.body.get());

    // The summary of the first dynamic object.
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
    return result;
}

}  // namespace

std::vector<int> copy_counts(const Scene& scene) {
    for (const SceneObject& o : scene.objects)
        if (o.copies) return o.copies->counts;
    return {0};
}

Scene expand_copies(const Scene& scene, int count, const std::vector<Vec3d>& center_of_mass,
                    const std::vector<double>& bounding_diameter) {
    Scene out = scene;
    out.objects.clear();
    for (std::size_t k = 0; k < scene.objects.size(); ++k) {
        const SceneObject& o = scene.objects[k];
        if (!o.copies) {
            out.objects.push_back(o);
            continue;
        }
        const Copies& c = *o.copies;
        const double spacing = c.spacing > 0 ? c.spacing : bounding_diameter[k] > 0 ? 1.2 * bounding_diameter[k] : 1;
        // Where the original's centre of mass is: the copies are laid out from it.
        const Rigid placed = rigid_of(o.quaternion, o.position);
        const Vec3d com = o.position_is_center_of_mass ? o.position : placed(center_of_mass[k]);
        int side = 1;
        while (side * side * side < count) ++side;
        for (int i = 0; i < count; ++i) {
            SceneObject copy = o;
            copy.copies.reset();
            copy.name = o.name + "#" + std::to_string(i + 1);
            copy.group = o.name;
            copy.method.object = copy.name;
            Vec3d offset{0, 0, spacing * i};
            if (c.layout == Copies::Layout::grid) {
                const double mid = 0.5 * (side - 1);
                offset = {spacing * (i % side - mid), spacing * ((i / side) % side - mid), spacing * (i / (side * side))};
            }
            copy.position = com + offset;
            copy.position_is_center_of_mass = true;
            if (c.rotate) copy.quaternion = quaternion_product(random_rotation(c.seed, i), o.quaternion);
            out.objects.push_back(std::move(copy));
        }
    }
    return out;
}

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

std::vector<MethodSummary> summarize(const std::vector<RunResult>& runs) {
    std::vector<MethodSummary> out;
    std::vector<std::vector<const RunResult*>> groups;
    for (const RunResult& r : runs) {
        std::size_t g = 0;
        while (g < out.size() && !(out[g].label == r.label && out[g].rate == r.rate && out[g].restitution == r.restitution &&
                                   out[g].count == r.count))
            ++g;
        if (g == out.size()) {
            MethodSummary s;
            s.label = r.label;
            s.method = r.method;
            s.rate = r.rate;
            s.restitution = r.restitution;
            s.count = r.count;
            s.points = r.points;
            s.parts = r.parts;
            out.push_back(s);
            groups.emplace_back();
        }
        groups[g].push_back(&r);
    }
    for (std::size_t g = 0; g < out.size(); ++g) {
        MethodSummary& s = out[g];
        std::vector<double> means, maxes, finals, pile_finals, drifts, drift_steps;
        for (const RunResult* r : groups[g]) {
            drift_steps.push_back(r->drift_step > 0 ? r->drift_step : std::numeric_limits<double>::infinity());
            pile_finals.push_back(r->final_pile_penetration);
            drifts.push_back(r->drift);
            s.max_pile_penetration = std::max(s.max_pile_penetration, r->max_pile_penetration);
            s.max_drift = std::max(s.max_drift, r->max_drift);
            means.push_back(r->mean_collision_us);
            maxes.push_back(r->max_penetration);
            finals.push_back(r->final_penetration);
            s.mean_contacts += r->mean_contacts / double(groups[g].size());
            s.mean_step_contacts += r->mean_step_contacts / double(groups[g].size());
            s.max_penetration = std::max(s.max_penetration, r->max_penetration);
            s.max_penetration_window = std::max(s.max_penetration_window, r->max_penetration_window);
            s.fell_through += r->fell_through;
        }
        s.runs = groups[g].size();
        for (double m : means) s.mean_collision_us += m / double(means.size());
        for (const RunResult* r : groups[g]) s.median_collision_us += r->median_collision_us / double(groups[g].size());
        s.median_max_penetration = median(maxes);
        s.final_penetration = median(finals);
        s.final_pile_penetration = median(pile_finals);
        s.drift = median(drifts);
        const double ds = median(drift_steps);
        s.drift_step = std::isfinite(ds) ? int(ds) : 0;
    }
    return out;
}

nlohmann::json report_json(const Scene& scene, const std::vector<RunResult>& runs, bool steps) {
    using nlohmann::json;
    auto vec = [](Vec3d v) { return json::array({v.x, v.y, v.z}); };
    json j;
    j["scene"] = {{"name", scene.name}, {"file", scene.file.string()}, {"kind", scene.source_kind}, {"steps", scene.steps},
                  {"window", json::array({scene.window_first, scene.window_last})}, {"rotations", scene.rotations},
                  {"gravity", vec(scene.gravity)}};
    json summary = json::array();
    for (const MethodSummary& s : summarize(runs)) {
        json e = {{"method", s.label}, {"kind", s.method}, {"rate", s.rate}, {"runs", s.runs},
                  {"points", s.points}, {"parts", s.parts},
                  {"mean_collision_us", s.mean_collision_us}, {"median_collision_us", s.median_collision_us},
                  {"mean_contacts", s.mean_contacts}, {"mean_step_contacts", s.mean_step_contacts},
                  {"max_penetration", s.max_penetration},
                  {"median_max_penetration", s.median_max_penetration},
                  {"max_penetration_window", s.max_penetration_window},
                  {"median_final_penetration", s.final_penetration}, {"fell_through", s.fell_through}};
        if (s.restitution >= 0) e["restitution"] = s.restitution;
        if (s.count > 0) {
            e["count"] = s.count;
            e["max_pile_penetration"] = s.max_pile_penetration;
            e["median_final_pile_penetration"] = s.final_pile_penetration;
            e["median_drift"] = s.drift;
            e["max_drift"] = s.max_drift;
            e["median_drift_step"] = s.drift_step;
        }
        summary.push_back(e);
    }
    j["summary"] = summary;
    json rs = json::array();
    for (const RunResult& r : runs) {
        json e = {{"method", r.label}, {"kind", r.method}, {"rate", r.rate}, {"points", r.points}, {"parts", r.parts},
                  {"objects", r.dynamic_objects}, {"mean_collision_us", r.mean_collision_us},
                  {"median_collision_us", r.median_collision_us}, {"mean_contacts", r.mean_contacts},
                  {"mean_step_contacts", r.mean_step_contacts},
                  {"max_penetration", r.max_penetration}, {"max_penetration_window", r.max_penetration_window},
                  {"final_penetration", r.final_penetration}, {"lowest_height", r.lowest_height},
                  {"first_contact_step", r.first_contact_step}, {"fell_through", r.fell_through},
                  {"static_moved", r.static_moved}};
        if (r.rotation >= 0) e["rotation"] = r.rotation;
        if (r.count > 0) {
            e["count"] = r.count;
            e["max_pile_penetration"] = r.max_pile_penetration;
            e["final_pile_penetration"] = r.final_pile_penetration;
            e["drift"] = r.drift;
            e["max_drift"] = r.max_drift;
            e["drift_step"] = r.drift_step;
        }
        if (r.restitution >= 0) e["restitution"] = r.restitution;
        if (steps) {
            json st = json::array();
            for (const StepRecord& s : r.steps) {
                json objs = json::array();
                for (const ObjectStep& o : s.objects)
                    objs.push_back({{"contacts", o.contacts}, {"position", vec(o.position)}, {"velocity", vec(o.velocity)},
                                    {"quaternion", json::array({o.quaternion[0], o.quaternion[1], o.quaternion[2], o.quaternion[3]})},
                                    {"kinetic", o.kinetic}, {"penetration", o.penetration},
                                    {"pile_penetration", o.pile_penetration}});
                st.push_back({{"collision_us", s.collision_us}, {"contacts", s.contacts}, {"objects", objs}});
            }
            e["steps"] = st;
        }
        rs.push_back(e);
    }
    j["runs"] = rs;
    return j;
}

std::string report_csv(const std::vector<RunResult>& runs) {
    std::ostringstream out;
    out.precision(9);
    out << "method,kind,rotation,rate,restitution,step,time_s,object,collision_us,contacts,x,y,z,vx,vy,vz,qw,qx,qy,qz,kinetic,penetration\n";
    for (const RunResult& r : runs)
        for (std::size_t k = 0; k < r.steps.size(); ++k)
            for (std::size_t i = 0; i < r.steps[k].objects.size(); ++i) {
                const ObjectStep& o = r.steps[k].objects[i];
                out << r.label << ',' << r.method << ',' << r.rotation << ',' << r.rate << ','
                    << (r.restitution >= 0 ? std::to_string(r.restitution) : std::string()) << ',' << k + 1 << ','
                    << double(k + 1) / r.rate << ',' << r.dynamic_objects[i] << ',' << r.steps[k].collision_us << ','
                    << o.contacts << ',' << o.position.x << ',' << o.position.y << ',' << o.position.z << ','
                    << o.velocity.x << ',' << o.velocity.y << ',' << o.velocity.z << ',' << o.quaternion[0] << ','
                    << o.quaternion[1] << ',' << o.quaternion[2] << ',' << o.quaternion[3] << ',' << o.kinetic << ','
                    << o.penetration << '\n';
            }
    return out.str();
}

}  // namespace hp::bullet
