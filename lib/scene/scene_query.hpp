#pragma once
// lib/scene/scene_query — one tool against every part of a scene (docs/scene.md, "Querying a scene").
//
// In: a scene.json (scene_file.hpp) and a tool: one of its parts (it then moves and is no longer
// static) or an outside point-sphere tree file. A pose places the tool's geometry frame in the
// world: world point = R p + t (the frame of its tree's points).
// Load (once): the files it reads are verified (verify_scene_files: present, size and hash), each
// geometry's distance field (or voxelmap) and the tool's tree are loaded ONCE, whatever the number
// of its instances. A geometry with a prepared sampler (files "sampler", formats/sampler.md) maps
// it instead of reading its field: verified by its size and XXH3 hash over the mapped bytes, its
// own CRCs and its record of the field against scene.json's; the field is checked for its size only. Per static part the world box where its V can be positive (its reach: the
// box of its positive samples plus one voxel, plus the border's largest value when it is
// positive), and a bounding volume hierarchy over those boxes (broad_phase.hpp).
// Per frame (query): broad phase — the tool's ball (a centre and a radius holding all its points
// and all its tree's spheres) against the hierarchy, then against each hit's reach box in the
// part's own frame (the world box of a rotated box is loose); a part outside its reach can have
// no contact, so none is dropped. Narrow phase — the pair query of lib/contact (every mode) per
// candidate part, in ascending part order, with the pose composed into the part's frame
// (placement⁻¹ · pose, compose_into); its contacts are mapped back to the world (contact_to_world)
// and appended, and its force and torque rotated to the world (the torque stays about the
// tool's origin) and summed in that order.
// Time-critical: the frame's budget is shared by its pairs. budget_tests: each pair gets
// max(1, budget_tests / candidates) tests (pair_options: deterministic). budget_us: one thread
// gives each pair the frame's remaining time divided by the pairs left; several threads give each
// pair budget_us x min(threads, candidates) / candidates.
// Threads: `threads` > 1 (0: all cores) runs a frame's pairs on a TBB arena of that many threads, one set of
// queries per worker; every pair writes its own slot and the merge runs in candidate order, so the
// results are byte-identical for any thread count (the timings are not).
// Several tools (a vector of ToolSpec; each frame one world pose per tool): each tool against the
// static parts (the scene's parts that are no tool) and against every other tool that is a part
// of the scene with a field (its geometry's field, placed at that tool's pose of the frame: the
// pair query runs with pose(other)⁻¹ · pose(tool)). An outside tool has only its tree: it is only
// ever the moving side. The frame's pairs are tool after tool, each tool's in ascending part
// order; the budgets are shared by all the pairs of the frame.
// Closest feature maps (ToolSpec::cfm, time-critical): each tool's own map rides with its tree, so
// every pair of that tool (against a static part or another tool) adds the map's contacts for the
// spheres left queued at the interruption, as the pair query with --cfm. The static parts' maps are
// not read: a map serves the moving side.
// Octrees (IstSpec::on, modes ist and ist-brute; scene_ist.hpp): each pair is the descent of the
// tool's octree against the other side's at the composed pose, its normals from that side's field;
// its contacts are voxel pairs (FrameResult::ist_contacts, centres in the world) instead of points.
// Errors: hp::Error(bad_input) naming the scene file and the part: a missing or changed file, a
// tool name that is not in the scene, a tool geometry without a tree file (or without a map when
// asked for one), a file its reader refuses, a map that is not the tree's.
// hp::Error(usage): no tool, one part given twice as a tool, a map with another mode than
// time-critical, an outside tool asked for a map without its file.
// Memory: the fields of the geometries of the static parts (and of the tool parts, with several
// tools; a mapped sampler: shared file pages) and each tool's tree, once each; per worker and tool
// one query (its scratch) per geometry, sharing the tool's packed tree.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contact/query.hpp"
#include "math/vec.hpp"
#include "mesh/assembly.hpp"
#include "query/session.hpp"
#include "query/static_field.hpp"
#include "scene/broad_phase.hpp"
#include "octree/ist.hpp"
#include "scene/scene_file.hpp"
#include "scene/scene_ist.hpp"
#include "scene/scene_tool.hpp"

