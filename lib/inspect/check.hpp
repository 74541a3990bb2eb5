#pragma once
// lib/inspect/check — haptic-dump --check: the full integrity check of a file.
//
// check() identifies the file by content like describe() and runs every check of its kind. A file
// that cannot be read (missing, truncated, checksum mismatch, unknown kind) throws
// hp::Error(bad_input) (exit 3); one that reads but breaks an invariant gives a report with
// problems (haptic-dump exits 1). VDB files: checksum trailer and framing, complete metadata, every
// grid covers exactly the grid spec's voxels, the kind's grids exist with their types, and a
// distance file's layers agree with its distances (docs/haptic-dump.md lists the checks).
// Adding the checks of a container kind: write `void check_<kind>(const std::filesystem::path&,
// CheckReport&)` next to describe_<kind>.cpp, declare it below, add one line to the dispatch in
// check_container (check.cpp). The container's framing and checksums are verified before the hook
// runs; a hook adds report.pass(...) or report.problem(...) and throws only for an unreadable file.
#include <filesystem>
#include <string>
#include <vector>

#include "inspect/inspect.hpp"

namespace hp::inspect {

struct CheckReport {
    std::string file;
    std::string kind;
    std::vector<std::string> passed;    // checks that hold, in the order run
    std::vector<std::string> problems;  // every failure found (the app lists the first ones)

    void pass(const std::string& what) { passed.push_back(what); }
    void problem(const std::string& what) { problems.push_back(what); }
    bool ok() const { return problems.empty(); }
    // Text (one line per check, at most `max_problems` problems) and JSON
    // ({"file", "kind", "check": {"ok", "passed", "problems"}}).
    Summary summary(std::size_t max_problems = 10) const;
};

CheckReport check(const std::filesystem::path& path, const MeshLoadOptions& mesh_options = {});

// Per-kind checks (dispatched by check()).
void check_vdb(const std::filesystem::path& path, CheckReport& report);
void check_container(const std::filesystem::path& path, CheckReport& report);
// Pointshells and trees (check_shell.cpp): the reader's structural checks (counts, unit normals,
// links, one leaf per point) and, for trees, that every sphere contains every point below it.
void check_shell(const std::filesystem::path& path, CheckReport& report);
// scene.json (describe_scene.cpp): every key, and every prepared file present with its size and hash.
void check_scene(const std::filesystem::path& path, CheckReport& report);
// Prepared samplers (check_sampler.cpp): the reader's layout checks (formats/sampler.md) and the
// field record of the metadata.
void check_sampler(const std::filesystem::path& path, CheckReport& report);
// Octrees (describe_octree.cpp): the reader's structure and every voxel inside its ancestors' tight spheres.
void check_octree(const std::filesystem::path& path, CheckReport& report);

}  // namespace hp::inspect
