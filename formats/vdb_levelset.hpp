#pragma once
// formats/vdb_levelset — standard OpenVDB narrow-band level sets for other VDB tools
// (haptic-dump --export levelset). OpenVDB stays out of this header.
//
// Conventions of the written file, as Houdini, Blender and vdb_view expect a level set: one
// FloatGrid named `surface` (by default), grid class level set, signed distance in world units,
// inside NEGATIVE (the opposite of hapticprep's own files), background = half_width voxels
// (3 by default, OpenVDB's usual band). Voxels with |phi| < background are active; everything
// else is inactive and reads +background outside and -background inside (signed flood fill).
// The transform is the one of our files: index (i, j, k) is the centre of voxel (i, j, k) of the
// GridSpec. No haptic: metadata and no checksum trailer: a plain VDB file, which hapticprep's own
// readers treat as foreign.
#include <filesystem>
#include <memory>
#include <string>

#include "core/progress.hpp"
#include "voxel/grid.hpp"

namespace hp::vdb {

struct LevelSetOptions {
    std::string name = "surface";
    double half_width = 3;  // voxels; background = half_width * voxel size
};

class LevelSetWriter {
public:
    LevelSetWriter(const GridSpec& grid, const LevelSetOptions& options = {});
    ~LevelSetWriter();
    LevelSetWriter(const LevelSetWriter&) = delete;
    LevelSetWriter& operator=(const LevelSetWriter&) = delete;

    // Adds slice z (dims[0] * dims[1] values, x fastest, world units, inside negative). Slices
    // may come in any order, each once. Keeps only the narrow band: memory is O(band voxels).
    void add_slice(int z, const float* phi);

    // Flood-fills the signs, prunes and writes the file atomically with file metadata `creator`.
    // Throws hp::Error(cannot_write).
    void write(const std::filesystem::path& path, const std::string& creator, const Progress& progress = {});

    std::size_t active_voxels() const;  // narrow-band voxels added so far

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hp::vdb
