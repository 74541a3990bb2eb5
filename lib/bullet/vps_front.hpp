#pragma once
// lib/bullet — the static sides of a VPS descent without Bullet's types, plane, box and another
// object's distance field, and the front that keeps a descent's cut of the tree from step to step
// against them (temporal coherence). Internal to the module; vps_algorithm.cpp runs them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <span>
#include <utility>
#include <vector>

#include "bullet/vps_contacts.hpp"
#include "core/prefetch.hpp"

namespace hp::bullet::detail {

// The plane in the pointshell's mesh frame: depth(q) = offset - normal . q (inside positive).
struct MeshPlane {
    Vec3d normal;
    double offset = 0;
    double depth(Vec3d q) const { return offset - dot(normal, q); }
};

// How far above the plane every point below cluster `id` lies at least: by its sphere, else by
// its disc (ClusterDisc: tighter on flat patches, e.g. a face resting on the ground; the margin
// covers the bound's rounding). Not positive: neither bound keeps the cluster off the plane.
inline double disc_clearance(const VpsData& shell, std::uint32_t id, const MeshPlane& plane, double nc) {
    const ClusterDisc& d = shell.discs[id];
    const double k = dot(plane.normal, d.axis);
    const double lowest = nc + std::min(d.lo * k, d.hi * k) - d.radial * std::sqrt(std::max(0.0, 1 - k * k));
    return lowest - plane.offset - 1e-12 * (std::abs(plane.offset) + std::abs(nc) + shell.moving.tree.clusters[id].sphere.radius);
}
inline double plane_clearance(const VpsData& shell, std::uint32_t id, const MeshPlane& plane) {
    const Ball& b = shell.moving.tree.clusters[id].sphere;
    const double nc = dot(plane.normal, b.center);
    const double sphere = nc - plane.offset - covering_radius(b);
    return sphere > 0 ? sphere : disc_clearance(shell, id, plane, nc);
}

// The box's signed depth (inside positive) of a point `q` in the box's frame, half extents `h`,
// and its outward normal there.
inline double box_depth(Vec3d q, Vec3d h, Vec3d* normal) {
    Vec3d d{std::abs(q.x) - h.x, std::abs(q.y) - h.y, std::abs(q.z) - h.z};
    if (d.x <= 0 && d.y <= 0 && d.z <= 0) {
        const int a = d.x >= d.y ? (d.x >= d.z ? 0 : 2) : (d.y >= d.z ? 1 : 2);
        if (normal) {
            *normal = {};
            (*normal)[a] = q[a] >= 0 ? 1 : -1;
        }
        return -d[a];
    }
    Vec3d o{std::max(d.x, 0.0), std::max(d.y, 0.0), std::max(d.z, 0.0)};
    const double dist = length(o);
    if (normal) *normal = Vec3d{std::copysign(o.x, q.x), std::copysign(o.y, q.y), std::copysign(o.z, q.z)} / dist;
    return -dist;
}

// The static side of a descent, plane or box. clearance(shell, id): how far outside it every
// point below cluster `id` lies at least (not positive: the bound does not keep the cluster out).
// For the front below (Front), each side also says how a pruned cluster is kept (Entry), what is
// computed once per step (Step, from the pose `reference` when the front was made and the last
// step's pose; with the path summed over the steps as `shift` and `turn`, Motion), and how far out
// every point of an entry decided at an earlier pose lies at least now (slack, not positive: the
// bound does not keep it out): its clearance when decided less how far its points may have come
// towards the side since then.

// A bound of how far any mesh-frame point q has come towards a side between two poses: at most
// shift + turn |q - pivot|.
struct Motion {
    double shift = 0, turn = 0;
};

// A plane in the pointshell's mesh frame. Its depth is affine in q, so the change of height of a
// point q between the poses D (decided) and N (now) is, exactly,
//   h_N(q) - h_D(q) = (h_N(c) - h_D(c)) + (n_N - n_D) . (q - c),   h(q) = n . q - offset,
// at least the change at the cluster's centre c less |n_N - n_D| r: every point of a pruned
// cluster still lies above the plane while
//   clearance_D - h_D(c) + h_N(c) - |n_N - n_D| r > 0,   |n_N - n_D| <= |n_N - n_R| + |n_D - n_R|
// (R: the reference pose), or while its sphere alone says so (h_N(c) - r > 0). No motion is
// accumulated in this bound: it is that of the pose now against the pose when decided (the path
// in Step serves the front's second list only).
struct PlaneSide {
    MeshPlane plane;
    double clearance(const VpsData& s, std::uint32_t id) const { return plane_clearance(s, id, plane); }
    void warm(const VpsData& s, std::uint32_t id) const { prefetch_line(&s.moving.tree.clusters[id]); }
    bool same_shape(const PlaneSide&) const { return true; }  // a plane has no size
    // Every point of a leaf lies at least -deepest above the plane (its largest depth, tested at
    // this pose), less the rounding of the depths: a lower bound of each point's height, which is
    // what `clearance` stands for in the entry's bound.
    double leaf_clearance(const VpsData&, std::uint32_t, double deepest, double scale) const {
        return -deepest - 1e-9 * (scale + std::abs(plane.offset));
    }
    // Since `before`, every mesh-frame point q has come towards the plane by at most
    // shift + turn |q - pivot|: depth(q) = offset - normal . q changes by
    // (offset' - offset) - (normal' - normal) . pivot - (normal' - normal) . (q - pivot).
    Motion motion_since(const PlaneSide& before, Vec3d pivot, double scale) const {
        const Vec3d dn = plane.normal - before.plane.normal;
        return {std::abs(plane.offset - before.plane.offset - dot(dn, pivot)) +
                    1e-9 * (scale + std::abs(plane.offset) + std::abs(before.plane.offset) + length(pivot)),
                length(dn)};
    }

