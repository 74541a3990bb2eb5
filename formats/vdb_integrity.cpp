// The integrity unit of formats/vdb: the checksum trailer, the content-derived UUID and the
// framing walk that runs before OpenVDB parses a file. Byte layout and rules: formats/vdb.md,
// "Determinism" and "Damage detection".
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <openvdb/openvdb.h>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "formats/vdb_internal.hpp"

namespace hp::vdb::detail {
namespace fs = std::filesystem;

namespace {

// The trailer: 8 magic bytes naming the hash, then the 64-bit hash of every byte before the
// trailer, little-endian. Files are written with XXH3-64; FNV-1a 64 files (written before XXH3)
// are still verified.
constexpr char kMagicXxh3[8] = {'H', 'P', 'V', 'D', 'B', 'X', 'H', '3'};
constexpr char kMagicFnv[8] = {'H', 'P', 'V', 'D', 'B', 'S', 'U', 'M'};
constexpr std::size_t kTrailerSize = 16;

// Streams `size` bytes of `in` from its current position through `f(data, n)`.
template <class F>
void stream_bytes(std::istream& in, std::uint64_t size, F&& f) {
    std::vector<char> buf(1 << 20);
    while (size > 0) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, buf.size()));
        if (!in.read(buf.data(), static_cast<std::streamsize>(n))) throw std::runtime_error("read error");
        f(buf.data(), n);
        size -= n;
    }
}

// The bytes of a metadata value of OpenVDB's fixed-size types; 0 for the others (string, unknown).
std::size_t fixed_size(const std::string& type) {
    static const std::pair<const char*, std::size_t> kSizes[] = {
        {"bool", 1},   {"int32", 4},  {"int64", 8},  {"float", 4},  {"double", 8}, {"vec2i", 8},  {"vec2s", 8},
        {"vec2d", 16}, {"vec3i", 12}, {"vec3s", 12}, {"vec3d", 24}, {"vec4i", 16}, {"vec4s", 16}, {"vec4d", 32},
        {"mat4s", 64}, {"mat4d", 128}};
    for (const auto& [name, size] : kSizes)
        if (type == name) return size;
    return 0;
}

// Bounded reads over [pos, end) of a file; anything that would run past `end` is damage.
struct Cursor {
    std::ifstream& in;
    const fs::path& path;
    std::uint64_t pos, end;

