// The one translation unit (with formats/vdb_*.cpp) that includes OpenVDB. See formats/vdb.md.
#include "formats/vdb.hpp"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>

#include <malloc.h>
#include <memory>

#include <openvdb/io/File.h>
#include <openvdb/openvdb.h>
#include <openvdb/tools/Prune.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/version.hpp"

namespace hp::vdb {
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kFormatVersion = 1;
constexpr char kTrailerMagic[8] = {'H', 'P', 'V', 'D', 'B', 'S', 'U', 'M'};
constexpr std::size_t kTrailerSize = 16;  // magic + hash64 of every byte before the trailer

void init_openvdb() {
    static std::once_flag once;
    std::call_once(once, [] { openvdb::initialize(); });
}

// Builds the tree slab by slab (8 z-slices, one leaf deep): each 8 x 8 x 8 block of the slab
// becomes an active tile when all its voxels are equal, else a leaf whose buffer is filled
// directly (no per-voxel tree traversal). Blocks are built in parallel and added in a fixed
// order, so the tree does not depend on the thread count. Constant tiles are then pruned upwards
// (8^3 tiles into 128^3 tiles...), so deep constant regions cost almost nothing.
template <class GridT>
typename GridT::Ptr build_grid(const GridSpec& g, const GridOut& out, const std::function<void(double)>& done) {
    using ValueT = typename GridT::ValueType;
    using TreeT = typename GridT::TreeType;
    using LeafT = typename TreeT::LeafNodeType;
    static_assert(LeafT::LOG2DIM == 3, "leaf offsets below assume 8^3 leaves");
    constexpr int kDim = LeafT::DIM;  // 8
    ValueT background{};
    if constexpr (std::is_same_v<ValueT, openvdb::Vec3f>) background = openvdb::Vec3f(static_cast<float>(out.background));
    else background = static_cast<ValueT>(out.background);
    auto grid = GridT::create(background);
    TreeT& tree = grid->tree();

    const std::size_t nx = static_cast<std::size_t>(g.dims[0]);
    const std::size_t slice = nx * static_cast<std::size_t>(g.dims[1]);
    const int bx = (g.dims[0] + kDim - 1) / kDim, by = (g.dims[1] + kDim - 1) / kDim;
    struct Block {
        std::unique_ptr<LeafT> leaf;  // null: a constant block, stored as a tile of value `tile`
        ValueT tile{};
    };
    std::vector<Block> blocks(static_cast<std::size_t>(bx) * static_cast<std::size_t>(by));
    // One slab of up to 8 z-slices at a time: the producer frees its own storage as it goes.
    std::vector<ValueT> slab(slice * static_cast<std::size_t>(std::min(kDim, g.dims[2])));
    for (int z0 = 0; z0 < g.dims[2]; z0 += kDim) {
        const int nz = std::min(kDim, g.dims[2] - z0);
        for (int dz = 0; dz < nz; ++dz) out.slices(z0 + dz, slab.data() + slice * static_cast<std::size_t>(dz));
        auto at = [&](int dz, int y, int x) -> const ValueT& {
            return slab[slice * static_cast<std::size_t>(dz) + static_cast<std::size_t>(y) * nx + static_cast<std::size_t>(x)];
        };
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks.size()), [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t b = r.begin(); b != r.end(); ++b) {
                const int x0 = static_cast<int>(b % static_cast<std::size_t>(bx)) * kDim;
                const int y0 = static_cast<int>(b / static_cast<std::size_t>(bx)) * kDim;
                const int ex = std::min(kDim, g.dims[0] - x0), ey = std::min(kDim, g.dims[1] - y0);
                const bool full = ex == kDim && ey == kDim && nz == kDim;
                const ValueT first = at(0, y0, x0);
                bool constant = full;
                for (int dz = 0; constant && dz < nz; ++dz)
                    for (int dy = 0; constant && dy < ey; ++dy) {
                        const ValueT* row = &at(dz, y0 + dy, x0);
                        for (int dx = 0; dx < ex; ++dx)
                            if (!(row[dx] == first)) {
                                constant = false;
                                break;
                            }
                    }
                Block& block = blocks[b];
                if (constant) {
                    block.leaf.reset();
                    block.tile = first;
                    continue;
                }
                block.leaf = std::make_unique<LeafT>(openvdb::Coord(x0, y0, z0), background, false);
                ValueT* data = block.leaf->buffer().data();
                // Leaf offset of (dx, dy, dz) is dx * 64 + dy * 8 + dz (z fastest).
                for (int dz = 0; dz < nz; ++dz)
                    for (int dy = 0; dy < ey; ++dy) {
                        const ValueT* row = &at(dz, y0 + dy, x0);
                        for (int dx = 0; dx < ex; ++dx) data[(dx << 6) | (dy << 3) | dz] = row[dx];
                    }
                if (full) {
                    block.leaf->setValuesOn();
                } else {
                    for (int dz = 0; dz < nz; ++dz)
                        for (int dy = 0; dy < ey; ++dy)
                            for (int dx = 0; dx < ex; ++dx)
                                block.leaf->setActiveState(static_cast<openvdb::Index>((dx << 6) | (dy << 3) | dz), true);
                }
            }
        });
        for (std::size_t b = 0; b < blocks.size(); ++b) {
            const openvdb::Coord origin(static_cast<int>(b % static_cast<std::size_t>(bx)) * kDim,
                                        static_cast<int>(b / static_cast<std::size_t>(bx)) * kDim, z0);
            if (blocks[b].leaf) tree.addLeaf(blocks[b].leaf.release());
            else tree.addTile(1, origin, blocks[b].tile, true);
        }
        done(static_cast<double>(z0 + nz) / g.dims[2]);
    }
    openvdb::tools::prune(tree);
    return grid;
}

