// The write unit of formats/vdb: builds OpenVDB trees from slices, attaches the haptic: metadata,
// saves, then lets the integrity unit fix the UUID and append the checksum. See formats/vdb.md.
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
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
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

template <class GridT>
typename GridT::Ptr build_grid(const GridSpec& g, const GridOut& out, const std::function<void(double)>& done) {
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
                block.leaf = new_leaf<LeafT>(openvdb::Coord(x0, y0, z0), background, full);
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

// The sparse form of build_grid: the producer hands over blocks (GridOut::blocks) instead of
// slices. A constant block becomes an active tile; a block with voxels becomes a leaf (its values
// transposed into the leaf's z-fastest order). Blocks that reach past the grid's far faces are
// always leaves, active only inside the grid, as in build_grid. Blocks of whole rows of blocks,
// about 1024 at a time, are built in parallel and added in a fixed order.
template <class GridT>
typename GridT::Ptr build_grid_blocks(const GridSpec& g, const GridOut& out, const std::function<void(double)>& done) {
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
                auto leaf = new_leaf<LeafT>(o0, background, full);
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
                leaves[i] = std::move(leaf);
            }
        });
        for (std::size_t i = 0; i < n; ++i) {
            if (leaves[i]) acc.addLeaf(leaves[i].release());
            else acc.addTile(1, origin_of(first + i), tiles[i], true);
        }
        done(static_cast<double>(first + n) / static_cast<double>(count));
    }
    acc.clear();  // no cached node survives the pruning
    openvdb::tools::prune(tree);
    return grid;
}

// The file as openvdb::io::File::write (OpenVDB 10) lays it out, byte for byte (with a nil header
// UUID, which finalize_file replaces by the content-derived one), but with every leaf compressed
// once, on all threads: OpenVDB compresses every leaf twice, once in parallel for the delayed-load
// metadata (mask kinds and compressed sizes) and once one leaf after the other into the stream.
// Here each leaf goes once through the same OpenVDB function (LeafNode::writeBuffers) into a
// buffer stream tagged with the same settings (data compression, background); the metadata is
// read off those bytes and the bytes are appended in leaf order (SerializedLeaves).
// tests/formats/vdb_parallel_write_test.cpp compares the files with OpenVDB's own writer.
std::atomic<std::uint64_t> g_serialized_twice{0};

namespace archive {

constexpr std::uint32_t kCompression = openvdb::io::COMPRESS_BLOSC | openvdb::io::COMPRESS_ACTIVE_MASK;

// openvdb::io::File's default compression is BLOSC | ACTIVE_MASK when it was built with Blosc.
std::uint32_t file_compression() {
    static const std::uint32_t c = openvdb::io::File("").compression();
    return c;
}

// Every leaf's bytes as LeafNode::writeBuffers writes them into the stream (value mask, then
// io::writeCompressedValues: mask metadata byte, inactive values, selection mask, Blosc block),
// serialized once, on all threads, in chunks of leaves. OpenVDB's own writer compresses every leaf
// twice: once for the delayed-load metadata (each leaf's mask metadata and compressed size), once
// into the stream. Here that metadata is read off the serialized bytes, and the bytes after the
// value mask are kept until the stream reaches the leaf buffers, in the leaf's own value buffer:
// the trees are the writer's own and are not read again (their topology lives in the nodes'
// masks), and the compressed bytes nearly always fit in the 512 values they encode. The rare leaf
// whose bytes do not fit (incompressible values, which Blosc stores raw behind its 16-byte header)
// keeps its values untouched and is serialized again by writeBuffers when the stream reaches it
// (Blosc is deterministic: the same bytes). So the save needs, beyond the trees, only a leaf
// pointer and a length per leaf, and compresses each leaf once except those incompressible ones.
template <class GridT>
class SerializedLeaves {
public:
    using TreeT = typename GridT::TreeType;
    using ValueT = typename TreeT::ValueType;
    using LeafT = typename TreeT::LeafNodeType;
    using MaskT = typename LeafT::NodeMaskType;

