#include "exact/penetration.hpp"

#include <algorithm>
#include <cmath>

#include "geometry/bvh.hpp"
#include "geometry/winding.hpp"

namespace hp::exact {

// One mesh's query structures, in its own (body) frame.
struct PenetrationDepth::Side {
    const TriMesh& mesh;
    TriangleBvh bvh;
    FastWinding winding;
    Aabb box;
    explicit Side(const TriMesh& m) : mesh(m), bvh(m), winding(bvh, 3.0) {
        for (const Vec3d& v : m.vertices) box.extend(v);
    }
    bool inside(const Vec3d& p) const {
        const double w = std::abs(winding.at(p));
        if (std::abs(w - 0.5) > kWindingTolerance) return w > 0.5;
        return std::abs(winding_number(mesh, p)) > 0.5;
    }
};

PenetrationDepth::PenetrationDepth(const ExactMesh& fixed, const ExactMesh& moving)
    : fixed_(fixed), moving_(moving),
      fixed_side_(std::make_unique<Side>(fixed.mesh())), moving_side_(std::make_unique<Side>(moving.mesh())) {}

PenetrationDepth::~PenetrationDepth() = default;

namespace {

Vec3d inverse_apply(const RigidPose& pose, const Vec3d& w) {
    const Vec3d p = w - pose.t;  // R^T p: the columns of R are rows of R^T
    return pose.rows[0] * p[0] + pose.rows[1] * p[1] + pose.rows[2] * p[2];
}

bool contains(const Aabb& b, const Vec3d& p) {
    for (int a = 0; a < 3; ++a)
        if (p[a] < b.min[a] || p[a] > b.max[a]) return false;
    return true;
}

}  // namespace

Penetration PenetrationDepth::operator()(const RigidPose& pose) const {
    Penetration out;
    const TriMesh& fm = fixed_.mesh();
    const TriMesh& mm = moving_.mesh();
    if (fm.triangles.empty() || mm.triangles.empty()) return out;
    double best2 = 0;
    auto consider = [&](const Side& other, const Vec3d& p, bool from_moving, std::uint32_t v) {
        ++out.vertices_tested;
        if (!other.inside(p)) return;
        ++out.vertices_inside;
        const MeshHit hit = other.bvh.closest(p);
        if (hit.triangle != UINT32_MAX && (out.deepest_vertex == UINT32_MAX || hit.closest.distance2 > best2)) {
            best2 = hit.closest.distance2;
            out.deepest_moving = from_moving;
            out.deepest_vertex = v;
        }
    };
    // Moving vertices against the static mesh, in world (the static mesh's) frame; static
    // vertices against the moving mesh, in its body frame. Only points in the other's box.
    for (std::uint32_t v = 0; v < mm.vertices.size(); ++v) {
        const Vec3d p = pose.apply(mm.vertices[v]);
        if (contains(fixed_side_->box, p)) consider(*fixed_side_, p, true, v);
    }
    for (std::uint32_t v = 0; v < fm.vertices.size(); ++v) {
        const Vec3d p = inverse_apply(pose, fm.vertices[v]);
        if (contains(moving_side_->box, p)) consider(*moving_side_, p, false, v);
    }
    out.depth = std::sqrt(best2);
    return out;
}

}  // namespace hp::exact
