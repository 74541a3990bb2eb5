#pragma once
// Internal to formats/vdb*.cpp: what the write, read and integrity units share. No OpenVDB here.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace hp::vdb::detail {

struct OpenedFile;  // vdb_read.cpp: a verified file held open (its descriptor `fd`)
int fd_of(const OpenedFile& file);

// A grid as a file of ours stores it (Reader::stored_grid, for GridOut::stored): where its parts
// lie and what the writer needs to lay out the same grid around them.
struct StoredGrid {
    std::shared_ptr<const OpenedFile> file;
    std::string type;               // OpenVDB's grid type name
    std::uint32_t compression = 0;  // the grid's data compression flags
    std::string transform;          // the transform's bytes
    std::string topology_head;      // the topology's first 16 bytes: the tree's buffer count (int32), the background
    static constexpr std::size_t kBackgroundAt = 4;  // where the background begins in topology_head
    std::int64_t topology_pos = 0, block_pos = 0, end_pos = 0;  // topology, leaf buffers, end
    std::shared_ptr<const void> meta;  // openvdb::MetaMap: the grid's metadata with its delayed-load metadata
};

// haptic:format_version written by this build; readers accept every version up to it.
inline constexpr std::int64_t kFormatVersion = 1;

// openvdb::initialize(), once per process.
void init_openvdb();

// vdb_archive.cpp. How many leaves this process's saves found incompressible (Blosc's bytes for
// them outgrow their values); for tests.
std::uint64_t leaves_incompressible();

// vdb_integrity.cpp. After OpenVDB wrote `path`: replaces the random header UUID by one derived
// from the content (byte-identical files for identical grids) and appends the checksum trailer.
// Streams the file (no memory). Throws hp::Error(cannot_write).
void finalize_file(const std::filesystem::path& path);

// vdb_integrity.cpp. Hashes the file once and compares it with the trailer. Returns the hash the
// trailer names ("xxh3-64", or "fnv1a-64" for files written before XXH3), "" when there is no
// trailer (a foreign file); throws hp::Error(bad_input) on a mismatch or when a file
// of ours lost its trailer (truncated).
std::string verify_trailer(const std::filesystem::path& path);

// vdb_integrity.cpp. Walks the VDB framing (header, file metadata, grid descriptors and
// metadata) with every length bounded by the file size. Throws hp::Error(bad_input).
void check_framing(const std::filesystem::path& path);

}  // namespace hp::vdb::detail
