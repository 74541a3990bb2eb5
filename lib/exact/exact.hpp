#pragma once
// lib/exact — continuous collision detection between a moving and a static triangle mesh, after
// van Waveren, "Robust Continuous Collision Detection Between Arbitrary Polyhedra Using
// Trajectory Parameterization of Polyhedral Features" (docs/exact.md).
//
// For a motion of the moving mesh over one step — a translation, or a rotation about an axis —
// translate()/rotate() return the fraction of the step at which the meshes first touch:
//  - vertex-face (a moving vertex hits a static triangle), face-vertex (a static vertex hits a
//    moving triangle) and edge-edge (two edges' supporting lines become coplanar with the
//    crossing point inside both edges);
//  - translation: the plane (vertex-face) or the Plücker permuted inner product (edge-edge) is
//    linear in the fraction; whether the hit lies between the triangle's edges or between the
//    edges' end points is the sign of permuted inner products of Plücker coordinates (the
//    vertex's trail against the edges; shared edges give exactly opposite values, so a trail
//    through a shared edge is never lost between its two triangles);
//  - rotation by angle a: A + B cos a + C sin a = 0, a quadratic in r = tan(a/2).
// The expel zone of thickness eps (paper section 3): safe_fraction is the fraction up to which
// the motion may go so that no moving vertex ends closer than eps in front of a static triangle
// (and symmetrically), and no edge pair closer than eps: features already in the zone may only
// move away. It never exceeds fraction.
// Internal edges (shared by two triangles that face each other, or lie in one plane) are never
// hit first (section 4): found once per mesh (ExactMesh), skipped as edges, and so are the
// vertices all of whose edges are internal.
// Broad phase: an AABB tree per mesh (built once); a moving node's box is swept over the step
// (the translation's two ends; for a rotation, a ball around the chord of its centre's arc).
// Thread-safe: the queries only read the meshes.
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "math/vec.hpp"
#include "mesh/mesh.hpp"

namespace hp::exact {

// A rigid placement: world = R body + t (rows of R).
struct RigidPose {
    std::array<Vec3d, 3> rows{Vec3d{1, 0, 0}, Vec3d{0, 1, 0}, Vec3d{0, 0, 1}};
    Vec3d t;
    Vec3d apply(const Vec3d& p) const { return Vec3d{dot(rows[0], p), dot(rows[1], p), dot(rows[2], p)} + t; }
    Vec3d rotate(const Vec3d& p) const { return {dot(rows[0], p), dot(rows[1], p), dot(rows[2], p)}; }
};
// From a quaternion (w, x, y, z), normalized here, and a position.
RigidPose pose_from_quaternion(const std::array<double, 4>& q, const Vec3d& position);

// Rotates p by angle `angle` (right-handed) about the line through `origin` along unit `axis`.
Vec3d rotate_about(const Vec3d& p, const Vec3d& origin, const Vec3d& axis, double angle);

// Edge flags of a mesh (section 4), computed once.
struct EdgeStats {
    std::size_t edges = 0;           // distinct edges
    std::size_t internal = 0;        // concave + flat manifold edges (never hit first)
    std::size_t concave = 0;         // the two triangles face each other
    std::size_t flat = 0;            // the two triangles lie in one plane (within 1e-9 relative)
    std::size_t internal_vertices = 0;  // vertices whose edges are all internal
    double internal_share() const { return edges ? static_cast<double>(internal) / static_cast<double>(edges) : 0.0; }
};
EdgeStats edge_stats(const TriMesh& mesh);

class ExactMesh {
public:
    struct Node {
        Aabb box;
        std::uint32_t first = 0, count = 0;  // leaf: triangles [first, first + count) of order; inner: left child
        bool leaf() const { return count > 0; }
    };
    struct Edge {
        std::uint32_t v0 = 0, v1 = 0;  // v0 < v1
        bool internal = false;
    };
    // Precondition: indices in range, finite coordinates. Copies the mesh.
    explicit ExactMesh(const TriMesh& mesh);

