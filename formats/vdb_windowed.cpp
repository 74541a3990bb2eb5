// The windowed read of formats/vdb_read.cpp: a stream buffer over a file that keeps a large window
// of it in memory, and an archive that reads one grid through it (vdb_windowed.hpp).
#include "formats/vdb_windowed.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <istream>
#include <stdexcept>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <openvdb/io/Archive.h>
#include <openvdb/io/GridDescriptor.h>

#include "formats/vdb_chunks.hpp"

namespace hp::vdb::detail {
namespace {

// A read-only stream buffer over a file that keeps a large window of it in memory. OpenVDB reads
// a tree in small pieces and, per leaf, asks for the position and seeks over the value mask; on
// an std::ifstream each of those is a system call and every seek throws the buffer away, so a
// grid of 300,000 leaves cost about as many seeks and reads. Here positions and seeks inside
// the window are pointer arithmetic, and the file is read in large sequential pieces (pread).
// Seeking past the end is allowed, as on a file; reads there find the end of the file.
class WindowedFileBuf : public std::streambuf {
public:
    // Reads through `fd`, which it owns from then on (closes it).
    explicit WindowedFileBuf(int fd) : fd_(fd) {
        struct stat st {};
        if (::fstat(fd_.get(), &st) != 0) throw std::runtime_error("cannot read the file's size");
        size_ = static_cast<std::uint64_t>(st.st_size);
        window_.resize(kWindow);
        setg(window_.data(), window_.data(), window_.data());
    }
    WindowedFileBuf(const WindowedFileBuf&) = delete;
    WindowedFileBuf& operator=(const WindowedFileBuf&) = delete;
    std::uint64_t size() const { return size_; }

protected:
    int_type underflow() override {
        if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
        return fill(start_ + static_cast<std::uint64_t>(egptr() - eback())) ? traits_type::to_int_type(*gptr()) : traits_type::eof();
    }
    // A read that asks for more bytes than remain in the file reads none. OpenVDB 10 reads a
    // damaged chunk length's worth of bytes before it checks the length against its buffer; an
    // std::ifstream hands such a read to the kernel, which refuses a count beyond the address
    // space, where copying window by window would overrun the buffer up to the end of the file.
    // A well-formed file never asks for bytes past its end. The bytes are those Reader::open
    // verified (its descriptor, duplicated), so only a crafted file with a recomputed trailer gets
    // here with a damaged length; OpenVDB's Blosc path (blosc_decompress_ctx) also trusts a chunk
    // header's own size field, a known OpenVDB/Blosc limit this buffer cannot bound.
    std::streamsize xsgetn(char* s, std::streamsize n) override {
        if (n > 0 && static_cast<std::uint64_t>(n) > remaining()) return 0;
        std::streamsize done = 0;
        while (done < n) {
            if (gptr() == egptr() && underflow() == traits_type::eof()) break;
            const std::streamsize k = std::min<std::streamsize>(n - done, egptr() - gptr());
            std::memcpy(s + done, gptr(), static_cast<std::size_t>(k));
            gbump(static_cast<int>(k));
            done += k;
        }
        return done;
    }
    pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode which) override {
        off_type base = 0;
        if (dir == std::ios_base::cur) base = static_cast<off_type>(start_ + static_cast<std::uint64_t>(gptr() - eback()));
        else if (dir == std::ios_base::end) base = static_cast<off_type>(size_);
        off_type to = 0;  // a length read from a damaged file can push the sum past off_type
        if (__builtin_add_overflow(base, off, &to)) return pos_type(off_type(-1));
        return seekpos(pos_type(to), which);
    }
    pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
        const off_type to = off_type(pos);
        if (to < 0 || !(which & std::ios_base::in)) return pos_type(off_type(-1));
        const std::uint64_t at = static_cast<std::uint64_t>(to);
        const std::uint64_t held = static_cast<std::uint64_t>(egptr() - eback());
        if (at >= start_ && at <= start_ + held) {
            setg(eback(), eback() + (at - start_), egptr());
        } else {
            start_ = at;  // an empty window there: the next read fills it
            setg(window_.data(), window_.data(), window_.data());
        }
        return pos;
    }

private:
    static constexpr std::size_t kWindow = std::size_t{1} << 20;

    std::uint64_t remaining() const {
        const std::uint64_t at = start_ + static_cast<std::uint64_t>(gptr() - eback());
        return at < size_ ? size_ - at : 0;
    }

