#pragma once
// lib/scene/scene_tool — a scene query's tool from its files (docs/scene.md, "Querying a scene").
//
// A tool is a part of the scene (its geometry's "tree" file of scene.json) or an outside
// point-sphere tree file. Its closest feature map (time-critical, ToolSpec::cfm) is its geometry's
// "cfm" file for a part, or a file given for an outside tool: the map serves the moving side, as
// --cfm does for a pair. A file of scene.json is verified (size and hash) before it is read.
// Errors: hp::Error(bad_input) "SCENE: part 'P': ..." for a part's file that is missing, changed,
// absent from scene.json or refused by its reader; a map that is not the tree's; the outside
// tool's own files' messages. hp::Error(usage) for the combinations check_tool_spec refuses.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "contact/query.hpp"
#include "math/vec.hpp"
#include "query/session.hpp"
#include "scene/scene_file.hpp"

namespace hp::scene {

struct ToolSpec {
    std::string part;                 // a part of the scene (name or index), or
    std::filesystem::path tree_file;  // an outside tool: its point-sphere tree (haptic-spheretree)
    // Time-critical only: the tool's closest feature map attached to every pair it is the moving
    // side of (the map belongs to the moving tree, as --cfm for a pair). A part's is its geometry's
    // "cfm" file of scene.json, verified by its size and hash; an outside tool's is `cfm_file`.
    bool cfm = false;
    std::filesystem::path cfm_file = {};  // an outside tool's map (haptic-cfm of its tree); empty for a part
    // Modes ist and ist-brute: an outside tool's octree (haptic-octree); a part's is its geometry's
    // "octree" file of scene.json.
    std::filesystem::path octree_file = {};
};

// hp::Error(usage): a map asked for in another mode than time-critical, an outside tool's map
// without its file, a file given for a part's map (it is the scene's) or without asking for a map.
void check_tool_spec(const ToolSpec& tool, const QueryOptions& options);

struct SceneTool {
    std::optional<std::size_t> part;  // index into Scene::parts; none for an outside tool
    std::filesystem::path file;       // its tree file
    std::filesystem::path cfm_file;   // its map, when attached (data.cfm)
    MovingObjectData data;
    // Its ball in its own frame: the root sphere's centre, and a radius holding every point and
    // every sphere of its tree (a contact is a point; the time-critical mode's lie on spheres).
    Vec3d center;
    double radius = 0;
};

// Loads tool `part` (or the outside tool of `spec`): its tree (checked to hold its points), and its map.
SceneTool load_scene_tool(const std::filesystem::path& scene_path, const Scene& scene, std::optional<std::size_t> part,
                          const ToolSpec& spec);

// A geometry's file of `kind` after verifying it (present, its recorded size and hash), with
// verify_scene_files' messages; `where` ("SCENE: part 'P'") and `missing` (what to run) name it
// when scene.json lists no such file.
std::filesystem::path verified_geometry_file(const std::filesystem::path& scene_path, const Scene& scene, std::size_t geometry,
                                             const std::string& kind, const std::string& where, const std::string& missing);

}  // namespace hp::scene