    const TriMesh& mesh() const { return mesh_; }
    const std::vector<Edge>& edges() const { return edges_; }
    const EdgeStats& stats() const { return stats_; }
    // Edge index of triangle t's edge k (corners k, k+1).
    std::uint32_t triangle_edge(std::uint32_t t, int k) const { return tri_edges_[t][static_cast<std::size_t>(k)]; }
    bool vertex_internal(std::uint32_t v) const { return vertex_internal_[v] != 0; }
    const std::vector<Node>& nodes() const { return nodes_; }
    const std::vector<std::uint32_t>& order() const { return order_; }
    Vec3d center() const { return center_; }  // centre of the bounding box (the rotation centre of split motions)
    Vec3d normal(std::uint32_t t) const { return normals_[t]; }  // unit, body frame
    // Bits 0-2: the triangle is the one its corner k is tested with; bits 3-5: the same for its
    // edge k (each feature is tested once per pair of meshes).
    std::uint8_t owned(std::uint32_t t) const { return owned_[t]; }

private:
    TriMesh mesh_;
    std::vector<Edge> edges_;
    std::vector<std::array<std::uint32_t, 3>> tri_edges_;
    std::vector<std::uint8_t> vertex_internal_;
    std::vector<Vec3d> normals_;
    std::vector<std::uint8_t> owned_;
    std::vector<Node> nodes_;
    std::vector<std::uint32_t> order_;
    EdgeStats stats_;
    Vec3d center_;
};

enum class Feature : std::uint8_t { none, vertex_face, face_vertex, edge_edge };
const char* feature_name(Feature f);

struct Contact {
    bool hit = false;
    double fraction = 1;       // first touch (exact), in [0, 1]; 1 when !hit
    double safe_fraction = 1;  // with the expel zone: <= fraction
    Feature feature = Feature::none;
    // vertex_face: moving vertex, static triangle; face_vertex: moving triangle, static vertex;
    // edge_edge: moving edge, static edge (indices into ExactMesh::edges()).
    std::uint32_t moving_index = UINT32_MAX, static_index = UINT32_MAX;
    std::size_t pairs_tested = 0;  // triangle pairs reaching the narrow phase
};

struct Options {
    double eps = 0;             // expel zone thickness (world units); 0: safe_fraction == fraction
    bool skip_internal = true;  // skip internal edges and vertices (section 4)
};

// The moving mesh at `start` translates by `d` (world) over the step.
Contact translate(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& start, const Vec3d& d,
                  const Options& options = {});
// The moving mesh at `start` rotates by `angle` (radians, |angle| <= pi) about the world line
// through `origin` along unit `axis`.
Contact rotate(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& start, const Vec3d& origin,
               const Vec3d& axis, double angle, const Options& options = {});

// A general step from `from` to `to`, split as the paper does: first the translation of the moving
// mesh's centre, then the rotation about that centre (docs/exact.md: what the split costs).
// `fraction` runs over the split path: the translation covers [0, 1/2] and the rotation [1/2, 1]
// when both are non-zero, else the one that is covers [0, 1].
struct StepContact : Contact {
    bool in_rotation = false;  // the contact lies in the rotation part
};
StepContact move(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& from, const RigidPose& to,
                 const Options& options = {});
// The pose of the moving mesh at fraction s of that split path.
RigidPose split_path_pose(const ExactMesh& moving, const RigidPose& from, const RigidPose& to, double s);

// Static test: whether the meshes share a point with the moving one at `pose` (exact predicates).
bool meshes_intersect(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& pose);

// The distance between the meshes with the moving one at `pose` (0 when they intersect), searched
// up to `max_distance` (returned when the meshes are farther apart).
double mesh_distance(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& pose, double max_distance);

// The first s in [0, 1] at which meshes_intersect(pose_at(s)) holds, by sampling `samples`
// poses and bisecting the first interval that ends in contact down to `tolerance`; 2 when none
// is found. The reference for the exact times (tests, make bench).
template <class PoseAt>
double bisect_first_contact(const ExactMesh& fixed, const ExactMesh& moving, PoseAt pose_at, int samples,
                            double tolerance) {
    double prev = 0;
    if (meshes_intersect(fixed, moving, pose_at(0.0))) return 0;
    for (int i = 1; i <= samples; ++i) {
        const double s = static_cast<double>(i) / samples;
        if (meshes_intersect(fixed, moving, pose_at(s))) {
            double lo = prev, hi = s;
            while (hi - lo > tolerance) {
                const double mid = 0.5 * (lo + hi);
                (meshes_intersect(fixed, moving, pose_at(mid)) ? hi : lo) = mid;
            }
            return hi;
        }
        prev = s;
    }
    return 2;
}

}  // namespace hp::exact