void put_metadata(openvdb::GridBase& grid, const nlohmann::json& meta) {
    for (const auto& [key, value] : meta.items()) {
        const std::string name = "haptic:" + key;
        if (value.is_string()) grid.insertMeta(name, openvdb::StringMetadata(value.get<std::string>()));
        else if (value.is_boolean()) grid.insertMeta(name, openvdb::BoolMetadata(value.get<bool>()));
        else if (value.is_number_integer()) grid.insertMeta(name, openvdb::Int64Metadata(value.get<std::int64_t>()));
        else if (value.is_number()) grid.insertMeta(name, openvdb::DoubleMetadata(value.get<double>()));
        else grid.insertMeta(name, openvdb::StringMetadata(value.dump()));
    }
}

nlohmann::json get_metadata(const openvdb::GridBase& grid) {
    nlohmann::json meta = nlohmann::json::object();
    for (auto it = grid.beginMeta(); it != grid.endMeta(); ++it) {
        const std::string& name = it->first;
        if (name.rfind("haptic:", 0) != 0 || !it->second) continue;
        const std::string key = name.substr(7);
        const openvdb::Metadata& m = *it->second;
        if (auto* s = dynamic_cast<const openvdb::StringMetadata*>(&m)) meta[key] = s->value();
        else if (auto* b = dynamic_cast<const openvdb::BoolMetadata*>(&m)) meta[key] = b->value();
        else if (auto* i = dynamic_cast<const openvdb::Int64Metadata*>(&m)) meta[key] = i->value();
        else if (auto* i32 = dynamic_cast<const openvdb::Int32Metadata*>(&m)) meta[key] = i32->value();
        else if (auto* d = dynamic_cast<const openvdb::DoubleMetadata*>(&m)) meta[key] = d->value();
        else meta[key] = m.str();
    }
    return meta;
}

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
        std::uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
        f.seekg(static_cast<std::streamoff>(p + 36));
        stream_bytes(f, size - (p + 36), [&](const char* d, std::size_t n) {
            h1 = hash64(d, n, h1);
            h2 = hash64(d, n, h2);
        });
        const std::string hex = hex64(h1) + hex64(h2);
        const std::string uuid = hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
                                 hex.substr(16, 4) + "-" + hex.substr(20, 12);
        f.seekp(static_cast<std::streamoff>(p));
        f.write(uuid.data(), static_cast<std::streamsize>(uuid.size()));
        break;
    }
    std::uint64_t h = 0xcbf29ce484222325ULL;
    f.seekg(0);
    stream_bytes(f, size, [&](const char* d, std::size_t n) { h = hash64(d, n, h); });
    char trailer[kTrailerSize];
    std::memcpy(trailer, kTrailerMagic, sizeof kTrailerMagic);
    for (int i = 0; i < 8; ++i) trailer[8 + i] = static_cast<char>((h >> (8 * i)) & 0xFF);
    f.seekp(0, std::ios::end);
    f.write(trailer, kTrailerSize);
    f.close();
    if (!f) fail_write(path.string(), "write failed (disk full?)");
}

