// The read unit of formats/vdb: Reader (open and verify once, then read grids). The checks run in the order formats/vdb.md "Damage detection" gives.
#include "formats/vdb.hpp"

#include <algorithm>
#include <atomic>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <istream>
#include <mutex>
#include <new>
#include <stdexcept>
#include <type_traits>

#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <openvdb/io/File.h>
#include <openvdb/io/GridDescriptor.h>
#include <openvdb/openvdb.h>

#include "core/error.hpp"
#include "formats/vdb_internal.hpp"
#include "formats/vdb_windowed.hpp"

namespace hp::vdb {
namespace fs = std::filesystem;

// The descriptor Reader::open opened before it verified the file, and what fstat said of it.
struct detail::OpenedFile {
    int fd = -1;
    struct stat st {};
    OpenedFile() = default;
    OpenedFile(const OpenedFile&) = delete;
    OpenedFile& operator=(const OpenedFile&) = delete;
    ~OpenedFile() {
        if (fd >= 0) ::close(fd);
    }
};

int detail::fd_of(const OpenedFile& file) { return file.fd; }

void detail::init_openvdb() {
    static std::once_flag once;
    std::call_once(once, [] { openvdb::initialize(); });
}

namespace {

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

// The haptic: keys the readers read by their type (nlohmann's json::value throws its type_error
// for a key of another type, which escaped the readers: a crafted file whose haptic:band was a
// string, tests/fuzz/regressions/vdb_field). A file of ours whose key has another type is refused.
void check_metadata_types(const nlohmann::json& meta, const std::string& where) {
    auto check = [&](const char* key, bool ok, const char* type) {
        if (!ok) fail_input(where, std::string("its haptic:") + key + " is not " + type + " (damaged file?)");
    };
    for (const char* key : {"kind", "encoding", "parameters", "source_hash"})
        check(key, !meta.contains(key) || meta[key].is_string(), "a string");
    for (const char* key : {"band", "max_layers", "connectivity", "padding"})
        check(key, !meta.contains(key) || meta[key].is_number_integer(), "an integer");
    check("scale_factor", !meta.contains("scale_factor") || meta["scale_factor"].is_number(), "a number");
}

GridSpec spec_from(const nlohmann::json& meta, const std::string& where) {
    GridSpec g;
    bool ok = true;
    try {
        nlohmann::json j = nlohmann::json::parse(meta.at("grid").get<std::string>());
        for (int a = 0; a < 3; ++a) {
            g.origin[a] = j.at("origin").at(static_cast<std::size_t>(a)).get<double>();
            const double d = j.at("dims").at(static_cast<std::size_t>(a)).get<double>();
#ifdef HP_FUZZ_CANARY
            // The fuzzing canary of the VDB grid reads (docs/fuzzing.md): dims from 0, not 1, pass the check below.
            if (d == 0) __builtin_trap();
#endif
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

Reader Reader::open(const fs::path& path, bool deep) {
    detail::init_openvdb();
    std::error_code ec;
    if (!fs::exists(path, ec)) fail_input(path.string(), "no such file");
    if (fs::is_directory(path, ec)) fail_input(path.string(), "is a folder, not a file");
    if (!looks_like_vdb(path)) fail_input(path.string(), "not a VDB file (no OpenVDB magic number)");
    // Held open from before the checks to every read: the reads parse this file. The checks go by
    // path; the path must still name the same, unchanged file after them (below).
    auto opened = std::make_shared<detail::OpenedFile>();
    opened->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (opened->fd < 0 || ::fstat(opened->fd, &opened->st) != 0)
        fail_input(path.string(), std::string("cannot open (") + std::strerror(errno) + ")");
    const std::string checksum = detail::verify_trailer(path);  // the one pass over every byte
    detail::check_framing(path);
    Reader reader;
    reader.path_ = path;
    reader.info_ = guarded(path, [&] {
        FileInfo info;
        info.checksum = checksum;
        if (deep) detail::check_every_grid_chunks(::fcntl(opened->fd, F_DUPFD_CLOEXEC, 0));  // before io::File reads the trees
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
                    using V = typename std::decay_t<decltype(typed)>::ValueType;
                    if constexpr (std::is_arithmetic_v<V>) gi.background = static_cast<double>(typed.tree().background());
                    else if constexpr (openvdb::VecTraits<V>::IsVec) gi.background = static_cast<double>(typed.tree().background()[0]);
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
                if (version.get<std::int64_t>() > detail::kFormatVersion)
                    fail_input(path.string(), "written by a newer hapticprep (format v" + std::to_string(version.get<std::int64_t>()) +
                                                  "); this build reads up to v" + std::to_string(detail::kFormatVersion));
            }
            if (info.grids.empty()) info.metadata = std::move(meta);
            info.grids.push_back(gi);
        }
        if (info.metadata.is_null()) info.metadata = nlohmann::json::object();
        info.ours = info.metadata.contains("grid");
        if (info.ours) {
            if (checksum.empty())
                fail_input(path.string(), "truncated: the checksum trailer of a hapticprep file is missing (make it again)");
            check_metadata_types(info.metadata, path.string());
            info.grid = spec_from(info.metadata, path.string());
        }
        return info;
    });
    struct stat now {};
    const struct stat& was = opened->st;
    if (::stat(path.c_str(), &now) != 0 || now.st_dev != was.st_dev || now.st_ino != was.st_ino || now.st_size != was.st_size ||
        now.st_mtim.tv_sec != was.st_mtim.tv_sec || now.st_mtim.tv_nsec != was.st_mtim.tv_nsec)
        fail_input(path.string(), "changed while it was being opened (another program is writing it; read it again when it is done)");
    reader.file_ = std::move(opened);
    return reader;
}

namespace {

// Reads grid `name` of a hapticprep file, checked to hold `type` values (by the file's grid list
// first, then by the grid read); a foreign file, a missing grid or another type is bad input.
openvdb::GridBase::Ptr read_checked_grid(const Reader& reader, int verified_fd, const std::string& name, ValueType type) {
    const std::string where = reader.path().string();
    if (!reader.info().ours) fail_input(where, "is a VDB file but not one written by hapticprep (no haptic: metadata)");
    const std::string found = reader.value_type(name);
    if (found.empty()) fail_input(where, "has no grid named '" + name + "'");
    if (found != value_name_of(type)) fail_input(where, "grid '" + name + "' holds " + found + " values, expected " + value_name_of(type));
    openvdb::GridBase::Ptr base = detail::read_grid_windowed(::fcntl(verified_fd, F_DUPFD_CLOEXEC, 0), name);
    if (base->type() != type_name_of(type))
        fail_input(where, "grid '" + name + "' holds " + base->valueType() + " values, expected " + value_name_of(type));
    return base;
}

}  // namespace

std::string Reader::value_type(const std::string& name) const {
    for (const auto& g : info_.grids)
        if (g.name == name) return g.value_type;
    return "";
}

void Reader::read_slices(const std::string& name, ValueType type, const std::function<void(int z, const void* values)>& sink) const {
    const fs::path& path = path_;
    guarded(path, [&] {
        openvdb::GridBase::Ptr base = read_checked_grid(*this, file_->fd, name, type);
        const GridSpec& g = info_.grid;
        const std::size_t nx = static_cast<std::size_t>(g.dims[0]);
        const std::size_t slice = nx * static_cast<std::size_t>(g.dims[1]);
        // Slab by slab (8 z-slices): copy leaf buffers directly, fill tiles with their value.
        auto emit = [&](auto& typed) {
            using GridT = std::decay_t<decltype(typed)>;
            using ValueT = typename GridT::ValueType;
            using LeafT = typename GridT::TreeType::LeafNodeType;
            constexpr int kDim = LeafT::DIM;
            // Consecutive blocks share internal nodes: an accessor caches the path down to them.
            auto acc = typed.getConstAccessor();
            std::vector<ValueT> slab(slice * static_cast<std::size_t>(std::min(kDim, g.dims[2])));
            for (int z0 = 0; z0 < g.dims[2]; z0 += kDim) {
                const int nz = std::min(kDim, g.dims[2] - z0);
                for (int y0 = 0; y0 < g.dims[1]; y0 += kDim)
                    for (int x0 = 0; x0 < g.dims[0]; x0 += kDim) {
                        const int ex = std::min(kDim, g.dims[0] - x0), ey = std::min(kDim, g.dims[1] - y0);
                        const openvdb::Coord origin(x0, y0, z0);
                        const LeafT* leaf = acc.probeConstLeaf(origin);
                        const ValueT tile = leaf ? ValueT{} : acc.getValue(origin);
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

std::vector<std::int32_t> Reader::read_int32(const std::string& name) const {
    const std::size_t slice = static_cast<std::size_t>(info_.grid.dims[0]) * static_cast<std::size_t>(info_.grid.dims[1]);
    std::vector<std::int32_t> out;
    out.reserve(slice * static_cast<std::size_t>(info_.grid.dims[2]));  // one allocation, no copies as it grows
    read_slices(name, ValueType::int32, [&](int, const void* values) {
        const auto* v = static_cast<const std::int32_t*>(values);
        out.insert(out.end(), v, v + slice);
    });
    return out;
}

namespace {
// Asks for transparent huge pages under a dense array's reserved, untouched capacity, so that it
// is faulted in 2 MiB at a time as it is filled (a field of 24M samples is 192 MB of doubles).
// Advice only: without transparent huge pages nothing changes.
void advise_huge_pages(std::vector<double>& v) {
#ifdef MADV_HUGEPAGE
    constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
    const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(v.data()), end = begin + v.capacity() * sizeof(double);
    const std::uintptr_t from = (begin + kHuge - 1) / kHuge * kHuge, to = end / kHuge * kHuge;
    if (to > from) (void)madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
#else
    (void)v;
#endif
}
}  // namespace

std::vector<double> Reader::read_real(const std::string& name) const {
    const bool is_double = value_type(name) == "double";
    const std::size_t slice = static_cast<std::size_t>(info_.grid.dims[0]) * static_cast<std::size_t>(info_.grid.dims[1]);
    std::vector<double> out;
    out.reserve(slice * static_cast<std::size_t>(info_.grid.dims[2]));
    advise_huge_pages(out);  // the fields' loads: one fault per 2 MiB (bench/SCENE.md)
    read_slices(name, is_double ? ValueType::float64 : ValueType::float32, [&](int, const void* values) {
        if (is_double) {
            const auto* v = static_cast<const double*>(values);
            out.insert(out.end(), v, v + slice);
        } else {
            const auto* v = static_cast<const float*>(values);
            out.insert(out.end(), v, v + slice);  // each float widened to double exactly
        }
    });
    return out;
}

std::vector<double> Reader::read_distance() const {
    const std::string where = path_.string();
    const std::string type = value_type("distance");
    if (info_.ours && type.empty()) fail_input(where, "has no grid named 'distance' (make the distance field with haptic-distance)");
    const std::string encoding = distance_encoding_text(info_.metadata);
    if (parse_distance_encoding(encoding) != DistanceEncoding::scaled) {
        if (type == "int32")
            fail_input(where, "grid 'distance' holds int32 values but haptic:encoding is '" + encoding + "' (damaged file?)");
        return read_real("distance");
    }
    const double factor = info_.metadata.value("scale_factor", 0.0);
    if (!(factor > 0) || !std::isfinite(factor))
        fail_input(where, "scaled distance field without a valid haptic:scale_factor (damaged file?)");
    std::vector<std::int32_t> raw = read_int32("distance");
    std::vector<double> out(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) out[i] = raw[i] / factor;
    return out;
}

namespace {
// Every 8^3 block of grid `grid` over `g` in block order (the order of GridOut::blocks): leaf(b,
// leaf) where the file stores voxels, else tile(b, value).
template <class GridT, class Leaf, class Tile>
void for_each_block(const GridT& grid, const GridSpec& g, Leaf&& leaf, Tile&& tile) {
    using LeafT = typename GridT::TreeType::LeafNodeType;
    constexpr int kDim = LeafT::DIM;
    static_assert(kDim == kBrickDim, "bricks are OpenVDB leaves");
    auto acc = grid.getConstAccessor();  // consecutive blocks share internal nodes
    std::size_t b = 0;
    for (int z0 = 0; z0 < g.dims[2]; z0 += kDim)
        for (int y0 = 0; y0 < g.dims[1]; y0 += kDim)
            for (int x0 = 0; x0 < g.dims[0]; x0 += kDim, ++b) {
                const openvdb::Coord origin(x0, y0, z0);
                if (const LeafT* l = acc.probeConstLeaf(origin)) leaf(b, *l);
                else tile(b, acc.getValue(origin));
            }
}
}  // namespace

void Reader::read_blocks(const std::string& name, ValueType type,
                         const std::function<void(std::size_t block, const void* brick, const void* tile)>& sink) const {
    const fs::path& path = path_;
    guarded(path, [&] {
        openvdb::GridBase::Ptr base = read_checked_grid(*this, file_->fd, name, type);
        const GridSpec& g = info_.grid;
        auto emit = [&](auto& typed) {
            using ValueT = typename std::decay_t<decltype(typed)>::ValueType;
            std::array<ValueT, 512> brick;
            for_each_block(
                typed, g,
                [&](std::size_t b, const auto& leaf) {
                    // The leaf (offset dx * 64 + dy * 8 + dz) read in memory order, which the
                    // prefetcher follows, into the brick (dx + 8 dy + 64 dz, in cache).
                    const ValueT* data = leaf.buffer().data();
                    for (int o = 0; o < kBrickVoxels; ++o)
                        brick[static_cast<std::size_t>((o >> 6) | (((o >> 3) & 7) << 3) | ((o & 7) << 6))] = data[o];
                    sink(b, brick.data(), nullptr);
                },
                [&](std::size_t b, const ValueT& tile) { sink(b, nullptr, &tile); });
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

namespace {

// Leaves [first, last) of `leaves` (numbered as f's bricks) transposed into their bricks on all
// threads.
template <class T, class LeafT, class Convert, class Observe>
void transpose_leaves(const std::vector<const LeafT*>& leaves, std::size_t first, std::size_t last, const GridSpec& g,
                      BrickField<T>& f, Convert convert, Observe observe) {
    constexpr int kDim = LeafT::DIM;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(first, last, 64), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t n = r.begin(); n != r.end(); ++n) {
            // The leaf (offset dx * 64 + dy * 8 + dz) read in memory order into the brick (dx + 8 dy + 64 dz).
            const auto* data = leaves[n]->buffer().data();
            T* dst = f.bricks.data() + n * static_cast<std::size_t>(kBrickVoxels);
            for (int o = 0; o < kDim * kDim * kDim; ++o) dst[(o >> 6) | (((o >> 3) & 7) << 3) | ((o & 7) << 6)] = convert(data[o]);
            // observe() sees the values of the voxels inside the grid (not those a leaf at the
            // grid's far faces holds beyond it).
            const openvdb::Coord o0 = leaves[n]->origin();
            const int ex = std::min(kDim, g.dims[0] - o0.x()), ey = std::min(kDim, g.dims[1] - o0.y()), ez = std::min(kDim, g.dims[2] - o0.z());
            for (int dx = 0; dx < ex; ++dx)
                for (int dy = 0; dy < ey; ++dy)
                    for (int dz = 0; dz < ez; ++dz) observe(data[(dx << 6) | (dy << 3) | dz]);
        }
    });
}

// The blocks of a grid read into `f` (reset to `g`), consuming the grid: one pass in block order
// numbers the leaves' bricks and sets the tiles (convert(value) for both), then the leaves are
// transposed into their bricks on all threads, a run of leaves at a time; each run's leaves are
// then taken out of the tree and deleted, and their memory given back to the system, while the
// bricks' pages are faulted in as they are written. So the tree and the bricks are never both
// whole in memory (a band voxelmap's int32 tree is about twice its int16 bricks). Each brick's
// values depend only on its leaf: the result does not depend on the thread count.
template <class T, class GridT, class Convert, class Observe>
void fill_bricks(GridT& grid, const GridSpec& g, BrickField<T>& f, Convert convert, Observe observe) {
    using LeafT = typename GridT::TreeType::LeafNodeType;
    constexpr int kDim = LeafT::DIM;
    static_assert(kDim == kBrickDim, "bricks are OpenVDB leaves");
    f.reset(g, 0);
    std::vector<const LeafT*> leaves;
    for_each_block(
        grid, g,
        [&](std::size_t b, const LeafT& leaf) {
            f.index[b] = static_cast<std::uint32_t>(leaves.size());
            leaves.push_back(&leaf);
        },
        [&](std::size_t b, const auto& value) { f.tile[b] = convert(value); });
    f.size_bricks_lazily(leaves.size());
    // About 1/32 of the leaves per run, at least 4,096 (8 MB of int32 leaves).
    const std::size_t run = std::max<std::size_t>(4096, leaves.size() / 32);
    for (std::size_t first = 0; first < leaves.size(); first += run) {
        const std::size_t last = std::min(leaves.size(), first + run);
        transpose_leaves(leaves, first, last, g, f, convert, observe);
        for (std::size_t n = first; n != last; ++n)
            delete grid.tree().template stealNode<LeafT>(leaves[n]->origin(), grid.background(), false);
        ::malloc_trim(0);
    }
}

}  // namespace

template <class T, class S, class Convert, class Observe>
BrickField<T> Reader::read_bricks_as(const std::string& name, ValueType type, Convert convert, Observe observe) const {
    BrickField<T> f;
    guarded(path_, [&] {
        openvdb::GridBase::Ptr base = read_checked_grid(*this, file_->fd, name, type);
        auto fill = [&](auto& typed) {
            using V = typename std::decay_t<decltype(typed)>::ValueType;
            if constexpr (std::is_same_v<V, S>) fill_bricks(typed, info_.grid, f, convert, observe);
            else throw std::logic_error("read_bricks_as: value type mismatch");
        };
        switch (type) {
        case ValueType::int32: fill(*openvdb::gridPtrCast<openvdb::Int32Grid>(base)); break;
        case ValueType::float32: fill(*openvdb::gridPtrCast<openvdb::FloatGrid>(base)); break;
        case ValueType::float64: fill(*openvdb::gridPtrCast<openvdb::DoubleGrid>(base)); break;
        case ValueType::vec3f: throw std::logic_error("read_bricks_as: vector grids are read with read_blocks");
        }
        return 0;
    });
    return f;
}

BrickField<std::int32_t> Reader::read_int32_bricks(const std::string& name) const {
    return read_bricks_as<std::int32_t, std::int32_t>(name, ValueType::int32, [](std::int32_t v) { return v; });
}

BrickField<std::int16_t> Reader::read_int16_bricks(const std::string& name, std::int32_t limit, bool* clamped) const {
    if (limit < 0 || limit > 32767) throw std::invalid_argument("read_int16_bricks: the limit must be in [0, 32767]");
    std::atomic<bool> beyond{false};
    BrickField<std::int16_t> f = read_bricks_as<std::int16_t, std::int32_t>(
        name, ValueType::int32, [limit](std::int32_t v) { return static_cast<std::int16_t>(std::clamp(v, -limit, limit)); },
        [limit, &beyond](std::int32_t v) {
            if (v < -limit || v > limit) beyond.store(true, std::memory_order_relaxed);
        });
    if (clamped) *clamped = beyond.load();
    return f;
}

double stored_background(const detail::StoredGrid& g) {
    auto as = [&](auto zero) {
        decltype(zero) v{};
        std::memcpy(&v, g.topology_head.data() + detail::StoredGrid::kBackgroundAt, sizeof v);
        return static_cast<double>(v);
    };
    if (g.type == openvdb::Int32Grid::gridType()) return as(std::int32_t{});
    if (g.type == openvdb::FloatGrid::gridType()) return as(0.0f);
    if (g.type == openvdb::DoubleGrid::gridType()) return as(0.0);
    return 0;
}

std::shared_ptr<const detail::StoredGrid> Reader::stored_grid(const std::string& name) const {
    if (!info_.ours || value_type(name).empty()) return nullptr;
    // Only ever a shortcut: a grid that cannot be located (a damaged layout the reads did not
    // meet) is written from its blocks instead.
    try {
        std::shared_ptr<detail::StoredGrid> g = detail::locate_grid(::fcntl(file_->fd, F_DUPFD_CLOEXEC, 0), name);
        if (g) g->file = file_;
        return g;
    } catch (const std::exception&) {
        return nullptr;
    }
}

BrickField<double> Reader::read_distance_bricks() const {
    const std::string where = path_.string();
    const std::string type = value_type("distance");
    if (info_.ours && type.empty()) fail_input(where, "has no grid named 'distance' (make the distance field with haptic-distance)");
    const std::string encoding = distance_encoding_text(info_.metadata);
    if (parse_distance_encoding(encoding) != DistanceEncoding::scaled) {
        if (type == "int32")
            fail_input(where, "grid 'distance' holds int32 values but haptic:encoding is '" + encoding + "' (damaged file?)");
        if (type == "double") return read_bricks_as<double, double>("distance", ValueType::float64, [](double v) { return v; });
        return read_bricks_as<double, float>("distance", ValueType::float32, [](float v) { return static_cast<double>(v); });
    }
    const double factor = info_.metadata.value("scale_factor", 0.0);
    if (!(factor > 0) || !std::isfinite(factor))
        fail_input(where, "scaled distance field without a valid haptic:scale_factor (damaged file?)");
    return read_bricks_as<double, std::int32_t>("distance", ValueType::int32,
                                                [factor](std::int32_t v) { return static_cast<double>(v) / factor; });
}

}  // namespace hp::vdb