    void need(std::uint64_t n, const std::string& what) const {
        if (n > end - pos)
            fail_input(path.string(), "truncated or corrupt VDB file (" + what + " at byte " + std::to_string(pos) +
                                          " runs past byte " + std::to_string(end) + ")");
    }
    template <class T>
    T scalar(const std::string& what) {
        need(sizeof(T), what);
        T v{};
        in.seekg(static_cast<std::streamoff>(pos));
        if (!in.read(reinterpret_cast<char*>(&v), sizeof(T))) fail_input(path.string(), "read error at byte " + std::to_string(pos));
        pos += sizeof(T);
        return v;
    }
    std::string text(const std::string& what) {
        const std::uint32_t n = scalar<std::uint32_t>(what);
        need(n, what);
        if (n > (1u << 16)) fail_input(path.string(), "corrupt VDB file (" + what + " of " + std::to_string(n) + " bytes)");
        std::string s(n, '\0');
        in.seekg(static_cast<std::streamoff>(pos));
        if (n && !in.read(s.data(), n)) fail_input(path.string(), "read error at byte " + std::to_string(pos));
        pos += n;
        return s;
    }
    void skip(std::uint64_t n, const std::string& what) {
        need(n, what);
        pos += n;
    }
    // A metadata map: count, then (name, type name, value size, value) per entry.
    void metamap(const std::string& owner) {
        const std::uint32_t count = scalar<std::uint32_t>(owner + " metadata count");
        if (count > (end - pos) / 12)
            fail_input(path.string(), "corrupt VDB file (" + owner + " claims " + std::to_string(count) + " metadata entries)");
        for (std::uint32_t m = 0; m < count; ++m) {
            const std::string name = text(owner + " metadata name");
            const std::string type = text(owner + " metadata '" + name + "' type");
            const std::uint32_t size = scalar<std::uint32_t>(owner + " metadata '" + name + "' size");
            // OpenVDB reads a value of a fixed-size type by its type, not by the size the file
            // gives: a size that disagrees would shift every read after it.
            const std::size_t fixed = fixed_size(type);
            if (fixed && size != fixed)
                fail_input(path.string(), "corrupt VDB file (" + owner + " metadata '" + name + "' of type " + type + " has " +
                                              std::to_string(size) + " bytes)");
            if (type == "__delayedload" && size > 0) delayed_load(size, owner + " metadata '" + name + "'");
            skip(size, owner + " metadata '" + name + "'");
        }
    }
    // OpenVDB's delayed-load metadata (io::DelayedLoadMetadata) is read by its own layout, not by
    // its size: a leaf count, then one mask byte and one compressed size (int64) per leaf, each
    // array raw (a length of 0) or Blosc-compressed (its length, then a buffer whose header gives
    // the uncompressed size, which OpenVDB reserves); the compressed sizes may be absent (length
    // 2^32 - 1). A layout that runs past the value's size would shift every read after it, and
    // OpenVDB allocates what the counts say: a count beyond the leaves the rest of the grid can
    // hold (64 bytes of value mask each), an uncompressed size beyond the count's bytes and
    // Blosc's padding of small buffers, or a compressed size beyond the array's length, is refused.
    void delayed_load(std::uint32_t size, const std::string& what) {
        Cursor v{in, path, pos, pos + size};
        const std::uint64_t count = v.scalar<std::uint32_t>(what + " leaf count");
        if (count > (end - pos) / 64)
            fail_input(path.string(), "corrupt VDB file (" + what + " claims " + std::to_string(count) + " leaves)");
        auto array = [&](std::uint64_t element, const char* name) {
            const std::uint32_t bytes = v.scalar<std::uint32_t>(what + " " + name + " length");
            if (bytes == 0) return v.skip(count * element, what + " " + name);
            if (bytes == 0xffffffffu && element == 8) return;
            v.need(bytes, what + " " + name);
            Cursor header{in, path, v.pos + 4, v.end};
            if (bytes < 16 || header.scalar<std::uint32_t>(what) > count * element + 4096)
                fail_input(path.string(), "corrupt VDB file (" + what + ": a compressed " + name + " array of another size)");
            // Blosc takes the buffer's compressed size from its header (bytes 12 to 15) and reads
            // that many from a buffer of `bytes`: a larger one read past the heap buffer.
            header.skip(4, what);
            if (header.scalar<std::uint32_t>(what) > bytes)
                fail_input(path.string(), "corrupt VDB file (" + what + ": a compressed " + name + " array longer than its " +
                                              std::to_string(bytes) + " bytes)");
            v.skip(bytes, what + " " + name);
        };
        array(1, "mask");
        array(8, "leaf sizes");
    }
};

// The bytes of a transform's map after its type name, as OpenVDB 10 reads them (math/Maps.h: a
// Mat4d, or Vec3d members); 0 for a type it does not register (it refuses those itself).
std::uint64_t map_bytes(const std::string& type) {
    static const std::pair<const char*, std::uint64_t> kSizes[] = {
        {"AffineMap", 128},        {"UnitaryMap", 128},         {"ScaleMap", 120},
        {"UniformScaleMap", 120},  {"TranslationMap", 24},      {"ScaleTranslateMap", 144},
        {"UniformScaleTranslateMap", 144}};
    for (const auto& [name, size] : kSizes)
        if (type == name) return size;
    return 0;
}

// The value of a tree's nodes in bytes, from its type name ("Tree_float_5_4_3"); 1 (the least)
// for a value type not listed.
std::uint64_t value_bytes(const std::string& tree_type) {
    static const std::pair<const char*, std::uint64_t> kSizes[] = {
        {"bool", 1},  {"mask", 1},   {"float", 4},  {"double", 8},  {"int32", 4},       {"int64", 8},      {"uint32", 4},
        {"vec3s", 12}, {"vec3d", 24}, {"vec3i", 12}, {"ptidx32", 4}, {"ptidx64", 8}, {"ptdataidx32", 4}, {"ptdataidx64", 8}};
    for (const auto& [name, size] : kSizes)
        if (tree_type.rfind(std::string("Tree_") + name + "_", 0) == 0) return size;
    return 1;
}

