#pragma once
// lib/query/timing — timed query runs and their statistics (haptic-query, bench_query).
//
// Each query is timed alone with std::chrono::steady_clock around one VpsQuery call (the loop a
// 1 kHz user runs), after a warm-up pass that grows the query's buffers and warms the caches.
// Percentiles are nearest-rank: p-th percentile = the value at rank ceil(p N) of the sorted
// sample (1-based, rank at least 1), so every reported figure is a measured latency.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contact/query.hpp"

namespace hp {

struct LatencyStats {
    double min = 0, p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;  // microseconds
};

// Nearest-rank percentile of `sorted` (ascending, not empty); p in [0, 1].
double nearest_rank(const std::vector<double>& sorted, double p);
// Statistics of a sample of latencies; all zero for an empty sample.
LatencyStats latency_stats(std::vector<double> samples_us);
nlohmann::json to_json(const LatencyStats& s);  // {"min","p50","p90","p99","p999","max","mean"}

// What a timed run keeps of each query (the contacts themselves are not kept).
struct QuerySummary {
    std::size_t contacts = 0;
    double max_penetration = 0;
    double min_distance = 0;        // QueryResult::min_distance_checked (0 when in contact)
    double min_distance_bound = 0;  // QueryResult::min_distance_bound
    Vec3d force, torque;
    std::size_t spheres_tested = 0, points_tested = 0;
    int level_reached = 0;
    bool interrupted = false;
    std::size_t cfm_contacts = 0;   // of `contacts`, those from a closest feature map
    std::size_t queued = 0, queued_untested = 0;  // QueryResult's
};
QuerySummary summarize(const QueryResult& r);
nlohmann::json to_json(const QuerySummary& s);

struct TimedRun {
    std::vector<double> latency_us;       // per pose, in pose order
    std::vector<QuerySummary> results;    // per pose
    std::size_t warmup = 0;               // untimed queries run first
};

// Runs `warmup` untimed queries (cycling through `poses`), then every pose once, timed.
TimedRun run_timed(VpsQuery& query, const std::vector<Pose>& poses, std::size_t warmup);

// One CSV line per query after a header: index, latency_us, then the summary's fields.
std::string to_csv(const TimedRun& run);

// Validation before timing.
// Poses whose moving object's bounding ball (moving_bounds) does not meet the field's grid box at
// all: such a query only measures the extrapolated distance of field/field.hpp (no contact possible
// when the border is outside, border_max_value() < 0).
std::size_t poses_beyond_grid(const DistanceSampler& field, const MovingObject& moving, const std::vector<Pose>& poses);
// True when the tree's leaves hold every point index below `points` exactly once and every
// leaf point lies in the spheres of its cluster and all its ancestors (relative tolerance 1e-9),
// which is what makes the traversal exact.
bool tree_covers_points(const PointSphereTree& tree, std::span<const Vec3d> points);

}  // namespace hp
