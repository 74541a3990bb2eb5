#pragma once
// lib/query/scenario — poses for query runs: generated scenarios and POSES.json files.
//
// A pose places the moving object in the static object's frame (world point = R p + t, see
// query.hpp). Scenarios are placed by the moving object's centre M (the centre of its tree's root
// sphere, or of its points' bounding box without a tree): the world position of M is R M + t.
//
//  contact   random orientation and a random direction d from the static grid's centre C. The
//            moving object comes in along d from far away (where nothing touches) in 64 equal
//            steps towards C until some point penetrates; the step between the last separated and
//            the first touching position is then bisected until the maximum penetration
//            (max_point_value) is in (0, depth x voxel size]. That is the first touch from outside
//            along d, pressed in by at most `depth` voxels (shallow haptic contact). Directions
//            along which nothing touches, or the bisection does not settle in 200 steps, are
//            drawn again (at most 1000 times per pose, then hp::Error(bad_input)).
//  approach  straight paths of `path_steps` poses, fixed orientation, from the contact pose moved
//            back along d by the moving object's root radius (about its half size) to the contact
//            pose itself (the last pose of each path is a contact pose as above).
//  random    uniform orientation, M uniform in the static object's padded box (the field's grid).
//
// Reproducible: pose i (path i for approach) draws from its own SplitMix64 stream seeded from
// (seed, i), with uniform doubles from the top 53 bits and our own transforms (no std::
// distributions, whose output differs between library versions), so the poses depend only on the
// seed and the inputs, not on the thread count. Orientation: Shoemake's uniform unit quaternion;
// direction: uniform on the sphere (z uniform in [-1, 1], azimuth uniform).
// Cost: a contact pose takes up to 64 + a few bisection steps of max_point_value's branch and
// bound, over a tree packed once per generation (MaxPointValue) and bounded by the two thresholds
// the placement compares with (0 and the depth): the poses are those of the exact maximum, but a
// pose far from contact costs a few sphere tests. Generated in parallel (TBB). The paper's case
// (2000 poses, one thread) takes about 2 s (it took about 90 s with the exact maximum).
// haptic-query reports the time as poses.generation_seconds.
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

enum class ScenarioKind { contact, approach, random };

struct ScenarioOptions {
    ScenarioKind kind = ScenarioKind::contact;
    std::size_t count = 100;  // poses in total (approach: split into paths, the last one shorter)
    std::uint64_t seed = 1;
    double depth = 5;         // contact: maximum penetration in voxels, > 0
    int path_steps = 50;      // approach: poses per path, >= 2
};

// Parses "contact", "approach", "random"; throws hp::Error(usage) otherwise.
ScenarioKind parse_scenario_kind(const std::string& name);
const char* scenario_kind_name(ScenarioKind kind);

// Generates the scenario's poses. Throws hp::Error(usage) for count 0, depth <= 0 or
// path_steps < 2, and hp::Error(bad_input) when no contact can be placed (see above).
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