    // Serializes the leaves of `grid` (whose values it overwrites) and fills `meta`.
    SerializedLeaves(GridT& grid, openvdb::io::DelayedLoadMetadata& meta, std::uint32_t compression) {
        namespace io = openvdb::io;
        TreeT& tree = grid.tree();
        leaves_.reserve(tree.leafCount());
        for (auto it = tree.beginLeaf(); it; ++it) leaves_.push_back(&*it);
        if (leaves_.empty()) return;
        length_.resize(leaves_.size());
        // Only the one compression hapticprep writes (Blosc with the active mask, compressed sizes
        // in the delayed-load metadata); others, and half floats (never saved here), are left to
        // io::File.
        if (compression != kCompression || grid.saveFloatAsHalf()) throw std::runtime_error("unsupported leaf compression");
        meta.resizeMask(leaves_.size());
        meta.resizeCompressedSize(leaves_.size());
        background_ = tree.background();
        const ValueT& background = background_;
        constexpr std::size_t kChunk = 256;  // leaves per task
        const std::size_t chunks = (leaves_.size() + kChunk - 1) / kChunk;
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, chunks, 1), [&](const tbb::blocked_range<std::size_t>& r) {
            std::ostringstream out(std::ios_base::binary);
            std::vector<std::size_t> ends;
            for (std::size_t c = r.begin(); c != r.end(); ++c) {
                out.str(std::string());
                io::setDataCompression(out, compression);
                io::setGridBackgroundValuePtr(out, &background);
                const std::size_t first = c * kChunk, last = std::min(leaves_.size(), first + kChunk);
                ends.clear();
                for (std::size_t n = first; n < last; ++n) {
                    leaves_[n]->writeBuffers(out, /*toHalf=*/false);
                    ends.push_back(static_cast<std::size_t>(out.tellp()));
                }
                const std::string_view b = out.view();
                std::size_t begin = 0;
                for (std::size_t n = first; n < last; ++n) {
                    const std::size_t end = ends[n - first];
                    if (end - begin < kMaskBytes + 1 + 8) throw std::runtime_error("unexpected leaf buffer layout");
                    // With the active mask, the mask kind is the byte after the value mask.
                    const std::uint8_t mask = static_cast<std::uint8_t>(b[begin + kMaskBytes]);
                    meta.setMask(n, static_cast<io::DelayedLoadMetadata::MaskType>(mask));
                    // What precedes the compressed block, whose size counts its 8-byte length.
                    std::size_t head = kMaskBytes + 1;
                    if (mask == io::NO_MASK_AND_ONE_INACTIVE_VAL || mask == io::MASK_AND_ONE_INACTIVE_VAL) head += sizeof(ValueT);
                    if (mask == io::MASK_AND_TWO_INACTIVE_VALS) head += 2 * sizeof(ValueT);
                    if (mask == io::MASK_AND_NO_INACTIVE_VALS || mask == io::MASK_AND_ONE_INACTIVE_VAL || mask == io::MASK_AND_TWO_INACTIVE_VALS)
                        head += kMaskBytes;
                    if (end - begin < head + 8) throw std::runtime_error("unexpected leaf buffer layout");
                    meta.setCompressedSize(n, static_cast<io::DelayedLoadMetadata::CompressedSizeType>(end - begin - head));
                    // Keep the bytes after the value mask (written again from the leaf's mask).
                    const std::string_view kept = b.substr(begin + kMaskBytes, end - begin - kMaskBytes);
                    if (kept.size() <= sizeof(ValueT) * LeafT::SIZE) {
                        std::memcpy(leaves_[n]->buffer().data(), kept.data(), kept.size());
                        length_[n] = kept.size();
                    } else {
                        length_[n] = kRewrite;  // values untouched: write() serializes the leaf again
                    }
                    begin = end;
                }
            }
        });
    }

    // The leaf buffers, as LeafNode::writeBuffers would write them, in leaf order. `os` must be
    // tagged with the compression the constructor was given.
    void write(std::ostream& os) const {
        for (std::size_t n = 0; n < leaves_.size(); ++n) {
            if (length_[n] == kRewrite) {
                openvdb::io::setGridBackgroundValuePtr(os, &background_);
                leaves_[n]->writeBuffers(os, /*toHalf=*/false);
                g_serialized_twice.fetch_add(1, std::memory_order_relaxed);
                openvdb::io::setGridBackgroundValuePtr(os, nullptr);
                continue;
            }
            leaves_[n]->valueMask().save(os);
            os.write(reinterpret_cast<const char*>(leaves_[n]->buffer().data()), static_cast<std::streamsize>(length_[n]));
        }
    }

