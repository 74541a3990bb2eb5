// haptic-sim's objects without Bullet's types (sim_objects.hpp), and the copies of a scene's objects
// (sim.hpp).
#include "bullet/sim_objects.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "core/error.hpp"

namespace hp::bullet {

namespace detail {

Rigid rigid_of(const std::array<double, 4>& q, Vec3d t) {
    Rigid r;
    r.r = rotation_rows(q);
    r.t = t;
    return r;
}

namespace {

// splitmix64: the rotations' random numbers, the same on every platform.
std::uint64_t splitmix(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

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

}  // namespace

// Rotation `index` of the seed: Shoemake's uniform random unit quaternion (w, x, y, z).
std::array<double, 4> random_rotation(std::uint64_t seed, int index) {
    std::uint64_t s = seed * 0x100000001b3ULL + static_cast<std::uint64_t>(index) + 1;
    auto u = [&] { return double(splitmix(s) >> 11) * 0x1.0p-53; };
    const double u1 = u(), u2 = u(), u3 = u();
    const double a = std::sqrt(1 - u1), b = std::sqrt(u1), tau = 2 * std::numbers::pi;
    return {b * std::cos(tau * u3), a * std::sin(tau * u2), a * std::cos(tau * u2), b * std::sin(tau * u3)};
}

std::shared_ptr<ObjectGeometry> GeometryCache::get(const SceneObject& o, bool distance) {
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

// The dynamic object's surface samples in its mesh frame: the mesh's vertices, a box's corners,
// or nothing for a sphere (analytic).
double penetration_into(const SceneObject& a, const ObjectGeometry& ga, const Rigid& world_a, const SceneObject& s,
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

}  // namespace detail

using detail::quaternion_product;
using detail::random_rotation;
using detail::rigid_of;

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

}  // namespace hp::bullet
