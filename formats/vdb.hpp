#pragma once
// formats/vdb — OpenVDB files of hapticprep (voxelmaps, distance fields). See formats/vdb.md.
//
// This header keeps OpenVDB out: only formats/vdb*.cpp include OpenVDB's headers.
//
// Layout: voxel (i, j, k) of a GridSpec is OpenVDB index coordinate (i, j, k); the grid's linear
// transform has voxel size s and maps index (0,0,0) to the centre of voxel (0,0,0). Every grid
// carries the file's `haptic:` metadata (SPEC §4): the keys of `metadata` prefixed with
// "haptic:"; strings, numbers and booleans map to VDB metadata of that type, objects and arrays
// are stored as JSON strings. The grid spec itself is stored too (haptic:origin, haptic:dims,
// haptic:voxel_size) so that a reader recovers it exactly.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/progress.hpp"
#include "voxel/grid.hpp"

namespace hp::vdb {

enum class ValueType { int32, float32, float64, vec3f };

// Produces slice z (dims[0] * dims[1] values, x fastest) of a grid. The writer calls it for
// z = 0, 1, ..., dims[2]-1 in this order, once each, from the calling thread, so a producer may
// free its own storage as it goes. `out` points to values of the grid's type (int32_t, float,
// double, or 3 floats per voxel for vec3f).
using SliceSource = std::function<void(int z, void* out)>;

struct GridOut {
    std::string name;        // "layers", "distance", "gradient"...
    ValueType type = ValueType::int32;
    SliceSource slices;
    double background = 0;   // value of voxels outside the grid (and of inactive tiles)
    bool level_set = false;  // grid class level set (for exported standard level sets)
};

struct WriteOptions {
    // A plain OpenVDB file as other tools write it: no haptic: metadata, no checksum trailer.
    // For exports to other VDB tools; hapticprep's own readers treat it as a foreign file.
    bool plain = false;
};

// Writes all grids over `grid` to `path` atomically (temp file + rename), with `metadata`
// (keys without the "haptic:" prefix; format_version, grid, voxel_size are set here, and
// sign_convention = "inside_positive" and tool_version when the caller gives none).
// The tree is built slab by slab of 8 z-slices straight into leaf nodes; blocks of 8^3 equal
// voxels become tiles and constant tiles are pruned upwards, so deep constant regions stay
// sparse; every voxel of the grid reads back its value. Peak memory: the trees plus 8 slices
// (the finished file is hashed by streaming). Progress phases: "tree" (fraction of slabs),
// "save" (OpenVDB writes and compresses; no fraction), "checksum". Cost at the largest target
// (1.5e9 Int32 voxels, formats/vdb.md): about a minute and 6.2 GiB peak. Throws
// hp::Error(cannot_write).
void write(const std::filesystem::path& path, const GridSpec& grid, const std::vector<GridOut>& grids,
           const nlohmann::json& metadata, const std::string& creator, const WriteOptions& options = {},
           const Progress& progress = {});

struct GridInfo {
    std::string name;
    std::string value_type;  // OpenVDB's type name: "int32", "float", "double", "vec3s"...
    std::string grid_class;  // "level set", "fog volume", "unknown"
    std::size_t active_voxels = 0;
    std::size_t memory_bytes = 0;  // in-memory size of the tree
    std::size_t leaf_nodes = 0;      // deep inspection only
    std::size_t tiles = 0;           // active tiles; deep inspection only
};

struct FileInfo {
    std::string creator;               // the file's "creator" metadata (e.g. "hapticprep 0.1.0")
    nlohmann::json metadata;           // haptic: keys of the first grid, prefix stripped; {} if none
    bool ours = false;                 // has haptic: metadata with a grid spec
    GridSpec grid;                     // valid when ours
    std::vector<GridInfo> grids;
};

// True when the file starts with OpenVDB's magic number (content, not extension).
bool looks_like_vdb(const std::filesystem::path& path);

// Opens the file and describes it: metadata only, or with `deep` also the trees (node counts and
// memory). Verifies our checksum trailer first (see formats/vdb.md). Throws hp::Error(bad_input)
// when it is not a readable VDB, is damaged, or was written by a newer format version.
FileInfo inspect(const std::filesystem::path& path, bool deep = false);

// Reads grid `name` densely over the file's GridSpec, calling `sink(z, values)` for
// z = 0..dims[2]-1 in order (values as in SliceSource). Throws hp::Error(bad_input) when the
// file is not ours, the grid is missing or of another type.
void read_slices(const std::filesystem::path& path, const std::string& name, ValueType type,
                 const std::function<void(int z, const void* values)>& sink, FileInfo* info = nullptr);

// Convenience: the whole grid as one dense array (x fastest).
std::vector<std::int32_t> read_int32(const std::filesystem::path& path, const std::string& name,
                                     FileInfo* info = nullptr);
std::vector<double> read_real(const std::filesystem::path& path, const std::string& name,
                              FileInfo* info = nullptr);  // float or double grids, as doubles

}  // namespace hp::vdb
