#pragma once
// formats/vdb — OpenVDB files of hapticprep (voxelmaps, distance fields): byte layout, metadata,
// versioning and damage detection in formats/vdb.md. Voxel (i, j, k) of a GridSpec is index
// coordinate (i, j, k); the transform maps it to the voxel's centre. Every grid carries the
// file's metadata as "haptic:" keys, the GridSpec included (exact round trip).
// Code: vdb_write.cpp (trees, save), vdb_read.cpp (Reader), vdb_integrity.cpp (UUID, checksum
// trailer, framing walk). Only formats/vdb*.cpp include OpenVDB; this header keeps it out.
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/progress.hpp"
#include "voxel/brick.hpp"
#include "voxel/grid.hpp"

namespace hp::vdb {

namespace detail {
struct OpenedFile;  // vdb_read.cpp: the verified file, held open
struct StoredGrid;  // vdb_internal.hpp
}  // namespace detail

enum class ValueType { int32, float32, float64, vec3f };

// How a distance field stores its values (haptic-distance --encoding, haptic:encoding in the
// file): a Float grid, a Double grid, or an Int32 grid of round(V * 10^precision). The names in
// the enum's order; a file without the key holds floats.
enum class DistanceEncoding { float32, float64, scaled };
inline constexpr std::array<std::string_view, 3> kDistanceEncodingNames{"float", "double", "scaled"};
inline std::string distance_encoding_name(DistanceEncoding e) { return std::string(kDistanceEncodingNames[static_cast<std::size_t>(e)]); }
// One of kDistanceEncodingNames, or nullopt.
inline std::optional<DistanceEncoding> parse_distance_encoding(std::string_view name) {
    for (std::size_t i = 0; i < kDistanceEncodingNames.size(); ++i)
        if (kDistanceEncodingNames[i] == name) return static_cast<DistanceEncoding>(i);
    return std::nullopt;
}
// The name a distance file's metadata gives its encoding (haptic:encoding), "float" without it.
inline std::string distance_encoding_text(const nlohmann::json& metadata) {
    return metadata.value("encoding", distance_encoding_name(DistanceEncoding::float32));
}

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
    // Sparse producer, used instead of `slices` when set: for each 8^3 block of the grid (number
    // b = (bz * by_count + by) * bx_count + bx, in increasing order, once each, from the calling
    // thread) either its 512 values (offset x + 8 y + 64 z inside the block, values beyond the
    // grid ignored; the pointer need only stay valid until the next call) or nullptr after
    // writing the block's constant value to `tile`. Constant blocks
    // become tiles (pruned upwards), never voxels; the work is per block, not per voxel.
    std::function<const void*(std::size_t block, void* tile)> blocks = nullptr;
    // The same grid as a file read in this process stores it (Reader::stored_grid), or null: the
    // caller's promise that `blocks` gives exactly that grid's voxels and tiles, and the same
    // background. The writer then copies the stored topology and compressed leaves (the bytes
    // it would write) instead of building and compressing them again, when the stored grid is of
    // this type, transform and compression; otherwise it uses `blocks`.
    std::shared_ptr<const detail::StoredGrid> stored = nullptr;
};

struct WriteOptions {
    // A plain OpenVDB file as other tools write it: no haptic: metadata, no checksum trailer.
    // For exports to other VDB tools; hapticprep's own readers treat it as a foreign file.
    bool plain = false;
    // Saves through openvdb::io::File (one thread for the leaf buffers) instead of the parallel
    // writer, which lays the file out byte for byte the same (for tests comparing the two).
    bool openvdb_writer = false;
};

// Writes all grids over `grid` to `path` atomically (temp file + rename), with `metadata`
// (keys without the "haptic:" prefix; format_version, grid, voxel_size are set here, and
// sign_convention = "inside_positive" and tool_version when the caller gives none).
// The tree is built slab by slab of 8 z-slices straight into leaf nodes; blocks of 8^3 equal
// voxels become tiles and constant tiles are pruned upwards, so deep constant regions stay
// sparse; every voxel of the grid reads back its value. Each leaf is compressed as it is built
// and keeps no values: peak memory is the compressed leaves plus 8 slices (the finished file is
// hashed by streaming). Progress phases: "tree" (fraction of slabs, leaves compressed as they
// come), "save" (the file written; no fraction), "checksum". Cost at the largest target
// (1.5e9 Int32 voxels): about a minute. Throws hp::Error(cannot_write).
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
    double background = 0;           // the tree's background (x of a vector); deep inspection only
};

struct FileInfo {
    std::string creator;               // the file's "creator" metadata (e.g. "hapticprep 0.1.0")
    nlohmann::json metadata;           // haptic: keys of the first grid, prefix stripped; {} if none
    bool ours = false;                 // has haptic: metadata with a grid spec
    std::string checksum;              // the verified trailer's hash: "xxh3-64", "fnv1a-64" (older files), "" (none)
    GridSpec grid;                     // valid when ours
    std::vector<GridInfo> grids;
};

