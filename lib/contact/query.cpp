#include "contact/query.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cfm/cfm.hpp"
#include "core/error.hpp"
#include "contact/cfm_contacts.hpp"
#include "core/prefetch.hpp"

namespace hp {

std::optional<QueryMode> query_mode_from_name(std::string_view name) {
    for (std::size_t i = 0; i < kQueryModeNames.size(); ++i)
        if (kQueryModeNames[i] == name) return static_cast<QueryMode>(i);
    return std::nullopt;
}

std::array<Vec3d, 3> rotation_rows(const std::array<double, 4>& q_in) {
    double n = std::sqrt(q_in[0] * q_in[0] + q_in[1] * q_in[1] + q_in[2] * q_in[2] + q_in[3] * q_in[3]);
    if (!(n > 0) || !std::isfinite(n)) fail_usage("a pose has a zero or non-finite quaternion");
    double w = q_in[0] / n, x = q_in[1] / n, y = q_in[2] / n, z = q_in[3] / n;
    return {Vec3d{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
            Vec3d{2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
            Vec3d{2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
}

namespace {

// Sorts (key, place) pairs by key, equal keys in their order (a stable LSD radix sort, a byte per
// pass, as many passes as the largest key has bytes: two for the points of a shell under 65,536
// points); short runs by comparison. Both give the order of std::sort on the pairs, since places
// ascend.
void sort_keys(std::vector<std::pair<std::uint64_t, std::uint32_t>>& v) {
    if (v.size() < 64) {
        std::sort(v.begin(), v.end());
        return;
    }
    thread_local std::vector<std::pair<std::uint64_t, std::uint32_t>> tmp;
    tmp.resize(v.size());
    std::uint64_t top = 0;
    for (const auto& e : v) top = std::max(top, e.first);
    for (int shift = 0; shift < 64 && (top >> shift) != 0; shift += 8) {
        std::size_t start[256] = {};
        for (const auto& e : v) ++start[(e.first >> shift) & 255];
        std::size_t sum = 0;
        for (std::size_t& c : start) sum += std::exchange(c, sum);
        for (const auto& e : v) tmp[start[(e.first >> shift) & 255]++] = e;
        v.swap(tmp);
    }
}

using Clock = std::chrono::steady_clock;

void check_normals(std::span<const Vec3d> points, std::span<const Vec3d> normals) {
    if (points.size() != normals.size())
        fail_input("", "the moving object has " + std::to_string(points.size()) + " points but " +
                           std::to_string(normals.size()) + " normals");
}

}  // namespace

// The tree as the traversal reads it: one 64-byte node per cluster (same ids: breadth-first, children
// consecutive) and the points each node checks stored with it, in node order: a leaf's points, or
// an inner node's parent point. A cluster's test then reads one node and, when it collides, a run
// of consecutive points, instead of following three vectors per cluster to scattered heap blocks.
struct detail::PackedTree {
    struct alignas(64) Node {
        Vec3d center;
        double radius = 0;
        std::uint32_t first_child = 0, child_count = 0;  // child_count 0: a leaf
        std::uint32_t first_point = 0, point_count = 0;  // into `points` / `ids`
        std::int32_t level = 0;
        // 1 when the node's first point (its parent point) is its parent node's parent point too:
        // a traversal that reached this node through its parent has checked it already.
        std::uint32_t repeats_parent = 0;
    };
    std::vector<Node> nodes;
    std::vector<Vec3d> points;       // body frame
    std::vector<Vec3d> normals;      // the points' normals, body frame (read for each contact)
    std::vector<std::uint32_t> ids;  // the point's index in the moving object

    PackedTree(const PointSphereTree& tree, std::span<const Vec3d> moving_points, std::span<const Vec3d> moving_normals) {
        check_normals(moving_points, moving_normals);
        nodes.resize(tree.clusters.size());
        for (std::size_t id = 0; id < tree.clusters.size(); ++id) {
            const TreeCluster& c = tree.clusters[id];
            Node& n = nodes[id];
            n.center = c.sphere.center;
            n.radius = c.sphere.radius;
            n.level = c.level;
            n.child_count = static_cast<std::uint32_t>(c.children.size());
            n.first_child = c.children.empty() ? 0 : c.children.front();
            for (std::size_t i = 1; i < c.children.size(); ++i)
                if (c.children[i] != c.children[0] + i) fail_input("", "a tree cluster's children are not consecutive");
            n.first_point = static_cast<std::uint32_t>(ids.size());
            const std::size_t take = c.children.empty() ? c.points.size() : std::min<std::size_t>(1, c.points.size());
            for (std::size_t i = 0; i < take; ++i) {
                if (c.points[i] >= moving_points.size()) fail_input("", "a tree cluster names a point the shell does not have");
                ids.push_back(c.points[i]);
                points.push_back(moving_points[c.points[i]]);
                normals.push_back(moving_normals[c.points[i]]);
            }
            n.point_count = static_cast<std::uint32_t>(take);
            n.repeats_parent = c.parent >= 0 && take > 0 && !tree.clusters[static_cast<std::size_t>(c.parent)].points.empty() &&
                               tree.clusters[static_cast<std::size_t>(c.parent)].points[0] == c.points[0];
        }
    }
};

namespace {

// The time-critical budget as the traversal checks it (query.hpp, time_critical): a deadline and
// optionally a number of sphere tests (0: none), whichever is spent first.
struct Limits {
    Clock::time_point start, deadline;
    std::size_t tests = 0;
    bool cfm = false;  // keep time for the CFM phase

    // After each batch of the CFM phase.
    bool spent(std::size_t tested) const { return (tests > 0 && tested >= tests) || Clock::now() >= deadline; }
    // Before each sphere of the traversal, with `queued` clusters in the queue (the clock every 4
    // spheres: a sphere test costs 0.1-0.3 us cold, a clock read about 0.02 us; with a CFM,
    // between two checks the queue also grows by up to three clusters per sphere).
    // With a CFM the traversal also stops when the queued clusters' CFM phase
    // would not fit in what is left: in sphere tests, one each; in time, kCfmCost times this
    // query's own time per sphere test so far.
    bool traversal_spent(std::size_t head, std::size_t tested, std::size_t queued) const {
        if (tests > 0 && tested + (cfm ? queued : 0) >= tests) return true;
        if ((head & 3) != 0) return false;
        const Clock::time_point now = Clock::now();
        if (now >= deadline) return true;
        if (!cfm || tested == 0) return false;
        const double per_test = std::chrono::duration<double>(now - start).count() / static_cast<double>(tested);
        return std::chrono::duration<double>(deadline - now).count() <= kCfmCost * per_test * static_cast<double>(queued);
    }
    // The CFM phase's cost per queued cluster relative to the traversal's per sphere test: a
    // sphere test for each, and a gradient, a map lookup and V(P) for the colliding quarter of them
    // (measured on Sagardia et al. 2014's bunny case: 0.45 us against 0.3 us, both mostly cache
    // misses).
    static constexpr double kCfmCost = 1.5;
};

// Queued clusters the CFM phase handles between two looks at the clock (0.3-0.5 us of cold reads
// each on Sagardia et al. 2014's bunny case).
constexpr std::size_t kCfmBatch = 4;

class Traversal {
public:
    Traversal(const DistanceSampler& field, const MovingObject& moving, const detail::PackedTree* packed, const Pose& pose,
              QueryResult& out, std::vector<std::uint32_t>& queue)
        : field_(field), moving_(moving), packed_(packed), rot_(rotation_rows(pose.quaternion)), t_(pose.position),
          out_(out) {
        // The queue holds each cluster at most once per traversal: sized once, then indexed.
        if (packed && queue.size() < packed->nodes.size()) queue.resize(packed->nodes.size());
        queue_ = queue.data();
        // Rounding of the transform (a few ulps of the coordinates) must not prune a point whose
        // value is just above zero: widen the sphere test by a tiny absolute amount.
        margin_ = 1e-9 * field.grid().voxel_size;
        best_checked_ = -std::numeric_limits<double>::infinity();
        best_bound_ = -std::numeric_limits<double>::infinity();
    }

    Vec3d place(const Vec3d& p) const { return Vec3d{dot(rot_[0], p), dot(rot_[1], p), dot(rot_[2], p)} + t_; }
    Vec3d turn(const Vec3d& n) const { return Vec3d{dot(rot_[0], n), dot(rot_[1], n), dot(rot_[2], n)}; }

    // Brute force: every point, their cells asked for ahead like the traversal's points.
    void check_all_points() {
        for (std::uint32_t i = 0; i < moving_.points.size(); ++i) defer_point(i, moving_.normals[i], place(moving_.points[i]), -1);
        flush_points(-1);
    }
    // Checks one point (placed at p, with V(p) = v, its normal n in the body frame); records a
    // contact when V > 0.
    void check_probed(std::uint32_t index, const Vec3d& n, const Vec3d& p, double v, std::int32_t segment) {
        ++out_.points_tested;
        best_checked_ = std::max(best_checked_, v);
        best_bound_ = std::max(best_bound_, v);
        if (v > 0) out_.contacts.push_back({index, p, turn(n), v, segment});
    }

    // Breadth-first from `start`; returns false when stopped by the budget (`limits`, time_critical).
    //
    // Each sphere test reads its node, a pyramid entry and the field around its centre, each point
    // test the field around the point, and a new pose's reads are cold; one at a time they would
    // be most of the query's time. So the traversal asks for them ahead (docs/query.md): the node
    // kNodeAhead places ahead in the queue, the sphere test's reads kProbeAhead places ahead
    // (DistanceSampler::probe_sphere, kept in a ring until the sphere's turn), and a colliding
    // cluster's points are placed and prefetched at once but checked kPointsBehind points later
    // (defer_point). The results are those of testing in queue order: the contacts are sorted in
    // finish() and the rest are counts and maxima.
    bool traverse(std::uint32_t start, std::int32_t segment, const Limits* limits) {
        const auto& nodes = packed_->nodes;
        queue_[0] = start;
        tail_ = 1;
        std::size_t probed = 0;  // queue places whose probe is in the ring
        for (std::size_t head = 0; head < tail_; ++head) {
            if (head + kNodeAhead < tail_) prefetch_line(&nodes[queue_[head + kNodeAhead]]);
            for (; probed < tail_ && probed <= head + kProbeAhead; ++probed) {
                const detail::PackedTree::Node& a = nodes[queue_[probed]];
                field_.probe_sphere(place(a.center), a.radius, probes_[probed % kProbeRing]);
                probed_at_[probed % kProbeRing] = head;
                if (a.point_count > 0) {
                    prefetch_line(&packed_->points[a.first_point]);
                    prefetch_line(&packed_->points[a.first_point + a.point_count - 1]);
                    prefetch_line(&packed_->normals[a.first_point]);
                    prefetch_line(&packed_->normals[a.first_point + a.point_count - 1]);
                    prefetch_line(&packed_->ids[a.first_point]);
                }
            }
            if (limits && limits->traversal_spent(head, out_.spheres_tested, tail_ - head)) {
                flush_points(segment);
                out_.interrupted = true;
                out_.queued = tail_ - head;
                // With a CFM, the queued clusters that collide give one contact each
                // (cfm_contacts.hpp), coarsest first, until the budget is spent.
                const std::size_t rest = moving_.cfm ? cfm_phase(head, *limits) : head;
                out_.queued_untested = tail_ - rest;
                // Nothing more is read: every queued cluster's parent passed the sphere test
                // (bound >= 0), so an untested one leaves no separation proven (bound 0).
                if (rest < tail_) best_bound_ = std::max(best_bound_, 0.0);
                return false;
            }
            const detail::PackedTree::Node& c = nodes[queue_[head]];
            out_.level_reached = std::max(out_.level_reached, c.level);
            ++out_.spheres_tested;
            // A probe made kWarm or more tests ago has its reads in cache: the sphere test computes
            // every term without a branch. A fresh one (a short queue: the start of a traversal,
            // the segments of the segmented mode) reads the centre's cell only if needed.
            const DistanceSampler::SphereProbe& probe = probes_[head % kProbeRing];
            const double raw = head - probed_at_[head % kProbeRing] >= kWarm ? field_.upper_bound(probe) : field_.upper_bound_lazy(probe);
            if (const double bound = raw + margin_; bound < 0) {
                best_bound_ = std::max(best_bound_, bound);
                continue;
            }
            // A leaf checks all its points, an inner cluster its parent point (then its children);
            // not the parent point its parent checked (the start of a traversal has no parent in it).
            const Vec3d* pts = packed_->points.data() + c.first_point;
            const std::uint32_t* ids = packed_->ids.data() + c.first_point;
            const Vec3d* normals = packed_->normals.data() + c.first_point;
            const std::uint32_t first = head == 0 ? 0 : c.repeats_parent;
            for (std::uint32_t i = first; i < c.point_count; ++i) defer_point(ids[i], normals[i], place(pts[i]), segment);
            for (std::uint32_t ch = 0; ch < c.child_count; ++ch) queue_[tail_++] = c.first_child + ch;
        }
        flush_points(segment);
        return true;
    }

    // Queues a point check: prefetches the point's cell and checks the point kPointsBehind
    // deferred points later (or at flush_points). Every traversal flushes before it returns, so
    // the deferred points all belong to the caller's segment.
    void defer_point(std::uint32_t index, const Vec3d& normal, const Vec3d& p, std::int32_t segment) {
        DeferredPoint& d = deferred_[(deferred_begin_ + deferred_count_) % kPointsRing];
        d.index = index;
        d.normal = &normal;
        d.position = p;
        field_.probe_value(p, d.cell);
        if (++deferred_count_ > kPointsBehind) check_oldest_deferred(segment);
    }
    void flush_points(std::int32_t segment) {
        while (deferred_count_ > 0) check_oldest_deferred(segment);
    }
    void check_oldest_deferred(std::int32_t segment) {
        const DeferredPoint& d = deferred_[deferred_begin_];
        check_probed(d.index, *d.normal, d.position, field_.value(d.cell), segment);
        deferred_begin_ = (deferred_begin_ + 1) % kPointsRing;
        --deferred_count_;
    }

    // The CFM phase of an interrupted traversal: the clusters queued from `head` on, in queue order
    // (breadth-first: coarsest first), are sphere-tested and each colliding one gives its CFM
    // contact, in batches of kCfmBatch, until the phase's limits are spent (checked after each
    // batch, so the first batch is always done). Returns where it stopped.
    std::size_t cfm_phase(std::size_t head, const Limits& limits) {
        const auto& nodes = packed_->nodes;
        std::size_t rest = head;
        while (rest < tail_) {
            const std::size_t end = std::min(tail_, rest + kCfmBatch);
            for (; rest < end; ++rest) {
                ++out_.spheres_tested;
                if (bound_sphere(nodes[queue_[rest]]) >= 0)
                    out_.cfm_contacts += add_cfm_contact(field_, *moving_.cfm, queue_[rest], rot_, t_, out_.contacts);
            }
            if (limits.spent(out_.spheres_tested)) break;
        }
        return rest;
    }

    // Returns the sphere's bound (sphere_bound) and keeps it for the separation bound.
    double bound_sphere(const detail::PackedTree::Node& c) {
        const double b = sphere_bound(place(c.center), c.radius);
        best_bound_ = std::max(best_bound_, b);
        return b;
    }

    // The sphere test: an upper bound of V over the ball (DistanceSampler::upper_bound) widened
    // by the margin for the rounding of the transform.
    double sphere_bound(const Vec3d& x, double r) const { return field_.upper_bound(x, r) + margin_; }

    void finish() {
        auto& cs = out_.contacts;
        // Point contacts (cluster -1) by point, then CFM contacts by cluster, each (cluster, point)
        // once (the first found). The keys (cluster + 1, point) are sorted beside the contacts'
        // places, then the contacts gathered in that order.
        if (cs.size() > 1) {
            thread_local std::vector<std::pair<std::uint64_t, std::uint32_t>> order;  // (key, place)
            thread_local std::vector<Contact> sorted;
            order.resize(cs.size());
            for (std::size_t i = 0; i < cs.size(); ++i)
                order[i] = {(std::uint64_t{static_cast<std::uint32_t>(cs[i].cluster + 1)} << 32) | cs[i].point,
                            static_cast<std::uint32_t>(i)};
            sort_keys(order);
            sorted.clear();
            for (std::size_t i = 0; i < order.size(); ++i)
                if (i == 0 || order[i].first != order[i - 1].first) sorted.push_back(cs[order[i].second]);
            cs.assign(sorted.begin(), sorted.end());  // into the query's own storage, which it keeps
        }
        for (const Contact& c : cs) {
            Vec3d f = c.normal * c.value;
            out_.force += f;
            out_.torque += cross(c.position - t_, f);
            out_.max_penetration = std::max(out_.max_penetration, c.value);
        }
        if (cs.empty()) {
            out_.min_distance_checked = std::isfinite(best_checked_) ? -best_checked_ : std::numeric_limits<double>::infinity();
            out_.min_distance_bound = std::max(0.0, -best_bound_);
        }
    }

private:
    // How far ahead the traversal asks for memory (traverse). Chosen on Sagardia et al. 2014's bunny
    // case (docs/query.md): a node about 16 sphere tests before it is read, a probe 8 before.
    static constexpr std::size_t kNodeAhead = 16;
    static constexpr std::size_t kProbeAhead = 8;
    static constexpr std::size_t kProbeRing = 16;  // > kProbeAhead
    static constexpr std::size_t kWarm = 4;        // tests between a probe and its use that let its reads arrive
    static constexpr std::size_t kPointsBehind = 8;
    static constexpr std::size_t kPointsRing = 16;  // > kPointsBehind
    struct DeferredPoint {
        std::uint32_t index;
        const Vec3d* normal;  // body frame (the packed tree's copy, or the moving object's)
        Vec3d position;
        DistanceSampler::CellRef cell;
    };
    DistanceSampler::SphereProbe probes_[kProbeRing];
    std::size_t probed_at_[kProbeRing];  // the queue head when each probe was made
    DeferredPoint deferred_[kPointsRing];
    std::size_t deferred_begin_ = 0, deferred_count_ = 0;

    const DistanceSampler& field_;
    const MovingObject& moving_;
    const detail::PackedTree* packed_;  // null for brute
    std::array<Vec3d, 3> rot_;
    Vec3d t_;
    QueryResult& out_;
    double margin_ = 0;
    double best_checked_ = 0;  // max V over checked points
    double best_bound_ = 0;    // max over checked points and pruned spheres of an upper bound of V
    std::uint32_t* queue_ = nullptr;  // the caller's scratch (reused between queries), one place per cluster
    std::size_t tail_ = 0;             // queue_[0, tail_) are queued
};

void reset(QueryResult& out) {
    out.contacts.clear();  // keeps its capacity
    out.force = {};
    out.torque = {};
    out.max_penetration = 0;
    out.min_distance_bound = 0;
    out.min_distance_checked = 0;
    out.spheres_tested = 0;
    out.points_tested = 0;
    out.level_reached = 0;
    out.interrupted = false;
    out.cfm_contacts = 0;
    out.queued = 0;
    out.queued_untested = 0;
}

// A CFM serves only the time-critical mode and must have a sphere per cluster (the lookup's index).
void check_cfm_use(const MovingObject& moving, const QueryOptions& options) {
    if (!moving.cfm) return;
    if (options.mode != QueryMode::time_critical) fail_usage("a closest feature map is used only by the time-critical mode");
    if (moving.tree && moving.cfm->spheres.size() != moving.tree->clusters.size())
        fail_input("", "the closest feature map has " + std::to_string(moving.cfm->spheres.size()) +
                           " spheres but the tree has " + std::to_string(moving.tree->clusters.size()) + " clusters");
}

void run_into(const DistanceSampler& field, const MovingObject& moving, const detail::PackedTree* packed, const Pose& pose,
              const QueryOptions& options, QueryResult& out, std::vector<std::uint32_t>& queue) {
    check_normals(moving.points, moving.normals);
    reset(out);
    Clock::time_point start = Clock::now();
    const bool need_tree = options.mode != QueryMode::brute;
    if (need_tree && (!moving.tree || moving.tree->clusters.empty() || !packed))
        fail_input("", "this query mode needs a point-sphere tree (run haptic-spheretree)");
    Traversal t(field, moving, packed, pose, out, queue);

    switch (options.mode) {
    case QueryMode::brute:
        t.check_all_points();
        break;
    case QueryMode::full:
        t.traverse(0, -1, nullptr);
        break;
    case QueryMode::time_critical: {
        const Limits limits{.start = start,
                            .deadline = start + std::chrono::nanoseconds(static_cast<long long>(options.budget_us * 1000)),
                            .tests = options.budget_tests,
                            .cfm = moving.cfm != nullptr};
        t.traverse(0, -1, &limits);
        break;
    }
    case QueryMode::segmented: {
        const PointSphereTree& tree = *moving.tree;
        if (options.level < 1 || options.level > tree.levels)
            fail_usage("the segmented mode's level must be between 1 and " + std::to_string(tree.levels) +
                       " for this tree (got " + std::to_string(options.level) + ")");
        for (std::uint32_t id = 0; id < tree.clusters.size(); ++id) {
            if (tree.clusters[id].level != options.level) continue;
            std::size_t before = out.contacts.size();
            t.traverse(id, static_cast<std::int32_t>(id), nullptr);
            // Keep only the segment's deepest contact (ties: lowest point index).
            if (out.contacts.size() > before) {
                auto deepest = std::max_element(out.contacts.begin() + static_cast<std::ptrdiff_t>(before), out.contacts.end(),
                                                [](const Contact& a, const Contact& b) {
                                                    return a.value < b.value || (a.value == b.value && a.point > b.point);
                                                });
                Contact keep = *deepest;
                out.contacts.resize(before);
                out.contacts.push_back(keep);
            }
        }
        break;
    }
    }
    t.finish();
}

}  // namespace

QueryResult run_query(const DistanceSampler& field, const MovingObject& moving, const Pose& pose,
                      const QueryOptions& options) {
    check_cfm_use(moving, options);
    QueryResult out;
    std::vector<std::uint32_t> queue;
    std::optional<detail::PackedTree> packed;
    if (options.mode != QueryMode::brute && moving.tree) packed.emplace(*moving.tree, moving.points, moving.normals);
    run_into(field, moving, packed ? &*packed : nullptr, pose, options, out, queue);
    return out;
}

VpsQuery::VpsQuery(const DistanceSampler& field, const MovingObject& moving, const QueryOptions& options)
    : field_(field), moving_(moving), options_(options) {
    if (options_.mode != QueryMode::brute && (!moving_.tree || moving_.tree->clusters.empty()))
        fail_input("", "this query mode needs a point-sphere tree (run haptic-spheretree)");
    if (options_.mode == QueryMode::segmented && (options_.level < 1 || options_.level > moving_.tree->levels))
        fail_usage("the segmented mode's level must be between 1 and " + std::to_string(moving_.tree->levels) +
                   " for this tree (got " + std::to_string(options_.level) + ")");
    check_cfm_use(moving_, options_);
    if (moving_.tree) queue_.resize(moving_.tree->clusters.size());
    if (options_.mode != QueryMode::brute) packed_ = std::make_shared<const detail::PackedTree>(*moving_.tree, moving_.points, moving_.normals);
}

VpsQuery::VpsQuery(const DistanceSampler& field, const VpsQuery& same_moving)
    : field_(field), moving_(same_moving.moving_), options_(same_moving.options_), queue_(same_moving.queue_.size()),
      packed_(same_moving.packed_) {}

const QueryResult& VpsQuery::operator()(const Pose& pose) {
    run_into(field_, moving_, packed_.get(), pose, options_, result_, queue_);
    return result_;
}

MaxPointValue::MaxPointValue(const DistanceSampler& field, const MovingObject& moving) : field_(field), moving_(moving) {
    if (moving_.tree && !moving_.tree->clusters.empty())
        packed_ = std::make_shared<const detail::PackedTree>(*moving_.tree, moving_.points, moving_.normals);
}

double MaxPointValue::operator()(const Pose& pose) const {
    constexpr double inf = std::numeric_limits<double>::infinity();
    return (*this)(pose, -inf, inf);
}

double MaxPointValue::operator()(const Pose& pose, double floor, double enough) const {
    const auto rot = rotation_rows(pose.quaternion);
    auto place = [&](const Vec3d& p) {
        return Vec3d{dot(rot[0], p), dot(rot[1], p), dot(rot[2], p)} + pose.position;
    };
    double best = -std::numeric_limits<double>::infinity();
    if (!packed_) {
        for (const Vec3d& p : moving_.points) best = std::max(best, field_.value(place(p)));
        return best;
    }
    // Depth-first branch and bound: a cluster whose sphere bound (upper_bound) cannot beat the best
    // point so far, or the floor, holds no point that matters (same argument as the traversal's
    // sphere test). A node's points are a leaf's points or an inner node's parent point
    // (PackedTree).
    const auto& nodes = packed_->nodes;
    const double margin = 1e-9 * field_.grid().voxel_size;
    std::vector<std::uint32_t> stack{0};
    while (!stack.empty()) {
        const detail::PackedTree::Node& c = nodes[stack.back()];
        stack.pop_back();
        const double bound = field_.upper_bound(place(c.center), c.radius) + margin;
        if (bound <= std::max(best, floor)) continue;
        // A parent point its parent node checked is in `best` already (the root has none).
        const Vec3d* pts = packed_->points.data() + c.first_point;
        for (std::uint32_t i = c.repeats_parent; i < c.point_count; ++i) best = std::max(best, field_.value(place(pts[i])));
        if (best > enough) return best;
        for (std::uint32_t ch = 0; ch < c.child_count; ++ch) stack.push_back(c.first_child + ch);
    }
    return best;
}

double max_point_value(const DistanceSampler& field, const MovingObject& moving, const Pose& pose) {
    return MaxPointValue(field, moving)(pose);
}

}  // namespace hp