private:
    static constexpr std::size_t kMaskBytes = MaskT::WORD_COUNT * sizeof(typename MaskT::Word);
    std::vector<LeafT*> leaves_;
    static constexpr std::size_t kRewrite = SIZE_MAX;  // a length_: the bytes outgrew the leaf's buffer
    std::vector<std::size_t> length_;                   // bytes kept in the leaf's buffer, or kRewrite
    ValueT background_{};
};

// A grid's part of the file in two steps: prepare_grid() does the work that needs no stream (the
// statistics metadata, every leaf serialized on all threads) and returns the step that writes the
// grid into the stream (descriptor, metadata, transform, topology, the serialized leaves) and then
// frees the grid. write_file() runs the second step of one grid on its own thread while the next
// grid is built and prepared.
using EmitGrid = std::function<void(std::ostream&, openvdb::io::StreamMetadata::Ptr&)>;

// One grid's part of the stream as io::File lays it out: the descriptor (its stream positions
// filled in at the end), the compression flags, `meta` (the grid's metadata with the file
// statistics), the transform, topology(os), then leaves(os) (the leaf buffers).
template <class Topology, class Leaves>
void write_grid_part(std::ostream& os, const openvdb::GridBase& g, const openvdb::GridBase& meta, std::uint32_t c,
                     openvdb::io::StreamMetadata::Ptr& file_meta, Topology&& topology, Leaves&& leaves) {
    auto stream_meta = std::make_shared<openvdb::io::StreamMetadata>(*file_meta);
    stream_meta->setHalfFloat(g.saveFloatAsHalf());
    stream_meta->gridMetadata() = static_cast<const openvdb::MetaMap&>(g);
    openvdb::io::setStreamMetadataPtr(os, stream_meta, /*transfer=*/false);
    openvdb::io::GridDescriptor gd(g.getName(), g.type(), g.saveFloatAsHalf());
    gd.writeHeader(os);
    const std::int64_t offsets = static_cast<std::int64_t>(os.tellp());
    gd.writeStreamPos(os);
    gd.setGridPos(os.tellp());
    openvdb::io::setDataCompression(os, c);
    os.write(reinterpret_cast<const char*>(&c), sizeof c);
    meta.writeMeta(os);
    g.writeTransform(os);
    topology(os);
    gd.setBlockPos(os.tellp());
    leaves(os);
    gd.setEndPos(os.tellp());
    os.seekp(offsets, std::ios_base::beg);
    gd.writeStreamPos(os);
    gd.seekToEnd(os);
    openvdb::io::setStreamMetadataPtr(os, file_meta, /*transfer=*/false);
    openvdb::io::setDataCompression(os, file_compression());
}

template <class GridT>
EmitGrid prepare_grid(const typename GridT::Ptr& grid) {
    const std::uint32_t archive_compression = file_compression();
    std::uint32_t c = archive_compression;
    if (grid->getGridClass() == openvdb::GRID_LEVEL_SET || grid->getGridClass() == openvdb::GRID_FOG_VOLUME) c &= ~openvdb::io::COMPRESS_ZIP;
    // OpenVDB's writer takes the delayed-load metadata with the archive's compression and writes
    // the leaves with the grid's (the same here: BLOSC | ACTIVE_MASK has no ZIP to drop).
    if (c != archive_compression) throw std::runtime_error("unexpected grid compression");
    openvdb::GridBase::ConstPtr copy = grid->copyGrid();
    const openvdb::GridBase::Ptr meta = openvdb::ConstPtrCast<openvdb::GridBase>(copy);
    meta->insertMeta(openvdb::GridBase::META_FILE_DELAYED_LOAD, openvdb::io::DelayedLoadMetadata());
    openvdb::io::DelayedLoadMetadata& delayed = *meta->getMetadata<openvdb::io::DelayedLoadMetadata>(openvdb::GridBase::META_FILE_DELAYED_LOAD);
    // The statistics (bounding box, voxel count, memory: the trees' masks and node sizes) while the
    // leaves are serialized (their values overwritten); each adds its own entries to the metadata.
    std::shared_ptr<const SerializedLeaves<GridT>> leaves;
    tbb::parallel_invoke([&] { meta->addStatsMetadata(); },
                         [&] { leaves = std::make_shared<const SerializedLeaves<GridT>>(*grid, delayed, archive_compression); });
    meta->insertMeta(openvdb::GridBase::META_FILE_COMPRESSION, openvdb::StringMetadata(openvdb::io::compressionToString(c)));
    typename GridT::Ptr held = grid;
    return [held, copy, leaves, c](std::ostream& os, openvdb::io::StreamMetadata::Ptr& file_meta) mutable {
        GridT& g = *held;
        write_grid_part(os, g, *copy, c, file_meta, [&](std::ostream& o) { g.writeTopology(o); }, [&](std::ostream& o) { leaves->write(o); });
        // The grid is on its way to the disk: free it (Tree::clear frees the leaves on all threads).
        leaves.reset();
        copy.reset();
        g.clear();
        held.reset();
    };
}

