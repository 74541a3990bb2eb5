#pragma once
// Bounding-volume hierarchy (axis-aligned boxes) over the triangles of a mesh, for exact
// closest-point queries and as the cluster tree of the fast winding number.
//
// Build: top-down, binned surface-area heuristic (16 bins per axis on the centroid bounds), leaves
// of at most 4 triangles, a flat node array with the two children of a node next to each other.
// Deeper than 30 levels, or when all centroids coincide, a median split (std::nth_element with the total
// order (centroid, index)) keeps the depth under 64. Deterministic: one thread, fixed orders.
// Cost O(n log n) time, ~2n nodes; the triangles' corners are copied in leaf order (72 bytes per
// triangle) so that queries read memory sequentially.
//
// Query: depth-first, nearer child first, pruned by the squared distance from the point to the
// node boxes. Exact: the result is a closest point of the mesh (ties: the first found). The
// optional bound `max_distance2` restricts the search to points at squared distance <= bound;
// seeding it with a known upper bound (the distance to a neighbour's closest triangle, or a
// neighbour's distance plus the step between them) makes spatially coherent queries cheap.
// Thread-safe: queries only read.
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "geometry/closest_point.hpp"
#include "mesh/mesh.hpp"

namespace hp {

struct MeshHit {
    std::uint32_t triangle = UINT32_MAX;  // index into mesh.triangles; UINT32_MAX when none
    ClosestPoint closest;                 // point, squared distance, feature within the triangle
};

// Squared distance from p to the box (0 inside).
inline double box_distance2(const Aabb& b, const Vec3d& p) {
    double d = 0;
    for (int a = 0; a < 3; ++a) {
        const double v = p[a] < b.min[a] ? b.min[a] - p[a] : (p[a] > b.max[a] ? p[a] - b.max[a] : 0.0);
        d += v * v;
    }
    return d;
}

class TriangleBvh {
public:
    struct Node {
        Aabb box;
        std::uint32_t first = 0;  // leaf: first slot in leaf order; inner: left child (right = first + 1)
        std::uint32_t count = 0;  // leaf: number of triangles (>= 1); inner: 0
        bool leaf() const { return count > 0; }
    };
    static constexpr int kMaxDepth = 64;

    // Precondition: vertex indices in range, coordinates finite. The mesh must outlive the BVH.
    explicit TriangleBvh(const TriMesh& mesh);

    // Closest point of the mesh to p among points at squared distance <= max_distance2
    // (triangle == UINT32_MAX when there is none, e.g. an empty mesh or a too small bound).
    MeshHit closest(const Vec3d& p, double max_distance2 = std::numeric_limits<double>::infinity()) const;

    const TriMesh& mesh() const { return mesh_; }
    const std::vector<Node>& nodes() const { return nodes_; }  // nodes()[0] is the root
    // Leaf order: slot s holds triangle triangle_at(s) with corners corners_at(s).
    std::uint32_t triangle_at(std::uint32_t slot) const { return order_[slot]; }
    const std::array<Vec3d, 3>& corners_at(std::uint32_t slot) const { return corners_[slot]; }
    int depth() const { return depth_; }
    // Every node's triangles as the slots [begin[n], end[n]) in leaf order.
    struct SlotRanges {
        std::vector<std::uint32_t> begin, end;
    };
    SlotRanges slot_ranges() const;

private:
    const TriMesh& mesh_;
    std::vector<Node> nodes_;
    std::vector<std::uint32_t> order_;
    std::vector<std::array<Vec3d, 3>> corners_;
    int depth_ = 0;
};

}  // namespace hp
