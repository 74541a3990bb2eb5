// The one translation unit (with formats/vdb_*.cpp) that includes OpenVDB. See formats/vdb.md.
#include "formats/vdb.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <mutex>

#include <openvdb/io/File.h>
#include <openvdb/openvdb.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"

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

template <class GridT>
typename GridT::Ptr build_grid(const GridSpec& g, const GridOut& out) {
    using ValueT = typename GridT::ValueType;
    using TreeT = typename GridT::TreeType;
    using LeafT = typename TreeT::LeafNodeType;
    constexpr int kDim = LeafT::DIM;  // 8
    ValueT background{};
    if constexpr (std::is_same_v<ValueT, openvdb::Vec3f>) background = openvdb::Vec3f(0.f);
    else background = static_cast<ValueT>(out.background);
    auto grid = GridT::create(background);
    TreeT& tree = grid->tree();

    const std::size_t nx = static_cast<std::size_t>(g.dims[0]), ny = static_cast<std::size_t>(g.dims[1]);
    const std::size_t slice = nx * ny;
    // One slab of up to 8 z-slices at a time: the producer frees its own storage as it goes.
    std::vector<ValueT> slab(slice * kDim);
    for (int z0 = 0; z0 < g.dims[2]; z0 += kDim) {
        const int nz = std::min(kDim, g.dims[2] - z0);
        for (int dz = 0; dz < nz; ++dz) out.slices(z0 + dz, slab.data() + slice * static_cast<std::size_t>(dz));
        for (int y0 = 0; y0 < g.dims[1]; y0 += kDim)
            for (int x0 = 0; x0 < g.dims[0]; x0 += kDim) {
                const int ex = std::min(kDim, g.dims[0] - x0), ey = std::min(kDim, g.dims[1] - y0);
                const ValueT first = slab[static_cast<std::size_t>(y0) * nx + static_cast<std::size_t>(x0)];
                bool constant = ex == kDim && ey == kDim && nz == kDim;
                for (int dz = 0; constant && dz < nz; ++dz)
                    for (int dy = 0; constant && dy < ey; ++dy) {
                        const ValueT* row = &slab[slice * static_cast<std::size_t>(dz) + static_cast<std::size_t>(y0 + dy) * nx +
                                                  static_cast<std::size_t>(x0)];
                        for (int dx = 0; dx < ex; ++dx)
                            if (!(row[dx] == first)) {
                                constant = false;
                                break;
                            }
                    }
                const openvdb::Coord origin(x0, y0, z0);
                if (constant) {
                    tree.addTile(1, origin, first, true);
                    continue;
                }
                auto* leaf = new LeafT(origin, background, false);
                for (int dz = 0; dz < nz; ++dz)
                    for (int dy = 0; dy < ey; ++dy)
                        for (int dx = 0; dx < ex; ++dx) {
                            const ValueT v = slab[slice * static_cast<std::size_t>(dz) + static_cast<std::size_t>(y0 + dy) * nx +
                                                  static_cast<std::size_t>(x0 + dx)];
                            leaf->setValueOn(openvdb::Coord(x0 + dx, y0 + dy, z0 + dz), v);
                        }
                tree.addLeaf(leaf);
            }
    }
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

// OpenVDB writes a random UUID into every file header; replace it by one derived from the
// content so that the same grids give byte-identical files. Then append our checksum trailer.
void finalize_file(const fs::path& path) {
    std::string bytes = read_file(path);
    auto is_uuid_at = [&](std::size_t p) {
        if (p + 36 > bytes.size()) return false;
        for (std::size_t i = 0; i < 36; ++i) {
            char c = bytes[p + i];
            bool dash = i == 8 || i == 13 || i == 18 || i == 23;
            if (dash ? c != '-' : !std::isxdigit(static_cast<unsigned char>(c))) return false;
        }
        return true;
    };
    for (std::size_t p = 8; p < std::min<std::size_t>(bytes.size(), 96); ++p) {
        if (!is_uuid_at(p)) continue;
        // Hash the bytes after the UUID in place (no copy: the file may be gigabytes).
        const char* rest = bytes.data() + p + 36;
        const std::size_t rest_size = bytes.size() - p - 36;
        std::string hex = hex64(hash64(rest, rest_size)) + hex64(hash64(rest, rest_size, 0x84222325cbf29ce4ULL));
        std::string uuid = hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) +
                           "-" + hex.substr(20, 12);
        bytes.replace(p, 36, uuid);
        break;
    }
    std::uint64_t h = hash64(bytes.data(), bytes.size());
    char trailer[kTrailerSize];
    std::memcpy(trailer, kTrailerMagic, sizeof kTrailerMagic);
    for (int i = 0; i < 8; ++i) trailer[8 + i] = static_cast<char>((h >> (8 * i)) & 0xFF);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.write(trailer, sizeof trailer);
    out.close();
    if (!out) fail_write(path.string(), "write failed (disk full?)");
}

// Checks the trailer of one of our files. Returns false when the file has no trailer at all; a
// file without one that still carries our metadata key was cut short and is rejected here, before
// OpenVDB parses it (OpenVDB needs up to a minute on some truncated files).
bool verify_trailer(const fs::path& path) {
    std::string bytes = read_file(path);
    const bool has_trailer = bytes.size() >= kTrailerSize &&
                             std::memcmp(bytes.data() + bytes.size() - kTrailerSize, kTrailerMagic, sizeof kTrailerMagic) == 0;
    if (!has_trailer) {
        if (bytes.find("haptic:grid") != std::string::npos)
            fail_input(path.string(), "truncated: the checksum trailer of a hapticprep file is missing (make it again)");
        return false;
    }
    const char* t = bytes.data() + bytes.size() - kTrailerSize;
    std::uint64_t stored = 0;
    for (int i = 0; i < 8; ++i) stored |= static_cast<std::uint64_t>(static_cast<unsigned char>(t[8 + i])) << (8 * i);
    if (hash64(bytes.data(), bytes.size() - kTrailerSize) != stored)
        fail_input(path.string(), "corrupt: checksum mismatch (the file was damaged after it was written; make it again)");
    return true;
}