// The least bytes one child of the root occupies in the topology: its origin (3 int32) and, when
// the type name gives the child's log2 size N ("Tree_float_5_4_3": 5), its child and value masks of
// 2^(3N) bits each, stored whole.
std::uint64_t root_child_bytes(const std::string& tree_type) {
    const std::size_t at = tree_type.find('_', tree_type.find('_') + 1);
    if (at == std::string::npos || at + 2 >= tree_type.size() || tree_type[at + 2] != '_') return 12;
    const int n = tree_type[at + 1] - '0';
    if (n < 1 || n > 7) return 12;
    return 12 + 2 * ((std::uint64_t{1} << (3 * n)) / 8);
}

// After a grid's metadata (`g` bounded by the start of its leaf buffers): its transform, then the
// head of its topology: the buffer count, the root's background, its tile count and its child
// count. OpenVDB reads that many tiles and children whatever the bytes left: counts read from
// damaged bytes kept it reading past the end of the stream for a minute. Tiles and children
// that the topology's remaining bytes cannot hold are refused here. A map type OpenVDB does not
// register is left to it (it refuses the grid).
void check_root_counts(Cursor& g, const std::string& type, const std::string& owner) {
    std::string map = g.text(owner + " transform");
    if (map == "NonlinearFrustumMap") {
        g.skip(64, owner + " frustum");  // its box (2 Vec3d), taper and depth
        map = g.text(owner + " frustum's linear map");
    }
    const std::uint64_t map_size = map_bytes(map);
    if (map_size == 0) return;
    g.skip(map_size, owner + " transform");
    const std::uint64_t value = value_bytes(type);
    g.skip(4 + value, owner + " topology");  // buffer count, background
    const std::uint64_t tiles = g.scalar<std::uint32_t>(owner + " tile count");
    const std::uint64_t children = g.scalar<std::uint32_t>(owner + " child count");
    const std::uint64_t needed = tiles * (12 + value + 1) + children * root_child_bytes(type);
    if (needed > g.end - g.pos)
        fail_input(g.path.string(), "corrupt VDB file (the root of " + owner + " claims " + std::to_string(tiles) + " tiles and " +
                                        std::to_string(children) + " children, more than its " + std::to_string(g.end - g.pos) +
                                        " bytes of topology hold)");
}

}  // namespace

// OpenVDB writes a random UUID into every file header; replace it by one derived from the
// content so that the same grids give byte-identical files. Then append our checksum trailer.
// Streams the file (two passes, patching in place), so a multi-gigabyte grid costs no memory.
void finalize_file(const fs::path& path) {
    const std::uint64_t size = fs::file_size(path);
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    if (!f) fail_write(path.string(), "cannot reopen the VDB file to finish it");
    std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(size, 128)), '\0');
    f.read(head.data(), static_cast<std::streamsize>(head.size()));
    auto is_uuid_at = [&](std::size_t p) {
        if (p + 36 > head.size()) return false;
        for (std::size_t i = 0; i < 36; ++i) {
            char c = head[p + i];
            bool dash = i == 8 || i == 13 || i == 18 || i == 23;
            if (dash ? c != '-' : !std::isxdigit(static_cast<unsigned char>(c))) return false;
        }
        return true;
    };
    for (std::size_t p = 8; p < std::min<std::size_t>(head.size(), 96); ++p) {
        if (!is_uuid_at(p)) continue;
        Xxh3 uuid_hash(Xxh3::Width::bits128);
        f.seekg(static_cast<std::streamoff>(p + 36));
        stream_bytes(f, size - (p + 36), [&](const char* d, std::size_t n) { uuid_hash.update(d, n); });
        const std::array<std::uint64_t, 2> h128 = uuid_hash.digest128();
        const std::string hex = hex64(h128[0]) + hex64(h128[1]);
        const std::string uuid = hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
                                 hex.substr(16, 4) + "-" + hex.substr(20, 12);
        f.seekp(static_cast<std::streamoff>(p));
        f.write(uuid.data(), static_cast<std::streamsize>(uuid.size()));
        break;
    }
    Xxh3 sum;
    f.seekg(0);
    stream_bytes(f, size, [&](const char* d, std::size_t n) { sum.update(d, n); });
    const std::uint64_t h = sum.digest64();
    char trailer[kTrailerSize];
    std::memcpy(trailer, kMagicXxh3, sizeof kMagicXxh3);
    for (int i = 0; i < 8; ++i) trailer[8 + i] = static_cast<char>((h >> (8 * i)) & 0xFF);
    f.seekp(0, std::ios::end);
    f.write(trailer, kTrailerSize);
    f.close();
    if (!f) fail_write(path.string(), "write failed (disk full?)");
}