    struct Entry {
        Vec3d centre;
        double radius;            // covering_radius
        double keep_margin;       // clearance_D - h_D(c) - rounding margin
        double turn_at_decision;  // |n_D - n_R|
        double reach;             // how far the cluster's points lie from the pivot at most
        std::uint32_t id;
    };
    struct Step {
        double shift = 0, turn = 0;  // the path since the front was made (motion_since, summed)
        double from_reference = 0;   // |n_N - n_R|
        double margin = 0;           // rounding of h_N(c)
    };
    Step step_from(const PlaneSide& reference, const Step& before, const PlaneSide& last, Vec3d pivot, double scale) const {
        const Motion m = motion_since(last, pivot, scale);
        return {before.shift + m.shift, before.turn + m.turn, length(plane.normal - reference.plane.normal),
                1e-9 * (scale + std::abs(plane.offset))};
    }
    Entry entry(const VpsData& s, std::uint32_t id, double clearance, const Step& step, Vec3d pivot, double scale) const {
        const Ball& b = s.moving.tree.clusters[id].sphere;
        const double h = dot(plane.normal, b.center) - plane.offset;
        const double radius = covering_radius(b);
        return {b.center, radius, clearance - h - 1e-9 * (scale + std::abs(plane.offset) + length(b.center)),
                step.from_reference, length(b.center - pivot) + radius, id};
    }
    // How far above the plane every point of the entry's cluster lies at least now (not positive:
    // the bounds do not keep it out): by its sphere, or by the change since it was decided.
    double slack(const Entry& e, const Step& step) const {
        const double h = dot(plane.normal, e.centre) - plane.offset;
        return std::max(h - e.radius, e.keep_margin + h - (step.from_reference + e.turn_at_decision) * e.radius - step.margin);
    }
};

// A static side placed by a rigid map of the pointshell's mesh frame (`from_mesh`: into the box's
// frame, or the other object's mesh frame), whose clearances are distances: how far the points
// of a pruned cluster may move before they can reach the side. Every point q of a pruned cluster
// has come towards the side by at most shift + turn |q - pivot| since it was decided, with shift
// and turn summed over the steps since then (the path), and by at most the motion from the
// reference pose to the pose when decided plus that from the reference pose to now
// (`net_budget`: far smaller than the path when the object rocks back and forth).
struct RigidSide {
    Rigid from_mesh;

