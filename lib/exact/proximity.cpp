// Static queries between two posed meshes (exact/exact.hpp): whether they intersect, and their
// distance up to a bound, over the pairs of the two trees' leaves.
#include <algorithm>
#include <cmath>

#include "exact/exact.hpp"
#include "exact/predicates.hpp"
#include "exact/tree_walk.hpp"
#include "geometry/closest_point.hpp"

namespace hp::exact {

using detail::overlap;
using detail::rotate_box;
using detail::triangle_box;
using detail::walk_node_pairs;

namespace {

// Walks the pairs of the two trees' nodes with `moving` at `pose`, the larger box split first;
// skip(fixed box, moving box) prunes a pair, and leaf(moving triangle, its box, fixed triangle)
// is called for each pair of triangles under two leaves; it returns true to stop the walk.
template <class Skip, class Leaf>
void walk_triangle_pairs(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& pose, Skip&& skip, Leaf&& leaf) {
    const TriMesh& fm = fixed.mesh();
    const TriMesh& mm = moving.mesh();
    auto posed = [&](const Aabb& box) { return rotate_box(pose, box); };
    walk_node_pairs(fixed, moving, posed, skip, [&](const ExactMesh::Node& fn, const ExactMesh::Node& mn) {
        for (std::uint32_t j = mn.first; j < mn.first + mn.count; ++j) {
            const auto& mf = mm.triangles[moving.order()[j]];
            const Triangle mt{pose.apply(mm.vertices[mf[0]]), pose.apply(mm.vertices[mf[1]]), pose.apply(mm.vertices[mf[2]])};
            const Aabb mtb = triangle_box(mt[0], mt[1], mt[2]);
            for (std::uint32_t i = fn.first; i < fn.first + fn.count; ++i) {
                const auto& ff = fm.triangles[fixed.order()[i]];
                const Triangle ft{fm.vertices[ff[0]], fm.vertices[ff[1]], fm.vertices[ff[2]]};
                if (leaf(mt, mtb, ft)) return true;
            }
        }
        return false;
    });
}

}  // namespace

bool meshes_intersect(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& pose) {
    bool found = false;
    walk_triangle_pairs(
        fixed, moving, pose, [](const Aabb& fb, const Aabb& mb) { return !overlap(fb, mb); },
        [&](const Triangle& mt, const Aabb& mtb, const Triangle& ft) {
            if (!overlap(triangle_box(ft[0], ft[1], ft[2]), mtb)) return false;
            found = triangles_intersect(mt, ft);
            return found;
        });
    return found;
}

namespace {

// Squared distance between segments (p0, p1) and (q0, q1) (Ericson 2005, 5.1.9).
double segment_distance2(const Vec3d& p0, const Vec3d& p1, const Vec3d& q0, const Vec3d& q1) {
    const Vec3d d1 = p1 - p0, d2 = q1 - q0, r = p0 - q0;
    const double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
    double s = 0, t = 0;
    if (a <= 0 && e <= 0) return length2(r);
    if (a <= 0) {
        t = std::clamp(f / e, 0.0, 1.0);
    } else {
        const double c = dot(d1, r);
        if (e <= 0) {
            s = std::clamp(-c / a, 0.0, 1.0);
        } else {
            const double b = dot(d1, d2), den = a * e - b * b;
            s = den > 0 ? std::clamp((b * f - c * e) / den, 0.0, 1.0) : 0.0;
            t = (b * s + f) / e;
            if (t < 0) {
                t = 0;
                s = std::clamp(-c / a, 0.0, 1.0);
            } else if (t > 1) {
                t = 1;
                s = std::clamp((b - c) / a, 0.0, 1.0);
            }
        }
    }
    return length2(p0 + d1 * s - (q0 + d2 * t));
}

double box_gap2(const Aabb& a, const Aabb& b) {
    double d = 0;
    for (int i = 0; i < 3; ++i) {
        const double g = std::max({0.0, a.min[i] - b.max[i], b.min[i] - a.max[i]});
        d += g * g;
    }
    return d;
}

double triangle_distance2(const Triangle& p, const Triangle& q) {
    if (triangles_intersect(p, q)) return 0;
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 3; ++i) {
        best = std::min(best, closest_point_on_triangle(p[i], q[0], q[1], q[2]).distance2);
        best = std::min(best, closest_point_on_triangle(q[i], p[0], p[1], p[2]).distance2);
        for (int j = 0; j < 3; ++j) best = std::min(best, segment_distance2(p[i], p[(i + 1) % 3], q[j], q[(j + 1) % 3]));
    }
    return best;
}

}  // namespace

double mesh_distance(const ExactMesh& fixed, const ExactMesh& moving, const RigidPose& pose, double max_distance) {
    if (fixed.nodes().empty() || moving.nodes().empty()) return max_distance;
    double best2 = max_distance * max_distance;
    walk_triangle_pairs(
        fixed, moving, pose, [&](const Aabb& fb, const Aabb& mb) { return box_gap2(fb, mb) >= best2; },
        [&](const Triangle& mt, const Aabb& mtb, const Triangle& ft) {
            if (box_gap2(triangle_box(ft[0], ft[1], ft[2]), mtb) >= best2) return false;
            best2 = std::min(best2, triangle_distance2(mt, ft));
            return best2 == 0;
        });
    return std::sqrt(best2);
}

}  // namespace hp::exact
