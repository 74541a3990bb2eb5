#pragma once
// lib/query — VPS collision queries (paper 000 sections 2.2–2.4, Algorithm 1).
//
// In: the static object's distance function V (DistanceSampler, inside positive), the moving
// object's points with unit inward normals and its point-sphere tree, and a pose placing the
// moving object in the static object's frame (world point = R p + t).
// Out: the contact manifold {P, n, V(P)} of points with V(P) > 0 (P and n in the static frame),
// the penalty force f = sum V(P_i) n_i (eq. 2) and torque t = sum (P_i - t) x f_i about the moving
// object's origin (eq. 3; the paper takes moments about the pointshell frame's origin, as here,
// but expresses both vectors in that frame: multiply ours by R^T to get its components), the
// maximum penetration, and when nothing collides bounds on the separation. Forces are not scaled
// by the number of contacts (the paper leaves the stiffness scaling to the simulation).
// V(P) is the trilinear interpolant of the field (see field.hpp for why not eq. 4 or 5).
//
// Modes:
//  full           Algorithm 1: FIFO from the root; a sphere (X, R) collides when an upper bound
//                 of V over its ball is >= 0: essentially V(X) + L R with L the field's local
//                 Lipschitz bound in the ball (the paper's V(X) >= -R is the case L = 1), or the
//                 largest field sample near the ball when that is smaller
//                 (DistanceSampler::upper_bound, field.hpp). A colliding cluster checks its parent
//                 point and pushes its children; a leaf checks all its points. Because every point
//                 lies in its ancestors' spheres and the bound holds over the whole ball, no
//                 colliding point is ever pruned: full finds exactly the contacts brute finds.
//                 A cluster's parent point is usually one of its children's too (the parent points
//                 of a level are the next level's points), down to a leaf; a child whose parent
//                 point is its parent's does not check it again (points_tested counts checks: 14%
//                 fewer on the paper's case).
//  brute          every point, no tree.
//  segmented      section 2.4: every cluster of one level starts its own traversal and keeps only
//                 its deepest contact (one contact per segment).
//  time_critical  full, stopped when the budget is spent; reports the level reached. Contacts are
//                 those found so far (parent points of colliding clusters count). With a closest
//                 feature map (MovingObject::cfm, paper 003), every cluster left in the queue at
//                 the deadline whose sphere collides (the sphere test above, evaluated anyway for the
//                 separation bound) adds ONE contact: d = grad V(X) normalised (into the static
//                 object), record = the map's sample nearest to R^T d on that sphere, normal =
//                 R (-outward normal of the record), position = R q + t for the record's closest
//                 point q (store full) or X + r d (store normal), value = V(position), kept when
//                 > 0. Contact::cluster names the cluster, Contact::point is kNoPoint.
//                 Without a map the mode is unchanged. lib/query/cfm_contacts.hpp: the details
//                 and why these choices.
//                 The budget holds with a map too. The traversal hands over to the CFM phase
//                 when the queued clusters' contacts would no longer fit in what is left of the
//                 budget: at its checks (every 4 spheres) it stops when the time left is below
//                 1.5 x (this query's time per sphere test so far) x (clusters queued); the CFM
//                 phase then takes the queued clusters in queue order (breadth-first: coarsest
//                 first) until the budget is spent, looking at the clock every 4 clusters (the
//                 first 4 are always done, so a tiny budget still gives the root's contact).
//                 A query overruns its budget by at most one batch of 4 clusters (a few hundred
//                 ns of cold reads) besides the traversal's 4-sphere granularity. Clusters the
//                 phase does not reach give no contact: `queued_untested` counts them, `queued`
//                 the queue at the hand-over. (Before this rule every queued cluster was tested
//                 past the deadline: p50 52 us at a 20 us budget on the paper's case;
//                 docs/query.md has the figures.) Without a map the traversal has the whole
//                 budget and returns at it (the clock is read every 4 spheres there too); all
//                 queued clusters are then untested. An
//                 interrupted query with untested clusters proves no separation
//                 (min_distance_bound 0). The CFM phase's sphere tests count in spheres_tested.
//                 With `budget_tests` the same rule also runs on sphere tests, deterministically:
//                 the traversal stops when tests + queued clusters (with a map) reach it
//                 (checked before every sphere), the CFM phase when the tests do (within its
//                 batch of 4).
// Contacts are returned sorted by point index (CFM contacts after them, by cluster id) and summed
// in that order, so results are deterministic and full and brute agree bit for bit.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "math/vec.hpp"
#include "field/field.hpp"
#include "spheretree/tree.hpp"

namespace hp::cfm {
struct ClosestFeatureMap;
}