GridSpec spec_from(const nlohmann::json& meta, const std::string& where) {
    GridSpec g;
    try {
        nlohmann::json j = nlohmann::json::parse(meta.at("grid").get<std::string>());
        for (int a = 0; a < 3; ++a) {
            g.origin[a] = j.at("origin").at(static_cast<std::size_t>(a)).get<double>();
            g.dims[static_cast<std::size_t>(a)] = j.at("dims").at(static_cast<std::size_t>(a)).get<int>();
        }
        g.voxel_size = j.at("voxel_size").get<double>();
    } catch (const std::exception&) {
        fail_input(where, "its haptic:grid metadata is missing or malformed (not written by hapticprep?)");
    }
    if (!(g.voxel_size > 0) || g.dims[0] < 1 || g.dims[1] < 1 || g.dims[2] < 1)
        fail_input(where, "its haptic:grid metadata describes an empty grid");
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
           const std::string& creator) {
    init_openvdb();
    openvdb::GridPtrVec out;
    auto transform = openvdb::math::Transform::createLinearTransform(grid.voxel_size);
    transform->postTranslate(openvdb::Vec3d(grid.origin.x + 0.5 * grid.voxel_size, grid.origin.y + 0.5 * grid.voxel_size,
                                            grid.origin.z + 0.5 * grid.voxel_size));
    nlohmann::json meta = metadata;
    meta["format_version"] = kFormatVersion;
    meta["grid"] = nlohmann::json{{"origin", {grid.origin.x, grid.origin.y, grid.origin.z}},
                                  {"voxel_size", grid.voxel_size},
                                  {"dims", {grid.dims[0], grid.dims[1], grid.dims[2]}}}
                       .dump();
    meta["voxel_size"] = grid.voxel_size;
    if (!meta.contains("sign_convention")) meta["sign_convention"] = "inside_positive";
    for (const GridOut& g : grids) {
        openvdb::GridBase::Ptr base;
        switch (g.type) {
        case ValueType::int32: base = build_grid<openvdb::Int32Grid>(grid, g); break;
        case ValueType::float32: base = build_grid<openvdb::FloatGrid>(grid, g); break;
        case ValueType::float64: base = build_grid<openvdb::DoubleGrid>(grid, g); break;
        case ValueType::vec3f: base = build_grid<openvdb::Vec3SGrid>(grid, g); break;
        }
        base->setName(g.name);
        base->setTransform(transform->copy());
        base->setGridClass(g.level_set ? openvdb::GRID_LEVEL_SET : openvdb::GRID_UNKNOWN);
        put_metadata(*base, meta);
        out.push_back(base);
    }
    openvdb::MetaMap file_meta;
    file_meta.insertMeta("creator", openvdb::StringMetadata(creator));
    write_atomically(path, [&](const fs::path& tmp) {
        try {
            openvdb::io::File file(tmp.string());
            file.write(out, file_meta);
            file.close();
        } catch (const std::exception& e) {
            fail_write(path.string(), std::string("cannot write the VDB file (") + e.what() + ")");
        }
        out.clear();  // the trees are on disk: free them before the file is read back
        finalize_file(tmp);
    });
}

FileInfo inspect(const fs::path& path, bool deep) {
    init_openvdb();
    if (!fs::exists(path)) fail_input(path.string(), "no such file");
    if (!looks_like_vdb(path)) fail_input(path.string(), "not a VDB file (no OpenVDB magic number)");
    const bool has_trailer = verify_trailer(path);
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
            if (info.grids.empty()) info.metadata = get_metadata(*g);
            info.grids.push_back(gi);
        }
        if (info.metadata.is_null()) info.metadata = nlohmann::json::object();
        info.ours = info.metadata.contains("grid");
        if (info.ours) {
            if (!has_trailer)
                fail_input(path.string(), "truncated: the checksum trailer of a hapticprep file is missing (make it again)");
            if (info.metadata.value("format_version", std::int64_t{0}) > kFormatVersion)
                fail_input(path.string(), "written by a newer hapticprep (format v" +
                                              std::to_string(info.metadata.value("format_version", std::int64_t{0})) +
                                              "); this build reads up to v" + std::to_string(kFormatVersion));
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
    if (info_out) *info_out = info;
    guarded(path, [&] {
        openvdb::io::File file(path.string());
        file.open(false);
        openvdb::GridBase::Ptr base = file.readGrid(name);
        file.close();
        if (base->type() != type_name_of(type))
            fail_input(path.string(), "grid '" + name + "' holds " + base->valueType() + " values, expected " +
                                          type_name_of(type));
        const GridSpec& g = info.grid;
        const std::size_t slice = static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]);
        auto emit = [&](auto& typed) {
            using GridT = std::decay_t<decltype(typed)>;
            using ValueT = typename GridT::ValueType;
            std::vector<ValueT> buf(slice);
            auto acc = typed.getConstAccessor();
            for (int z = 0; z < g.dims[2]; ++z) {
                for (int y = 0; y < g.dims[1]; ++y)
                    for (int x = 0; x < g.dims[0]; ++x)
                        buf[static_cast<std::size_t>(y) * static_cast<std::size_t>(g.dims[0]) + static_cast<std::size_t>(x)] =
                            acc.getValue(openvdb::Coord(x, y, z));
                sink(z, buf.data());
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
