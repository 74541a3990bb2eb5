// The save unit of formats/vdb (vdb_archive.hpp): a file laid out as openvdb::io::File writes it,
// every leaf compressed once, on all threads. See formats/vdb.md, "The save".
#include "formats/vdb_archive.hpp"

#include <atomic>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include <openvdb/io/Compression.h>
#include <openvdb/io/DelayedLoadMetadata.h>
#include <openvdb/io/GridDescriptor.h>

namespace hp::vdb {

namespace {
std::atomic<std::uint64_t> g_incompressible{0};
}  // namespace

std::uint64_t detail::leaves_incompressible() { return g_incompressible.load(std::memory_order_relaxed); }

namespace archive {

namespace fs = std::filesystem;

std::uint32_t file_compression() {
    static const std::uint32_t c = openvdb::io::File("").compression();
    return c;
}

namespace {

// The delayed-load metadata's two entries of a leaf, read off its bytes `b` as
// LeafNode::writeBuffers writes them (value mask first; with the active mask, the mask kind is the
// byte after it, and the Blosc block's size counts its 8-byte length).
template <class LeafT>
void read_leaf_entries(std::string_view b, std::uint8_t& mask, std::uint64_t& compressed) {
    namespace io = openvdb::io;
    using ValueT = typename LeafT::ValueType;
    constexpr std::size_t kMaskBytes = LeafT::NodeMaskType::WORD_COUNT * sizeof(typename LeafT::NodeMaskType::Word);
    if (b.size() < kMaskBytes + 1 + 8) throw std::runtime_error("unexpected leaf buffer layout");
    mask = static_cast<std::uint8_t>(b[kMaskBytes]);
    // What precedes the compressed block.
    std::size_t head = kMaskBytes + 1;
    if (mask == io::NO_MASK_AND_ONE_INACTIVE_VAL || mask == io::MASK_AND_ONE_INACTIVE_VAL) head += sizeof(ValueT);
    if (mask == io::MASK_AND_TWO_INACTIVE_VALS) head += 2 * sizeof(ValueT);
    if (mask == io::MASK_AND_NO_INACTIVE_VALS || mask == io::MASK_AND_ONE_INACTIVE_VAL || mask == io::MASK_AND_TWO_INACTIVE_VALS)
        head += kMaskBytes;
    if (b.size() < head + 8) throw std::runtime_error("unexpected leaf buffer layout");
    compressed = b.size() - head;
}

// The leaves of a grid built with a LeafStore, in leaf order: their records (one serialized here
// for a leaf the store does not hold: none, when the builder recorded them all), and the
// delayed-load metadata's entries of them. OpenVDB's own writer compresses every leaf twice (once
// for that metadata, once into the stream); here each leaf is compressed once, by the builder's
// threads.
template <class GridT>
class RecordedLeaves {
public:
    using LeafT = typename GridT::TreeType::LeafNodeType;

    RecordedLeaves(GridT& grid, openvdb::io::DelayedLoadMetadata& meta, std::shared_ptr<const LeafStore<GridT>> store)
        : store_(std::move(store)) {
        auto& tree = grid.tree();
        for (auto it = tree.beginLeaf(); it; ++it) leaves_.push_back(&*it);
        meta.resizeMask(leaves_.size());
        meta.resizeCompressedSize(leaves_.size());
        const LeafStore<GridT> own(tree.background());
        records_.resize(leaves_.size());
        for (std::size_t n = 0; n < leaves_.size(); ++n) {
            const LeafRecord* r = store_->find(leaves_[n]);
            if (!r) {  // (its values still in it)
                extra_.push_back(own.take(*leaves_[n]));
                r = &extra_.back();
            }
            records_[n] = r;
            meta.setMask(n, static_cast<openvdb::io::DelayedLoadMetadata::MaskType>(r->mask));
            meta.setCompressedSize(n, static_cast<openvdb::io::DelayedLoadMetadata::CompressedSizeType>(r->compressed));
        }
    }