// Checks the trailer of one of our files, streaming. Returns the hash it names ("xxh3-64" or
// "fnv1a-64"), or "" when the file has no trailer at all; a file without one whose first grid
// carries our metadata key was cut short and is rejected here, before OpenVDB parses it (OpenVDB
// needs up to a minute on some truncated files).
std::string verify_trailer(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_input(path.string(), std::string("cannot open (") + std::strerror(errno) + ")");
    const std::uint64_t size = fs::file_size(path);
    char trailer[kTrailerSize] = {};
    bool xxh3 = false, fnv = false;
    if (size >= kTrailerSize) {
        in.seekg(static_cast<std::streamoff>(size - kTrailerSize));
        if (in.read(trailer, kTrailerSize)) {
            xxh3 = std::memcmp(trailer, kMagicXxh3, sizeof kMagicXxh3) == 0;
            fnv = std::memcmp(trailer, kMagicFnv, sizeof kMagicFnv) == 0;
        }
    }
    in.clear();
    in.seekg(0);
    if (!xxh3 && !fnv) {
        // The first grid's metadata sits within the first kilobytes of a VDB file.
        std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(size, 1 << 20)), '\0');
        in.read(head.data(), static_cast<std::streamsize>(head.size()));
        if (head.find("haptic:grid") != std::string::npos)
            fail_input(path.string(), "truncated: the checksum trailer of a hapticprep file is missing (make it again)");
        return "";
    }
    std::uint64_t stored = 0;
    for (int i = 0; i < 8; ++i) stored |= static_cast<std::uint64_t>(static_cast<unsigned char>(trailer[8 + i])) << (8 * i);
    Xxh3 sum;
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis
    try {
        stream_bytes(in, size - kTrailerSize, [&](const char* d, std::size_t n) {
            if (xxh3) sum.update(d, n);
            else h = hash64(d, n, h);
        });
    } catch (const std::exception&) {
        fail_input(path.string(), "read error");
    }
    if (xxh3) h = sum.digest64();
    if (h != stored)
        fail_input(path.string(), "corrupt: checksum mismatch (the file was damaged after it was written; make it again)");
    return xxh3 ? "xxh3-64" : "fnv1a-64";
}

