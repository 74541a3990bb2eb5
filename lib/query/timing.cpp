#include "query/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>

#include "query/scenario.hpp"

namespace hp {

double nearest_rank(const std::vector<double>& sorted, double p) {
    const double n = static_cast<double>(sorted.size());
    const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(p * n)));
    return sorted[std::min(sorted.size(), rank) - 1];
}

LatencyStats latency_stats(std::vector<double> samples) {
    LatencyStats s;
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    s.min = samples.front();
    s.max = samples.back();
    s.p50 = nearest_rank(samples, 0.50);
    s.p90 = nearest_rank(samples, 0.90);
    s.p99 = nearest_rank(samples, 0.99);
    s.p999 = nearest_rank(samples, 0.999);
    s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
    return s;
}

nlohmann::json to_json(const LatencyStats& s) {
    return {{"min", s.min}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99},
            {"p999", s.p999}, {"max", s.max}, {"mean", s.mean}};
}

QuerySummary summarize(const QueryResult& r) {
    QuerySummary s;
    s.contacts = r.contacts.size();
    s.max_penetration = r.max_penetration;
    s.min_distance = r.min_distance_checked;
    s.min_distance_bound = r.min_distance_bound;
    s.force = r.force;
    s.torque = r.torque;
    s.spheres_tested = r.spheres_tested;
    s.points_tested = r.points_tested;
    s.level_reached = r.level_reached;
    s.interrupted = r.interrupted;
    s.cfm_contacts = r.cfm_contacts;
    s.queued = r.queued;
    s.queued_untested = r.queued_untested;
    return s;
}

nlohmann::json to_json(const QuerySummary& s) {
    // JSON has no infinity: a separation nothing measured (no point checked) is null.
    auto finite_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    return {{"contacts", s.contacts},
            {"max_penetration", s.max_penetration},
            {"min_distance", finite_or_null(s.min_distance)},
            {"min_distance_bound", s.min_distance_bound},
            {"force", {s.force.x, s.force.y, s.force.z}},
            {"torque", {s.torque.x, s.torque.y, s.torque.z}},
            {"spheres_tested", s.spheres_tested},
            {"points_tested", s.points_tested},
            {"level_reached", s.level_reached},
            {"interrupted", s.interrupted},
            {"cfm_contacts", s.cfm_contacts},
            {"queued", s.queued},
            {"queued_untested", s.queued_untested}};
}

TimedRun run_timed(VpsQuery& query, const std::vector<Pose>& poses, std::size_t warmup) {
    using Clock = std::chrono::steady_clock;
    TimedRun run;
    run.warmup = poses.empty() ? 0 : warmup;
    for (std::size_t i = 0; i < run.warmup; ++i) query(poses[i % poses.size()]);
    run.latency_us.reserve(poses.size());
    run.results.reserve(poses.size());
    for (const Pose& pose : poses) {
        const auto t0 = Clock::now();
        const QueryResult& r = query(pose);
        const auto t1 = Clock::now();
        run.latency_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        run.results.push_back(summarize(r));
    }
    return run;
}

std::string to_csv(const TimedRun& run) {
    std::ostringstream out;
    out.precision(17);
    out << "index,latency_us,contacts,max_penetration,min_distance,min_distance_bound,fx,fy,fz,tx,ty,tz,"
           "spheres_tested,points_tested,level_reached,interrupted,cfm_contacts,queued,queued_untested\n";
    for (std::size_t i = 0; i < run.results.size(); ++i) {
        const QuerySummary& s = run.results[i];
        out << i << ',' << run.latency_us[i] << ',' << s.contacts << ',' << s.max_penetration << ','
            << (std::isfinite(s.min_distance) ? s.min_distance : -1) << ',' << s.min_distance_bound << ','
            << s.force.x << ',' << s.force.y << ',' << s.force.z << ',' << s.torque.x << ',' << s.torque.y << ','
            << s.torque.z << ',' << s.spheres_tested << ',' << s.points_tested << ',' << s.level_reached << ','
            << (s.interrupted ? 1 : 0) << ',' << s.cfm_contacts << ',' << s.queued << ',' << s.queued_untested << '\n';
    }
    return out.str();
}

std::size_t poses_beyond_grid(const DistanceSampler& field, const MovingObject& moving, const std::vector<Pose>& poses) {
    const MovingBounds mb = moving_bounds(moving);
    const Aabb box = field.grid().bounds();
    std::size_t outside = 0;
    for (const Pose& pose : poses) {
        const auto r = rotation_rows(pose.quaternion);
        const Vec3d c = Vec3d{dot(r[0], mb.center), dot(r[1], mb.center), dot(r[2], mb.center)} + pose.position;
        Vec3d gap;  // from the ball's centre to the box, per axis
        for (int a = 0; a < 3; ++a) gap[a] = std::max({0.0, box.min[a] - c[a], c[a] - box.max[a]});
        outside += length(gap) > mb.radius;
    }
    return outside;
}

bool tree_covers_points(const PointSphereTree& tree, std::span<const Vec3d> points) {
    auto holds = [&](const TreeCluster& c, std::uint32_t p) {
        return length(points[p] - c.sphere.center) <= covering_radius(c.sphere);
    };
    std::vector<int> seen(points.size(), 0);
    for (std::size_t id = 0; id < tree.clusters.size(); ++id) {
        const TreeCluster& c = tree.clusters[id];
        if (c.points.empty()) return false;
        for (std::uint32_t ch : c.children)
            if (ch >= tree.clusters.size() || ch <= id || tree.clusters[ch].parent != static_cast<std::int32_t>(id))
                return false;
        for (std::uint32_t p : c.points)
            if (p >= points.size() || !holds(c, p)) return false;
        if (!c.children.empty()) continue;
        // A leaf point must lie in every ancestor's sphere: the traversal prunes by those.
        for (std::uint32_t p : c.points) {
            ++seen[p];
            for (std::int32_t up = c.parent; up >= 0; up = tree.clusters[static_cast<std::size_t>(up)].parent) {
                if (static_cast<std::size_t>(up) >= id || !holds(tree.clusters[static_cast<std::size_t>(up)], p)) return false;
            }
        }
    }
    return std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; });
}

}  // namespace hp
