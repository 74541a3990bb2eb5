#pragma once
// lib/exact/penetration — the vertex penetration depth of two meshes at one pose (docs/exact.md):
//   depth = max over the vertices v of either mesh that lie inside the other mesh M of the
//           (exact, unsigned) distance from v to M's surface; 0 when no vertex lies inside.
// Inside: the generalized winding number |w(v)| > 0.5 (geometry/winding: the fast tree at
// beta 3, the exact sum within its tolerance of 0.5), so closed meshes of either orientation
// and nearly closed ones (small holes) classify as a person would. Distance: the closest point
// of M by its BVH (geometry/bvh), exact.
// What it is: a lower bound on the translational penetration depth (the shortest translation
// that separates the meshes): a vertex at distance d inside M stays inside M under any
// translation shorter than d. It is the true depth when the deepest point of the overlap is a
// vertex (a box pushed into a box face first, a vertex of a fine mesh); it misses overlap that
// holds no vertex of either mesh (two edges crossing each other's faces, a thin blade through
// a large face): there it reports vertices_inside == 0 and depth 0, and callers fall back to
// another bound (haptic-query --validate exact: the path length since first touch).
// Cost: per call, one winding query and (when inside) one closest-point query for each vertex of
// either mesh within the other mesh's bounding box.
// Thread-safe: the query only reads. The ExactMesh objects must outlive this object.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "exact/exact.hpp"

namespace hp {
class TriangleBvh;
class FastWinding;
}  // namespace hp

namespace hp::exact {

struct Penetration {
    double depth = 0;                 // world units; 0 when no vertex is inside
    std::size_t vertices_inside = 0;  // of both meshes, each inside the other
    bool deepest_moving = false;      // the deepest vertex is the moving mesh's (else the static one's)
    std::uint32_t deepest_vertex = UINT32_MAX;  // its index; UINT32_MAX when none
    std::size_t vertices_tested = 0;  // winding queries made (within the boxes' overlap)
};

class PenetrationDepth {
public:
    PenetrationDepth(const ExactMesh& fixed, const ExactMesh& moving);
    ~PenetrationDepth();
    PenetrationDepth(const PenetrationDepth&) = delete;
    PenetrationDepth& operator=(const PenetrationDepth&) = delete;

    // The moving mesh at `pose` (world = pose.apply(body)).
    Penetration operator()(const RigidPose& pose) const;

private:
    struct Side;
    const ExactMesh& fixed_;
    const ExactMesh& moving_;
    std::unique_ptr<Side> fixed_side_, moving_side_;
};

}  // namespace hp::exact
