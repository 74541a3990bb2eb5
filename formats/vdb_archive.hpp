#pragma once
// Internal to formats/vdb*.cpp: the save of vdb_write.cpp (vdb_archive.cpp). A file as
// openvdb::io::File::write (OpenVDB 10) lays it out, byte for byte (with a nil header UUID, which
// finalize_file replaces by the content-derived one), but with every leaf compressed once, by the
// threads that build the tree, as soon as its values are in it (LeafStore): OpenVDB compresses
// every leaf twice, once in parallel for the delayed-load metadata (mask kinds and compressed
// sizes) and once one leaf after the other into the stream, and holds every leaf's values until
// then. Each leaf goes through the same OpenVDB function (LeafNode::writeBuffers) into a buffer
// stream tagged with the same settings (data compression, background); the metadata is read off
// those bytes, and the bytes are appended in leaf order (vdb_archive.cpp's RecordedLeaves).
// tests/formats/vdb_parallel_write_test.cpp compares the files with OpenVDB's own writer.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <unordered_map>

#include <openvdb/io/File.h>
#include <openvdb/openvdb.h>

#include "formats/vdb_internal.hpp"

namespace hp::vdb::archive {

// The compression this save writes: openvdb::io::File's default, BLOSC | ACTIVE_MASK, when
// OpenVDB was built with Blosc; file_compression() is the default of the OpenVDB loaded.
constexpr std::uint32_t kCompression = openvdb::io::COMPRESS_BLOSC | openvdb::io::COMPRESS_ACTIVE_MASK;
std::uint32_t file_compression();

// A grid's part of the file in two steps: prepare_grid() does the work that needs no stream (the
// statistics metadata, the leaves' records in leaf order) and returns the step that writes the
// grid into the stream (descriptor, metadata, transform, topology, the serialized leaves) and then
// frees the grid. write_file() runs the second step of one grid on its own thread while the next
// grid is built and prepared.
using EmitGrid = std::function<void(std::ostream&, openvdb::io::StreamMetadata::Ptr&)>;

// A leaf's bytes as LeafNode::writeBuffers writes them after its value mask (the mask kind byte
// of io::writeCompressedValues, inactive values, selection mask, Blosc block), and the two
// entries the delayed-load metadata keeps of them.
struct LeafRecord {
    std::string bytes;
    std::uint8_t mask = 0;        // io::writeCompressedValues' mask kind
    std::uint64_t compressed = 0;  // the Blosc block's size, its 8-byte length included
};

// The leaves of a grid serialized while it is built (build_grid in vdb_write.cpp): each leaf's
// record is taken as soon as its values are in it, and the builder then takes the values away
// (the leaf keeps no buffer), so that a grid's values are never all in memory, only their
// compressed bytes (a sixth of them for a voxelmap's layers). The tree keeps the leaves' origins
// and value masks (its topology).
template <class GridT>
class LeafStore {
public:
    using LeafT = typename GridT::TreeType::LeafNodeType;
    using ValueT = typename GridT::ValueType;
    explicit LeafStore(const ValueT& background) : background_(background) {}
    // Serializes `leaf` (full of its values). Safe on several threads at once.
    LeafRecord take(const LeafT& leaf) const;
    // Keeps the record of `leaf`, once it is in the tree (one call at a time).
    void keep(const LeafT* leaf, LeafRecord record) { records_.emplace(leaf, std::move(record)); }
    const LeafRecord* find(const LeafT* leaf) const {
        const auto it = records_.find(leaf);
        return it == records_.end() ? nullptr : &it->second;
    }
    std::size_t size() const { return records_.size(); }

private:
    ValueT background_;
    std::unordered_map<const LeafT*, LeafRecord> records_;
};

// For grids of the four value types formats/vdb writes (Int32, Float, Double, Vec3S), built with
// their leaves recorded in `store` (their values taken away).
template <class GridT>
EmitGrid prepare_grid(const typename GridT::Ptr& grid, std::shared_ptr<const LeafStore<GridT>> store);

// The grid's part of the file from a stored copy of it (GridOut::stored): the descriptor and
// metadata as prepare_grid() writes them (the statistics and delayed-load metadata of the same
// tree: the stored ones), then the stored topology and leaf buffers byte for byte. `empty`: the
// grid with its metadata and transform but no voxels. Null when the stored grid is laid out
// otherwise than this writer would lay out the grid (type, compression, transform, background).
template <class GridT>
EmitGrid prepare_stored(const typename GridT::Ptr& empty, const detail::StoredGrid& stored);

// Precondition: distinct, non-empty grid names; grids of the four value types written here.
// prepare(n) builds and prepares grid n of `count` (in order; prepare_grid or prepare_stored), and
// grid n is written into the stream on a thread of its own while grid n + 1 is prepared.
void write_file(const std::filesystem::path& path, std::size_t count, const std::function<EmitGrid(std::size_t)>& prepare,
                const openvdb::MetaMap& file_meta);

}  // namespace hp::vdb::archive
