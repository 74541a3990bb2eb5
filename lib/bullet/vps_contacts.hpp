#pragma once
// lib/bullet — the VPS algorithms' contacts without Bullet's types (vps_algorithm.cpp turns them
// into manifold points): contacts in world coordinates, the choice of a manifold's four, and the
// descent of a pointshell's tree against an analytic depth (plane, box). Internal to the module.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "bullet/data.hpp"
#include "bullet/vps.hpp"
#include "contact/query.hpp"

namespace hp::bullet::detail {

// The unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method).
std::array<double, 4> quaternion_of(const std::array<Vec3d, 3>& m);

// A contact in world coordinates: `point` is the pointshell's point, `depth` > 0 how deep it lies
// in the other object, `normal` the unit direction that pushes the pointshell out (from the
// other object towards it).
struct WorldContact {
    Vec3d point, normal;
    double depth = 0;
    std::int32_t segment = -1;  // segmented: the cluster whose deepest contact this is
};

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
Chosen select_manifold(const std::vector<WorldContact>& c);

// m = max(m, v), except that a NaN v or m makes m NaN (std::max would drop a NaN v).
inline void raise_to(double& m, double v) {
    if (!std::isnan(m) && !(v <= m)) m = v;
}

// Where a time-critical traversal stops.
struct Limits {
    std::size_t tests = 0;  // 0: no limit in sphere tests
    std::chrono::steady_clock::time_point deadline;
};

// The contacts of one leaf's points: those with a positive depth_of (mesh-frame point), in world
// coordinates, with normal_of (world point). Returns the largest depth of its points (-inf for
// none, NaN when one is NaN).
template <class Depth, class Normal>
double leaf_contacts(const MovingObjectData& m, const TreeCluster& c, const Rigid& world_from_mesh, Depth depth_of,
                     Normal normal_of, std::int32_t segment, std::vector<WorldContact>& out) {
    double deepest = -std::numeric_limits<double>::infinity();
    for (std::uint32_t i : c.points) {
        const double d = depth_of(m.points[i]);
        raise_to(deepest, d);
        if (d <= 0) continue;
        const Vec3d p = world_from_mesh(m.points[i]);
        out.push_back({p, normal_of(p), d, segment});
    }
    return deepest;
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

}  // namespace hp::bullet::detail
