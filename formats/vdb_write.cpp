// The write unit of formats/vdb: builds OpenVDB trees from slices, attaches the haptic: metadata,
// saves (vdb_archive.cpp), then lets the integrity unit fix the UUID and append the checksum. See
// formats/vdb.md.
#include "formats/vdb.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <type_traits>
#include <utility>

#include <malloc.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <openvdb/io/Compression.h>
#include <openvdb/io/DelayedLoadMetadata.h>
#include <openvdb/io/File.h>
#include <openvdb/io/GridDescriptor.h>
#include <openvdb/openvdb.h>
#include <openvdb/tools/Prune.h>
#include <openvdb/tree/ValueAccessor.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "formats/vdb_archive.hpp"
#include "formats/vdb_internal.hpp"

namespace hp::vdb {
namespace fs = std::filesystem;

namespace {

// Builds the tree slab by slab (8 z-slices, one leaf deep): each 8 x 8 x 8 block of the slab
// becomes an active tile when all its voxels are equal, else a leaf whose buffer is filled
// directly (no per-voxel tree traversal). Blocks are built in parallel and added in a fixed
// order, so the tree does not depend on the thread count. Constant tiles are then pruned upwards
// (8^3 tiles into 128^3 tiles...), so deep constant regions cost almost nothing.
// A grid of `out`'s type with its background and no voxels.
template <class GridT>
typename GridT::Ptr empty_grid(const GridOut& out) {
    using ValueT = typename GridT::ValueType;
    if constexpr (std::is_same_v<ValueT, openvdb::Vec3f>) return GridT::create(openvdb::Vec3f(static_cast<float>(out.background)));
    else return GridT::create(static_cast<ValueT>(out.background));
}

// f(std::type_identity<GridT>{}) for the OpenVDB grid type of `type`.
template <class F>
auto with_type(ValueType type, F&& f) {
    switch (type) {
    case ValueType::int32: return f(std::type_identity<openvdb::Int32Grid>{});
    case ValueType::float32: return f(std::type_identity<openvdb::FloatGrid>{});
    case ValueType::float64: return f(std::type_identity<openvdb::DoubleGrid>{});
    case ValueType::vec3f: break;
    }
    return f(std::type_identity<openvdb::Vec3SGrid>{});
}

// A leaf at `origin`, inactive. A whole leaf (every voxel inside the grid, each written by the
// caller) gets its buffer unfilled (allocated by buffer().data(), each value written once); one
// reaching past the grid's far faces, filled with the background for the voxels beyond.
template <class LeafT>
std::unique_ptr<LeafT> new_leaf(const openvdb::Coord& origin, const typename LeafT::ValueType& background, bool whole) {
    if (whole) return std::make_unique<LeafT>(openvdb::PartialCreate(), origin, background, false);
    return std::make_unique<LeafT>(origin, background, false);
}

// With a store, a leaf's values live in a buffer of the building thread's own while the leaf is
// filled and serialized; the leaf then keeps none, and no buffer is allocated or freed per leaf.
template <class LeafT>
class LeafScratch {
public:
    // A leaf at `origin` as new_leaf makes it, its buffer this thread's.
    std::unique_ptr<LeafT> lend(const openvdb::Coord& origin, const typename LeafT::ValueType& background, bool whole) {
        auto leaf = std::make_unique<LeafT>(openvdb::PartialCreate(), origin, background, false);
        leaf->swap(buffers_.local());
        if (!whole) std::fill(leaf->buffer().data(), leaf->buffer().data() + LeafT::SIZE, background);
        return leaf;
    }
    // This thread's buffer back from `leaf`, which lend() made on this thread; the leaf keeps no values.
    void take_back(LeafT& leaf) { leaf.swap(buffers_.local()); }

private:
    tbb::enumerable_thread_specific<typename LeafT::Buffer> buffers_;
};

// Prunes a built tree's constant tiles upwards (tools::prune). No leaf of a built tree is
// constant (a constant block is a tile already, a leaf past the grid's faces has inactive voxels),
// so with its leaves' values released (`released`), only the tiles are pruned (tools::pruneTiles
// never reads a leaf): the same tree.
template <class TreeT>
void prune_built(TreeT& tree, bool released) {
    if (released) openvdb::tools::pruneTiles(tree);
    else openvdb::tools::prune(tree);
}

template <class GridT>
typename GridT::Ptr build_grid(const GridSpec& g, const GridOut& out, const std::function<void(double)>& done,
                               archive::LeafStore<GridT>* store) {
    using ValueT = typename GridT::ValueType;
    using TreeT = typename GridT::TreeType;
    using LeafT = typename TreeT::LeafNodeType;
    static_assert(LeafT::LOG2DIM == 3, "leaf offsets below assume 8^3 leaves");
    constexpr int kDim = LeafT::DIM;  // 8
    auto grid = empty_grid<GridT>(out);
    const ValueT background = grid->background();
    TreeT& tree = grid->tree();

    const std::size_t nx = static_cast<std::size_t>(g.dims[0]);
    const std::size_t slice = nx * static_cast<std::size_t>(g.dims[1]);
    const int bx = (g.dims[0] + kDim - 1) / kDim, by = (g.dims[1] + kDim - 1) / kDim;
    struct Block {
        std::unique_ptr<LeafT> leaf;  // null: a constant block, stored as a tile of value `tile`
        ValueT tile{};
        archive::LeafRecord record;   // with a store: the leaf's bytes (its values released)
    };
    std::vector<Block> blocks(static_cast<std::size_t>(bx) * static_cast<std::size_t>(by));
    LeafScratch<LeafT> scratch;
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
                const openvdb::Coord origin(x0, y0, z0);
                block.leaf = store ? scratch.lend(origin, background, full) : new_leaf<LeafT>(origin, background, full);
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
                if (store) {
                    block.record = store->take(*block.leaf);
                    scratch.take_back(*block.leaf);
                }
            }
        });
        for (std::size_t b = 0; b < blocks.size(); ++b) {
            const openvdb::Coord origin(static_cast<int>(b % static_cast<std::size_t>(bx)) * kDim,
                                        static_cast<int>(b / static_cast<std::size_t>(bx)) * kDim, z0);
            if (blocks[b].leaf) {
                LeafT* leaf = blocks[b].leaf.release();
                tree.addLeaf(leaf);
                if (store) store->keep(leaf, std::move(blocks[b].record));
            } else {
                tree.addTile(1, origin, blocks[b].tile, true);
            }
        }
        done(static_cast<double>(z0 + nz) / g.dims[2]);
    }
    prune_built(tree, store != nullptr);
    return grid;
}

