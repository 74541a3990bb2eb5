#pragma once
// Bounding-volume hierarchy over the triangles of a mesh, for exact closest-point queries.
//
// Build: top-down median split on the longest axis of the centroid bounds, leaves of at most 4
// triangles, a flat node array; deterministic (std::nth_element with a total order on
// (centroid, index)). Query: depth-first, nearer child first, pruned by the squared distance
// to the node boxes; exact (the returned triangle is a closest one; ties go to the first found).
// An optional upper bound (e.g. a neighbour's distance plus the step) speeds coherent queries.
// Thread-safe for concurrent queries. Build O(n log n), query O(log n) typical.
#include <cstdint>
#include <limits>
#include <vector>

#include "geometry/closest_point.hpp"
#include "mesh/mesh.hpp"

namespace hp {

struct MeshHit {
    std::uint32_t triangle = UINT32_MAX;
    ClosestPoint closest;  // point, squared distance, feature within the triangle
};

class TriangleBvh {
public:
    explicit TriangleBvh(const TriMesh& mesh);

    // Closest point of the mesh to p among points closer than sqrt(max_distance2).
    MeshHit closest(const Vec3d& p, double max_distance2 = std::numeric_limits<double>::infinity()) const;

private:
    struct Node {
        Aabb box;
        std::uint32_t first = 0;  // leaf: first index into order_; inner: left child (right = left + 1)
        std::uint32_t count = 0;  // leaf: number of triangles; inner: 0
    };
    const TriMesh& mesh_;
    std::vector<Node> nodes_;
    std::vector<std::uint32_t> order_;
};

}  // namespace hp
