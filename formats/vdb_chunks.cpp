// The chunk walk of formats/vdb_windowed.cpp (vdb_chunks.hpp). OpenVDB 10 reads a node's values
// with io::readCompressedValues, whose bloscFromStream and unzipFromStream read an uncompressed
// chunk (a length of 0 or less) of the length the file gives into the buffer of the values it
// expects, and only then compare the two: a longer chunk writes past that buffer (a crafted .vdb
// with a recomputed trailer, tests/fuzz/regressions/vdb_field and vdb_shell_field). OpenVDB has no
// hook between its reads, so this walk reads the grid's framing as OpenVDB will, ahead of it, and
// knows each buffer's size. Layout: OpenVDB's io/Compression.h and tree/{Root,Internal,Leaf}Node.h.
#include "formats/vdb_chunks.hpp"

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <openvdb/io/Compression.h>
#include <openvdb/io/io.h>
#include <openvdb/openvdb.h>

namespace hp::vdb::detail {
namespace {

using LeafMask = std::array<std::uint64_t, 8>;  // a leaf's value mask: 8^3 bits

// OpenVDB's per-node metadata byte (io/Compression.h): which inactive values and masks follow.
constexpr std::int8_t kOneInactive = 2, kMaskNoInactive = 3, kMaskOneInactive = 4, kMaskTwoInactive = 5, kAllValues = 6;

std::size_t bits_on(const std::vector<std::uint64_t>& words) {
    std::size_t n = 0;
    for (const std::uint64_t w : words) n += std::bitset<64>(w).count();
    return n;
}

class ChunkWalk {
public:
    ChunkWalk(std::istream& is, std::size_t value_size, std::uint32_t compression, std::uint64_t end)
        : is_(is), value_size_(value_size), compression_(compression), end_(end) {}

    // The tree: its buffer count and background, the root's tiles and children, then the leaf
    // buffers in the root's order (by origin, a later child replacing an earlier one of the same
    // origin, as RootNode's table does).
    void tree() {
        skip(4 + value_size_, "the tree's head");
        const std::uint32_t tiles = scalar<std::uint32_t>("the root's tile count");
        const std::uint32_t children = scalar<std::uint32_t>("the root's child count");
        if (std::uint64_t{tiles} * (13 + value_size_) > left()) fail("the root declares " + std::to_string(tiles) + " tiles past the grid's end");
        // A tile: its origin, its value, and its active state as one byte, which OpenVDB reads into a
        // bool (any byte but 0 or 1 is undefined behaviour there: UndefinedBehaviorSanitizer's "load
        // of value 54, which is not a valid value for type 'bool'" in RootNode::readTopology).
        const std::size_t tile_size = 13 + value_size_;
        std::vector<char> block;
        for (std::uint32_t done = 0; done < tiles;) {
            const std::uint32_t n = std::min<std::uint32_t>(tiles - done, 4096);
            block.resize(n * tile_size);
            read(block.data(), block.size(), "the root's tiles");
            for (std::uint32_t t = 0; t < n; ++t) {
                const auto active = static_cast<std::uint8_t>(block[t * tile_size + tile_size - 1]);
                if (active > 1) fail("a root tile's active state is " + std::to_string(active) + " (0 or 1)");
            }
            done += n;
        }
        if (std::uint64_t{children} * (12 + 2 * 4096 + 1) > left())
            fail("the root declares " + std::to_string(children) + " children past the grid's end");
        std::map<std::array<std::int32_t, 3>, std::vector<std::vector<LeafMask>>> roots;
        for (std::uint32_t n = 0; n < children; ++n) {
            std::array<std::int32_t, 3> origin{};
            read(reinterpret_cast<char*>(origin.data()), sizeof origin, "a root child's origin");
            roots[origin] = upper_node();
        }
        for (const auto& [origin, lower_nodes] : roots)
            for (const auto& leaves : lower_nodes)
                for (const LeafMask& topology : leaves) {
                    LeafMask mask{};
                    read(reinterpret_cast<char*>(mask.data()), sizeof mask, "a leaf's value mask");
                    if (mask != topology) fail("a leaf's value mask in its buffer differs from the one in the topology");
                    values(512, std::vector<std::uint64_t>(mask.begin(), mask.end()), "a leaf's values");
                }
    }

private:
    // An internal node of 32^3 (its children the nodes of 16^3): the leaf masks of its lower nodes.
    std::vector<std::vector<LeafMask>> upper_node() {
        const std::vector<std::uint64_t> child = mask(512, "an internal node's child mask"), value = mask(512, "an internal node's value mask");
        values(32768, value, "an internal node's tiles");
        std::vector<std::vector<LeafMask>> lower;
        for (std::size_t i = 0; i < 32768; ++i)
            if (child[i >> 6] >> (i & 63) & 1) lower.push_back(lower_node());
        return lower;
    }

    // An internal node of 16^3 (its children leaves of 8^3): its leaves' value masks.
    std::vector<LeafMask> lower_node() {
        const std::vector<std::uint64_t> child = mask(64, "an internal node's child mask"), value = mask(64, "an internal node's value mask");
        values(4096, value, "an internal node's tiles");
        std::vector<LeafMask> leaves;
        for (std::size_t i = 0; i < 4096; ++i) {
            if (!(child[i >> 6] >> (i & 63) & 1)) continue;
            LeafMask m{};
            read(reinterpret_cast<char*>(m.data()), sizeof m, "a leaf's value mask");
            leaves.push_back(m);
        }
        return leaves;
    }

