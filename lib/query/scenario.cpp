#include "query/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <tbb/parallel_for.h>

#include "core/atomic_file.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace hp {

std::uint64_t SplitMix64::next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double SplitMix64::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

ScenarioKind parse_scenario_kind(const std::string& name) {
    for (std::size_t i = 0; i < kScenarioNames.size(); ++i)
        if (kScenarioNames[i] == name) return static_cast<ScenarioKind>(i);
    fail_usage("unknown scenario '" + name + "' (use " + scenario_list() + ")");
}

std::string scenario_list() { return or_list(kScenarioNames); }

void PoseSource::require() const {
    if (!given()) fail_usage("give poses (a file) or a scenario (" + scenario_list() + ")");
}

const char* scenario_kind_name(ScenarioKind kind) {
    const auto i = static_cast<std::size_t>(kind);
    return i < kScenarioNames.size() ? kScenarioNames[i].data() : "?";
}

MovingBounds moving_bounds(const MovingObject& moving) {
    if (moving.tree && !moving.tree->clusters.empty()) {
        const Ball& b = moving.tree->clusters[0].sphere;
        return {b.center, b.radius};
    }
    if (moving.points.empty()) fail_input("", "the moving object has no points");
    Aabb box;
    for (const Vec3d& p : moving.points) box.extend(p);
    MovingBounds m{box.center(), 0};
    for (const Vec3d& p : moving.points) m.radius = std::max(m.radius, length(p - m.center));
    return m;
}

namespace {

// The stream of pose (or path) i: a SplitMix64 state derived from (seed, i) through the mixer,
// so neighbouring streams do not overlap.
SplitMix64 stream(std::uint64_t seed, std::size_t i) {
    SplitMix64 a{static_cast<std::uint64_t>(i)};
    SplitMix64 b{seed ^ a.next()};
    return SplitMix64{b.next()};
}

// Shoemake (1992): uniform on the unit 3-sphere from three uniforms; (w, x, y, z).
std::array<double, 4> random_quaternion(SplitMix64& rng) {
    const double u1 = rng.uniform(), u2 = rng.uniform(), u3 = rng.uniform();
    const double a = std::sqrt(1 - u1), b = std::sqrt(u1), tau = 2 * std::numbers::pi;
    return {b * std::cos(tau * u3), a * std::sin(tau * u2), a * std::cos(tau * u2), b * std::sin(tau * u3)};
}

// Uniform on the unit sphere: z uniform in [-1, 1] (Archimedes), azimuth uniform.
Vec3d random_direction(SplitMix64& rng) {
    const double z = 2 * rng.uniform() - 1, phi = 2 * std::numbers::pi * rng.uniform();
    const double r = std::sqrt(std::max(0.0, 1 - z * z));
    return {r * std::cos(phi), r * std::sin(phi), z};
}

Vec3d rotate(const std::array<Vec3d, 3>& rot, const Vec3d& p) {
    return {dot(rot[0], p), dot(rot[1], p), dot(rot[2], p)};
}

struct ContactPose {
    Pose pose;
    Vec3d direction;
};

ContactPose place_contact(const DistanceSampler& field, const MaxPointValue& max_value, const MovingBounds& mb,
                          double max_depth, SplitMix64& rng) {
    const Aabb box = field.grid().bounds();
    const Vec3d c = box.center();
    const double far = 0.5 * length(box.size()) + mb.radius + field.grid().voxel_size;
    constexpr int kSteps = 64, kBisections = 200, kAttempts = 1000;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        Pose pose;
        pose.quaternion = random_quaternion(rng);
        const Vec3d d = random_direction(rng);
        const Vec3d rm = rotate(rotation_rows(pose.quaternion), mb.center);
        auto at = [&](double s) {
            pose.position = c + d * s - rm;
            // Only the comparisons with 0 and max_depth below matter: the bounded search
            // answers them exactly (same poses as the exact maximum) at a fraction of its cost.
            return max_value(pose, 0.0, max_depth);
        };
        if (at(far) > 0) continue;  // touches even far away: the field is not a bounded object
        double hi = far, lo = -1, v = 0;
        for (int k = 1; k <= kSteps; ++k) {
            const double s = far * (kSteps - k) / kSteps;
            v = at(s);
            if (v > 0) {
                lo = s;
                break;
            }
            hi = s;
        }
        if (lo < 0) continue;  // nothing touches along d (a hollow or ring-shaped object)
        if (v <= max_depth) return {pose, d};
        // Invariant: V_max(lo) > max_depth, V_max(hi) <= 0; V_max is continuous in s.
        for (int it = 0; it < kBisections; ++it) {
            const double mid = 0.5 * (lo + hi);
            v = at(mid);
            if (v > max_depth) lo = mid;
            else if (v <= 0) hi = mid;
            else return {pose, d};
        }
    }
    fail_input("", "could not place the moving object in shallow contact with the static object in " +
                       std::to_string(kAttempts) + " random directions (is the static field empty?)");
}

}  // namespace

