// The frames of a scene query (scene_query.hpp): a pose seen from a part's frame, and a part's
// results placed back in the world.
#include <array>

#include "scene/scene_query.hpp"

namespace hp::scene {

namespace {

using Quat = std::array<double, 4>;

Quat multiply(const Quat& a, const Quat& b) {
    return {a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3], a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1], a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]};
}

}  // namespace

Pose compose_into(const Placement& placement, const Pose& world) {
    const auto& m = placement.matrix;
    const Vec3d d = world.position - placement.position;
    // R^T d, R from the matrix rows (the placement's rotation).
    const Vec3d t{m[0] * d.x + m[4] * d.y + m[8] * d.z, m[1] * d.x + m[5] * d.y + m[9] * d.z,
                  m[2] * d.x + m[6] * d.y + m[10] * d.z};
    const auto& q = placement.quaternion;
    return {t, multiply({q[0], -q[1], -q[2], -q[3]}, world.quaternion)};
}

Placement placement_of(const Pose& pose) { return make_placement(pose.quaternion, pose.position); }

Vec3d rotate_to_world(const Placement& placement, const Vec3d& v) {
    const auto& m = placement.matrix;
    return {m[0] * v.x + m[1] * v.y + m[2] * v.z, m[4] * v.x + m[5] * v.y + m[6] * v.z, m[8] * v.x + m[9] * v.y + m[10] * v.z};
}

Contact contact_to_world(const Placement& placement, const Contact& c) {
    Contact w = c;
    w.position = placement.apply(c.position);
    w.normal = rotate_to_world(placement, c.normal);
    return w;
}

}  // namespace hp::scene
