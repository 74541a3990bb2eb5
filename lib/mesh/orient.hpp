#pragma once
// Consistent orientation at import. In: a welded triangle mesh. Out: the same triangles, some with
// their winding reversed, so that across every manifold edge (exactly two triangles) the two
// triangles traverse it in opposite directions, and every closed part (no boundary or
// non-manifold edge) is wound outward, or inward when it lies inside an odd number of other
// closed parts (a cavity). Open parts keep the orientation most of their faces had. Parts with a
// non-manifold edge, and non-orientable parts (a Moebius strip), keep every face as it was.
// Cost: O(T log T) plus, per closed part, a winding number over each closed part whose box
// holds it. Single-threaded.
#include <cstddef>

#include "mesh/mesh.hpp"

namespace hp {

struct OrientationRepair {
    std::size_t flipped_faces = 0;         // triangles whose winding was reversed
    std::size_t parts = 0;                 // parts connected through manifold edges
    std::size_t non_orientable_parts = 0;  // kept as they were
    std::size_t non_manifold_parts = 0;    // kept as they were
};

OrientationRepair orient_consistently(TriMesh& mesh);

}  // namespace hp