// The metadata a copied grid takes from its stored copy: the statistics and the delayed-load
// metadata, which describe the same tree.
const char* const kStoredMeta[] = {openvdb::GridBase::META_FILE_BBOX_MIN, openvdb::GridBase::META_FILE_BBOX_MAX,
                                   openvdb::GridBase::META_FILE_MEM_BYTES, openvdb::GridBase::META_FILE_VOXEL_COUNT,
                                   openvdb::GridBase::META_FILE_DELAYED_LOAD};

// Bytes [from, to) of a file into the stream.
void copy_bytes(std::ostream& os, int fd, std::int64_t from, std::int64_t to) {
    std::vector<char> chunk(std::size_t{1} << 20);
    while (from < to) {
        const std::size_t want = static_cast<std::size_t>(std::min<std::int64_t>(to - from, static_cast<std::int64_t>(chunk.size())));
        const ssize_t got = ::pread(fd, chunk.data(), want, from);
        if (got <= 0) throw std::runtime_error("cannot read the stored grid again");
        os.write(chunk.data(), got);
        from += got;
    }
}

// The grid's part of the file from a stored copy of it (GridOut::stored): the descriptor and
// metadata as prepare_grid() writes them (the statistics and delayed-load metadata of the same
// tree: the stored ones), then the stored topology and leaf buffers byte for byte. `empty`: the
// grid with its metadata and transform but no voxels. Null when the stored grid is laid out
// otherwise than this writer would lay out the grid (type, compression, transform, background).
template <class GridT>
EmitGrid prepare_stored(const typename GridT::Ptr& empty, const detail::StoredGrid& stored) {
    using ValueT = typename GridT::ValueType;
    const std::uint32_t c = file_compression();
    if (stored.type != empty->type() || stored.compression != c || empty->getGridClass() == openvdb::GRID_LEVEL_SET) return nullptr;
    std::ostringstream transform(std::ios_base::binary);
    empty->writeTransform(transform);
    if (transform.str() != stored.transform) return nullptr;
    // The topology begins with the tree's buffer count (one) and the root's background.
    const ValueT background = empty->background();
    const std::int32_t one = 1;
    constexpr std::size_t at = detail::StoredGrid::kBackgroundAt;
    if (stored.topology_head.size() < at + sizeof(ValueT) || std::memcmp(stored.topology_head.data(), &one, at) != 0 ||
        std::memcmp(stored.topology_head.data() + at, &background, sizeof(ValueT)) != 0)
        return nullptr;
    const auto& meta = *static_cast<const openvdb::MetaMap*>(stored.meta.get());
    for (const char* key : kStoredMeta)
        if (!meta[key]) return nullptr;
    // The closure holds a copy of `stored`: the file stays open, the metadata alive.
    return [empty, stored, c](std::ostream& os, openvdb::io::StreamMetadata::Ptr& file_meta) {
        const auto& sm = *static_cast<const openvdb::MetaMap*>(stored.meta.get());
        const openvdb::GridBase::ConstPtr copy = empty->copyGrid();
        const openvdb::GridBase::Ptr meta = openvdb::ConstPtrCast<openvdb::GridBase>(copy);
        for (const char* key : kStoredMeta) meta->insertMeta(key, *sm[key]);
        meta->insertMeta(openvdb::GridBase::META_FILE_COMPRESSION, openvdb::StringMetadata(openvdb::io::compressionToString(c)));
        const int fd = detail::fd_of(*stored.file);
        write_grid_part(
            os, *empty, *copy, c, file_meta, [&](std::ostream& o) { copy_bytes(o, fd, stored.topology_pos, stored.block_pos); },
            [&](std::ostream& o) { copy_bytes(o, fd, stored.block_pos, stored.end_pos); });
    };
}