namespace hp {

struct Pose {
    Vec3d position;                                // t
    std::array<double, 4> quaternion{1, 0, 0, 0};  // w, x, y, z; normalized before use
};

struct MovingObject {
    std::span<const Vec3d> points;
    std::span<const Vec3d> normals;  // unit, inward
    const PointSphereTree* tree = nullptr;
    // Optional, time_critical only: the tree's closest feature map (one sphere per cluster, same
    // spheres; check_cfm_matches_tree), normals outward in the body frame.
    const cfm::ClosestFeatureMap* cfm = nullptr;
};

enum class QueryMode { full, brute, segmented, time_critical };

struct QueryOptions {
    QueryMode mode = QueryMode::full;
    int level = 0;             // segmented: the segmentation level (1 = root)
    double budget_us = 1000;   // time_critical: per-query budget in microseconds
    // time_critical: a budget in sphere tests as well (0: none; see time_critical above), for
    // interrupted queries that are the same whatever the machine's speed (replays, tests).
    std::size_t budget_tests = 0;
};

struct Contact {
    static constexpr std::uint32_t kNoPoint = 0xffffffffu;
    std::uint32_t point = 0;  // index into the moving object's points; kNoPoint for a CFM contact
    Vec3d position;           // static frame
    Vec3d normal;             // static frame, inward normal of the moving object
    double value = 0;         // V(P) > 0, penetration depth
    std::int32_t segment = -1;  // segmented mode: the cluster id of the segment
    std::int32_t cluster = -1;  // CFM contact (time_critical with a CFM): the cluster it stands for
};

struct QueryResult {
    std::vector<Contact> contacts;
    Vec3d force, torque;
    double max_penetration = 0;     // max V over contacts, 0 when none
    // When nothing collides: the separation is at least `min_distance_bound` (from pruned
    // spheres and checked points) and at most `min_distance_checked` (the closest checked point).
    double min_distance_bound = 0;
    double min_distance_checked = 0;
    std::size_t spheres_tested = 0;
    std::size_t points_tested = 0;
    int level_reached = 0;          // deepest tree level visited (0 for brute)
    bool interrupted = false;       // time_critical stopped at its budget
    std::size_t cfm_contacts = 0;   // contacts from the CFM (cluster >= 0), included in `contacts`
    // time_critical, interrupted: the clusters left in the queue when the traversal stopped, and
    // of them those the CFM phase did not reach (all of them without a CFM): no test, no contact.
    std::size_t queued = 0;
    std::size_t queued_untested = 0;
};

// 3x3 rotation from a unit quaternion (w, x, y, z). Throws hp::Error(usage) for a zero or
// non-finite quaternion.
std::array<Vec3d, 3> rotation_rows(const std::array<double, 4>& q);

// One query. Allocates its result; a loop should use VpsQuery instead.
QueryResult run_query(const DistanceSampler& field, const MovingObject& moving, const Pose& pose,
                      const QueryOptions& options);

// The query for a 1 kHz loop: holds its scratch (queue, contact buffer) between calls, so after
// the first calls have grown them no call allocates. `field` and `moving` must outlive it.
// Throws like run_query, at construction for a missing tree, a bad segmentation level, or a CFM
// given for another mode than time_critical (usage) or with another sphere count than the tree.
//   hp::VpsQuery q(field, moving, {.mode = hp::QueryMode::full});
//   for (;;) { const hp::QueryResult& r = q(pose_now()); apply(r.force, r.torque); }
namespace detail {
struct PackedTree;  // the tree laid out for the traversal (query.cpp)
}

class VpsQuery {
public:
    VpsQuery(const DistanceSampler& field, const MovingObject& moving, const QueryOptions& options);
    // The result stays valid until the next call.
    const QueryResult& operator()(const Pose& pose);
    const QueryOptions& options() const { return options_; }

private:
    const DistanceSampler& field_;
    MovingObject moving_;
    QueryOptions options_;
    QueryResult result_;
    std::vector<std::uint32_t> queue_;
    std::shared_ptr<const detail::PackedTree> packed_;  // built once at construction
};

// The largest V over all points of the moving object at a pose (the deepest penetration when
// positive, minus the separation the points measure when negative): exactly the maximum brute
// force finds, by depth-first branch and bound over the tree (over all points without a tree).
// For many poses (scenario generation): it packs the tree once (the traversal's layout, VpsQuery)
// and each call then reads only the packed nodes. Calls are const and may run concurrently;
// `field` and `moving` must outlive it.
class MaxPointValue {
public:
    MaxPointValue(const DistanceSampler& field, const MovingObject& moving);
    double operator()(const Pose& pose) const;
    // For a caller that only compares the maximum M with `floor` < `enough`: returns M when
    // floor < M <= enough, a value <= floor when M <= floor, and a value in (enough, M] when
    // M > enough. Clusters whose bound is <= floor are pruned from the start and the search stops
    // at the first point above `enough`, so a pose far from contact costs a few sphere tests
    // instead of the exact maximum's (all points there have nearly the same V: little prunes).
    double operator()(const Pose& pose, double floor, double enough) const;

private:
    const DistanceSampler& field_;
    MovingObject moving_;
    std::shared_ptr<const detail::PackedTree> packed_;  // null without a tree
};

// One pose: MaxPointValue(field, moving)(pose) (packs the tree on every call).
double max_point_value(const DistanceSampler& field, const MovingObject& moving, const Pose& pose);

}  // namespace hp
