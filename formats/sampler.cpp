#include "formats/sampler.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <span>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "field/field_stream.hpp"
#include "formats/container.hpp"

namespace hp {
namespace fs = std::filesystem;

namespace {

// "scalars" section: one record.
struct ScalarsRecord {
    std::int32_t dims[3];
    std::uint32_t flags;  // kSparse, kDoubleSamples
    double origin[3];
    double voxel_size;
    double lipschitz, max_value, floor_sample;
    std::uint32_t first_tile_brick, reserved;
    std::uint64_t samples, pyramid_entries, blocks, gaps;  // element counts of the arrays
};
static_assert(sizeof(ScalarsRecord) == 112);

constexpr std::uint32_t kSparse = 1, kDoubleSamples = 2;
constexpr std::size_t kAlign = 64;  // every array's payload: a cache line (and the pyramid entry's alignment)

// Section `name` as an array of `count` elements of T, in place: its payload starts at a file offset
// that is a multiple of kAlign and holds exactly `count` elements.
template <class T>
std::span<const T> section(const container::Reader& r, const std::string& name, std::uint64_t count, const std::string& where) {
    if (count == 0 && !r.has(name)) return {};
    const std::string_view b = r.bytes(name);
    for (const auto& info : r.sections())
        if (info.name == name && info.offset % kAlign != 0)
            fail_input(where, "corrupt prepared sampler: section '" + name + "' starts at byte " + std::to_string(info.offset) +
                                  ", not at a multiple of " + std::to_string(kAlign));
#ifdef HP_FUZZ_CANARY
    // The fuzzing canary (docs/fuzzing.md): the element count check below, off by one (a section
    // one element short of its count would pass).
    if (b.size() % sizeof(T) == 0 && b.size() / sizeof(T) + 1 == count) __builtin_trap();
#endif
    if (b.size() % sizeof(T) != 0 || b.size() / sizeof(T) != count)
        fail_input(where, "corrupt prepared sampler: section '" + name + "' has " + std::to_string(b.size()) + " bytes, not " +
                              std::to_string(count) + " elements");
    if (reinterpret_cast<std::uintptr_t>(b.data()) % alignof(T) != 0)
        fail_input(where, "corrupt prepared sampler: section '" + name + "' is not aligned for reading in place");
    return {reinterpret_cast<const T*>(b.data()), static_cast<std::size_t>(count)};
}

// The scalars the sampler's arithmetic relies on, before it reads anything: the grid (its axes
// size the tables and the bricks), a positive finite voxel size (every lookup divides by it), a
// finite slope bound of at least 1 and largest sample, a band's floor that is a number and not
// -inf (+inf: no tiles), and a dense sampler's band fields 0. `bad` throws.
template <class Bad>
void check_scalars(const ScalarsRecord& s, Bad&& bad) {
    if (s.flags > (kSparse | kDoubleSamples)) bad("unknown flags " + std::to_string(s.flags));
    if (s.reserved != 0) bad("a reserved field is not 0");
    for (int a = 0; a < 3; ++a) {
        if (s.dims[a] < 1 || s.dims[a] > (1 << 20))
            bad("grid dims " + std::to_string(s.dims[0]) + " x " + std::to_string(s.dims[1]) + " x " + std::to_string(s.dims[2]) +
                " (each axis 1 to 2^20 voxels)");
        if (!std::isfinite(s.origin[a])) bad("the grid origin is not finite");
    }
    if (!(s.voxel_size > 0) || !std::isfinite(s.voxel_size)) bad("the voxel size is not positive and finite");
    if (!(s.lipschitz >= 1) || !std::isfinite(s.lipschitz)) bad("the slope bound is not a finite number of at least 1");
    if (!std::isfinite(s.max_value)) bad("the largest sample is not finite");
    const bool sparse = s.flags & kSparse;
    if (!sparse && (s.blocks != 0 || s.gaps != 0)) bad("a dense sampler with a narrow band's tables");
    if (!sparse && (s.floor_sample != 0 || s.first_tile_brick != 0)) bad("a dense sampler with a band's floor or first tile brick");
    if (sparse && (std::isnan(s.floor_sample) || s.floor_sample == -INFINITY)) bad("the band's floor is not a number or -inf");
}

// The scalars record of layout `l` holding `samples` samples (as double when `as_double`).
ScalarsRecord scalars_of(const DistanceSampler::Layout& l, std::size_t samples, bool as_double) {
    ScalarsRecord r{};
    for (int a = 0; a < 3; ++a) {
        r.dims[a] = l.grid.dims[static_cast<std::size_t>(a)];
        r.origin[a] = l.grid.origin[a];
    }
    r.flags = (l.sparse ? kSparse : 0u) | (as_double ? kDoubleSamples : 0u);
    r.voxel_size = l.grid.voxel_size;
    r.lipschitz = l.lipschitz;
    r.max_value = l.max_value;
    r.floor_sample = l.sparse ? l.floor_sample : 0.0;
    r.first_tile_brick = l.sparse ? l.first_tile_brick : 0u;
    r.samples = samples;
    r.pyramid_entries = l.pyramid.size();
    r.blocks = l.block_brick.size();
    r.gaps = l.gap.size();
    return r;
}

// The samples section's bytes, written into the file as they come: whole 2 MiB pages of the file
// at a time where it can (the last ones as they end), so that the page cache holds the file in
// 2 MiB folios, which a mapping reads with one fault each (docs/scene.md, "Loading"); the
// CRC-32 taken over each piece while it is in cache.
class PageWriter {
public:
    PageWriter(int fd, std::size_t offset, const fs::path& path) : fd_(fd), at_(offset), path_(path), buf_(kStage) {}
    void put(const void* data, std::size_t size) {
        crc_ = crc32(data, size, crc_);
        const char* p = static_cast<const char*>(data);
        while (size > 0) {
            const std::size_t n = std::min(size, buf_.size() - fill_);
            std::memcpy(buf_.data() + fill_, p, n);
            fill_ += n, p += n, size -= n;
            if (fill_ == buf_.size()) flush(false);
        }
    }
    // Writes what is held (all of it when `all`, else up to the last 2 MiB boundary of the file).
    void flush(bool all) {
        std::size_t n = fill_;
        if (!all) n = (at_ + fill_) / kPage * kPage > at_ ? (at_ + fill_) / kPage * kPage - at_ : 0;
        if (n == 0) return;
        container::write_at(fd_, buf_.data(), n, at_, path_);
        std::memmove(buf_.data(), buf_.data() + n, fill_ - n);
        at_ += n, fill_ -= n;
    }
    std::uint32_t crc() const { return crc_; }

private:
    static constexpr std::size_t kPage = std::size_t{2} << 20, kStage = 4 * kPage;
    int fd_;
    std::size_t at_;
    const fs::path& path_;
    std::vector<char> buf_;
    std::size_t fill_ = 0;
    std::uint32_t crc_ = 0;
};

template <class V>
void write_dense(const fs::path& path, const nlohmann::json& metadata, const GridSpec& grid, std::span<const V> values) {
    container::Writer w(container::Kind::sampler, metadata);
    // The scalars follow from the pass over the field, the samples' type too (double values that
    // are all floats are held as float): both sections are filled in once the bricks are written.
    w.add_reserved("scalars", sizeof(ScalarsRecord), kAlign);
    w.add_reserved("samples", 0, kAlign);
    StreamedSampler s;  // its pyramid is written after fill returns, in place
    w.write(path, [&](int fd) {
        PageWriter out(fd, w.payload_offset("samples"), path);
        s = stream_dense_sampler(grid, values, [&](const void* data, std::size_t bytes) { out.put(data, bytes); });
        out.flush(true);
        const bool as_double = !s.float_samples;
        const ScalarsRecord r = scalars_of(s.layout(), s.samples, as_double);
        w.set_payload("scalars", std::string(reinterpret_cast<const char*>(&r), sizeof r));
        w.set_written("samples", s.samples * (as_double ? sizeof(double) : sizeof(float)), out.crc());
        w.add_array_view("pyramid", std::span<const DistanceSampler::PyramidEntry>(s.pyramid), kAlign);
    });
}

}  // namespace

void write_sampler_file(const fs::path& path, const nlohmann::json& metadata, const DistanceSampler& sampler) {
    const DistanceSampler::Layout l = sampler.layout();
    const bool as_double = l.samples_f.empty();
    const ScalarsRecord r = scalars_of(l, as_double ? l.samples_d.size() : l.samples_f.size(), as_double);
    container::Writer w(container::Kind::sampler, metadata);
    w.add_array("scalars", std::vector<ScalarsRecord>{r}, kAlign);
    // The arrays are written from the sampler's storage in place (it outlives the write).
    if (as_double)
        w.add_array_view("samples", l.samples_d, kAlign);
    else
        w.add_array_view("samples", l.samples_f, kAlign);
    w.add_array_view("pyramid", l.pyramid, kAlign);
    if (l.sparse) {
        w.add_array_view("blocks", l.block_brick, kAlign);
        w.add_array_view("gaps", l.gap, kAlign);
    }
    w.write(path);
}

void write_dense_sampler_file(const fs::path& path, const nlohmann::json& metadata, const GridSpec& grid, std::span<const float> values) {
    write_dense(path, metadata, grid, values);
}

void write_dense_sampler_file(const fs::path& path, const nlohmann::json& metadata, const GridSpec& grid, std::span<const double> values) {
    write_dense(path, metadata, grid, values);
}

SamplerFile read_sampler_file(std::shared_ptr<const MappedFile> file, const std::string& where) {
    const std::string_view bytes = file->bytes();
    return read_sampler(bytes, std::move(file), where);
}

SamplerFile read_sampler(std::string_view bytes, std::shared_ptr<const void> keep, const std::string& where) {
    const container::Kind kind = container::Kind::sampler;
    const container::Reader r = container::Reader::view(bytes, where, &kind);
    auto bad = [&](const std::string& what) { fail_input(where, "corrupt prepared sampler: " + what); };
    const std::span<const ScalarsRecord> scalars = section<ScalarsRecord>(r, "scalars", 1, where);
    const ScalarsRecord& s = scalars[0];
    check_scalars(s, bad);
    const bool sparse = s.flags & kSparse, as_double = s.flags & kDoubleSamples;
    DistanceSampler::Layout l;
    for (int a = 0; a < 3; ++a) {
        l.grid.dims[static_cast<std::size_t>(a)] = s.dims[a];
        l.grid.origin[a] = s.origin[a];
    }
    l.grid.voxel_size = s.voxel_size;
    l.sparse = sparse;
    if (as_double)
        l.samples_d = section<double>(r, "samples", s.samples, where);
    else
        l.samples_f = section<float>(r, "samples", s.samples, where);
    l.pyramid = section<DistanceSampler::PyramidEntry>(r, "pyramid", s.pyramid_entries, where);
    l.block_brick = section<std::uint32_t>(r, "blocks", s.blocks, where);
    l.gap = section<float>(r, "gaps", s.gaps, where);
    l.lipschitz = s.lipschitz;
    l.max_value = s.max_value;
    l.floor_sample = sparse ? s.floor_sample : 0.0;
    l.first_tile_brick = s.first_tile_brick;
    SamplerFile f;
    f.metadata = r.metadata();
    f.file_size = r.file_size();
    try {
        f.sampler = DistanceSampler(l, std::move(keep));
    } catch (const Error& e) {
        fail_input(where, std::string("corrupt ") + e.what());
    }
    return f;
}

SamplerFile map_sampler_file(const fs::path& path) { return read_sampler_file(MappedFile::open(path), path.string()); }

}  // namespace hp
