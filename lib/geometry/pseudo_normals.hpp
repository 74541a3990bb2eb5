#pragma once
// Angle-weighted pseudo-normals (Bærentzen & Aanæs 2005, "Signed distance computation using the
// angle weighted pseudonormal"): unit face normals; an edge's normal is the normalized sum of the
// unit normals of the faces that share it (pi-weighted, as the paper); a vertex's normal is the
// normalized sum of the unit normals of its faces, each weighted by the face's angle at the vertex.
//
// Use: for a closed, consistently outward-wound (manifold) mesh, p is outside exactly when
// dot(p - q, n) > 0, where q is a closest point of the mesh to p and n the pseudo-normal of the
// feature (face, edge, vertex) q lies on. Inward-wound meshes: negate. On open or non-manifold
// meshes the normals are still defined (boundary edges: the one face's normal; edges of 3+ faces:
// the sum of all) but the sign test is only a local guess.
// Degenerate (zero-area) faces have a zero normal and contribute nothing. A normal that sums to
// zero (e.g. an edge of two opposite faces) is returned as the zero vector.
// Cost: O(triangles log triangles) to build (edges matched by sorting, deterministic); O(1) lookups.
#include <cstdint>
#include <vector>

#include "geometry/closest_point.hpp"
#include "mesh/mesh.hpp"

namespace hp {

class PseudoNormals {
public:
    // The mesh must outlive this object.
    explicit PseudoNormals(const TriMesh& mesh);
    // The normal of the feature `cp` found on triangle `triangle` (unit length, or zero).
    Vec3d at(std::uint32_t triangle, const ClosestPoint& cp) const;
    const Vec3d& face(std::uint32_t t) const { return face_[t]; }
    const Vec3d& vertex(std::uint32_t v) const { return vertex_[v]; }
    // Edge i of triangle t, from corner i to corner i+1 mod 3.
    const Vec3d& edge(std::uint32_t t, int i) const { return edge_[3 * static_cast<std::size_t>(t) + static_cast<std::size_t>(i)]; }

private:
    const TriMesh& mesh_;
    std::vector<Vec3d> face_, vertex_, edge_;  // edge_: 3 per triangle
};

}  // namespace hp