    // Reads the window starting at byte `at`; false at the end of the file or on an error.
    bool fill(std::uint64_t at) {
        start_ = at;
        std::size_t got = 0;
        while (got < window_.size()) {
            const ssize_t r = ::pread(fd_.get(), window_.data() + got, window_.size() - got, static_cast<off_t>(at + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += static_cast<std::size_t>(r);
        }
        setg(window_.data(), window_.data(), window_.data() + got);
        return got > 0;
    }

    // Closes the descriptor however the constructor ends.
    class Fd {
    public:
        explicit Fd(int fd) : fd_(fd) {
            if (fd_ < 0) throw std::runtime_error("cannot open the file for reading");
        }
        ~Fd() { ::close(fd_); }
        Fd(const Fd&) = delete;
        Fd& operator=(const Fd&) = delete;
        int get() const { return fd_; }

    private:
        int fd_;
    };

    Fd fd_;
    std::uint64_t size_ = 0;  // the file's size when opened
    std::vector<char> window_;
    std::uint64_t start_ = 0;  // file offset of the window's first byte
};

// Reads grid `name` of a VDB file the way openvdb::io::File::readGrid does (header, file
// metadata, the grid descriptors, then the grid at its offset through Archive::readGrid), but
// from a WindowedFileBuf: the same parse, without a system call per leaf.
class WindowedArchive : public openvdb::io::Archive {
public:
    // Reads through `fd`, which it closes.
    openvdb::GridBase::Ptr read_grid(int fd, const std::string& name) {
        WindowedFileBuf buf(fd);
        std::istream is(&buf);
        openvdb::io::GridDescriptor gd;
        if (!find(is, name, gd)) throw std::runtime_error("no grid named '" + name + "'");
        if (gd.isInstance()) throw std::runtime_error("grid '" + name + "' is an instance of another grid");
        openvdb::GridBase::Ptr grid = openvdb::GridBase::createGrid(gd.gridType());
        grid->setSaveFloatAsHalf(gd.saveFloatAsHalf());
        gd.seekToGrid(is);
        // The lengths OpenVDB trusts, checked before it reads them (our grid types only).
        if (!check_grid_chunks(is, gd)) throw std::runtime_error("grid '" + name + "' is stored in half floats or of a type hapticprep does not write");
        gd.seekToGrid(is);
        Archive::readGrid(grid, gd, is);
        if (!is) throw std::runtime_error("grid '" + name + "' ends early");
        return grid;
    }

    // Where grid `name` lies (detail::StoredGrid), parsed as Archive::readGrid parses it up to the
    // topology; null when it is absent, an instance, or stored in half floats. Reads through
    // `fd`, which it closes.
    std::shared_ptr<detail::StoredGrid> locate(int fd, const std::string& name) {
        namespace io = openvdb::io;
        WindowedFileBuf buf(fd);
        std::istream is(&buf);
        io::GridDescriptor gd;
        if (!find(is, name, gd) || gd.isInstance() || gd.saveFloatAsHalf()) return nullptr;
        auto out = std::make_shared<detail::StoredGrid>();
        out->type = gd.gridType();
        gd.seekToGrid(is);
        is.read(reinterpret_cast<char*>(&out->compression), sizeof out->compression);
        io::setDataCompression(is, out->compression);
        auto meta = std::make_shared<openvdb::MetaMap>();
        meta->readMeta(is);
        const std::int64_t transform_pos = static_cast<std::int64_t>(is.tellg());
        openvdb::GridBase::Ptr grid = openvdb::GridBase::createGrid(gd.gridType());
        grid->readTransform(is);
        out->topology_pos = static_cast<std::int64_t>(is.tellg());
        out->block_pos = gd.getBlockPos(), out->end_pos = gd.getEndPos();
        if (!is || transform_pos <= 0 || out->topology_pos < transform_pos || out->block_pos < out->topology_pos + 16 ||
            out->end_pos < out->block_pos || static_cast<std::uint64_t>(out->end_pos) > buf.size())
            return nullptr;
        out->transform.resize(static_cast<std::size_t>(out->topology_pos - transform_pos));
        is.seekg(transform_pos);
        is.read(out->transform.data(), static_cast<std::streamsize>(out->transform.size()));
        out->topology_head.resize(16);
        is.read(out->topology_head.data(), 16);
        if (!is) return nullptr;
        out->meta = std::move(meta);
        return out;
    }

    // check_grid_chunks on every grid that is not an instance (those of other types or in half
    // floats, in files of other programs, are left to OpenVDB). Reads through `fd`, which it closes.
    void check_chunks(int fd) {
        WindowedFileBuf buf(fd);
        std::istream is(&buf);
        const std::int32_t count = grid_count(is);
        for (std::int32_t i = 0; i < count && is; ++i) {
            openvdb::io::GridDescriptor gd;
            gd.read(is);
            if (!gd.isInstance()) {
                gd.seekToGrid(is);
                check_grid_chunks(is, gd);
            }
            gd.seekToEnd(is);
        }
    }

private:
    // The header and file metadata, then the grid descriptors up to grid `name`'s (in `gd`);
    // false when there is none. Throws on a file that is not a VDB (or is newer than this OpenVDB)
    // or has no grid offsets.
    bool find(std::istream& is, const std::string& name, openvdb::io::GridDescriptor& gd) {
        const std::int32_t count = grid_count(is);
        for (std::int32_t i = 0; i < count && is; ++i) {
            gd = openvdb::io::GridDescriptor();
            gd.read(is);
            if (gd.gridName() == name) return true;
            gd.seekToEnd(is);
        }
        return false;
    }
    // The header and file metadata; the grid count. Throws as find does.
    std::int32_t grid_count(std::istream& is) {
        namespace io = openvdb::io;
        readHeader(is);
        if (!is) throw std::runtime_error("cannot read the file header");
        if (!inputHasGridOffsets()) throw std::runtime_error("the file has no grid offsets");
        stream_meta_ = std::make_shared<io::StreamMetadata>();
        stream_meta_->setSeekable(true);
        io::setStreamMetadataPtr(is, stream_meta_, /*transfer=*/false);
        setFormatVersion(is);
        setLibraryVersion(is);
        setDataCompression(is);
        openvdb::MetaMap file_meta;
        file_meta.readMeta(is);
        return readGridCount(is);
    }
    std::shared_ptr<openvdb::io::StreamMetadata> stream_meta_;  // the stream's, while it is read
};

}  // namespace

openvdb::GridBase::Ptr read_grid_windowed(int fd, const std::string& name) { return WindowedArchive().read_grid(fd, name); }

std::shared_ptr<StoredGrid> locate_grid(int fd, const std::string& name) { return WindowedArchive().locate(fd, name); }

void check_every_grid_chunks(int fd) { WindowedArchive().check_chunks(fd); }

}  // namespace hp::vdb::detail