    // io::readCompressedValues of a node of `count` values and value mask `value_mask`: the
    // metadata byte, the inactive values and selection mask it announces, then the values' chunk.
    void values(std::size_t count, const std::vector<std::uint64_t>& value_mask, const char* what) {
        const std::int8_t meta = scalar<std::int8_t>(what);
        if (meta == kOneInactive || meta == kMaskOneInactive || meta == kMaskTwoInactive)
            skip(value_size_ * (meta == kMaskTwoInactive ? 2 : 1), what);
        if (meta == kMaskNoInactive || meta == kMaskOneInactive || meta == kMaskTwoInactive) skip(value_mask.size() * 8, what);
        const bool mask_compressed = (compression_ & openvdb::io::COMPRESS_ACTIVE_MASK) != 0;
        chunk(std::uint64_t{value_size_} * (mask_compressed && meta != kAllValues ? bits_on(value_mask) : count), what);
    }

    // io::readData of `expected` bytes: Blosc (before zip, as readData tries them), zip, or raw.
    void chunk(std::uint64_t expected, const char* what) {
        const bool blosc = (compression_ & openvdb::io::COMPRESS_BLOSC) != 0;
        if (!blosc && !(compression_ & openvdb::io::COMPRESS_ZIP)) return skip(expected, what);
        const std::int64_t stored = scalar<std::int64_t>(what);
        if (stored <= 0) {
            const std::uint64_t length = 0 - static_cast<std::uint64_t>(stored);
            if (length != expected)
                fail(std::string(what) + ": an uncompressed chunk of " + std::to_string(length) + " bytes for a buffer of " +
                     std::to_string(expected));
            return skip(length, what);
        }
        const std::uint64_t length = static_cast<std::uint64_t>(stored);
        if (length > left()) fail(std::string(what) + ": a compressed chunk of " + std::to_string(length) + " bytes past the grid's end");
        if (!blosc) return skip(length, what);
        // Blosc's header (16 bytes): its uncompressed size at byte 4 and its own size at byte 12,
        // which blosc_decompress_ctx trusts over the buffer OpenVDB hands it.
        std::array<unsigned char, 16> head{};
        if (length < head.size()) fail(std::string(what) + ": a Blosc chunk of " + std::to_string(length) + " bytes, shorter than its header");
        read(reinterpret_cast<char*>(head.data()), head.size(), what);
        const auto le32 = [&](std::size_t at) {
            return std::uint32_t{head[at]} | std::uint32_t{head[at + 1]} << 8 | std::uint32_t{head[at + 2]} << 16 | std::uint32_t{head[at + 3]} << 24;
        };
        if (le32(4) != expected || le32(12) > length || le32(12) < head.size())
            fail(std::string(what) + ": a Blosc chunk of " + std::to_string(length) + " bytes whose header gives " + std::to_string(le32(12)) +
                 " bytes for " + std::to_string(le32(4)) + " of values, where the buffer holds " + std::to_string(expected));
        skip(length - head.size(), what);
    }

    [[noreturn]] static void fail(const std::string& what) { throw std::runtime_error("grid data: " + what); }

    std::uint64_t left() {
        const std::streamoff at = is_.tellg();
        if (!is_ || at < 0) fail("the grid ends early");
        return static_cast<std::uint64_t>(at) < end_ ? end_ - static_cast<std::uint64_t>(at) : 0;
    }
    void read(char* out, std::size_t n, const std::string& what) {
        if (n > left()) fail(what + " ends past the grid's end");
        is_.read(out, static_cast<std::streamsize>(n));
        if (!is_) fail(what + " ends past the file's end");
    }
    void skip(std::uint64_t n, const std::string& what) {
        if (n > left()) fail(what + " ends past the grid's end");
        is_.seekg(static_cast<std::streamoff>(n), std::ios_base::cur);
    }
    template <typename T>
    T scalar(const std::string& what) {
        T v{};
        read(reinterpret_cast<char*>(&v), sizeof v, what);
        return v;
    }
    std::vector<std::uint64_t> mask(std::size_t words, const std::string& what) {
        std::vector<std::uint64_t> m(words);
        read(reinterpret_cast<char*>(m.data()), words * 8, what);
        return m;
    }

    std::istream& is_;
    std::size_t value_size_;
    std::uint32_t compression_;
    std::uint64_t end_;
};

// The size of one value of the grid types hapticprep writes; 0 for another type.
std::size_t value_size_of(const std::string& type) {
    if (type == openvdb::Int32Grid::gridType()) return sizeof(openvdb::Int32Grid::ValueType);
    if (type == openvdb::FloatGrid::gridType()) return sizeof(openvdb::FloatGrid::ValueType);
    if (type == openvdb::DoubleGrid::gridType()) return sizeof(openvdb::DoubleGrid::ValueType);
    if (type == openvdb::Vec3SGrid::gridType()) return sizeof(openvdb::Vec3SGrid::ValueType);
    return 0;
}

}  // namespace

bool check_grid_chunks(std::istream& is, const openvdb::io::GridDescriptor& gd) {
    const std::size_t value_size = value_size_of(gd.gridType());
    if (value_size == 0 || gd.saveFloatAsHalf()) return false;
    if (openvdb::io::getFormatVersion(is) < openvdb::OPENVDB_FILE_VERSION_NODE_MASK_COMPRESSION)
        throw std::runtime_error("file format older than the walk of grid data reads");
    std::uint32_t compression = 0;
    is.read(reinterpret_cast<char*>(&compression), sizeof compression);
    openvdb::MetaMap meta;
    meta.readMeta(is);
    openvdb::GridBase::createGrid(gd.gridType())->readTransform(is);
    if (!is) throw std::runtime_error("grid '" + gd.gridName() + "' ends early");
    ChunkWalk(is, value_size, compression, static_cast<std::uint64_t>(gd.getEndPos())).tree();
    return true;
}

}  // namespace hp::vdb::detail
