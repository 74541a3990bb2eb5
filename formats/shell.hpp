#pragma once
// formats/shell — pointshell files and point-sphere tree files (.hps) in the project's container
// (formats/container.hpp; byte layout of the sections: formats/container.md).
//
// A pointshell file (kind "pointshell") holds the points, their unit inward normals and the
// source triangle of each point. A tree file (kind "point-sphere tree") holds the same sections
// plus the tree: its parameters ("tree" JSON section) and one fixed-size record per cluster
// ("clusters") with its member points in "cluster_points". Readers validate every structural
// invariant before returning, so the stages after them can index without checks.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/container.hpp"
#include "math/vec.hpp"
#include "pointshell/points.hpp"
#include "spheretree/tree.hpp"

namespace hp {

struct ShellFile {
    container::Kind kind = container::Kind::pointshell;  // tree when the file also holds a tree
    nlohmann::json metadata;                             // provenance ("meta" section)
    Pointshell shell;
    std::optional<PointSphereTree> tree;
};

// The file's bytes (deterministic): kind tree when `tree` is given, else pointshell.
// Throws std::invalid_argument when the arrays of `shell` differ in length (a programming error).
std::string serialize_shell_file(const nlohmann::json& metadata, const Pointshell& shell,
                                 const PointSphereTree* tree = nullptr);
// Atomic write of serialize_shell_file(); hp::Error(cannot_write) when it fails.
void write_shell_file(const std::filesystem::path& path, const nlohmann::json& metadata, const Pointshell& shell,
                      const PointSphereTree* tree = nullptr);

// Reads and validates: checksums (container), equal counts, at least one point, finite points,
// unit normals (|n| within 1e-3 of 1), and for trees: the root is cluster 0 at level 1, every
// parent/children link agrees both ways, levels step by one, ids are breadth-first (children
// consecutive and after their parent), indices in range, finite spheres, and every point lies in
// exactly one leaf. hp::Error(bad_input) naming the file and the first problem otherwise.
// `require_tree`: a plain pointshell is rejected ("... is a pointshell without a tree").
ShellFile read_shell_file(const std::filesystem::path& path, bool require_tree = false);
ShellFile parse_shell_file(std::string bytes, const std::string& where, bool require_tree = false);

}  // namespace hp