// Checks the trailer of one of our files, streaming. Returns false when the file has no trailer
// at all; a file without one whose first grid carries our metadata key was cut short and is
// rejected here, before OpenVDB parses it (OpenVDB needs up to a minute on some truncated files).
bool verify_trailer(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_input(path.string(), std::string("cannot open (") + std::strerror(errno) + ")");
    const std::uint64_t size = fs::file_size(path);
    char trailer[kTrailerSize] = {};
    bool has_trailer = false;
    if (size >= kTrailerSize) {
        in.seekg(static_cast<std::streamoff>(size - kTrailerSize));
        has_trailer = in.read(trailer, kTrailerSize) && std::memcmp(trailer, kTrailerMagic, sizeof kTrailerMagic) == 0;
    }
    in.clear();
    in.seekg(0);
    if (!has_trailer) {
        // The first grid's metadata sits within the first kilobytes of a VDB file.
        std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(size, 1 << 20)), '\0');
        in.read(head.data(), static_cast<std::streamsize>(head.size()));
        if (head.find("haptic:grid") != std::string::npos)
            fail_input(path.string(), "truncated: the checksum trailer of a hapticprep file is missing (make it again)");
        return false;
    }
    std::uint64_t stored = 0;
    for (int i = 0; i < 8; ++i) stored |= static_cast<std::uint64_t>(static_cast<unsigned char>(trailer[8 + i])) << (8 * i);
    std::uint64_t h = 0xcbf29ce484222325ULL;
    try {
        stream_bytes(in, size - kTrailerSize, [&](const char* d, std::size_t n) { h = hash64(d, n, h); });
    } catch (const std::exception&) {
        fail_input(path.string(), "read error");
    }
    if (h != stored)
        fail_input(path.string(), "corrupt: checksum mismatch (the file was damaged after it was written; make it again)");
    return true;
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
            text(owner + " metadata '" + name + "' type");
            skip(scalar<std::uint32_t>(owner + " metadata '" + name + "' size"), owner + " metadata '" + name + "'");
        }
    }
};

