#pragma once
// lib/bullet/data — what a VPS shape holds (vps.hpp's VpsData), for lib/bullet's sources. No
// Bullet header here.
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "bullet/vps.hpp"
#include "math/vec.hpp"
#include "query/session.hpp"
#include "query/static_field.hpp"

namespace hp::bullet {

// A rigid transform in doubles: x -> R x + t (R by rows).
struct Rigid {
    std::array<Vec3d, 3> r{Vec3d{1, 0, 0}, Vec3d{0, 1, 0}, Vec3d{0, 0, 1}};
    Vec3d t;

    Vec3d rotate(Vec3d v) const { return {dot(r[0], v), dot(r[1], v), dot(r[2], v)}; }
    Vec3d operator()(Vec3d p) const { return rotate(p) + t; }
    Rigid inverse() const {
        Rigid inv;
        for (int i = 0; i < 3; ++i) inv.r[i] = {r[0][i], r[1][i], r[2][i]};
        inv.t = -inv.rotate(t);
        return inv;
    }
    // (this * b)(x) = this(b(x))
    Rigid operator*(const Rigid& b) const {
        Rigid c;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) c.r[i][j] = r[i][0] * b.r[0][j] + r[i][1] * b.r[1][j] + r[i][2] * b.r[2][j];
        c.t = rotate(b.t) + t;
        return c;
    }
};

// A bound of the points below one tree cluster that is tight for a flat patch: they lie in the
// cylinder around `axis` (unit; the mean of their normals) through the sphere's centre c, at
// axial offsets axis . (p - c) in [lo, hi] and at most `radial` from the axis. The lowest of them
// along a unit direction n: n . p >= n . c + min(lo k, hi k) - radial sqrt(1 - k^2), k = n . axis.
struct ClusterDisc {
    Vec3d axis{0, 0, 1};
    double lo = 0, hi = 0, radial = 0;
};

struct VpsData {
    StaticField field;        // mesh frame
    MovingObjectData moving;  // mesh frame
    MassProperties mass;
    Rigid local_from_mesh;    // local = R (p - centre of mass), R's rows the principal axes
    Aabb local_bounds;        // the points' box in the local frame, widened by one voxel
    // The pair pre-test (boxes_apart, vps_front.hpp), both mesh frame: the points' box, and a box
    // outside which V <= 0 everywhere (the cells with a sample above 0 at a corner; empty when no
    // sample is above 0). `inside_bounded` false: such a cell touches the grid's border, where the
    // field's extension could stay positive beyond it (no pre-test against this field).
    Aabb point_box;
    Aabb inside_box;
    bool inside_bounded = false;
    std::vector<ClusterDisc> discs;  // per tree cluster (mesh frame): the plane algorithm's pruning
    std::vector<std::uint32_t> visit_rank;  // per tree cluster: its place in a breadth-first walk from the root
    // The pointshell as the pair query reads it (its packed tree), made once: every VPS pair with
    // this object as its pointshell shares it (VpsQuery(field, same_moving)), so a new pair packs
    // nothing. Against the object's own field; full mode.
    std::shared_ptr<const VpsQuery> full_query;
};

}  // namespace hp::bullet
