#pragma once
// lib/scene/scene_check — the body of `haptic-query --scene`: load the scene and the tool once
// (scene_query.hpp), get the tool's world poses, time one frame per pose against the budget and
// make the report (docs/scene.md, "Querying a scene").
//
// Poses: a poses file (world frame), or a generated scenario (query/scenario.hpp) against target
// parts: pose block b (one pose; a path of 50 for approach and trajectory) is made against the
// static part `target` (when given) or else the b-th static part cyclically, by the scenario of
// that part's own field, then composed with its placement (placement · pose). The poses of one
// geometry come from one generate_scenario call with the seed mixed with the geometry's index:
// reproducible, independent of the thread count. Several tools: tool t's poses are made the same
// way against the targets shifted by t (block b against target b + t), its seed mixed with t as
// well; tool 0's are the poses of a one-tool run.
// Poses file with several tools: {"tools": [{"tool": NAME, "poses": [...]}, ...]}, one entry per
// tool in the order the tools are given, each a poses file's list, all of one length (the frames);
// a plain poses file serves one tool.
// Report: per frame the parts in the broad phase, the parts touched, the contacts, the broad-phase,
// narrow-phase and frame times; percentiles (query/timing.hpp, nearest rank) of each; frames over
// the budget; pass when the frame p99 (or the fraction over budget, max_over_budget >= 0) holds.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/progress.hpp"
#include "contact/query.hpp"
#include "query/scenario.hpp"
#include "query/timing.hpp"
#include "scene/scene_query.hpp"

namespace hp::scene {

struct SceneCheckSpec {
    std::filesystem::path scene_path;
    ToolSpec tool;                     // the tool, when `tools` is empty
    std::vector<ToolSpec> tools;       // several tools (or one)
    PoseSource poses;                  // a file: world frame
    std::string target;                // scenario: the static part the poses are made against ("": each in turn)
    std::string mode = "full";         // full, brute, segmented or time-critical
    int level = 0;
    double budget_us = 1000;           // per frame
    std::size_t budget_tests = 0;      // time-critical: per frame, shared by its pairs
    double max_over_budget = -1;
    std::optional<std::size_t> warmup; // default min(poses, 100)
    int threads = 1;
    // Time-critical: every tool's closest feature map (ToolSpec::cfm): the parts' from scene.json,
    // `cfm_file` for the one outside tool (required then; refused without one).
    bool cfm = false;
    std::filesystem::path cfm_file;
    // Modes ist and ist-brute (scene_ist.hpp): the descent's options, as a pair's; the one outside
    // tool's octree (the parts' are the scene's octree files).
    int ist_level = 0;
    std::size_t ist_max_contacts = 0;
    bool ist_one_child = true, ist_side = true;
    std::filesystem::path moving_octree_file;
};

// What a timed frame keeps (not the contacts).
struct PairSummary {
    std::uint32_t tool = 0;
    std::uint32_t part = 0;
    std::size_t contacts = 0;
    double max_penetration = 0;
    Vec3d force, torque;
    std::size_t spheres_tested = 0, points_tested = 0;
    int level_reached = 0;
    bool interrupted = false;
    std::size_t cfm_contacts = 0;
};
struct ToolSummary {  // one tool's share of a frame
    std::size_t broad_phase_parts = 0, parts_touched = 0, contacts = 0;
    double max_penetration = 0;
    Vec3d force, torque;
};
struct FrameSummary {
    std::size_t broad_phase_parts = 0, parts_touched = 0, contacts = 0, interrupted_pairs = 0, cfm_contacts = 0;
    double max_penetration = 0;
    Vec3d force, torque;
    double broad_us = 0, narrow_us = 0, frame_us = 0;
    std::vector<PairSummary> pairs;
    std::vector<ToolSummary> tools;
};
FrameSummary summarize(const FrameResult& frame);

struct SceneCheck {
    nlohmann::json report;     // the summary
    nlohmann::json per_frame;  // one object per pose
    std::vector<std::vector<Pose>> poses;  // per tool, one per frame
    std::vector<FrameSummary> frames;
    std::vector<std::string> warnings;
    std::vector<std::string> part_names;  // the scene's, by part index
    std::vector<std::string> tool_names;  // per tool: its part's name or its tree file
    std::vector<double> frame_us;         // per frame
    bool pass = false;
};

// Parses "full", "brute", "segmented", "time-critical"; hp::Error(usage) otherwise (the ist modes
// are not QueryModes: run_scene_check takes them apart).
QueryMode parse_scene_mode(const std::string& name);

// The generated poses of `spec` (scenario) for tool `tool` of the loaded scene, world frame.
std::vector<Pose> scene_scenario(const SceneQuery& sq, const SceneCheckSpec& spec, const Progress& progress = {},
                                 std::size_t tool = 0);

// A poses file for `tools` tools: per tool, one pose per frame. hp::Error(bad_input) naming the file.
std::vector<std::vector<Pose>> read_tool_poses(const std::filesystem::path& path, std::size_t tools);
// Writes the poses of a check: a plain poses file for one tool, else the several tools' form.
void write_tool_poses(const std::filesystem::path& path, const SceneCheck& check);

// Throws hp::Error: usage for a bad mode, level, scenario or target; bad_input for the scene's
// files (scene_query.hpp) and a poses file that fails.
SceneCheck run_scene_check(const SceneCheckSpec& spec, const Progress& progress = {});

nlohmann::json full_report(const SceneCheck& check);
// One line per pair of every frame and one per frame (part "*": the frame's totals and times).
// Several tools: a column "tool" (the moving tool), and one line per tool and frame (part "*":
// the tool's totals) before the frame's (part and tool "*"). The last column, "mode", names the
// query mode ("time-critical+cfm" with the tools' closest feature maps).
std::string to_csv(const SceneCheck& check);
std::string format_text(const SceneCheck& check);

}  // namespace hp::scene