    // A side-frame point x = R q + t moves by (R' - R)(q - pivot) + (R' - R) pivot + t' - t, the
    // first term at most |R' - R| |q - pivot| (the spectral norm, bounded by the largest absolute
    // row sum of the Gram matrix of R' - R's rows).
    Motion motion_since(const RigidSide& before, Vec3d pivot, double scale) const {
        const Rigid &now = from_mesh, &then = before.from_mesh;
        const std::array<Vec3d, 3> d{now.r[0] - then.r[0], now.r[1] - then.r[1], now.r[2] - then.r[2]};
        double gram = 0;
        for (int i = 0; i < 3; ++i)
            gram = std::max(gram, std::abs(dot(d[i], d[0])) + std::abs(dot(d[i], d[1])) + std::abs(dot(d[i], d[2])));
        const Vec3d move{dot(d[0], pivot), dot(d[1], pivot), dot(d[2], pivot)};
        return {length(move + now.t - then.t) + 1e-9 * (scale + length(now.t) + length(then.t) + length(pivot)),
                std::sqrt(gram * (1 + 1e-12)) + 1e-15};
    }

    struct Entry {
        double path_budget;  // clearance when decided + the path's shift + turn * reach at that time
        double net_budget;   // clearance when decided - the motion from the reference to that pose
        double reach;        // how far the cluster's points lie from the pivot at most
        std::uint32_t id;
    };
    struct Step {
        double shift = 0, turn = 0;  // the path since the front was made
        Motion net;                  // from the reference to now
    };
    Step step_from(const RigidSide& reference, const Step& before, const RigidSide& last, Vec3d pivot, double scale) const {
        const Motion m = motion_since(last, pivot, scale);
        return {before.shift + m.shift, before.turn + m.turn, motion_since(reference, pivot, scale)};
    }
    Entry entry(const VpsData& s, std::uint32_t id, double clearance, const Step& step, Vec3d pivot, double) const {
        const Ball& b = s.moving.tree.clusters[id].sphere;
        const double reach = length(b.center - pivot) + covering_radius(b);
        return {clearance + step.shift + step.turn * reach, clearance - step.net.shift - step.net.turn * reach, reach, id};
    }
    double slack(const Entry& e, const Step& step) const {
        return std::max(e.path_budget - (step.shift + step.turn * e.reach), e.net_budget - (step.net.shift + step.net.turn * e.reach));
    }
};

// A box centred at its frame's origin with half extents `half`; `from_mesh` places the
// pointshell's mesh frame in it.
struct BoxSide : RigidSide {
    Vec3d half;
    double depth(Vec3d q) const { return box_depth(from_mesh(q), half, nullptr); }
    // The bounds below follow the pose only: a box of other half extents (setLocalScaling,
    // setMargin, another btBoxShape) needs a new front.
    bool same_shape(const BoxSide& o) const { return half.x == o.half.x && half.y == o.half.y && half.z == o.half.z; }
    void warm(const VpsData& s, std::uint32_t id) const { prefetch_line(&s.moving.tree.clusters[id]); }
    // By the sphere (the box's signed distance is 1-Lipschitz), else by the cluster's disc against
    // the plane of the face its centre lies farthest out of: every point beyond that plane lies
    // outside the box (tight for a flat patch resting on a face).
    double clearance(const VpsData& s, std::uint32_t id) const {
        const Ball& b = s.moving.tree.clusters[id].sphere;
        const Vec3d c = from_mesh(b.center);
        const double sphere = -(box_depth(c, half, nullptr) + covering_radius(b));
        return sphere > 0 ? sphere : disc(s, id, c);
    }
    // Every point of leaf `id` lies outside the box by at least -deepest (its largest depth,
    // tested at this pose: box_depth of the placed point, whose rounding the margin covers); the
    // box's signed distance is 1-Lipschitz, so that is how far they may move before one can reach
    // it.
    double leaf_clearance(const VpsData&, std::uint32_t, double deepest, double scale) const {
        return -deepest - 1e-9 * (scale + length(from_mesh.t) + half.x + half.y + half.z);
    }
    // The disc bound against one face's plane; `c`: the sphere's centre in the box frame.
    double disc(const VpsData& s, std::uint32_t id, Vec3d c) const {
        int a = 0;
        for (int k = 1; k < 3; ++k)
            if (std::abs(c[k]) - half[k] > std::abs(c[a]) - half[a]) a = k;
        const double sign = c[a] >= 0 ? 1 : -1;
        // Outside the face: sign (R_a . q + t_a) - h_a > 0, R_a the from_mesh's row a.
        const MeshPlane face{from_mesh.r[a] * sign, half[a] - sign * from_mesh.t[a]};
        return disc_clearance(s, id, face, dot(face.normal, s.moving.tree.clusters[id].sphere.center));
    }
};

// The other object's distance field (VPS-VPS): `from_mesh` places the pointshell's mesh frame in
// the field's frame with the pair query's own arithmetic (rows of its rotation_rows, then the
// translation: VpsQuery's placed points, bit for bit), a point inside where V > 0. The field is not
// 1-Lipschitz (an open mesh's holes make it steep; docs/field.md), so a pruned cluster's clearance is
// the distance its points may move before they can reach V = 0: the sphere test's bound b < 0 (the
// query's, with its margin) over L, the field's slope bound over the ball widened by w =
// max(r / 2, 2 voxels), and at most w (beyond it that slope bound does not hold). V at a point that
// moved by m <= w is at most b + L m.
struct FieldSide : RigidSide {
    const DistanceSampler* field = nullptr;
    double margin = 0;  // the query's: 1e-9 voxel, for the rounding of the placed points
    double voxel = 0;
    bool same_shape(const FieldSide& o) const { return field == o.field; }
    // Asks for what clearance(s, id) reads of the field: the ball's pyramid entries (its own and
    // the widened ball's) and the centre's cell.
    void warm(const VpsData& s, std::uint32_t id) const {
        const Ball& b = s.moving.tree.clusters[id].sphere;
        const Vec3d c = from_mesh(b.center);
        const double r = covering_radius(b);
        DistanceSampler::SphereProbe probe;
        field->probe_sphere(c, r, probe);
        field->probe_sphere(c, r + std::max(0.5 * r, 2 * voxel), probe);
    }
    double clearance(const VpsData& s, std::uint32_t id) const {
        const Ball& b = s.moving.tree.clusters[id].sphere;
        const Vec3d c = from_mesh(b.center);
        const double r = covering_radius(b);
        const double bound = field->upper_bound(c, r) + margin;
        if (!(bound < 0)) return -std::abs(bound);  // not pruned (NaN too)
        return distance_for(c, r, bound);
    }
    // Every point of leaf `id` has V <= deepest (its largest value, read at this pose at the point
    // the pair query places): the clearance of that bound instead of the sphere test's, by the same
    // slope bound (over the leaf's ball widened by w).
    double leaf_clearance(const VpsData& s, std::uint32_t id, double deepest, double) const {
        const double bound = deepest + margin;
        if (!(bound < 0)) return -std::abs(bound);
        const Ball& b = s.moving.tree.clusters[id].sphere;
        return distance_for(from_mesh(b.center), covering_radius(b), bound);
    }
    // How far a point of the ball (c, r) where V <= bound < 0 may move before it can reach V = 0:
    // -bound / L, L the slope bound over the ball widened by w = max(r / 2, 2 voxels), at most w.
    double distance_for(Vec3d c, double r, double bound) const {
        const double widen = std::max(0.5 * r, 2 * voxel);
        const double slope = field->lipschitz(c, r + widen);
        return slope > 0 ? std::min(-bound / slope, widen) : widen;
    }
};

// The pair pre-test of a VPS pair: true when no point of `shell` placed by `from_mesh` (into the
// other object's mesh frame, as the pair query places them) can have V > 0 in `other`'s field,
// because the box of the shell's points, placed, and the other's inside box (VpsData) are
// separated along one of the six axes of the two boxes, by more than a margin for the rounding of
// the placed points (1e-9 of the sizes involved). Exact in the sense the contacts need: true only
// when the pair query finds no contact. About 60 multiplications, no read of the field or tree.
inline bool boxes_apart(const VpsData& shell, const VpsData& other, const Rigid& from_mesh) {
    if (!other.inside_bounded) return false;
    const Aabb& in = other.inside_box;
    if (in.empty()) return true;  // no V > 0 anywhere
    const Aabb& pts = shell.point_box;
    if (pts.empty()) return true;  // no point
    const std::array<Vec3d, 3>& r = from_mesh.r;
    const Vec3d ah = (pts.max - pts.min) * 0.5, bh = (in.max - in.min) * 0.5;
    const Vec3d d = from_mesh(pts.center()) - in.center();  // the shell box's centre from the inside box's
    const double margin = 1e-9 * (length(ah) + length(bh) + length(from_mesh.t) + length(pts.center()) + length(in.center()));
    // The inside box's axes: the shell box's extent along axis i is sum_j |R_ij| ah_j.
    for (int i = 0; i < 3; ++i)
        if (std::abs(d[i]) > bh[i] + std::abs(r[i].x) * ah.x + std::abs(r[i].y) * ah.y + std::abs(r[i].z) * ah.z + margin)
            return true;
    // The shell box's axes (R's columns).
    for (int j = 0; j < 3; ++j) {
        const Vec3d axis{r[0][j], r[1][j], r[2][j]};
        if (std::abs(dot(axis, d)) >
            ah[j] + std::abs(axis.x) * bh.x + std::abs(axis.y) * bh.y + std::abs(axis.z) * bh.z + margin)
            return true;
    }
    return false;
}

// Breadth-first from the clusters `starts`: a cluster with a positive clearance is pruned
// (pruned(id, clearance)), the leaves kept are appended to `leaves` in visit order. Each
// cluster's reads are asked for a few clusters before its test (Side::warm), so that they arrive
// while the clusters before it are tested.
template <class Side, class Pruned>
void side_descent(const VpsData& shell, const Side& side, std::span<const std::uint32_t> starts, Pruned pruned,
                  std::vector<std::uint32_t>& queue, std::vector<std::uint32_t>& leaves) {
    constexpr std::size_t kAhead = 6;
    const auto& clusters = shell.moving.tree.clusters;
    queue.assign(starts.begin(), starts.end());
    std::size_t warmed = 0;
    for (std::size_t head = 0; head < queue.size(); ++head) {
        for (; warmed < queue.size() && warmed <= head + kAhead; ++warmed) side.warm(shell, queue[warmed]);
        const std::uint32_t id = queue[head];
        const double clearance = side.clearance(shell, id);
        if (clearance > 0) {
            pruned(id, clearance);
            continue;
        }
        const TreeCluster& c = clusters[id];
        if (c.children.empty())
            leaves.push_back(id);
        else
            queue.insert(queue.end(), c.children.begin(), c.children.end());
    }
}

// Temporal coherence against a plane, a box or another object's field (the full traversal): the front of a descent from
// the root, kept from step to step. The front is a cut of the tree: every point lies below exactly
// one of its clusters, either a leaf whose points are tested or a pruned cluster whose points are
// known to lie outside the static side. A pruned cluster is kept with what its side needs to tell
// whether it still lies outside at a later pose (Side::Entry, Side::slack); while it does, it stays
// pruned; else it is descended again from it at the new pose and replaced by what that descent
// prunes and keeps. A kept leaf whose sphere or disc leaves the side becomes a pruned cluster, and
// so does one whose points the caller tested and found all outside (prune_tested_leaves: its
// clearance from its points). The leaves are kept in the order a descent from the root visits
// them, so the contacts (every point inside, leaf by leaf) are those of a descent from the root,
// in the same order. The front is made
// anew from the root when it has grown to 1.5 times its size since (descents again split pruned
// clusters that the root's descent would prune whole), when the box's half extents or the other
// object's field changed (the bounds follow the pose only), when the path is not finite, when the pruned clusters to descend
// again outnumber 8 plus half (rounded down) of those that stay pruned (near and far lists, the far
// one as last read): roughly a third of them, and at the 100th call since it was made (calls of
// processCollision for the pair: one per collision pass while Bullet's broadphase keeps the pair,
// whether or not it touches; a front made while the object fell onto the side holds more clusters
// than one made at rest). Pruned clusters at least far_distance (0.005 of the root sphere's radius) out
// are kept apart and tested again only once the path since they were last tested, the pivot's
// shift plus its turn times the largest of their reaches, has reached far_distance: most of the front
// is not read at all in most steps.
template <class Side>
struct Front {
    const VpsData* shell = nullptr;  // null: no front yet
    Side last;                       // the last step's pose
    Side reference;                  // the pose when the front was made
    typename Side::Step step;        // this step's, from `reference` and `last`
    Vec3d pivot;                     // mesh frame: the kept leaves' mean centre when made
    double scale = 0;                // the root sphere's radius: rounding margins
    double far_distance = 0;         // entries at least this far out go to `far`
    std::size_t made_size = 0;       // the front's size when made from the root
    int age = 0;                     // steps since it was made
    std::vector<typename Side::Entry> pruned;  // tested every step
    // Tested only once the path since they were last tested (shift + turn * the largest reach)
    // reaches `far_distance`: until then none of them can have come that far.
    std::vector<typename Side::Entry> far;
    double far_shift = 0, far_turn = 0, far_reach = 0;  // the path when `far` was last tested; its largest reach
    std::vector<std::uint32_t> leaves;  // kept, in visit order
    std::vector<std::uint32_t> redo, extra, merged;  // scratch
    std::vector<std::pair<std::uint32_t, double>> decided;  // scratch: pruned clusters and their clearance
    std::size_t made_count = 0, kept_count = 0, tested_count = 0;  // AlgorithmTrace
    // The last call made the front anew because the pose had moved past its clusters' clearances:
    // it had grown too large, or too many of its clusters had to be descended again.
    bool overrun = false;