// Walks the framing of a VDB file before OpenVDB sees it: header, file metadata, and for each
// grid its descriptor (name, type, byte offsets) and its metadata. OpenVDB trusts these sizes and
// offsets, and on a truncated file can spend a minute allocating and reading garbage; here every
// length is checked against the bytes that exist. Checks file versions 222..224 (OpenVDB 3 to
// 10+); older files are left to OpenVDB. Throws hp::Error(bad_input).
void check_framing(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    const std::uint64_t size = fs::file_size(path);
    Cursor c{in, path, 0, size};
    c.skip(8, "magic number");
    const std::uint32_t version = c.scalar<std::uint32_t>("file version");
    if (version > openvdb::OPENVDB_FILE_VERSION)
        fail_input(path.string(), "written by a newer OpenVDB (file format " + std::to_string(version) + "; this build reads up to " +
                                      std::to_string(openvdb::OPENVDB_FILE_VERSION) + ")");
    if (version < openvdb::OPENVDB_FILE_VERSION_NODE_MASK_COMPRESSION) return;
    c.skip(8, "library version");
    const bool offsets = c.scalar<std::uint8_t>("header") != 0;
    c.skip(36, "file UUID");
    c.metamap("file");
    if (!offsets) return;
    const std::int32_t grids = c.scalar<std::int32_t>("grid count");
    if (grids < 0 || static_cast<std::uint64_t>(grids) > size / 24)
        fail_input(path.string(), "corrupt VDB file (grid count " + std::to_string(grids) + ")");
    for (std::int32_t i = 0; i < grids; ++i) {
        const std::string name = c.text("grid name");
        c.text("type of grid '" + name + "'");
        c.text("instance parent of grid '" + name + "'");
        const auto grid_pos = c.scalar<std::int64_t>("offsets of grid '" + name + "'");
        const auto block_pos = c.scalar<std::int64_t>("offsets of grid '" + name + "'");
        const auto end_pos = c.scalar<std::int64_t>("offsets of grid '" + name + "'");
        if (end_pos > static_cast<std::int64_t>(size) && grid_pos >= 0 && grid_pos <= block_pos && block_pos <= end_pos)
            fail_input(path.string(), "truncated: grid '" + name + "' ends at byte " + std::to_string(end_pos) + " but the file has " +
                                          std::to_string(size) + " bytes (copy or make it again)");
        if (grid_pos < static_cast<std::int64_t>(c.pos) || grid_pos > block_pos || block_pos > end_pos ||
            end_pos > static_cast<std::int64_t>(size))
            fail_input(path.string(), "corrupt VDB file (the byte offsets of grid '" + name + "' are inconsistent)");
        Cursor g{in, path, static_cast<std::uint64_t>(grid_pos), static_cast<std::uint64_t>(block_pos)};
        g.skip(4, "compression flags of grid '" + name + "'");
        g.metamap("grid '" + name + "'");
        c.pos = static_cast<std::uint64_t>(end_pos);
    }
}

GridSpec spec_from(const nlohmann::json& meta, const std::string& where) {
    GridSpec g;
    bool ok = true;
    try {
        nlohmann::json j = nlohmann::json::parse(meta.at("grid").get<std::string>());
        for (int a = 0; a < 3; ++a) {
            g.origin[a] = j.at("origin").at(static_cast<std::size_t>(a)).get<double>();
            const double d = j.at("dims").at(static_cast<std::size_t>(a)).get<double>();
            // Index coordinates are int32 in OpenVDB; a leaf-aligned margin stays below 2^31.
            ok = ok && d >= 1 && d <= 2147483647.0 - 8 && d == std::floor(d);
            if (ok) g.dims[static_cast<std::size_t>(a)] = static_cast<int>(d);
        }
        g.voxel_size = j.at("voxel_size").get<double>();
    } catch (const std::exception&) {
        fail_input(where, "its haptic:grid metadata is missing or malformed (not written by hapticprep?)");
    }
    if (!ok || !(g.voxel_size > 0) || !std::isfinite(g.voxel_size) || !is_finite(g.origin))
        fail_input(where, "its haptic:grid metadata describes no valid grid (damaged file?)");
    return g;
}

std::string type_name_of(ValueType t) {
    switch (t) {
    case ValueType::int32: return openvdb::Int32Grid::gridType();
    case ValueType::float32: return openvdb::FloatGrid::gridType();
    case ValueType::float64: return openvdb::DoubleGrid::gridType();
    case ValueType::vec3f: return openvdb::Vec3SGrid::gridType();
    }
    return "";
}

std::string value_name_of(ValueType t) {
    switch (t) {
    case ValueType::int32: return openvdb::typeNameAsString<std::int32_t>();
    case ValueType::float32: return openvdb::typeNameAsString<float>();
    case ValueType::float64: return openvdb::typeNameAsString<double>();
    case ValueType::vec3f: return openvdb::typeNameAsString<openvdb::Vec3s>();
    }
    return "";
}

// Runs `body`, turning every OpenVDB or standard exception into a bad-input error for `where`.
template <class F>
auto guarded(const fs::path& where, F&& body) -> decltype(body()) {
    try {
        return body();
    } catch (const Error&) {
        throw;
    } catch (const std::bad_alloc&) {
        fail_input(where.string(), "corrupt or not a VDB file (reading it asked for more memory than exists)");
    } catch (const std::exception& e) {
        std::string why = e.what();
        if (why.size() > 120) why = why.substr(0, 120) + "...";
        fail_input(where.string(), "not a readable VDB file (" + why + ")");
    }
}

}  // namespace

