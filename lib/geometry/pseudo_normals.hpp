#pragma once
// Angle-weighted pseudo-normals (Bærentzen & Aanæs 2005): unit face normals, edge normals as the
// sum of the two adjacent face normals, vertex normals as the sum of the adjacent face normals
// weighted by the triangle's angle at the vertex. For a closed, consistently oriented mesh the
// sign of dot(p - q, n) at the closest point q on feature f tells outside (> 0) from inside.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "geometry/closest_point.hpp"
#include "mesh/mesh.hpp"

namespace hp {

class PseudoNormals {
public:
    explicit PseudoNormals(const TriMesh& mesh);
    // The normal of the feature `cp` found on triangle `triangle` (unit length; zero if undefined).
    Vec3d at(std::uint32_t triangle, const ClosestPoint& cp) const;
    const Vec3d& face(std::uint32_t t) const { return face_[t]; }

private:
    const TriMesh& mesh_;
    std::vector<Vec3d> face_, vertex_;
    std::unordered_map<std::uint64_t, Vec3d> edge_;
};

}  // namespace hp
