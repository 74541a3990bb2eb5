#pragma once
// lib/bullet — VPS as Bullet's narrow phase (Sagardia et al. 2014, sections 3 and 4), for Debian's
// unpatched Bullet: a collision shape that holds an object's haptic data, and collision
// algorithms registered on a btCollisionDispatcher at run time.
//
// In: the files the toolchain writes for one object (distance field of haptic-distance,
// point-sphere tree of haptic-spheretree, and optionally the mesh for its mass properties).
// The shape's local frame is the object's principal frame: origin at the centre of mass, axes
// the principal axes of inertia (what btRigidBody expects); local_from_mesh() places the mesh.
// Pairs handled once register_vps_algorithms() has run: VPS-VPS (the object with fewer points is
// the pointshell, the other's distance field the static side), VPS-btStaticPlaneShape and
// VPS-btBoxShape (signed distance of the plane or box computed exactly: no field). One manifold
// per pair: the deepest contact first, then the contacts that span the largest area (four kept);
// or one per cluster of a tree level, or the contacts found within a time budget (VpsAlgorithms).
// Other pairs with a VPS shape get no contacts. Threads: Bullet's, one algorithm per pair.
// Bullet's headers are included only by lib/bullet's sources; this header declares what it
// uses. Usage and figures: docs/bullet.md.
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "math/vec.hpp"

class btCollisionAlgorithm;
class btCollisionDispatcher;
class btCollisionShape;
class btTransform;

namespace hp::bullet {

// Mass properties for density 1 (multiply by mass / volume for a body's).
struct MassProperties {
    double volume = 0;
    Vec3d center_of_mass;                // mesh frame
    std::array<Vec3d, 3> inertia;        // rows of the inertia tensor about the centre of mass, mesh frame
    std::array<Vec3d, 3> principal_axes; // rows: the local x, y, z axes in the mesh frame (right-handed)
    Vec3d principal_moments;             // the inertia tensor's eigenvalues along those axes
    std::string source;                  // "mesh" (closed mesh, exact) or "voxels" (the distance field)
};

// Exact mass properties of a closed, outward-wound triangle mesh (divergence theorem over the
// tetrahedra of each triangle with the origin).
MassProperties mass_properties_of_mesh(std::span<const Vec3d> vertices,
                                       std::span<const std::array<std::uint32_t, 3>> triangles);

struct VpsFiles {
    std::filesystem::path field;  // distance field (.vdb) of haptic-distance: the object as a static side
    std::filesystem::path tree;   // point-sphere tree (.hps) of haptic-spheretree: as a pointshell
    // The mesh the files were made from: mass properties from it when it is watertight, else (or
    // when empty) from the distance field's voxels (the part with V > 0, each voxel weighted by
    // clamp(1/2 + V/s, 0, 1)).
    std::filesystem::path mesh;
};

// The haptic data of one object; share it between the shapes of many bodies.
struct VpsData;

// Loads and checks the files (the readers' checks, the tree covers its points, the mesh is the one
// the tree was made from). Throws hp::Error(bad_input) naming the file.
std::shared_ptr<const VpsData> load_vps_data(const VpsFiles& files);

const MassProperties& mass_properties(const VpsData& data);
std::size_t point_count(const VpsData& data);
double voxel_size(const VpsData& data);  // the distance field's

// A new collision shape over `data` (type CUSTOM_CONCAVE_SHAPE_TYPE, name "VPS"). Its
// calculateLocalInertia gives the principal moments for the body's mass.
std::unique_ptr<btCollisionShape> make_vps_shape(std::shared_ptr<const VpsData> data);
// The shape's data, or null when `shape` is not a VPS shape.
const VpsData* vps_data(const btCollisionShape& shape);

// The mesh frame in the shape's local frame: world-from-mesh = body transform * local_from_mesh.
btTransform local_from_mesh(const VpsData& data);

// How the algorithms traverse the pointshell's tree (the modes of haptic-query, docs/query.md).
enum class Traversal {
    full,           // every contact; one manifold: the deepest, then the points spanning the largest area
    segmented,      // one manifold per cluster of `level` (1 = root; beyond the tree: its deepest), holding
                    // that cluster's deepest contact
    time_critical,  // full, stopped after `budget_us` or `budget_tests` sphere tests: the contacts found so far
};
struct AlgorithmOptions {
    Traversal traversal = Traversal::full;
    int level = 1;                 // segmented
    double budget_us = 1000;       // time_critical: per pair and step
    std::size_t budget_tests = 0;  // time_critical: sphere tests per pair and step (0: no such limit)
    // full, against a plane, a box or another VPS object's field: restart from the last
    // descent's front while the pose has moved less than its clusters' clearance (the same
    // contacts as a descent from the root, and for a VPS pair as the pair query), pruned clusters
    // far out kept in a second list read only once the path may have brought them near; the
    // front is made anew from the root when it has grown past 1.5 times its size (plus 16), when
    // many of its clusters must be descended again, every 100 calls, when the box's size, the
    // other object's field or the pair's pointshell changes and after a pose that is not finite
    // (docs/bullet.md, "Temporal coherence"); a VPS pair whose front near the other object is
    // overrun runs the pair query for 16 calls. false: every step from the root (a VPS pair: the
    // pair query, VpsQuery).
    bool coherent = true;
};

// The VPS algorithms with given options. Throws hp::Error(usage) for a level below 1 or a budget
// that is not positive. register_on registers them for the pairs above (both orders, contact and
// closest points); the dispatcher keeps Bullet's own algorithms for every other pair. This object
// holds what the dispatcher calls: it must outlive the dispatchers it is registered on.
class VpsAlgorithms {
public:
    explicit VpsAlgorithms(const AlgorithmOptions& options = {});
    VpsAlgorithms(const VpsAlgorithms&) = delete;
    VpsAlgorithms& operator=(const VpsAlgorithms&) = delete;
    ~VpsAlgorithms();
    void register_on(btCollisionDispatcher& dispatcher) const;
    const AlgorithmOptions& options() const;

private:
    struct Funcs;
    std::unique_ptr<Funcs> funcs_;
};

// The full traversal's algorithms (default options), which live as long as the program.
void register_vps_algorithms(btCollisionDispatcher& dispatcher);
// Whether `algorithm` is one of the VPS algorithms.
bool is_vps_algorithm(const btCollisionAlgorithm* algorithm);

// What one of the VPS algorithms has done, for tests and diagnostics. The coherent full traversal
// (against a plane, a box or another VPS object's field): the fronts it made from the root, the steps that kept the last one,
// and the pruned clusters it tested again at a later pose. `boxes_apart`: the steps of a VPS pair
// (full traversal) that its box pre-test answered: no contact, nothing else read. `contacts`:
// every contact of its last step (before the manifold keeps up to four), in order: the
// pointshell's point in world coordinates and its depth (positive).
struct AlgorithmTrace {
    std::size_t fronts_made = 0, fronts_kept = 0, entries_tested = 0, boxes_apart = 0;
    std::vector<std::array<double, 4>> contacts;  // x, y, z, depth
};
// The trace of `algorithm`; empty when it is not one of the VPS algorithms.
AlgorithmTrace trace_of(const btCollisionAlgorithm* algorithm);

}  // namespace hp::bullet