bool looks_like_vdb(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    unsigned char magic[8] = {};
    if (!in.read(reinterpret_cast<char*>(magic), 8)) return false;
    std::int64_t value = 0;
    for (int i = 7; i >= 0; --i) value = (value << 8) | magic[i];
    return value == openvdb::OPENVDB_MAGIC;
}

void write(const fs::path& path, const GridSpec& grid, const std::vector<GridOut>& grids, const nlohmann::json& metadata,
           const std::string& creator, const WriteOptions& options, const Progress& progress) {
    init_openvdb();
    for (int a = 0; a < 3; ++a)
        if (grid.dims[static_cast<std::size_t>(a)] < 1 || grid.dims[static_cast<std::size_t>(a)] > 2147483647 - 8)
            fail_write(path.string(), "the grid has no voxels or is too large for OpenVDB index coordinates");
    if (!(grid.voxel_size > 0) || !std::isfinite(grid.voxel_size))
        fail_write(path.string(), "the voxel size must be a positive number");
    openvdb::GridPtrVec out;
    auto transform = openvdb::math::Transform::createLinearTransform(grid.voxel_size);
    transform->postTranslate(openvdb::Vec3d(grid.origin.x + 0.5 * grid.voxel_size, grid.origin.y + 0.5 * grid.voxel_size,
                                            grid.origin.z + 0.5 * grid.voxel_size));
    nlohmann::json meta = metadata.is_object() ? metadata : nlohmann::json::object();
    meta["format_version"] = kFormatVersion;
    meta["grid"] = nlohmann::json{{"origin", {grid.origin.x, grid.origin.y, grid.origin.z}},
                                  {"voxel_size", grid.voxel_size},
                                  {"dims", {grid.dims[0], grid.dims[1], grid.dims[2]}}}
                       .dump();
    meta["voxel_size"] = grid.voxel_size;
    if (!meta.contains("sign_convention")) meta["sign_convention"] = "inside_positive";
    if (!meta.contains("tool_version")) meta["tool_version"] = kVersion;
    for (std::size_t n = 0; n < grids.size(); ++n) {
        const GridOut& g = grids[n];
        auto done = [&](double f) { progress.report("tree", (static_cast<double>(n) + f) / static_cast<double>(grids.size())); };
        openvdb::GridBase::Ptr base;
        switch (g.type) {
        case ValueType::int32: base = build_grid<openvdb::Int32Grid>(grid, g, done); break;
        case ValueType::float32: base = build_grid<openvdb::FloatGrid>(grid, g, done); break;
        case ValueType::float64: base = build_grid<openvdb::DoubleGrid>(grid, g, done); break;
        case ValueType::vec3f: base = build_grid<openvdb::Vec3SGrid>(grid, g, done); break;
        }
        base->setName(g.name);
        base->setTransform(transform->copy());
        base->setGridClass(g.level_set ? openvdb::GRID_LEVEL_SET : openvdb::GRID_UNKNOWN);
        if (!options.plain) put_metadata(*base, meta);
        out.push_back(base);
    }
    openvdb::MetaMap file_meta;
    file_meta.insertMeta("creator", openvdb::StringMetadata(creator));
    write_atomically(path, [&](const fs::path& tmp) {
        try {
            openvdb::io::File file(tmp.string());
            progress.report("save", 0.0);
            file.write(out, file_meta);
            file.close();
            out.clear();  // the trees are on disk: free them before the file is hashed
            // Most leaves were allocated on TBB worker threads, in their own malloc arenas, which
            // the calling thread never reuses: hand the freed trees back to the system now.
            ::malloc_trim(0);
            progress.report("checksum", 0.0);
            if (!options.plain) finalize_file(tmp);
            progress.report("checksum", 1.0);
        } catch (const Error&) {
            throw;
        } catch (const std::exception& e) {
            fail_write(path.string(), std::string("cannot write the VDB file (") + e.what() + ")");
        }
    });
}