    void write(std::ostream& os) const {
        for (std::size_t n = 0; n < leaves_.size(); ++n) {
            leaves_[n]->valueMask().save(os);
            os.write(records_[n]->bytes.data(), static_cast<std::streamsize>(records_[n]->bytes.size()));
        }
    }

private:
    std::shared_ptr<const LeafStore<GridT>> store_;
    std::vector<LeafT*> leaves_;
    std::vector<const LeafRecord*> records_;
    std::deque<LeafRecord> extra_;  // stable addresses
};

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

}  // namespace

template <class GridT>
LeafRecord LeafStore<GridT>::take(const LeafT& leaf) const {
    namespace io = openvdb::io;
    // One stream per thread, reused: its storage grows to a leaf's bytes once.
    static thread_local std::ostringstream out(std::ios_base::binary);
    out.str(std::string());
    io::setDataCompression(out, kCompression);
    io::setGridBackgroundValuePtr(out, &background_);
    leaf.writeBuffers(out, /*toHalf=*/false);
    io::setGridBackgroundValuePtr(out, nullptr);
    const std::string_view b = out.view();
    LeafRecord r;
    read_leaf_entries<LeafT>(b, r.mask, r.compressed);
    constexpr std::size_t kMaskBytes = LeafT::NodeMaskType::WORD_COUNT * sizeof(typename LeafT::NodeMaskType::Word);
    r.bytes.assign(b.substr(kMaskBytes));
    // Incompressible values: Blosc stores them raw behind its header, more bytes than the values.
    if (r.bytes.size() > LeafT::SIZE * sizeof(ValueT)) g_incompressible.fetch_add(1, std::memory_order_relaxed);
    return r;
}

template <class GridT>
EmitGrid prepare_grid(const typename GridT::Ptr& grid, std::shared_ptr<const LeafStore<GridT>> store) {
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
    if (!store) throw std::runtime_error("the grid's leaves were not recorded as it was built");
    // The leaves' records in leaf order; then the statistics (bounding box, voxel count: the
    // masks; memory: the nodes' sizes, in which a leaf counts its values only while it holds them,
    // so those of the leaves that hold none are added: the file records the tree as built).
    auto leaves = std::make_shared<const RecordedLeaves<GridT>>(*grid, delayed, std::move(store));
    meta->addStatsMetadata();
    using LeafT = typename GridT::TreeType::LeafNodeType;
    std::int64_t emptied = 0;
    for (auto it = grid->tree().cbeginLeaf(); it; ++it) emptied += it->buffer().empty() ? 1 : 0;
    if (auto mem = meta->template getMetadata<openvdb::Int64Metadata>(openvdb::GridBase::META_FILE_MEM_BYTES))
        mem->value() += emptied * static_cast<std::int64_t>(LeafT::SIZE * sizeof(typename GridT::ValueType));
    std::function<void(std::ostream&)> write_leaves = [leaves](std::ostream& o) { leaves->write(o); };
    meta->insertMeta(openvdb::GridBase::META_FILE_COMPRESSION, openvdb::StringMetadata(openvdb::io::compressionToString(c)));
    typename GridT::Ptr held = grid;
    return [held, copy, write_leaves, c](std::ostream& os, openvdb::io::StreamMetadata::Ptr& file_meta) mutable {
        GridT& g = *held;
        write_grid_part(os, g, *copy, c, file_meta, [&](std::ostream& o) { g.writeTopology(o); }, write_leaves);
        // The grid is on its way to the disk: free it (Tree::clear frees the leaves on all threads).
        write_leaves = nullptr;
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

namespace {

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

}  // namespace

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

// The four grid types formats/vdb writes.
#define HP_VDB_ARCHIVE_INSTANTIATE(GridT)                                                          \
    template EmitGrid prepare_grid<GridT>(const GridT::Ptr&, std::shared_ptr<const LeafStore<GridT>>); \
    template class LeafStore<GridT>;                                                             \
    template EmitGrid prepare_stored<GridT>(const GridT::Ptr&, const detail::StoredGrid&);
HP_VDB_ARCHIVE_INSTANTIATE(openvdb::Int32Grid)
HP_VDB_ARCHIVE_INSTANTIATE(openvdb::FloatGrid)
HP_VDB_ARCHIVE_INSTANTIATE(openvdb::DoubleGrid)
HP_VDB_ARCHIVE_INSTANTIATE(openvdb::Vec3SGrid)
#undef HP_VDB_ARCHIVE_INSTANTIATE

}  // namespace archive
}  // namespace hp::vdb
