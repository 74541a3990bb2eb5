// The VPS collision algorithms (VPS-VPS, VPS-plane, VPS-box) and their registration.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include <btBulletCollisionCommon.h>

#include "bullet/data.hpp"
#include "bullet/vps.hpp"
#include "contact/query.hpp"
#include "core/error.hpp"

namespace hp::bullet {

namespace {

Rigid to_rigid(const btTransform& t) {
    Rigid r;
    const btMatrix3x3& b = t.getBasis();
    for (int i = 0; i < 3; ++i) r.r[i] = {double(b[i].x()), double(b[i].y()), double(b[i].z())};
    r.t = {double(t.getOrigin().x()), double(t.getOrigin().y()), double(t.getOrigin().z())};
    return r;
}
btVector3 to_bt(Vec3d v) { return btVector3(btScalar(v.x), btScalar(v.y), btScalar(v.z)); }

// The unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method).
std::array<double, 4> quaternion_of(const std::array<Vec3d, 3>& m) {
    const double tr = m[0].x + m[1].y + m[2].z;
    std::array<double, 4> q;
    if (tr > 0) {
        const double s = 2 * std::sqrt(tr + 1);
        q = {s / 4, (m[2].y - m[1].z) / s, (m[0].z - m[2].x) / s, (m[1].x - m[0].y) / s};
    } else if (m[0].x > m[1].y && m[0].x > m[2].z) {
        const double s = 2 * std::sqrt(1 + m[0].x - m[1].y - m[2].z);
        q = {(m[2].y - m[1].z) / s, s / 4, (m[0].y + m[1].x) / s, (m[0].z + m[2].x) / s};
    } else if (m[1].y > m[2].z) {
        const double s = 2 * std::sqrt(1 + m[1].y - m[0].x - m[2].z);
        q = {(m[0].z - m[2].x) / s, (m[0].y + m[1].x) / s, s / 4, (m[1].z + m[2].y) / s};
    } else {
        const double s = 2 * std::sqrt(1 + m[2].z - m[0].x - m[1].y);
        q = {(m[1].x - m[0].y) / s, (m[0].z + m[2].x) / s, (m[1].z + m[2].y) / s, s / 4};
    }
    return q;
}

// A contact in world coordinates: `point` is the pointshell's point, `depth` > 0 how deep it lies
// in the other object, `normal` the unit direction that pushes the pointshell out (from the
// other object towards it).
struct WorldContact {
    Vec3d point, normal;
    double depth = 0;
    std::int32_t segment = -1;  // segmented: the cluster whose deepest contact this is
};

double area2(Vec3d a, Vec3d b, Vec3d c) { return length(cross(b - a, c - a)); }  // twice the area

// Up to four contacts for one manifold: the deepest, the one farthest from it, the one spanning
// the largest triangle with these two, and the one that adds the most area outside that triangle.
// Ties go to the lower index, so the choice is deterministic.
struct Chosen {
    std::array<std::size_t, 4> index{};
    std::size_t n = 0;
    const std::size_t* begin() const { return index.data(); }
    const std::size_t* end() const { return index.data() + n; }
    void push_back(std::size_t i) { index[n++] = i; }
    std::size_t operator[](std::size_t k) const { return index[k]; }
};
Chosen select_manifold(const std::vector<WorldContact>& c) {
    Chosen out;
    if (c.empty()) return out;
    auto best = [&](auto score) {
        std::size_t arg = 0;
        double top = -1;
        for (std::size_t i = 0; i < c.size(); ++i) {
            if (std::find(out.begin(), out.end(), i) != out.end()) continue;
            const double s = score(c[i]);
            if (s > top) top = s, arg = i;
        }
        return std::pair{arg, top};
    };
    out.push_back(best([](const WorldContact& w) { return w.depth; }).first);
    const Vec3d p0 = c[out[0]].point;
    auto [i1, d1] = best([&](const WorldContact& w) { return length(w.point - p0); });
    if (c.size() < 2 || d1 <= 0) return out;
    out.push_back(i1);
    const Vec3d p1 = c[i1].point;
    auto [i2, a2] = best([&](const WorldContact& w) { return area2(p0, p1, w.point); });
    if (c.size() < 3 || a2 <= 0) return out;
    out.push_back(i2);
    const Vec3d p2 = c[i2].point;
    const double base = area2(p0, p1, p2);
    auto [i3, a3] = best([&](const WorldContact& w) {
        return area2(p0, p1, w.point) + area2(p1, p2, w.point) + area2(p2, p0, w.point) - base;
    });
    if (c.size() < 4 || a3 <= 1e-12 * base) return out;
    out.push_back(i3);
    return out;
}


// Where a time-critical traversal stops.
struct Limits {
    std::size_t tests = 0;  // 0: no limit in sphere tests
    std::chrono::steady_clock::time_point deadline;
};

// The contacts of one leaf's points: those with a positive depth_of (mesh-frame point), in world
// coordinates, with normal_of (world point).
template <class Depth, class Normal>
void leaf_contacts(const MovingObjectData& m, const TreeCluster& c, const Rigid& world_from_mesh, Depth depth_of,
                   Normal normal_of, std::int32_t segment, std::vector<WorldContact>& out) {
    for (std::uint32_t i : c.points) {
        const double d = depth_of(m.points[i]);
        if (d <= 0) continue;
        const Vec3d p = world_from_mesh(m.points[i]);
        out.push_back({p, normal_of(p), d, segment});
    }
}

// The contacts of the pointshell's points against a 1-Lipschitz signed depth `depth_of` (mesh-frame
// point -> depth, inside positive; the caller folds the pose into it) with unit outward normal
// `normal_of` (world point -> normal, for the contacts only): breadth-first over the
// tree from cluster `start`, a sphere pruned when depth(centre) + covering radius < 0, a leaf's points
// checked; `clear(id)` may prune a cluster the sphere test keeps (true: no point below it has a
// positive depth). With `limits`, stops after that many sphere tests or at the deadline (the clock
// read every 4 tests). Returns false when it stopped early.
template <class Depth, class Normal, class Clear>
bool analytic_contacts(const MovingObjectData& m, const Rigid& world_from_mesh, Depth depth_of, Normal normal_of,
                       Clear clear, std::uint32_t start, std::int32_t segment, const Limits* limits,
                       std::vector<std::uint32_t>& queue, std::vector<WorldContact>& out) {
    const auto& clusters = m.tree.clusters;
    if (clusters.empty()) return true;
    queue.assign(1, start);
    std::size_t tests = 0;
    for (std::size_t head = 0; head < queue.size(); ++head) {
        if (limits && ((limits->tests && tests >= limits->tests) ||
                       (tests % 4 == 0 && std::chrono::steady_clock::now() >= limits->deadline)))
            return false;
        ++tests;
        const TreeCluster& c = clusters[queue[head]];
        if (depth_of(c.sphere.center) + covering_radius(c.sphere) < 0 || clear(queue[head])) continue;
        if (!c.children.empty()) {
            queue.insert(queue.end(), c.children.begin(), c.children.end());
            continue;
        }
        leaf_contacts(m, c, world_from_mesh, depth_of, normal_of, segment, out);
    }
    return true;
}

// The plane in the pointshell's mesh frame: depth(q) = offset - normal . q (inside positive).
struct MeshPlane {
    Vec3d normal;
    double offset = 0;
    double depth(Vec3d q) const { return offset - dot(normal, q); }
};

// How far above the plane every point below cluster `id` lies at least: by its sphere, else by
// its disc (ClusterDisc: tighter on flat patches, e.g. a face resting on the ground; the margin
// covers the bound's rounding). Not positive: neither bound keeps the cluster off the plane.
double disc_clearance(const VpsData& shell, std::uint32_t id, const MeshPlane& plane, double nc) {
    const ClusterDisc& d = shell.discs[id];
    const double k = dot(plane.normal, d.axis);
    const double lowest = nc + std::min(d.lo * k, d.hi * k) - d.radial * std::sqrt(std::max(0.0, 1 - k * k));
    return lowest - plane.offset - 1e-12 * (std::abs(plane.offset) + std::abs(nc) + shell.moving.tree.clusters[id].sphere.radius);
}
double plane_clearance(const VpsData& shell, std::uint32_t id, const MeshPlane& plane) {
    const Ball& b = shell.moving.tree.clusters[id].sphere;
    const double nc = dot(plane.normal, b.center);
    const double sphere = nc - plane.offset - covering_radius(b);
    return sphere > 0 ? sphere : disc_clearance(shell, id, plane, nc);
}

// The box's signed depth (inside positive) of a point `q` in the box's frame, half extents `h`,
// and its outward normal there.
double box_depth(Vec3d q, Vec3d h, Vec3d* normal) {
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
    bool same_shape(const PlaneSide&) const { return true; }  // a plane has no size
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

// A box centred at its frame's origin with half extents `half`; `box_from_mesh` places the
// pointshell's mesh frame in it.
struct BoxSide {
    Rigid box_from_mesh;
    Vec3d half;
    double depth(Vec3d q) const { return box_depth(box_from_mesh(q), half, nullptr); }
    // The bounds below follow the pose only: a box of other half extents (setLocalScaling,
    // setMargin, another btBoxShape) needs a new front.
    bool same_shape(const BoxSide& o) const { return half.x == o.half.x && half.y == o.half.y && half.z == o.half.z; }
    // By the sphere (the box's signed distance is 1-Lipschitz), else by the cluster's disc against
    // the plane of the face its centre lies farthest out of: every point beyond that plane lies
    // outside the box (tight for a flat patch resting on a face).
    double clearance(const VpsData& s, std::uint32_t id) const {
        const Ball& b = s.moving.tree.clusters[id].sphere;
        const Vec3d c = box_from_mesh(b.center);
        const double sphere = -(box_depth(c, half, nullptr) + covering_radius(b));
        return sphere > 0 ? sphere : disc(s, id, c);
    }
    // The disc bound against one face's plane; `c`: the sphere's centre in the box frame.
    double disc(const VpsData& s, std::uint32_t id, Vec3d c) const {
        int a = 0;
        for (int k = 1; k < 3; ++k)
            if (std::abs(c[k]) - half[k] > std::abs(c[a]) - half[a]) a = k;
        const double sign = c[a] >= 0 ? 1 : -1;
        // Outside the face: sign (R_a . q + t_a) - h_a > 0, R_a the box_from_mesh's row a.
        const MeshPlane face{box_from_mesh.r[a] * sign, half[a] - sign * box_from_mesh.t[a]};
        return disc_clearance(s, id, face, dot(face.normal, s.moving.tree.clusters[id].sphere.center));
    }
    // A box-frame point x = R q + t moves by (R' - R)(q - pivot) + (R' - R) pivot + t' - t, the
    // first term at most |R' - R| |q - pivot| (the spectral norm, bounded by the largest absolute
    // row sum of the Gram matrix of R' - R's rows).
    Motion motion_since(const BoxSide& before, Vec3d pivot, double scale) const {
        const Rigid &now = box_from_mesh, &then = before.box_from_mesh;
        const std::array<Vec3d, 3> d{now.r[0] - then.r[0], now.r[1] - then.r[1], now.r[2] - then.r[2]};
        double gram = 0;
        for (int i = 0; i < 3; ++i)
            gram = std::max(gram, std::abs(dot(d[i], d[0])) + std::abs(dot(d[i], d[1])) + std::abs(dot(d[i], d[2])));
        const Vec3d move{dot(d[0], pivot), dot(d[1], pivot), dot(d[2], pivot)};
        return {length(move + now.t - then.t) + 1e-9 * (scale + length(now.t) + length(then.t) + length(pivot)),
                std::sqrt(gram * (1 + 1e-12)) + 1e-15};
    }

    // Every point q of a pruned cluster has come towards the box by at most shift + turn |q - pivot|
    // since it was decided, with shift and turn summed over the steps since then (the path), and
    // by at most the motion from the reference pose to the pose when decided plus that from the
    // reference pose to now (`net_budget`: far smaller than the path when the object rocks back and forth).
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
    Step step_from(const BoxSide& reference, const Step& before, const BoxSide& last, Vec3d pivot, double scale) const {
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

// Breadth-first from cluster `start`: a cluster with a positive clearance is pruned
// (pruned(id, clearance)), the leaves kept are appended to `leaves` in visit order.
template <class Side, class Pruned>
void side_descent(const VpsData& shell, const Side& side, std::uint32_t start, Pruned pruned,
                  std::vector<std::uint32_t>& queue, std::vector<std::uint32_t>& leaves) {
    const auto& clusters = shell.moving.tree.clusters;
    queue.assign(1, start);
    for (std::size_t head = 0; head < queue.size(); ++head) {
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

// Temporal coherence against a plane or a box (the full traversal): the front of a descent from
// the root, kept from step to step. The front is a cut of the tree: every point lies below exactly
// one of its clusters, either a leaf whose points are tested or a pruned cluster whose points are
// known to lie outside the static side. A pruned cluster is kept with what its side needs to tell
// whether it still lies outside at a later pose (Side::Entry, Side::slack); while it does, it stays
// pruned; else it is descended again from it at the new pose and replaced by what that descent
// prunes and keeps. A kept leaf whose sphere or disc leaves the side becomes a pruned cluster. The
// leaves are kept in the order a descent from the root visits them, so the contacts (every point
// inside, leaf by leaf) are those of a descent from the root, in the same order. The front is made
// anew from the root when it has grown to 1.5 times its size since (descents again split pruned
// clusters that the root's descent would prune whole), when the box's half extents changed (the
// bounds follow the pose only), when the path is not finite, when the pruned clusters to descend
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
        side_descent(s, now, 0, [&](std::uint32_t id, double clearance) { decided.push_back({id, clearance}); }, queue, leaves);
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

    // The front's leaves at `now`, in visit order: a descent from the root at `now` keeps these
    // leaves among others, and no point inside the side lies outside them.
    const std::vector<std::uint32_t>& leaves_at(const VpsData& s, const Side& now, std::vector<std::uint32_t>& queue) {
        if (s.moving.tree.clusters.empty()) {
            shell = nullptr;
            leaves.clear();
            return leaves;
        }
        if (shell != &s || !now.same_shape(last) || 2 * (pruned.size() + far.size() + leaves.size()) > 3 * made_size + 32 || ++age >= 100) {
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
        for (std::uint32_t id : redo) side_descent(s, now, id, add, queue, extra);
        if (extra.empty()) return leaves;
        const auto by_rank = [&](std::uint32_t a, std::uint32_t b) { return s.visit_rank[a] < s.visit_rank[b]; };
        std::sort(extra.begin(), extra.end(), by_rank);
        merged.clear();
        std::merge(leaves.begin(), leaves.end(), extra.begin(), extra.end(), std::back_inserter(merged), by_rank);
        leaves.swap(merged);
        return leaves;
    }
};

enum class PairKind { vps, plane, box };

class VpsAlgorithm final : public btCollisionAlgorithm {
public:
    VpsAlgorithm(const btCollisionAlgorithmConstructionInfo& ci, const btCollisionObjectWrapper* body0,
                 const btCollisionObjectWrapper* body1, PairKind kind, bool swapped, const AlgorithmOptions& options)
        : btCollisionAlgorithm(ci), manifold_(ci.m_manifold), state_(std::make_unique<State>()) {
        state_->kind = kind;
        state_->options = options;
        // swapped: the VPS shape is body1 (plane or box first).
        if (kind == PairKind::vps) {
            const VpsData* a = vps_data(*body0->getCollisionShape());
            const VpsData* b = vps_data(*body1->getCollisionShape());
            // The object with fewer points is the pointshell; the first one on a tie.
            state_->shell_is_body0 = a->moving.points.size() <= b->moving.points.size();
            const VpsData* shell = state_->shell_is_body0 ? a : b;
            const VpsData* other = state_->shell_is_body0 ? b : a;
            QueryOptions q{.mode = QueryMode::full};
            if (options.traversal == Traversal::segmented)
                q = {.mode = QueryMode::segmented, .level = std::min(options.level, shell->moving.tree.levels)};
            if (options.traversal == Traversal::time_critical)
                q = {.mode = QueryMode::time_critical, .budget_us = options.budget_us, .budget_tests = options.budget_tests};
            state_->query = std::make_unique<VpsQuery>(other->field.field, shell->moving.view(), q);
        } else {
            state_->shell_is_body0 = !swapped;
        }
        if (options.traversal == Traversal::segmented) {
            // The segments: the clusters of the level (the tree's deepest when it has fewer levels).
            const VpsData* shell = vps_data(*(state_->shell_is_body0 ? body0 : body1)->getCollisionShape());
            const int level = std::min(options.level, shell->moving.tree.levels);
            const auto& clusters = shell->moving.tree.clusters;
            state_->segment_of.assign(clusters.size(), -1);
            for (std::uint32_t id = 0; id < clusters.size(); ++id)
                if (clusters[id].level == level) {
                    state_->segment_of[id] = static_cast<std::int32_t>(state_->segments.size());
                    state_->segments.push_back(id);
                }
            state_->segment_manifolds.assign(state_->segments.size(), nullptr);
        }
        if (!manifold_) {
            manifold_ = m_dispatcher->getNewManifold(body0->getCollisionObject(), body1->getCollisionObject());
            own_manifold_ = true;
        }
    }
    ~VpsAlgorithm() override {
        if (own_manifold_ && manifold_) m_dispatcher->releaseManifold(manifold_);
        for (btPersistentManifold* m : state_->segment_manifolds)
            if (m) m_dispatcher->releaseManifold(m);
    }

    void processCollision(const btCollisionObjectWrapper* body0, const btCollisionObjectWrapper* body1,
                          const btDispatcherInfo&, btManifoldResult* result) override {
        if (!manifold_) return;
        result->setPersistentManifold(manifold_);
        manifold_->clearManifold();
        for (btPersistentManifold* m : state_->segment_manifolds)
            if (m) m->clearManifold();
        const AlgorithmOptions& options = state_->options;
        const bool segmented = options.traversal == Traversal::segmented;
        Limits limits;
        const Limits* limit = nullptr;
        if (options.traversal == Traversal::time_critical) {
            limits.tests = options.budget_tests;
            limits.deadline = std::chrono::steady_clock::now() +
                              std::chrono::nanoseconds(static_cast<long long>(options.budget_us * 1000));
            limit = &limits;
        }
        const btCollisionObjectWrapper* shell_wrap = state_->shell_is_body0 ? body0 : body1;
        const btCollisionObjectWrapper* other_wrap = state_->shell_is_body0 ? body1 : body0;
        const VpsData& shell = *vps_data(*shell_wrap->getCollisionShape());
        const Rigid shell_world = to_rigid(shell_wrap->getWorldTransform()) * shell.local_from_mesh;
        std::vector<WorldContact>& contacts = state_->contacts;
        contacts.clear();

        if (state_->kind == PairKind::vps) {
            const VpsData& other = *vps_data(*other_wrap->getCollisionShape());
            const Rigid other_world = to_rigid(other_wrap->getWorldTransform()) * other.local_from_mesh;
            const Rigid pose = other_world.inverse() * shell_world;  // shell mesh -> other mesh
            const QueryResult& r = (*state_->query)(Pose{pose.t, quaternion_of(pose.r)});
            for (const Contact& c : r.contacts)
                contacts.push_back({other_world(c.position), other_world.rotate(c.normal), c.value, c.segment});
        } else if (state_->kind == PairKind::plane) {
            const auto* plane = static_cast<const btStaticPlaneShape*>(other_wrap->getCollisionShape());
            const Rigid plane_world = to_rigid(other_wrap->getWorldTransform());
            const btVector3& n = plane->getPlaneNormal();
            const Vec3d normal = plane_world.rotate({double(n.x()), double(n.y()), double(n.z())});
            // World plane: normal . x = constant + normal . t; in the pointshell's mesh frame
            // (x = R q + t): (R^T normal) . q = offset - normal . t.
            const double offset = double(plane->getPlaneConstant()) + dot(normal, plane_world.t);
            const Vec3d mesh_normal = shell_world.inverse().rotate(normal);
            const double mesh_offset = offset - dot(normal, shell_world.t);
            const MeshPlane mesh_plane{mesh_normal, mesh_offset};
            const auto depth_of = [&](Vec3d q) { return mesh_plane.depth(q); };
            const auto normal_of = [&](Vec3d) { return normal; };
            if (options.traversal == Traversal::full && options.coherent) {
                for (std::uint32_t id : state_->plane_front.leaves_at(shell, PlaneSide{mesh_plane}, state_->queue))
                    leaf_contacts(shell.moving, shell.moving.tree.clusters[id], shell_world, depth_of, normal_of, -1, contacts);
            } else {
                // A cluster whose points all lie above the plane by its sphere or its disc.
                traverse(shell.moving, shell_world, depth_of, normal_of,
                         [&](std::uint32_t id) {
                             const double nc = dot(mesh_normal, shell.moving.tree.clusters[id].sphere.center);
                             return disc_clearance(shell, id, mesh_plane, nc) > 0;
                         },
                         limit);
            }
        } else {
            const auto* box = static_cast<const btBoxShape*>(other_wrap->getCollisionShape());
            const Rigid box_world = to_rigid(other_wrap->getWorldTransform());
            const Rigid box_local = box_world.inverse();
            const btVector3 he = box->getHalfExtentsWithMargin();
            const Vec3d h{double(he.x()), double(he.y()), double(he.z())};
            const BoxSide side{box_local * shell_world, h};
            const auto depth_of = [&](Vec3d q) { return side.depth(q); };
            const auto normal_of = [&](Vec3d p) {
                Vec3d n;
                box_depth(box_local(p), h, &n);
                return box_world.rotate(n);
            };
            if (options.traversal == Traversal::full && options.coherent) {
                for (std::uint32_t id : state_->box_front.leaves_at(shell, side, state_->queue))
                    leaf_contacts(shell.moving, shell.moving.tree.clusters[id], shell_world, depth_of, normal_of, -1, contacts);
            } else {
                // A cluster whose points all lie outside the box by its sphere or its disc.
                traverse(
                    shell.moving, shell_world, depth_of, normal_of,
                    [&](std::uint32_t id) {
                        return side.disc(shell, id, side.box_from_mesh(shell.moving.tree.clusters[id].sphere.center)) > 0;
                    },
                    limit);
            }
        }

        // Bullet's addContactPoint wants the normal on body1 (from body1 towards body0), a point on
        // body1 and a negative depth.
        auto add = [&](const WorldContact& c) {
            if (state_->shell_is_body0)
                result->addContactPoint(to_bt(c.normal), to_bt(c.point + c.normal * c.depth), btScalar(-c.depth));
            else
                result->addContactPoint(to_bt(-c.normal), to_bt(c.point), btScalar(-c.depth));
        };
        if (!segmented) {
            // Deepest first, then the points spanning the largest area.
            for (std::size_t i : select_manifold(contacts)) add(contacts[i]);
            return;
        }
        // One manifold per segment with its deepest contact.
        for (const WorldContact& c : contacts) {
            const std::int32_t k = c.segment < 0 ? -1 : state_->segment_of[static_cast<std::size_t>(c.segment)];
            if (k < 0) continue;
            btPersistentManifold*& m = state_->segment_manifolds[static_cast<std::size_t>(k)];
            if (!m) m = m_dispatcher->getNewManifold(body0->getCollisionObject(), body1->getCollisionObject());
            result->setPersistentManifold(m);
            add(c);
        }
        result->setPersistentManifold(manifold_);
    }

    btScalar calculateTimeOfImpact(btCollisionObject*, btCollisionObject*, const btDispatcherInfo&,
                                   btManifoldResult*) override {
        return 1;  // no continuous collision: Bullet's convention for "no impact before the step's end"
    }
    AlgorithmTrace trace() const {
        AlgorithmTrace t;
        t.fronts_made = state_->plane_front.made_count + state_->box_front.made_count;
        t.fronts_kept = state_->plane_front.kept_count + state_->box_front.kept_count;
        t.entries_tested = state_->plane_front.tested_count + state_->box_front.tested_count;
        for (const WorldContact& c : state_->contacts) t.contacts.push_back({c.point.x, c.point.y, c.point.z, c.depth});
        return t;
    }
    void getAllContactManifolds(btManifoldArray& manifolds) override {
        if (manifold_ && own_manifold_) manifolds.push_back(manifold_);
        for (btPersistentManifold* m : state_->segment_manifolds)
            if (m) manifolds.push_back(m);
    }

private:
    // The analytic traversal in the options' mode: from the root (full, time-critical), or from
    // every segment's cluster keeping its deepest contact (segmented).
    template <class Depth, class Normal, class Clear>
    void traverse(const MovingObjectData& m, const Rigid& world_from_mesh, Depth depth_of, Normal normal_of,
                  Clear clear, const Limits* limit) {
        std::vector<WorldContact>& out = state_->contacts;
        if (state_->options.traversal != Traversal::segmented) {
            analytic_contacts(m, world_from_mesh, depth_of, normal_of, clear, 0, -1, limit, state_->queue, out);
            return;
        }
        for (std::uint32_t id : state_->segments) {
            const std::size_t before = out.size();
            analytic_contacts(m, world_from_mesh, depth_of, normal_of, clear, id, static_cast<std::int32_t>(id), nullptr,
                              state_->queue, out);
            if (out.size() <= before) continue;
            const auto deepest = std::max_element(out.begin() + static_cast<std::ptrdiff_t>(before), out.end(),
                                                  [](const WorldContact& a, const WorldContact& b) { return a.depth < b.depth; });
            const WorldContact keep = *deepest;
            out.resize(before);
            out.push_back(keep);
        }
    }

    // Kept out of the object itself: the dispatcher's pool holds algorithms of Bullet's own size.
    struct State {
        PairKind kind = PairKind::vps;
        AlgorithmOptions options;
        std::vector<std::uint32_t> segments;              // segmented: the level's cluster ids
        std::vector<std::int32_t> segment_of;             // cluster id -> index in segments, or -1
        std::vector<btPersistentManifold*> segment_manifolds;  // one per segment, made at its first contact
        bool shell_is_body0 = true;
        std::unique_ptr<VpsQuery> query;  // VPS-VPS: the pointshell against the other's field
        std::vector<WorldContact> contacts;
        std::vector<std::uint32_t> queue;
        Front<PlaneSide> plane_front;  // full traversal against a plane, coherent
        Front<BoxSide> box_front;      // full traversal against a box, coherent
    };
    btPersistentManifold* manifold_ = nullptr;
    bool own_manifold_ = false;
    std::unique_ptr<State> state_;
};

struct CreateFunc final : btCollisionAlgorithmCreateFunc {
    PairKind kind;
    const AlgorithmOptions* options;
    CreateFunc(PairKind k, bool swapped, const AlgorithmOptions* o) : kind(k), options(o) { m_swapped = swapped; }
    btCollisionAlgorithm* CreateCollisionAlgorithm(btCollisionAlgorithmConstructionInfo& ci,
                                                   const btCollisionObjectWrapper* body0,
                                                   const btCollisionObjectWrapper* body1) override {
        // Another custom concave shape with the VPS shape's type: no algorithm (no contacts).
        const btCollisionObjectWrapper* vps0 = m_swapped ? body1 : body0;
        const btCollisionObjectWrapper* vps1 = m_swapped ? body0 : body1;
        if (!vps_data(*vps0->getCollisionShape())) return nullptr;
        if (kind == PairKind::vps && !vps_data(*vps1->getCollisionShape())) return nullptr;
        void* memory = ci.m_dispatcher1->allocateCollisionAlgorithm(sizeof(VpsAlgorithm));
        return new (memory) VpsAlgorithm(ci, body0, body1, kind, m_swapped, *options);
    }
};

}  // namespace

struct VpsAlgorithms::Funcs {
    AlgorithmOptions options;
    CreateFunc vps_vps{PairKind::vps, false, &options};
    CreateFunc vps_plane{PairKind::plane, false, &options}, plane_vps{PairKind::plane, true, &options};
    CreateFunc vps_box{PairKind::box, false, &options}, box_vps{PairKind::box, true, &options};
};

VpsAlgorithms::VpsAlgorithms(const AlgorithmOptions& options) : funcs_(std::make_unique<Funcs>()) {
    if (options.traversal == Traversal::segmented && options.level < 1)
        fail_usage("VPS algorithms: the segmentation level must be at least 1 (the root)");
    if (options.traversal == Traversal::time_critical && !(options.budget_us > 0))
        fail_usage("VPS algorithms: the time-critical budget must be a positive number of microseconds");
    funcs_->options = options;
}

VpsAlgorithms::~VpsAlgorithms() = default;

const AlgorithmOptions& VpsAlgorithms::options() const { return funcs_->options; }

void VpsAlgorithms::register_on(btCollisionDispatcher& dispatcher) const {
    const int vps = CUSTOM_CONCAVE_SHAPE_TYPE;
    Funcs& f = *funcs_;
    const struct {
        int a, b;
        CreateFunc* f;
    } table[] = {{vps, vps, &f.vps_vps},
                 {vps, STATIC_PLANE_PROXYTYPE, &f.vps_plane},
                 {STATIC_PLANE_PROXYTYPE, vps, &f.plane_vps},
                 {vps, BOX_SHAPE_PROXYTYPE, &f.vps_box},
                 {BOX_SHAPE_PROXYTYPE, vps, &f.box_vps}};
    for (const auto& e : table) {
        dispatcher.registerCollisionCreateFunc(e.a, e.b, e.f);
        dispatcher.registerClosestPointsCreateFunc(e.a, e.b, e.f);
    }
}

void register_vps_algorithms(btCollisionDispatcher& dispatcher) {
    static const VpsAlgorithms full;  // lives as long as the program, so every dispatcher may use it
    full.register_on(dispatcher);
}

bool is_vps_algorithm(const btCollisionAlgorithm* algorithm) {
    return dynamic_cast<const VpsAlgorithm*>(algorithm) != nullptr;
}

AlgorithmTrace trace_of(const btCollisionAlgorithm* algorithm) {
    const auto* a = dynamic_cast<const VpsAlgorithm*>(algorithm);
    return a ? a->trace() : AlgorithmTrace{};
}

}  // namespace hp::bullet
