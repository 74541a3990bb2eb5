// The part of formats/vdb that needs no OpenVDB, linked into every program as it is: recognising a
// VDB file by its magic number, and the one-call forms of the Reader's reads.
#include <cstdint>
#include <fstream>

#include "formats/vdb.hpp"

namespace hp::vdb {

namespace fs = std::filesystem;

bool looks_like_vdb(const fs::path& path) {
    // OpenVDB's OPENVDB_MAGIC ("VDB " read as a little-endian int32), the first 8 bytes of the file
    // as an int64 (tests/inspect/levelset_test.cpp checks it against a file OpenVDB writes).
    constexpr std::int64_t kMagic = 0x56444220;
    std::ifstream in(path, std::ios::binary);
    unsigned char magic[8] = {};
    if (!in.read(reinterpret_cast<char*>(magic), 8)) return false;
    std::int64_t value = 0;
    for (int i = 7; i >= 0; --i) value = (value << 8) | magic[i];
    return value == kMagic;
}

FileInfo inspect(const fs::path& path, bool deep) { return Reader::open(path, deep).info(); }

void read_slices(const fs::path& path, const std::string& name, ValueType type,
                 const std::function<void(int z, const void* values)>& sink, FileInfo* info) {
    const Reader reader = Reader::open(path);
    if (info) *info = reader.info();
    reader.read_slices(name, type, sink);
}

std::vector<std::int32_t> read_int32(const fs::path& path, const std::string& name, FileInfo* info) {
    const Reader reader = Reader::open(path);
    std::vector<std::int32_t> out = reader.read_int32(name);
    if (info) *info = reader.info();
    return out;
}

std::vector<double> read_real(const fs::path& path, const std::string& name, FileInfo* info) {
    const Reader reader = Reader::open(path);
    std::vector<double> out = reader.read_real(name);
    if (info) *info = reader.info();
    return out;
}

}  // namespace hp::vdb