FileInfo inspect(const fs::path& path, bool deep) {
    init_openvdb();
    std::error_code ec;
    if (!fs::exists(path, ec)) fail_input(path.string(), "no such file");
    if (fs::is_directory(path, ec)) fail_input(path.string(), "is a folder, not a file");
    if (!looks_like_vdb(path)) fail_input(path.string(), "not a VDB file (no OpenVDB magic number)");
    const bool has_trailer = verify_trailer(path);
    check_framing(path);
    return guarded(path, [&] {
        FileInfo info;
        openvdb::io::File file(path.string());
        file.open(false);
        auto fm = file.getMetadata();
        if (fm) {
            auto c = (*fm)["creator"];
            if (c) info.creator = c->str();
        }
        // Metadata only (no trees) unless the caller wants node counts.
        openvdb::GridPtrVecPtr grids = deep ? file.getGrids() : file.readAllGridMetadata();
        file.close();
        for (const auto& g : *grids) {
            if (!g) continue;
            GridInfo gi;
            gi.name = g->getName();
            gi.value_type = g->valueType();
            gi.grid_class = openvdb::GridBase::gridClassToString(g->getGridClass());
            if (deep) {
                gi.active_voxels = g->activeVoxelCount();
                gi.memory_bytes = g->memUsage();
                g->apply<openvdb::GridTypes>([&](auto& typed) {
                    gi.leaf_nodes = typed.tree().leafCount();
                    gi.tiles = typed.tree().activeTileCount();
                });
            } else {
                if (auto m = g->getMetadata<openvdb::Int64Metadata>("file_voxel_count")) gi.active_voxels = static_cast<std::size_t>(m->value());
                if (auto m = g->getMetadata<openvdb::Int64Metadata>("file_mem_bytes")) gi.memory_bytes = static_cast<std::size_t>(m->value());
            }
            // Every grid carries the haptic: metadata; each copy must be readable by this build.
            nlohmann::json meta = get_metadata(*g);
            if (meta.contains("grid")) {
                const nlohmann::json version = meta.contains("format_version") ? meta["format_version"] : nlohmann::json();
                if (!version.is_number_integer())
                    fail_input(path.string(), "its haptic: metadata has no haptic:format_version (damaged file?)");
                if (version.get<std::int64_t>() > kFormatVersion)
                    fail_input(path.string(), "written by a newer hapticprep (format v" + std::to_string(version.get<std::int64_t>()) +
                                                  "); this build reads up to v" + std::to_string(kFormatVersion));
            }
            if (info.grids.empty()) info.metadata = std::move(meta);
            info.grids.push_back(gi);
        }
        if (info.metadata.is_null()) info.metadata = nlohmann::json::object();
        info.ours = info.metadata.contains("grid");
        if (info.ours) {
            if (!has_trailer)
                fail_input(path.string(), "truncated: the checksum trailer of a hapticprep file is missing (make it again)");
            info.grid = spec_from(info.metadata, path.string());
        }
        return info;
    });
}

