#include "geometry/winding.hpp"

#include <cmath>
#include <numbers>

namespace hp {

double winding_number(const TriMesh& mesh, const Vec3d& p) {
    double total = 0;
    for (const auto& t : mesh.triangles) {
        Vec3d a = mesh.vertices[t[0]] - p, b = mesh.vertices[t[1]] - p, c = mesh.vertices[t[2]] - p;
        double la = length(a), lb = length(b), lc = length(c);
        double det = dot(a, cross(b, c));
        double den = la * lb * lc + dot(a, b) * lc + dot(b, c) * la + dot(c, a) * lb;
        total += 2 * std::atan2(det, den);
    }
    return total / (4 * std::numbers::pi);
}

}  // namespace hp