std::vector<Pose> generate_scenario(const DistanceSampler& field, const MovingObject& moving,
                                    const ScenarioOptions& options, const Progress& progress) {
    if (options.count == 0) fail_usage("the number of poses must be at least 1");
    if (!(options.depth > 0) || !std::isfinite(options.depth)) fail_usage("the contact depth must be a positive number of voxels");
    if (options.path_steps < 2) fail_usage("approach paths need at least 2 steps");
    const MovingBounds mb = moving_bounds(moving);
    if (options.kind != ScenarioKind::random && !(field.max_value() > 0))
        fail_input("", "the static field has no inside (no positive distance): no contact pose can be placed");
    const double max_depth = options.depth * field.grid().voxel_size;
    const MaxPointValue max_value(field, moving);  // packs the tree once for every pose
    const std::size_t steps = static_cast<std::size_t>(options.path_steps);
    // Work items: poses, or paths for approach.
    const bool paths = options.kind == ScenarioKind::approach || options.kind == ScenarioKind::trajectory;
    const std::size_t items = paths ? (options.count + steps - 1) / steps : options.count;
    std::vector<Pose> poses(options.count);
    auto make = [&](std::size_t i) {
        SplitMix64 rng = stream(options.seed, i);
        switch (options.kind) {
        case ScenarioKind::contact:
            poses[i] = place_contact(field, max_value, mb, max_depth, rng).pose;
            break;
        case ScenarioKind::random: {
            const Aabb box = field.grid().bounds();
            Pose p;
            p.quaternion = random_quaternion(rng);
            Vec3d m;
            for (int a = 0; a < 3; ++a) m[a] = box.min[a] + rng.uniform() * (box.max[a] - box.min[a]);
            p.position = m - rotate(rotation_rows(p.quaternion), mb.center);
            poses[i] = p;
            break;
        }
        case ScenarioKind::approach: {
            const ContactPose end = place_contact(field, max_value, mb, max_depth, rng);
            const std::size_t first = i * steps, n = std::min(steps, options.count - first);
            for (std::size_t k = 0; k < n; ++k) {
                Pose p = end.pose;
                if (k + 1 < n) {
                    const double back = mb.radius * (1 - static_cast<double>(k) / static_cast<double>(n - 1));
                    p.position = end.pose.position + end.direction * back;
                }
                poses[first + k] = p;
            }
            break;
        }
        case ScenarioKind::trajectory: {
            const ContactPose end = place_contact(field, max_value, mb, max_depth, rng);
            // A unit direction perpendicular to the approach, random about it.
            Vec3d side = cross(end.direction, random_direction(rng));
            if (length(side) < 1e-6) side = cross(end.direction, Vec3d{1, 0, 0});
            if (length(side) < 1e-6) side = cross(end.direction, Vec3d{0, 1, 0});
            side = normalized(side);
            const std::size_t first = i * steps, n = std::min(steps, options.count - first), half = n / 2;
            const double reach = 0.5 * mb.radius;
            for (std::size_t k = 0; k < n; ++k) {
                Pose p = end.pose;
                if (k < half)
                    p.position = end.pose.position + end.direction * (reach * static_cast<double>(half - k) / static_cast<double>(half));
                else if (n > half + 1)
                    p.position = end.pose.position + side * (reach * static_cast<double>(k - half) / static_cast<double>(n - half - 1));
                poses[first + k] = p;
            }
            break;
        }
        }
    };
    // Chunks so that progress is reported from the calling thread.
    const std::size_t chunk = 256;
    for (std::size_t begin = 0; begin < items; begin += chunk) {
        const std::size_t end = std::min(items, begin + chunk);
        tbb::parallel_for(begin, end, make);
        progress.report("poses", static_cast<double>(end) / static_cast<double>(items));
    }
    return poses;
}