// Precondition: distinct, non-empty grid names; grids of the four value types written here.
// prepare(n) builds and prepares grid n of `count` (in order; prepare_grid or prepare_stored), and
// grid n is written into the stream on a thread of its own while grid n + 1 is prepared.
void write_file(const fs::path& path, std::size_t count, const std::function<EmitGrid(std::size_t)>& prepare,
                const openvdb::MetaMap& file_meta) {
    // The leaf buffers reach the stream a few hundred bytes at a time: a 1 MiB buffer turns them
    // into large writes (the default 8 KiB one made one system call per few leaves).
    std::vector<char> buffer(std::size_t{1} << 20);
    std::ofstream os;
    os.rdbuf()->pubsetbuf(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    os.open(path, std::ios_base::out | std::ios_base::binary | std::ios_base::trunc);
    if (!os) throw std::runtime_error("cannot open the file for writing");
    openvdb::io::StreamMetadata::Ptr stream_meta = std::make_shared<openvdb::io::StreamMetadata>();
    openvdb::io::setStreamMetadataPtr(os, stream_meta, /*transfer=*/false);
    openvdb::io::setDataCompression(os, file_compression());
    openvdb::io::setWriteGridStatsMetadata(os, true);
    // The header (Archive::writeHeader): magic, file format, library version, "has grid offsets",
    // then the UUID as 36 characters.
    const std::int64_t magic = openvdb::OPENVDB_MAGIC;
    const std::uint32_t version[3] = {openvdb::OPENVDB_FILE_VERSION, openvdb::OPENVDB_LIBRARY_MAJOR_VERSION,
                                      openvdb::OPENVDB_LIBRARY_MINOR_VERSION};
    os.write(reinterpret_cast<const char*>(&magic), sizeof magic);
    os.write(reinterpret_cast<const char*>(version), sizeof version);
    os.put(1);
    os << "00000000-0000-0000-0000-000000000000";
    file_meta.writeMeta(os);
    const std::int32_t n_grids = static_cast<std::int32_t>(count);
    os.write(reinterpret_cast<const char*>(&n_grids), sizeof n_grids);
    // The future of std::async waits for its thread when destroyed: an exception here never
    // leaves the stream to a running writer.
    std::future<void> writing;
    for (std::size_t n = 0; n < count; ++n) {
        EmitGrid emit = prepare(n);
        if (writing.valid()) writing.get();
        writing = std::async(std::launch::async, [&os, &stream_meta, emit = std::move(emit)]() mutable {
            emit(os, stream_meta);
            emit = nullptr;
        });
    }
    if (writing.valid()) writing.get();
    os.close();
    if (!os) throw std::runtime_error("write failed (disk full?)");
}

}  // namespace archive

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
    auto make = [&](std::size_t n) {
        const GridOut& g = grids[n];
        auto done = [&](double f) { progress.report("tree", (static_cast<double>(n) + f) / static_cast<double>(grids.size())); };
        return decorate(with_type(g.type, [&](auto tag) -> openvdb::GridBase::Ptr {
                            using GridT = typename decltype(tag)::type;
                            return g.blocks ? build_grid_blocks<GridT>(grid, g, done) : build_grid<GridT>(grid, g, done);
                        }),
                        g);
    };
    openvdb::MetaMap file_meta;
    file_meta.insertMeta("creator", openvdb::StringMetadata(creator));
    write_atomically(path, [&](const fs::path& tmp) {
        try {
            if (options.plain || options.openvdb_writer || archive::file_compression() != archive::kCompression) {
                openvdb::GridPtrVec out;
                for (std::size_t n = 0; n < grids.size(); ++n) out.push_back(make(n));
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
                        return archive::prepare_grid<GridT>(openvdb::gridPtrCast<GridT>(make(n)));
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

std::uint64_t detail::leaves_serialized_twice() { return g_serialized_twice.load(std::memory_order_relaxed); }

}  // namespace hp::vdb
