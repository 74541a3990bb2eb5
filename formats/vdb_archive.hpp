#pragma once
// Internal to formats/vdb*.cpp: the save of vdb_write.cpp (vdb_archive.cpp). A file as
// openvdb::io::File::write (OpenVDB 10) lays it out, byte for byte (with a nil header UUID, which
// finalize_file replaces by the content-derived one), but with every leaf compressed once, on all
// threads: OpenVDB compresses every leaf twice, once in parallel for the delayed-load metadata
// (mask kinds and compressed sizes) and once one leaf after the other into the stream. Here each
// leaf goes once through the same OpenVDB function (LeafNode::writeBuffers) into a buffer stream
// tagged with the same settings (data compression, background); the metadata is read off those
// bytes and the bytes are appended in leaf order (vdb_archive.cpp's SerializedLeaves).
// tests/formats/vdb_parallel_write_test.cpp compares the files with OpenVDB's own writer.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>

#include <openvdb/io/File.h>
#include <openvdb/openvdb.h>

#include "formats/vdb_internal.hpp"

namespace hp::vdb::archive {

// The compression this save writes: openvdb::io::File's default, BLOSC | ACTIVE_MASK, when
// OpenVDB was built with Blosc; file_compression() is the default of the OpenVDB loaded.
constexpr std::uint32_t kCompression = openvdb::io::COMPRESS_BLOSC | openvdb::io::COMPRESS_ACTIVE_MASK;
std::uint32_t file_compression();

// A grid's part of the file in two steps: prepare_grid() does the work that needs no stream (the
// statistics metadata, every leaf serialized on all threads) and returns the step that writes the
// grid into the stream (descriptor, metadata, transform, topology, the serialized leaves) and then
// frees the grid. write_file() runs the second step of one grid on its own thread while the next
// grid is built and prepared.
using EmitGrid = std::function<void(std::ostream&, openvdb::io::StreamMetadata::Ptr&)>;

// For grids of the four value types formats/vdb writes (Int32, Float, Double, Vec3S).
template <class GridT>
EmitGrid prepare_grid(const typename GridT::Ptr& grid);

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
