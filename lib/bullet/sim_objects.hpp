#pragma once
// lib/bullet — haptic-sim's objects without Bullet's types: each object's mesh and mass properties
// shared by the runs, the poses of copies, the exact penetration measured from the objects' own
// geometry, and the figures of a run. Internal to the module; sim.cpp runs the Bullet worlds.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bullet/data.hpp"
#include "bullet/sim.hpp"
#include "geometry/bvh.hpp"
#include "geometry/pseudo_normals.hpp"
#include "mesh/mesh.hpp"

namespace hp::bullet::detail {

// The rigid transform of a unit quaternion (w, x, y, z) and a translation.
Rigid rigid_of(const std::array<double, 4>& q, Vec3d t);
// Rotation `index` of the seed: Shoemake's uniform random unit quaternion (w, x, y, z), the same
// on every platform.
std::array<double, 4> random_rotation(std::uint64_t seed, int index);
std::array<double, 4> quaternion_product(const std::array<double, 4>& a, const std::array<double, 4>& b);

// What an object is, shared by every run: its mesh and mass properties (density 1, mesh frame).
struct ObjectGeometry {
    std::optional<LoadedMesh> mesh;
    MassProperties mass;
    std::unique_ptr<TriangleBvh> bvh;           // static meshes: the exact signed distance
    std::unique_ptr<PseudoNormals> normals;
    double outward = 1;                          // -1 when the mesh is wound inward
};

// Geometries by what they are made of: the copies of an object and the instances of a scene.json
// geometry load their mesh (and build its distance) once.
struct GeometryCache {
    std::vector<std::pair<std::string, std::shared_ptr<ObjectGeometry>>> loaded;
    // The geometry of `o`, with the exact signed distance of a mesh when `distance` is set.
    std::shared_ptr<ObjectGeometry> get(const SceneObject& o, bool distance);
};

// The diameter of a ball around the object (0 for a plane).
double bounding_diameter(const SceneObject& o, const ObjectGeometry& g);
// Whether a run variant replaces this object's method (the object itself or a copy of it).
bool applies_to(const MethodSpec& variant, const SceneObject& o);
// The principal frame of the mass properties: local = R (p - c).
Rigid principal_frame(const MassProperties& m);

// The exact penetration (m, >= 0) of dynamic object `a` at `world_a` into static object `s` at
// `world_s`: from the mesh's vertices, a box's corners, or a sphere's centre.
double penetration_into(const SceneObject& a, const ObjectGeometry& ga, const Rigid& world_a, const SceneObject& s,
                        const ObjectGeometry& gs, const Rigid& world_s);

double median(std::vector<double> v);
// Height of a point above the ground: the first static plane's or box top's up direction, else z.
double height(const Scene& scene, Vec3d p);

}  // namespace hp::bullet::detail