// The sparse form of build_grid: the producer hands over blocks (GridOut::blocks) instead of
// slices. A constant block becomes an active tile; a block with voxels becomes a leaf (its values
// transposed into the leaf's z-fastest order). Blocks that reach past the grid's far faces are
// always leaves, active only inside the grid, as in build_grid. Blocks of whole rows of blocks,
// about 1024 at a time, are built in parallel and added in a fixed order.
template <class GridT>
typename GridT::Ptr build_grid_blocks(const GridSpec& g, const GridOut& out, const std::function<void(double)>& done,
                                      archive::LeafStore<GridT>* store) {
    using ValueT = typename GridT::ValueType;
    using TreeT = typename GridT::TreeType;
    using LeafT = typename TreeT::LeafNodeType;
    constexpr int kDim = LeafT::DIM;
    static_assert(kDim == kBrickDim, "bricks are OpenVDB leaves");
    auto grid = empty_grid<GridT>(out);
    const ValueT background = grid->background();
    TreeT& tree = grid->tree();
    const int bx = (g.dims[0] + kDim - 1) / kDim, by = (g.dims[1] + kDim - 1) / kDim, bz = (g.dims[2] + kDim - 1) / kDim;
    const std::size_t row = static_cast<std::size_t>(bx), rows = static_cast<std::size_t>(by) * static_cast<std::size_t>(bz);
    // Whole rows of blocks, about 1024 blocks at a time (2 MB of float bricks, 6 MB of vectors).
    const std::size_t batch = std::max<std::size_t>(1, 1024 / row) * row;
    std::vector<const ValueT*> bricks(batch);
    std::vector<ValueT> tiles(batch), copies(batch * static_cast<std::size_t>(kBrickVoxels));
    std::vector<std::unique_ptr<LeafT>> leaves(batch);
    std::vector<archive::LeafRecord> records(store ? batch : 0);
    LeafScratch<LeafT> scratch;
    openvdb::tree::ValueAccessor<TreeT> acc(tree);  // consecutive blocks share internal nodes
    const std::size_t count = rows * row;
    for (std::size_t first = 0; first < count; first += batch) {
        const std::size_t n = std::min(batch, count - first);
        // The producer's pointer is valid until its next call: copy each brick at once (a plain
        // copy; the leaves below take it in their z-fastest order on all threads).
        for (std::size_t i = 0; i < n; ++i) {
            const ValueT* v = static_cast<const ValueT*>(out.blocks(first + i, &tiles[i]));
            bricks[i] = nullptr;
            if (!v) continue;
            ValueT* dst = copies.data() + i * static_cast<std::size_t>(kBrickVoxels);
            std::copy(v, v + kBrickVoxels, dst);
            bricks[i] = dst;
        }
        auto origin_of = [&](std::size_t b) {
            const std::size_t r = b / row;
            return openvdb::Coord(static_cast<int>(b % row) * kDim, static_cast<int>(r % static_cast<std::size_t>(by)) * kDim,
                                  static_cast<int>(r / static_cast<std::size_t>(by)) * kDim);
        };
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 16), [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t i = r.begin(); i != r.end(); ++i) {
                const openvdb::Coord o0 = origin_of(first + i);
                const int ex = std::min(kDim, g.dims[0] - o0.x()), ey = std::min(kDim, g.dims[1] - o0.y()), ez = std::min(kDim, g.dims[2] - o0.z());
                const bool full = ex == kDim && ey == kDim && ez == kDim;
                leaves[i].reset();
                if (!bricks[i] && full) continue;
                auto leaf = store ? scratch.lend(o0, background, full) : new_leaf<LeafT>(o0, background, full);
                ValueT* data = leaf->buffer().data();
                const ValueT* v = bricks[i];
                if (v && full) {
                    // Brick offset x + 8 y + 64 z to leaf offset x * 64 + y * 8 + z.
                    for (int o = 0; o < kBrickVoxels; ++o) data[(o & 7) << 6 | ((o >> 3) & 7) << 3 | o >> 6] = v[o];
                } else {
                    for (int dz = 0; dz < ez; ++dz)
                        for (int dy = 0; dy < ey; ++dy)
                            for (int dx = 0; dx < ex; ++dx)
                                data[(dx << 6) | (dy << 3) | dz] = v ? v[dx | (dy << 3) | (dz << 6)] : tiles[i];
                }
                if (full) {
                    leaf->setValuesOn();
                } else {
                    for (int dz = 0; dz < ez; ++dz)
                        for (int dy = 0; dy < ey; ++dy)
                            for (int dx = 0; dx < ex; ++dx)
                                leaf->setActiveState(static_cast<openvdb::Index>((dx << 6) | (dy << 3) | dz), true);
                }
                if (store) {
                    // A whole brick of equal values: the tile tools::prune would make of its leaf
                    // (the same test and value), since the released leaf cannot be pruned later.
                    ValueT low, high;
                    bool on = false;
                    const bool constant = full && leaf->isConstant(low, high, on, openvdb::zeroVal<ValueT>());
                    if (constant) tiles[i] = leaf->medianAll();
                    else records[i] = store->take(*leaf);
                    scratch.take_back(*leaf);
                    if (constant) continue;
                }
                leaves[i] = std::move(leaf);
            }
        });
        for (std::size_t i = 0; i < n; ++i) {
            if (leaves[i]) {
                LeafT* leaf = leaves[i].release();
                acc.addLeaf(leaf);
                if (store) store->keep(leaf, std::move(records[i]));
            } else {
                acc.addTile(1, origin_of(first + i), tiles[i], true);
            }
        }
        done(static_cast<double>(first + n) / static_cast<double>(count));
    }
    acc.clear();  // no cached node survives the pruning
    prune_built(tree, store != nullptr);
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

}  // namespace