// Walks the framing of a VDB file before OpenVDB sees it: header, file metadata, and for each
// grid its descriptor (name, type, byte offsets) and its metadata. OpenVDB trusts these sizes and
// offsets, and on a truncated file can spend a minute allocating and reading garbage; here every
// length is checked against the bytes that exist. Checks file versions 222..224 (OpenVDB 3 to
// 10+) and refuses older ones: OpenVDB reads their header by another layout (a 16-byte UUID
// before 218), which the walk does not check; a damaged version number made it read the file's
// metadata from shifted bytes (a string of a garbage length: 12 s and 3.7 GB for a 42 KB file,
// tests/fuzz/regressions/vdb_field). Refuses a file without grid offsets (a stream), whose grids
// it cannot find. Throws hp::Error(bad_input).
void check_framing(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    const std::uint64_t size = fs::file_size(path);
    Cursor c{in, path, 0, size};
    c.skip(8, "magic number");
    const std::uint32_t version = c.scalar<std::uint32_t>("file version");
    if (version > openvdb::OPENVDB_FILE_VERSION)
        fail_input(path.string(), "written by a newer OpenVDB (file format " + std::to_string(version) + "; this build reads up to " +
                                      std::to_string(openvdb::OPENVDB_FILE_VERSION) + ")");
    if (version < openvdb::OPENVDB_FILE_VERSION_NODE_MASK_COMPRESSION)
        fail_input(path.string(), "written by an older OpenVDB (file format " + std::to_string(version) + "; this build reads formats " +
                                      std::to_string(openvdb::OPENVDB_FILE_VERSION_NODE_MASK_COMPRESSION) + " to " +
                                      std::to_string(openvdb::OPENVDB_FILE_VERSION) + "; write it again with a current OpenVDB)");
    c.skip(8, "library version");
    const bool offsets = c.scalar<std::uint8_t>("header") != 0;
    // The UUID as OpenVDB writes it: 36 characters, hex digits with dashes after the 8th, 12th,
    // 16th and 20th. OpenVDB reads it with boost's operator>>, which skips whitespace before each
    // character: a tab before it made OpenVDB read everything after it one byte later than this
    // walk (a string of 2 GB; tests/fuzz/regressions/vdb_gradient). Anything else is refused.
    const std::uint64_t uuid_at = c.pos;
    const auto uuid = c.scalar<std::array<char, 36>>("file UUID");
    for (int i = 0; i < 36; ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? uuid[i] != '-' : !std::isxdigit(static_cast<unsigned char>(uuid[i])))
            fail_input(path.string(), "corrupt VDB file (its UUID at byte " + std::to_string(uuid_at) +
                                          " is not 36 characters of hex digits and dashes)");
    }
    c.metamap("file");
    // Without grid offsets (a stream written by openvdb::io::Stream) the walk cannot bound what
    // follows the file metadata without reading the grids: on a file of ours whose flag was
    // damaged, OpenVDB read a grid name of a garbage length there (35 s and 11 GB for a 3.3 KB
    // file). Every file io::File writes, ours included, has them.
    if (!offsets)
        fail_input(path.string(), "a VDB stream without grid offsets (written by openvdb::io::Stream), which this reader does not "
                                  "check; write it with openvdb::io::File");
    const std::int32_t grids = c.scalar<std::int32_t>("grid count");
    if (grids < 0 || static_cast<std::uint64_t>(grids) > size / 24)
        fail_input(path.string(), "corrupt VDB file (grid count " + std::to_string(grids) + ")");
    for (std::int32_t i = 0; i < grids; ++i) {
        const std::string name = c.text("grid name");
        const std::string type = c.text("type of grid '" + name + "'");
        const std::string parent = c.text("instance parent of grid '" + name + "'");
        const auto grid_pos = c.scalar<std::int64_t>("offsets of grid '" + name + "'");
        const auto block_pos = c.scalar<std::int64_t>("offsets of grid '" + name + "'");
        const auto end_pos = c.scalar<std::int64_t>("offsets of grid '" + name + "'");
#ifdef HP_FUZZ_CANARY
        // The fuzzing canary (docs/fuzzing.md): the check of the grid's end below, off by one.
        if (end_pos == static_cast<std::int64_t>(size) + 1) __builtin_trap();
#endif
        if (end_pos > static_cast<std::int64_t>(size) && grid_pos >= 0 && grid_pos <= block_pos && block_pos <= end_pos)
            fail_input(path.string(), "truncated: grid '" + name + "' ends at byte " + std::to_string(end_pos) + " but the file has " +
                                          std::to_string(size) + " bytes (copy or make it again)");
        if (grid_pos < static_cast<std::int64_t>(c.pos) || grid_pos > block_pos || block_pos > end_pos ||
            end_pos > static_cast<std::int64_t>(size))
            fail_input(path.string(), "corrupt VDB file (the byte offsets of grid '" + name + "' are inconsistent)");
        Cursor g{in, path, static_cast<std::uint64_t>(grid_pos), static_cast<std::uint64_t>(block_pos)};
        g.skip(4, "compression flags of grid '" + name + "'");
        g.metamap("grid '" + name + "'");
        if (parent.empty()) check_root_counts(g, type, "grid '" + name + "'");
        c.pos = static_cast<std::uint64_t>(end_pos);
    }
}

}  // namespace hp::vdb::detail