// True when the file starts with OpenVDB's magic number (content, not extension).
bool looks_like_vdb(const std::filesystem::path& path);

// A VDB file opened for reading: open() runs every check of formats/vdb.md "Damage detection"
// once (magic number, checksum trailer hashed in one streaming pass, framing, metadata and format
// version); the reads that follow parse the requested grid only and never hash the file again.
// Throws hp::Error(bad_input) naming the file when it is not a readable VDB, is damaged, or was
// written by a newer format version; the reads throw it when the file is not ours, the grid is
// missing or holds another type. Not thread-safe; one Reader per thread.
class Reader {
public:
    // deep: also load the trees to count nodes and memory (GridInfo's deep fields).
    static Reader open(const std::filesystem::path& path, bool deep = false);

    const FileInfo& info() const { return info_; }
    const std::filesystem::path& path() const { return path_; }
    // OpenVDB's value type name of grid `name` ("int32", "float", "double", "vec3s"), "" if absent.
    std::string value_type(const std::string& name) const;

    // Grid `name` densely over the file's GridSpec: sink(z, values) for z = 0..dims[2]-1 in
    // order (values as in SliceSource), one slab of 8 slices in memory at a time.
    void read_slices(const std::string& name, ValueType type, const std::function<void(int z, const void* values)>& sink) const;
    // The whole grid as one dense array (x fastest).
    std::vector<std::int32_t> read_int32(const std::string& name) const;
    std::vector<double> read_real(const std::string& name) const;  // a float or double grid, as doubles
    // The "distance" grid in world units, inside positive, in any encoding: float or double as
    // stored, scaled Int32 divided by haptic:scale_factor. The grid's type must match haptic:encoding.
    std::vector<double> read_distance() const;
    // Grid `name` block by block (8^3 blocks in the order of GridOut::blocks): sink(b, brick,
    // tile) with brick = the block's 512 values (x + 8 y + 64 z) when the file stores voxels there,
    // else nullptr and tile = its constant. Memory: one block at a time, no dense array.
    void read_blocks(const std::string& name, ValueType type,
                     const std::function<void(std::size_t block, const void* brick, const void* tile)>& sink) const;
    // Sparse forms: stored voxels as bricks, constant blocks as tiles (voxel/band.hpp); the bricks
    // are filled on all threads.
    BrickField<std::int32_t> read_int32_bricks(const std::string& name) const;
    // An int32 grid clamped to [-limit, limit] (limit at most 32767), as int16; `clamped`, when
    // given, tells whether any value lay beyond the limit.
    BrickField<std::int16_t> read_int16_bricks(const std::string& name, std::int32_t limit, bool* clamped = nullptr) const;
    // The "distance" grid as read_distance() gives it, sparse.
    BrickField<double> read_distance_bricks() const;
    // Grid `name` as stored, for GridOut::stored when a file written now holds the same grid;
    // null when it cannot be copied (absent, an instance, half floats, a layout not understood or
    // damaged); never throws for the file's content.
    std::shared_ptr<const detail::StoredGrid> stored_grid(const std::string& name) const;

private:
    // Grid `name` (of `type`, whose values are S) as bricks of T = convert(S); observe(S) sees the
    // values of the voxels inside the grid, on any thread.
    struct Unobserved {  // the default: nothing to see (inlined away)
        template <class S>
        void operator()(const S&) const {}
    };
    template <class T, class S, class Convert, class Observe = Unobserved>
    BrickField<T> read_bricks_as(const std::string& name, ValueType type, Convert convert, Observe observe = {}) const;
    std::filesystem::path path_;
    FileInfo info_;
    // The file open() verified, held open: reads parse these bytes (through a dup of its
    // descriptor), not whatever the path names later.
    std::shared_ptr<const detail::OpenedFile> file_;
};

// The background value of a stored int32, float or double grid (a GridOut using it must have it).
double stored_background(const detail::StoredGrid& grid);

// Reader::open(path, deep).info().
FileInfo inspect(const std::filesystem::path& path, bool deep = false);

// One-call forms of the Reader's reads (each opens and verifies the file once); `info`, when
// given, receives the file's description.
void read_slices(const std::filesystem::path& path, const std::string& name, ValueType type,
                 const std::function<void(int z, const void* values)>& sink, FileInfo* info = nullptr);
std::vector<std::int32_t> read_int32(const std::filesystem::path& path, const std::string& name,
                                     FileInfo* info = nullptr);
std::vector<double> read_real(const std::filesystem::path& path, const std::string& name,
                              FileInfo* info = nullptr);  // float or double grids, as doubles

}  // namespace hp::vdb
