// The save unit of formats/vdb (vdb_archive.hpp): a file laid out as openvdb::io::File writes it,
// every leaf compressed once, on all threads. See formats/vdb.md, "The save".
#include "formats/vdb_archive.hpp"

#include <atomic>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <unistd.h>

#include <openvdb/io/Compression.h>
#include <openvdb/io/DelayedLoadMetadata.h>
#include <openvdb/io/GridDescriptor.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

namespace hp::vdb {

namespace {
std::atomic<std::uint64_t> g_serialized_twice{0};
}  // namespace

std::uint64_t detail::leaves_serialized_twice() { return g_serialized_twice.load(std::memory_order_relaxed); }

namespace archive {

namespace fs = std::filesystem;

std::uint32_t file_compression() {
    static const std::uint32_t c = openvdb::io::File("").compression();
    return c;
}

namespace {

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
    template EmitGrid prepare_grid<GridT>(const GridT::Ptr&);                                    \
    template EmitGrid prepare_stored<GridT>(const GridT::Ptr&, const detail::StoredGrid&);
HP_VDB_ARCHIVE_INSTANTIATE(openvdb::Int32Grid)
HP_VDB_ARCHIVE_INSTANTIATE(openvdb::FloatGrid)
HP_VDB_ARCHIVE_INSTANTIATE(openvdb::DoubleGrid)
HP_VDB_ARCHIVE_INSTANTIATE(openvdb::Vec3SGrid)
#undef HP_VDB_ARCHIVE_INSTANTIATE

}  // namespace archive
}  // namespace hp::vdb