namespace {

template <std::size_t N>
std::array<double, N> numbers(const nlohmann::json& pose, const char* key, const std::string& where, std::size_t index) {
    const std::string at = where + ": pose " + std::to_string(index) + ": ";
    auto it = pose.find(key);
    if (it == pose.end())
        fail_input("", at + "no \"" + key + "\" (each pose needs \"position\": [x,y,z] and \"quaternion\": [w,x,y,z])");
#ifdef HP_FUZZ_CANARY
    // The fuzzing canary (docs/fuzzing.md): the length check below, off by one.
    if (it->is_array() && it->size() == N + 1) __builtin_trap();
#endif
    if (!it->is_array() || it->size() != N)
        fail_input("", at + "\"" + key + "\" must be an array of " + std::to_string(N) + " numbers");
    std::array<double, N> out{};
    for (std::size_t a = 0; a < N; ++a) {
        const auto& v = (*it)[a];
        if (!v.is_number() || !std::isfinite(v.get<double>()))
            fail_input("", at + "\"" + key + "\"[" + std::to_string(a) + "] is not a finite number");
        out[a] = v.get<double>();
    }
    return out;
}

}  // namespace

std::vector<Pose> poses_from_json(const nlohmann::json& j, const std::string& where) {
    if (!j.is_object() || !j.contains("poses") || !j["poses"].is_array())
        fail_input(where, "expected {\"poses\": [{\"position\": [x,y,z], \"quaternion\": [w,x,y,z]}, ...]}");
    const auto& list = j["poses"];
    if (list.empty()) fail_input(where, "the \"poses\" list is empty (give at least one pose)");
    std::vector<Pose> poses;
    poses.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_object())
            fail_input(where, "pose " + std::to_string(i) + " is not an object with \"position\" and \"quaternion\"");
        auto t = numbers<3>(list[i], "position", where, i);
        auto q = numbers<4>(list[i], "quaternion", where, i);
        if (q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0)
            fail_input(where, "pose " + std::to_string(i) + ": the quaternion is zero (identity is [1, 0, 0, 0])");
        poses.push_back({{t[0], t[1], t[2]}, q});
    }
    return poses;
}

nlohmann::json poses_to_json(const std::vector<Pose>& poses) {
    nlohmann::json list = nlohmann::json::array();
    for (const Pose& p : poses)
        list.push_back({{"position", {p.position.x, p.position.y, p.position.z}},
                        {"quaternion", {p.quaternion[0], p.quaternion[1], p.quaternion[2], p.quaternion[3]}}});
    return {{"poses", std::move(list)}};
}

std::vector<Pose> read_poses(const std::filesystem::path& path) {
    const std::string text = read_file(path);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        fail_input(path.string(), "not valid JSON (at byte " + std::to_string(e.byte) + "); expected a poses file");
    } catch (const nlohmann::json::out_of_range&) {  // a number beyond double's range, e.g. 1e400
        fail_input(path.string(), "not valid JSON (a number too large for a double); expected a poses file");
    }
    return poses_from_json(j, path.string());
}

void write_poses(const std::filesystem::path& path, const std::vector<Pose>& poses) {
    write_file_atomically(path, poses_to_json(poses).dump(1) + "\n");
}

CheckPoses check_poses(const PoseSource& source, const DistanceSampler& field, const MovingObject& moving,
                       const Progress& progress) {
    CheckPoses out;
    if (!source.file.empty()) {
        out.poses = read_poses(source.file);
        return out;
    }
    const ScenarioOptions options{.kind = parse_scenario_kind(source.scenario), .count = source.count, .seed = source.seed,
                                  .depth = source.depth};
    const auto t0 = Clock::now();
    out.poses = generate_scenario(field, moving, options, progress);
    out.generation_s = seconds_since(t0);
    return out;
}

}  // namespace hp
