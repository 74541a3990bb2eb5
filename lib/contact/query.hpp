#pragma once
// lib/contact/query — VPS collision queries (Sagardia et al. 2014, sections 2.2–2.4, Algorithm 1).
//
// In: the static object's distance function V (DistanceSampler, inside positive, world units),
// the moving object's points with unit inward normals and its point-sphere tree (optionally its
// closest feature map), and a pose: world point = R p + t, in the static object's frame.
// Out: the contacts {P, n, V(P) > 0} (static frame), force f = sum V(P_i) n_i, torque
// t = sum (P_i - t) x f_i about the moving origin, the maximum penetration, separation bounds
// when nothing collides, and test counts. Contacts sorted by point index (CFM contacts after
// them, by cluster) and summed in that order: deterministic; full and brute agree bit for bit.
// Modes: full (exact: the same contacts as brute), brute, segmented (one contact per cluster of
// a level), time_critical (stops at budget_us / budget_tests; with a CFM, one contact per queued
// colliding cluster, the hand-over timed so the budget holds).
// Cost: one field read per sphere or point tested. Threads: one VpsQuery per thread; no TBB.
// The modes, the time-critical rule and the CFM contacts in full: docs/query.md.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
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

// The modes as haptic-query --mode and the pipeline spell them, in the enum's order.
inline constexpr std::array<std::string_view, 4> kQueryModeNames{"full", "brute", "segmented", "time-critical"};
// The mode a name spells; none for a name of no VPS mode (the octree modes are lib/query's).
std::optional<QueryMode> query_mode_from_name(std::string_view name);
inline const char* query_mode_name(QueryMode mode) { return kQueryModeNames[static_cast<std::size_t>(mode)].data(); }

struct QueryOptions {
    QueryMode mode = QueryMode::full;
    int level = 0;             // segmented: the segmentation level (1 = root)
    double budget_us = 1000;   // time_critical: per-query budget in microseconds
    // time_critical: a budget in sphere tests as well (0: none; docs/query.md), for
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
    // The same moving object and options against another static field, sharing `same_moving`'s
    // packed tree (nothing packed again): one query per static object of a scene (lib/scene).
    VpsQuery(const DistanceSampler& field, const VpsQuery& same_moving);
    // time_critical: the budgets of the next calls (a scene shares one frame's budget among its pairs).
    void set_budget(double budget_us, std::size_t budget_tests) {
        options_.budget_us = budget_us;
        options_.budget_tests = budget_tests;
    }
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