void read_slices(const fs::path& path, const std::string& name, ValueType type,
                 const std::function<void(int z, const void* values)>& sink, FileInfo* info_out) {
    FileInfo info = inspect(path);
    if (!info.ours) fail_input(path.string(), "is a VDB file but not one written by hapticprep (no haptic: metadata)");
    auto found = std::find_if(info.grids.begin(), info.grids.end(), [&](const GridInfo& g) { return g.name == name; });
    if (found == info.grids.end()) fail_input(path.string(), "has no grid named '" + name + "'");
    if (found->value_type != value_name_of(type))
        fail_input(path.string(), "grid '" + name + "' holds " + found->value_type + " values, expected " + value_name_of(type));
    if (info_out) *info_out = info;
    guarded(path, [&] {
        openvdb::io::File file(path.string());
        file.open(false);
        openvdb::GridBase::Ptr base = file.readGrid(name);
        file.close();
        if (base->type() != type_name_of(type))
            fail_input(path.string(), "grid '" + name + "' holds " + base->valueType() + " values, expected " +
                                          value_name_of(type));
        const GridSpec& g = info.grid;
        const std::size_t nx = static_cast<std::size_t>(g.dims[0]);
        const std::size_t slice = nx * static_cast<std::size_t>(g.dims[1]);
        // Slab by slab (8 z-slices): copy leaf buffers directly, fill tiles with their value.
        auto emit = [&](auto& typed) {
            using GridT = std::decay_t<decltype(typed)>;
            using ValueT = typename GridT::ValueType;
            using LeafT = typename GridT::TreeType::LeafNodeType;
            constexpr int kDim = LeafT::DIM;
            const auto& tree = typed.tree();
            std::vector<ValueT> slab(slice * static_cast<std::size_t>(std::min(kDim, g.dims[2])));
            for (int z0 = 0; z0 < g.dims[2]; z0 += kDim) {
                const int nz = std::min(kDim, g.dims[2] - z0);
                for (int y0 = 0; y0 < g.dims[1]; y0 += kDim)
                    for (int x0 = 0; x0 < g.dims[0]; x0 += kDim) {
                        const int ex = std::min(kDim, g.dims[0] - x0), ey = std::min(kDim, g.dims[1] - y0);
                        const openvdb::Coord origin(x0, y0, z0);
                        const LeafT* leaf = tree.probeConstLeaf(origin);
                        const ValueT tile = leaf ? ValueT{} : tree.getValue(origin);
                        for (int dz = 0; dz < nz; ++dz)
                            for (int dy = 0; dy < ey; ++dy) {
                                ValueT* row = &slab[slice * static_cast<std::size_t>(dz) +
                                                    static_cast<std::size_t>(y0 + dy) * nx + static_cast<std::size_t>(x0)];
                                if (!leaf) {
                                    std::fill(row, row + ex, tile);
                                    continue;
                                }
                                for (int dx = 0; dx < ex; ++dx)
                                    row[dx] = leaf->getValue(static_cast<openvdb::Index>((dx << 6) | (dy << 3) | dz));
                            }
                    }
                for (int dz = 0; dz < nz; ++dz) sink(z0 + dz, slab.data() + slice * static_cast<std::size_t>(dz));
            }
        };
        switch (type) {
        case ValueType::int32: emit(*openvdb::gridPtrCast<openvdb::Int32Grid>(base)); break;
        case ValueType::float32: emit(*openvdb::gridPtrCast<openvdb::FloatGrid>(base)); break;
        case ValueType::float64: emit(*openvdb::gridPtrCast<openvdb::DoubleGrid>(base)); break;
        case ValueType::vec3f: emit(*openvdb::gridPtrCast<openvdb::Vec3SGrid>(base)); break;
        }
        return 0;
    });
}

std::vector<std::int32_t> read_int32(const fs::path& path, const std::string& name, FileInfo* info) {
    FileInfo local;
    std::vector<std::int32_t> out;
    read_slices(
        path, name, ValueType::int32,
        [&](int, const void* values) {
            const auto* v = static_cast<const std::int32_t*>(values);
            out.insert(out.end(), v, v + static_cast<std::ptrdiff_t>(local.grid.dims[0]) * local.grid.dims[1]);
        },
        &local);
    if (info) *info = local;
    return out;
}

std::vector<double> read_real(const fs::path& path, const std::string& name, FileInfo* info_out) {
    FileInfo info = inspect(path);
    auto found = std::find_if(info.grids.begin(), info.grids.end(), [&](const GridInfo& g) { return g.name == name; });
    if (found == info.grids.end()) fail_input(path.string(), "has no grid named '" + name + "'");
    const bool is_double = found->value_type == "double";
    const std::size_t slice = static_cast<std::size_t>(info.grid.dims[0]) * static_cast<std::size_t>(info.grid.dims[1]);
    std::vector<double> out;
    out.reserve(slice * static_cast<std::size_t>(info.grid.dims[2]));
    read_slices(
        path, name, is_double ? ValueType::float64 : ValueType::float32,
        [&](int, const void* values) {
            if (is_double) {
                const auto* v = static_cast<const double*>(values);
                out.insert(out.end(), v, v + slice);
            } else {
                const auto* v = static_cast<const float*>(values);
                for (std::size_t i = 0; i < slice; ++i) out.push_back(v[i]);
            }
        },
        info_out);
    return out;
}

}  // namespace hp::vdb
