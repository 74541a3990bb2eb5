#pragma once
// lib/query/scenario — poses for query runs: generated scenarios and POSES.json files.
//
// A pose places the moving object in the static object's frame (world point = R p + t). Scenarios
// place the moving object's centre M (its tree's root sphere centre, or its points' box centre):
//  contact   random orientation and direction d; brought in along d and bisected until the
//            maximum penetration is in (0, depth x voxel size]
//  approach  straight paths of path_steps poses ending at a contact pose
//  random    uniform orientation, M uniform in the field's grid box
//  trajectory  approach-and-slide paths of path_steps poses (a 1 kHz trajectory): the first half
//            comes in along the direction of a contact pose from half the moving radius away, the
//            second half slides from it sideways (perpendicular, random) by half the radius
// Reproducible: pose i draws from its own SplitMix64 stream seeded from (seed, i), with our own
// transforms (Shoemake's uniform quaternion), so poses depend only on the seed and the inputs,
// never on the thread count. Generated in parallel (TBB); a contact pose costs up to 64 + a few
// bisection steps of a bounded maximum search over a tree packed once (MaxPointValue).
// Details: docs/query.md, "Poses: scenarios".
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/progress.hpp"
#include "contact/query.hpp"

namespace hp {

// SplitMix64 (Steele, Lea, Flood 2014): a 64-bit state advanced by a constant; output mixed.
struct SplitMix64 {
    std::uint64_t state = 0;
    std::uint64_t next();
    double uniform();  // [0, 1), 53 random bits
};

enum class ScenarioKind { contact, approach, random, trajectory };

struct ScenarioOptions {
    ScenarioKind kind = ScenarioKind::contact;
    std::size_t count = 100;  // poses in total (approach: split into paths, the last one shorter)
    std::uint64_t seed = 1;
    double depth = 5;         // contact: maximum penetration in voxels, > 0
    int path_steps = 50;      // approach: poses per path, >= 2
};

// Parses "contact", "approach", "random", "trajectory"; throws hp::Error(usage) otherwise.
ScenarioKind parse_scenario_kind(const std::string& name);
const char* scenario_kind_name(ScenarioKind kind);

// Generates the scenario's poses. Throws hp::Error(usage) for count 0, depth <= 0 or
// path_steps < 2, and hp::Error(bad_input) when no contact can be placed (1000 directions drawn
// for a pose without a touch, or a bisection unsettled after 200 steps).
std::vector<Pose> generate_scenario(const DistanceSampler& field, const MovingObject& moving,
                                    const ScenarioOptions& options, const Progress& progress = {});

// The moving object's centre M (body frame) and the radius of a ball around M holding all points.
struct MovingBounds {
    Vec3d center;
    double radius = 0;
};
MovingBounds moving_bounds(const MovingObject& moving);

// POSES.json: {"poses": [{"position": [tx, ty, tz], "quaternion": [w, x, y, z]}, ...]}.
// Parsing checks every pose (three/four finite numbers, non-zero quaternion) and throws
// hp::Error(bad_input) naming `where`, the pose index and the field. Quaternions are kept as
// written (normalized at query time).
std::vector<Pose> poses_from_json(const nlohmann::json& j, const std::string& where);
nlohmann::json poses_to_json(const std::vector<Pose>& poses);
std::vector<Pose> read_poses(const std::filesystem::path& path);        // hp::Error(bad_input)
void write_poses(const std::filesystem::path& path, const std::vector<Pose>& poses);  // atomic

}  // namespace hp
