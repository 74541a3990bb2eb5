#pragma once
// lib/query/static_field — the static object of a query from its file.
//
// A distance field of haptic-distance (kind "distance"; float, double or scaled Int32 encoding,
// scaled values divided by the file's scale_factor) gives V directly. A layered voxelmap of
// haptic-voxelize (kind "voxelmap") gives V = layer x voxel size: a coarser distance (Sagardia et
// al. 2014's global penetration, eq. 4 with sigma = s), exact to about one voxel. Inside positive, world units.
// Memory: a dense file, one sample per voxel of the grid (float or double, DistanceSampler); a
// narrow-band file (haptic:band > 0), its bricks only, in the sparse sampler.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "field/field.hpp"

namespace hp {

struct StaticField {
    DistanceSampler field;
    std::string kind;       // "distance" or "voxelmap"
    std::string encoding;   // distance: float, double or scaled; voxelmap: "layers"
    nlohmann::json metadata;  // the file's haptic: metadata
};

// Throws hp::Error(bad_input) for a file that is not ours, damaged, or of another kind.
StaticField load_static_field(const std::filesystem::path& path);

}  // namespace hp
