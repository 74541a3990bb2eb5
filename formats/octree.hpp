#pragma once
// formats/octree — octree files (.hoct) in the project's container (kind octree): the masks of
// lib/octree with the root's level, origin and voxel size. Sections and validation: formats/octree.md.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "octree/octree.hpp"

namespace hp {

// Writes `tree` atomically; `metadata` (provenance: tool, parameters, source voxelmap name and
// hash) becomes the "meta" section. Deterministic bytes.
void write_octree_file(const std::filesystem::path& path, const nlohmann::json& metadata, const octree::Octree& tree);

struct OctreeFile {
    nlohmann::json metadata;
    octree::Octree tree;  // finalized: first_child and level_begin filled
    std::size_t file_size = 0;
};

// Reads and validates an octree file: the container's checksums, then the structure (one params
// record, level in 1..21, finite origin, voxel size > 0, known flags, node and voxel counts equal
// to what the masks address, no zero mask). Throws hp::Error(bad_input) naming the file and the damage.
OctreeFile read_octree_file(const std::filesystem::path& path);

}  // namespace hp