namespace hp::scene {

// placement⁻¹ · pose: the pose of the same motion seen from the part's frame.
Pose compose_into(const Placement& placement, const Pose& world);
// R v (a direction from the part's frame to the world).
Vec3d rotate_to_world(const Placement& placement, const Vec3d& v);
// A contact of the part's frame in the world: position placed, normal rotated, the rest kept.
Contact contact_to_world(const Placement& placement, const Contact& c);

// The box of a field's grid where V can be positive (empty when it can be nowhere): the centres of
// its positive samples, widened by one voxel (trilinear cells), and by the border's largest value
// when that is positive (the continuation outside the grid, field/field.hpp).
Aabb positive_reach(const DistanceSampler& field);


// The placement of a pose (its quaternion normalised): the frame of a tool part at that pose.
Placement placement_of(const Pose& pose);

// One pair of a frame: what the pair query of a candidate part found, in the world frame.
struct PairResult {
    std::uint32_t tool = 0;           // the moving tool (index into the tools)
    std::uint32_t part = 0;           // index into Scene::parts: a static part, or another tool's part
    std::int32_t other_tool = -1;     // that other tool's index when the part is a tool, else -1
    std::size_t first_contact = 0;    // its contacts: FrameResult::contacts (ist: ist_contacts)[first_contact, + contacts)
    std::size_t contacts = 0;
    Vec3d force, torque;              // world frame; torque about the tool's origin
    double max_penetration = 0;
    std::size_t spheres_tested = 0, points_tested = 0;
    int level_reached = 0;
    bool interrupted = false;
    std::size_t cfm_contacts = 0;
};

// One tool's share of a frame.
struct ToolResult {
    std::size_t first_pair = 0, pairs = 0;        // FrameResult::pairs[first_pair, + pairs)
    std::size_t first_contact = 0, contacts = 0;  // FrameResult::contacts[first_contact, + contacts)
    Vec3d force, torque;                          // on this tool, world frame; torque about its origin
    double max_penetration = 0;
    std::size_t parts_touched = 0;                // its pairs with a contact
};

struct FrameResult {
    // Per pair, the part on the other side: tool after tool, each tool's in ascending part index
    // (with one tool: the static parts in the broad phase).
    std::vector<std::uint32_t> candidates;
    std::vector<PairResult> pairs;          // one per candidate, same order
    std::vector<Contact> contacts;          // world frame, pair after pair (VPS modes)
    std::vector<octree::IstContact> ist_contacts;  // ist modes: the voxel (node) pairs, world frame, pair after pair
    std::vector<ToolResult> tools;          // one per tool
    Vec3d force, torque;                    // totals over all pairs, world frame (one tool: the tool's)
    double max_penetration = 0;
    std::size_t parts_touched = 0;          // pairs with a contact
    double broad_us = 0, narrow_us = 0, frame_us = 0;
};

// Where a scene's load goes, in seconds (wall clock).
struct LoadTimes {
    double verify = 0;  // sizes and hashes of the files read
    double fields = 0;  // the static geometries' fields
    double tool = 0;    // the tool's tree and its check
    double reach = 0;   // the reach boxes, the hierarchy and the queries (the tool's tree packed once)
};

class SceneQuery {
public:
    SceneQuery(const std::filesystem::path& scene_path, const ToolSpec& tool, const QueryOptions& options, int threads = 1);
    // Several tools (or one), in their order.
    // With `ist.on`, the pairs are octree descents (the modes ist and ist-brute); `options` then
    // serves the broad phase alone.
    SceneQuery(const std::filesystem::path& scene_path, const QueryOptions& options, const std::vector<ToolSpec>& tools,
               int threads = 1, const IstSpec& ist = {});
    SceneQuery(SceneQuery&&) noexcept;
    SceneQuery& operator=(SceneQuery&&) noexcept;
    ~SceneQuery();

    // One frame at the tool's world pose; the result stays valid until the next call. After the
    // first frames have grown the buffers, a frame on one thread allocates nothing.
    const FrameResult& query(const Pose& pose);  // one tool only (else hp::Error(usage))
    // One frame with every tool at its world pose (poses[t] for tool t).
    const FrameResult& query(const std::vector<Pose>& poses);

    const Scene& scene() const;
    const std::filesystem::path& scene_path() const;
    const QueryOptions& options() const;
    int threads() const;
    // The tools, by index (0: the first, the only one of a one-tool query).
    std::size_t tool_count() const;
    std::optional<std::size_t> tool_part(std::size_t t = 0) const;  // none for an outside tool
    const std::filesystem::path& tool_file(std::size_t t = 0) const;  // the tool's tree file
    const MovingObjectData& tool(std::size_t t = 0) const;
    const std::filesystem::path& tool_cfm_file(std::size_t t = 0) const;  // empty: no map attached
    const SceneIst* ist() const;  // the octrees, in the ist modes (else null)
    MovingObject tool_view(std::size_t t = 0) const;
    // Whether other tools collide with tool t: it is a part with a field (only with several tools).
    bool tool_has_field(std::size_t t) const;
    // The tool's ball in its own frame: every point and every sphere of its tree inside.
    Vec3d tool_center(std::size_t t = 0) const;
    double tool_radius(std::size_t t = 0) const;
    std::string tool_label(std::size_t t) const;  // its part's name, or its tree file
    const std::vector<std::uint32_t>& static_parts() const;  // ascending part indices
    const StaticField& field(std::size_t part) const;         // a static part's geometry's field
    // The file its field was read from: its geometry's prepared sampler when it has one, else its field.
    const std::filesystem::path& field_file(std::size_t part) const;
    const Aabb& reach(std::size_t part) const;                // world box, static parts
    const BroadPhase& broad_phase() const;                    // indices into static_parts()
    std::size_t geometries_loaded() const;                    // fields loaded (each once)
    std::size_t memory_bytes() const;                         // the loaded fields' samples
    double load_seconds() const;
    const LoadTimes& load_times() const;
    std::vector<std::string> warnings() const;                // parts left out (failed geometries)
    // The options a pair of a frame with `candidates` pairs runs with (its share of the budgets).
    QueryOptions pair_options(std::size_t candidates) const;
    // The broad phase alone: the static candidates of the first tool at a pose (ascending part indices).
    void candidates(const Pose& pose, std::vector<std::uint32_t>& out) const;
    // Tool t's candidates in a frame: static parts and other tools' parts, ascending part indices.
    void candidates(std::size_t t, const std::vector<Pose>& poses, std::vector<std::uint32_t>& out) const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace hp::scene
