#pragma once
// lib/inspect/tree — point-sphere trees in haptic-dump and haptic-spheretree: the per-level
// summary (text and JSON), and the exports of a tree file (formats/shell) as JSON and as PLY.
//
// JSON export shape (other keys may follow in later versions):
//   {"k": K, "levels": L, "source": NAME,
//    "points": [[x, y, z, nx, ny, nz], ...],
//    "clusters": [{"id": i, "level": l, "center": [x, y, z], "radius": r,
//                  "points": [point indices, parent first], "children": [ids], "parent": id or -1}, ...]}
// Cluster ids are the file's breadth-first ids (root 0). Numbers are written with the shortest
// decimal form that reads back to the same double.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inspect/inspect.hpp"
#include "spheretree/tree.hpp"

namespace hp::inspect {

// {"k", "levels", "clusters", "leaves", "per_level": [{"level", "clusters", "leaves", "points",
//  "radius": {"min", "median", "mean", "max"}, "threshold"}, ...]}
nlohmann::json tree_levels_json(const PointSphereTree& tree, const std::vector<TreeLevelStats>& levels);
// That summary as text: "tree ..." header line and one aligned line per level.
std::string format_tree_levels(const nlohmann::json& summary);

// True when `path` starts like a pointshell or tree container (magic and kind tag only; nothing
// is validated). Lets haptic-dump route --export json between trees and CFMs.
bool is_shell_file(const std::filesystem::path& path);

// Adds a tree file's per-level facts to its container summary `s`.
void describe_tree(const std::filesystem::path& path, Summary& s);

// Writes the spheres of one tree level as low-poly sphere meshes (OBJ text, atomically): per
// cluster of that level an object "cluster_<id>", a regular icosahedron whose 12 vertices lie on
// the cluster's sphere. Returns the sphere count. hp::Error(usage) for a level outside 1..levels.
std::size_t export_tree_level_obj(const std::filesystem::path& input, const std::filesystem::path& output, int level);

// Writes the JSON export above of the tree file `input` (atomically); returns the cluster count.
// hp::Error(bad_input) when `input` is not a tree file, hp::Error(cannot_write) on write failure.
std::size_t export_tree_json(const std::filesystem::path& input, const std::filesystem::path& output);

// Writes the parent points (with normals) of the clusters of `level` (1 = root) as PLY; returns
// the point count. hp::Error(usage) when the tree has no such level.
std::size_t export_tree_level_ply(const std::filesystem::path& input, const std::filesystem::path& output, int level,
                                  bool ascii);

}  // namespace hp::inspect
