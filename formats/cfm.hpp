#pragma once
// formats/cfm — closest feature map files (.hcfm) in the project's container (kind cfm).
// Sections and validation: formats/cfm.md.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cfm/cfm.hpp"

namespace hp {

// Writes `map` atomically; `metadata` (provenance: tool, parameters, source mesh name and hash,
// tree) becomes the "meta" section. Deterministic bytes.
void write_cfm_file(const std::filesystem::path& path, const nlohmann::json& metadata, const cfm::ClosestFeatureMap& map);

struct CfmFile {
    nlohmann::json metadata;
    cfm::ClosestFeatureMap map;  // layouts filled, ready for lookup()
    std::size_t file_size = 0;
};

// Reads and validates a CFM file: the container's checksums, then the structure (parameters in
// range, one sphere per cluster in order, levels and stacks following the refinement rule,
// records contiguous and counted as the layouts say, feature types known, numbers finite,
// normals unit or zero). Throws hp::Error(bad_input) naming the file and the damage.
CfmFile read_cfm_file(const std::filesystem::path& path);

}  // namespace hp