    // A pruned cluster that lies at least `slack` out now.
    void keep(const typename Side::Entry& e, double slack) {
        if (slack >= far_distance) {
            far.push_back(e);
            far_reach = std::max(far_reach, e.reach);
        } else {
            pruned.push_back(e);
        }
    }

    // Tests every entry of `list` (pruned or far) at `now`: one that may have reached the side goes
    // to `redo`, one that now belongs to the other list moves there (keep), the others stay, in
    // their order.
    void sweep(std::vector<typename Side::Entry>& list, const Side& now) {
        const bool is_far = &list == &far;
        tested_count += list.size();
        std::size_t stay = 0;
        for (std::size_t i = 0; i < list.size(); ++i) {
            const typename Side::Entry e = list[i];
            const double slack = now.slack(e, step);
            if (!(slack > 0)) {
                redo.push_back(e.id);
            } else if ((slack >= far_distance) != is_far) {
                keep(e, slack);
            } else {
                if (is_far) far_reach = std::max(far_reach, e.reach);
                list[stay++] = e;
            }
        }
        list.resize(stay);
    }

    void make(const VpsData& s, const Side& now, std::vector<std::uint32_t>& queue) {
        shell = &s;
        age = 0;
        ++made_count;
        last = reference = now;
        step = {};
        pruned.clear();
        far.clear();
        far_shift = far_turn = far_reach = 0;
        leaves.clear();
        decided.clear();
        const std::uint32_t root = 0;
        side_descent(s, now, std::span<const std::uint32_t>(&root, 1),
                     [&](std::uint32_t id, double clearance) { decided.push_back({id, clearance}); }, queue, leaves);
        const auto& clusters = s.moving.tree.clusters;
        scale = clusters[0].sphere.radius;
        far_distance = 0.005 * scale;
        pivot = clusters[0].sphere.center;
        if (!leaves.empty()) {
            Vec3d sum;
            for (std::uint32_t id : leaves) sum += clusters[id].sphere.center;
            pivot = sum / static_cast<double>(leaves.size());
        }
        for (const auto& [id, clearance] : decided) keep(now.entry(s, id, clearance, step, pivot, scale), clearance);
        made_size = pruned.size() + far.size() + leaves.size();
    }

