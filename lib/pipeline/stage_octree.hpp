#pragma once
// lib/pipeline — the octree stage: its typed options (bound to their declaration in
// stage_octree.cpp; the defaults are written here, once), its typed result, and its run, which does
// what haptic-octree does between parsing the options and printing: same library calls, same
// metadata, same output bytes.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/stage_common.hpp"

namespace hp::pipeline {

struct OctreeParams {
    bool surface_only = false;
};

struct OctreeSummary {
    bool surface_only = false;
    int levels = 0;
    std::size_t nodes = 0, voxels = 0;              // in the tree
    std::size_t solid_voxels = 0, surface_voxels = 0;  // of the voxelmap
    std::vector<std::size_t> nodes_per_level;       // levels L..1, then the voxels
    std::size_t mask_bytes = 0, memory_bytes = 0;   // stored (one byte per node); in memory (+ child index)
    double voxel_size = 0;
    int tight_smaller = 0;                          // masks whose tight sphere is smaller than the node's (of 255)
    double seconds_read = 0, seconds_build = 0, seconds_write = 0;
    std::vector<std::string> warnings;
};

nlohmann::json to_json(const OctreeSummary& s);
nlohmann::json to_json(const OctreeSummary& s, const ToolFacts& f, const std::string& voxelmap_file);
std::string format_text(const OctreeSummary& s, const ToolFacts& f);

StageSpec octree_stage();
OctreeSummary run_octree(const StageContext& ctx, const OctreeParams& p);

}  // namespace hp::pipeline