void write(const fs::path& path, const GridSpec& grid, const std::vector<GridOut>& grids, const nlohmann::json& metadata,
           const std::string& creator, const WriteOptions& options, const Progress& progress) {
    detail::init_openvdb();
    for (int a = 0; a < 3; ++a)
        if (grid.dims[static_cast<std::size_t>(a)] < 1 || grid.dims[static_cast<std::size_t>(a)] > 2147483647 - 8)
            fail_write(path.string(), "the grid has no voxels or is too large for OpenVDB index coordinates");
    if (!(grid.voxel_size > 0) || !std::isfinite(grid.voxel_size))
        fail_write(path.string(), "the voxel size must be a positive number");
    auto transform = openvdb::math::Transform::createLinearTransform(grid.voxel_size);
    transform->postTranslate(openvdb::Vec3d(grid.origin.x + 0.5 * grid.voxel_size, grid.origin.y + 0.5 * grid.voxel_size,
                                            grid.origin.z + 0.5 * grid.voxel_size));
    nlohmann::json meta = metadata.is_object() ? metadata : nlohmann::json::object();
    meta["format_version"] = detail::kFormatVersion;
    meta["grid"] = nlohmann::json{{"origin", {grid.origin.x, grid.origin.y, grid.origin.z}},
                                  {"voxel_size", grid.voxel_size},
                                  {"dims", {grid.dims[0], grid.dims[1], grid.dims[2]}}}
                       .dump();
    meta["voxel_size"] = grid.voxel_size;
    if (!meta.contains("sign_convention")) meta["sign_convention"] = "inside_positive";
    if (!meta.contains("tool_version")) meta["tool_version"] = kVersion;
    auto decorate = [&](openvdb::GridBase::Ptr base, const GridOut& g) {
        base->setName(g.name);
        base->setTransform(transform->copy());
        base->setGridClass(g.level_set ? openvdb::GRID_LEVEL_SET : openvdb::GRID_UNKNOWN);
        if (!options.plain) put_metadata(*base, meta);
        return base;
    };
    // Grid n, built; with `store` (a LeafStore of the grid's type), its leaves taken by it.
    auto make = [&](std::size_t n, void* store) {
        const GridOut& g = grids[n];
        auto done = [&](double f) { progress.report("tree", (static_cast<double>(n) + f) / static_cast<double>(grids.size())); };
        return decorate(with_type(g.type, [&](auto tag) -> openvdb::GridBase::Ptr {
                            using GridT = typename decltype(tag)::type;
                            auto* s = static_cast<archive::LeafStore<GridT>*>(store);
                            return g.blocks ? build_grid_blocks<GridT>(grid, g, done, s) : build_grid<GridT>(grid, g, done, s);
                        }),
                        g);
    };
    openvdb::MetaMap file_meta;
    file_meta.insertMeta("creator", openvdb::StringMetadata(creator));
    write_atomically(path, [&](const fs::path& tmp) {
        try {
            if (options.plain || options.openvdb_writer || archive::file_compression() != archive::kCompression) {
                openvdb::GridPtrVec out;
                for (std::size_t n = 0; n < grids.size(); ++n) out.push_back(make(n, nullptr));
                progress.report("save", 0.0);
                openvdb::io::File file(tmp.string());
                file.write(out, file_meta);
                file.close();
                // Tree::clear() frees the leaves on all threads; the trees' destructors would free them one by one.
                for (auto& g : out) g->clear();
            } else {
                archive::write_file(tmp, grids.size(), [&](std::size_t n) {
                    const GridOut& g = grids[n];
                    return with_type(g.type, [&](auto tag) {
                        using GridT = typename decltype(tag)::type;
                        if (g.stored) {
                            // Without voxels: its background, metadata and transform, for the stored copy.
                            auto empty = empty_grid<GridT>(g);
                            decorate(empty, g);
                            if (archive::EmitGrid emit = archive::prepare_stored<GridT>(empty, *g.stored)) return emit;
                        }
                        // Each leaf serialized as it is built, its values released: the grid's values
                        // are never all in memory, only their compressed bytes.
                        auto store = std::make_shared<archive::LeafStore<GridT>>(empty_grid<GridT>(g)->background());
                        auto built = openvdb::gridPtrCast<GridT>(make(n, store.get()));
                        return archive::prepare_grid<GridT>(built, std::move(store));
                    });
                }, file_meta);
            }
            // Most leaves were allocated on TBB worker threads, in their own malloc arenas, which
            // the calling thread never reuses: hand the freed trees back to the system now.
            ::malloc_trim(0);
            progress.report("checksum", 0.0);
            if (!options.plain) detail::finalize_file(tmp);
            progress.report("checksum", 1.0);
        } catch (const Error&) {
            throw;
        } catch (const std::exception& e) {
            fail_write(path.string(), std::string("cannot write the VDB file (") + e.what() + ")");
        }
    });
}

}  // namespace hp::vdb
