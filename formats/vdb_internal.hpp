#pragma once
// Internal to formats/vdb*.cpp: what the write, read and integrity units share. No OpenVDB here.
#include <cstdint>
#include <filesystem>
#include <string>

namespace hp::vdb::detail {

// haptic:format_version written by this build; readers accept every version up to it.
inline constexpr std::int64_t kFormatVersion = 1;

// openvdb::initialize(), once per process.
void init_openvdb();

// vdb_write.cpp. How many leaves this process's saves serialized a second time because their
// compressed bytes outgrew the leaf's buffer (incompressible values); for tests.
std::uint64_t leaves_serialized_twice();

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