    // After the caller has tested the points of the leaves leaves_at returned, at the same pose
    // `now`: a leaf none of whose points lies inside leaves them for the pruned lists, decided now
    // with the clearance its points give (Side::leaf_clearance of the largest depth among them,
    // `deepest[k]` for leaves[k]; not positive: it stays a leaf). Its points are then tested
    // again only once the pose may have brought one of them inside, not at every step as while
    // its sphere reaches the side. The kept leaves stay in visit order.
    void prune_tested_leaves(const VpsData& s, const Side& now, const std::vector<double>& deepest) {
        std::size_t stay = 0;
        for (std::size_t k = 0; k < leaves.size(); ++k) {
            const std::uint32_t id = leaves[k];
            const double clearance = now.leaf_clearance(s, id, deepest[k], scale);
            if (clearance > 0)
                keep(now.entry(s, id, clearance, step, pivot, scale), clearance);
            else
                leaves[stay++] = id;
        }
        leaves.resize(stay);
    }

    // The front's leaves at `now`, in visit order: a descent from the root at `now` keeps these
    // leaves among others, and no point inside the side lies outside them.
    const std::vector<std::uint32_t>& leaves_at(const VpsData& s, const Side& now, std::vector<std::uint32_t>& queue) {
        overrun = false;
        if (s.moving.tree.clusters.empty()) {
            shell = nullptr;
            leaves.clear();
            return leaves;
        }
        overrun = shell == &s && 2 * (pruned.size() + far.size() + leaves.size()) > 3 * made_size + 32;
        if (shell != &s || !now.same_shape(last) || overrun || ++age >= 100) {
            make(s, now, queue);
            return leaves;
        }
        step = now.step_from(reference, step, last, pivot, scale);
        last = now;
        if (!std::isfinite(step.shift + step.turn)) {
            // A pose that was not finite (NaN, infinite) leaves the path so until the front is
            // made anew, and no bound can be read from it.
            make(s, now, queue);
            return leaves;
        }
        // The pruned clusters that may have reached the side leave the front; those that lie far
        // out move to `far`.
        redo.clear();
        sweep(pruned, now);
        if (!((step.shift - far_shift) + (step.turn - far_turn) * far_reach < far_distance)) {  // NaN: read it
            far_shift = step.shift;
            far_turn = step.turn;
            far_reach = 0;
            sweep(far, now);
        }
        if (redo.size() > (pruned.size() + far.size()) / 2 + 8) {
            overrun = true;
            make(s, now, queue);
            return leaves;
        }
        ++kept_count;
        const auto add = [&](std::uint32_t id, double clearance) { keep(now.entry(s, id, clearance, step, pivot, scale), clearance); };
        // Leaves that left the side become pruned clusters.
        std::size_t stay = 0;
        for (std::uint32_t id : leaves) {
            const double clearance = now.clearance(s, id);
            if (clearance > 0)
                add(id, clearance);
            else
                leaves[stay++] = id;
        }
        leaves.resize(stay);
        if (redo.empty()) return leaves;
        extra.clear();
        side_descent(s, now, std::span<const std::uint32_t>(redo), add, queue, extra);
        if (extra.empty()) return leaves;
        const auto by_rank = [&](std::uint32_t a, std::uint32_t b) { return s.visit_rank[a] < s.visit_rank[b]; };
        std::sort(extra.begin(), extra.end(), by_rank);
        merged.clear();
        std::merge(leaves.begin(), leaves.end(), extra.begin(), extra.end(), std::back_inserter(merged), by_rank);
        leaves.swap(merged);
        return leaves;
    }
};

}  // namespace hp::bullet::detail
