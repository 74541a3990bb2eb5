// Support of the fuzz entries: the scratch folder, the checksum fix-ups, the report of a failed
// invariant. Layouts: formats/container.md (header, sections) and formats/vdb.md (the trailer).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>

#include <unistd.h>
#include <vector>

#include "core/hash.hpp"
#include "fuzz_targets.hpp"

namespace hp::fuzz {
namespace fs = std::filesystem;

namespace {

template <class T>
T load(const std::string& b, std::size_t at) {
    T v;
    std::memcpy(&v, b.data() + at, sizeof(T));
    return v;
}
template <class T>
void store(std::string& b, std::size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof(T));
}

void remove_scratch() {
    std::error_code ec;
    fs::remove_all(scratch_dir(), ec);
}

}  // namespace

fs::path scratch_dir() {
    // Never destroyed: remove_scratch runs at exit, after the destructors of function statics
    // initialised before it was registered.
    static const fs::path* const dir = [] {
        const auto* d = new fs::path(fs::temp_directory_path() / ("hapticprep-fuzz-" + std::to_string(::getpid())));
        fs::create_directories(*d);
        std::atexit(remove_scratch);
        return d;
    }();
    return *dir;
}

fs::path scratch_file(const std::string& name, std::string_view bytes) {
    const fs::path p = scratch_dir() / name;
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) {
        std::fprintf(stderr, "fuzz: cannot write the scratch file %s\n", p.c_str());
        std::abort();
    }
    return p;
}

namespace {
std::size_t refusal_count = 0;
}  // namespace

std::size_t refusals() { return refusal_count; }
void count_refusal() { ++refusal_count; }

void violated(const char* target, const std::string& what) {
    std::fprintf(stderr, "fuzz target %s: invariant violated: %s\n", target, what.c_str());
    std::abort();
}

std::string fix_container_checksums(std::string b) {
    constexpr std::size_t kHeader = 40, kSectionHeader = 32;
    if (b.size() < kHeader || std::memcmp(b.data(), "HAPTICPF", 8) != 0) return b;
    const std::uint32_t count = load<std::uint32_t>(b, 24);
    std::size_t at = kHeader;
    std::uint32_t kept = 0;
    for (; kept < count && at + kSectionHeader <= b.size(); ++kept) {
        const std::size_t payload = at + kSectionHeader;
        std::uint64_t size = load<std::uint64_t>(b, at + 16);
        if (size > b.size() - payload) {
            size = b.size() - payload;
            store<std::uint64_t>(b, at + 16, size);
        }
        store<std::uint32_t>(b, at + 24, crc32(b.data() + payload, size));
        store<std::uint32_t>(b, at + 28, crc32(b.data() + at, 28));
        at = payload + size;
    }
    b.resize(at);
    store<std::uint64_t>(b, 16, b.size());
    store<std::uint32_t>(b, 24, kept);
    store<std::uint32_t>(b, 36, 0);
    store<std::uint32_t>(b, 32, crc32(b.data(), 32));
    return b;
}

namespace {

// Our .vdb files' trailer (formats/vdb.md): the magic, then the XXH3-64 of every byte before it.
constexpr std::size_t kVdbTrailer = 16;
constexpr char kVdbTrailerMagic[8] = {'H', 'P', 'V', 'D', 'B', 'X', 'H', '3'};

// The bytes without their trailer, when they end with one.
void strip_vdb_trailer(std::string& b) {
    if (b.size() >= kVdbTrailer && std::memcmp(b.data() + b.size() - kVdbTrailer, kVdbTrailerMagic, 8) == 0)
        b.resize(b.size() - kVdbTrailer);
}

}  // namespace

std::string fix_vdb_trailer(std::string b) {
    strip_vdb_trailer(b);
    const std::uint64_t h = xxh3_64(b.data(), b.size());
    b.append(kVdbTrailerMagic, 8);
    b.resize(b.size() + 8);
    store<std::uint64_t>(b, b.size() - 8, h);
    return b;
}

std::string mutate_vdb_framing(std::string b, unsigned seed) {
    strip_vdb_trailer(b);
    // A grid's descriptor ends with three offsets: grid <= block <= end, past the descriptor and
    // within the file (as the framing walk reads them, formats/vdb_integrity.cpp).
    std::vector<std::size_t> found;
    for (std::size_t i = 0; i + 24 <= b.size(); ++i) {
        const auto grid = load<std::int64_t>(b, i), block = load<std::int64_t>(b, i + 8), end = load<std::int64_t>(b, i + 16);
        if (grid >= static_cast<std::int64_t>(i + 24) && grid <= block && block <= end &&
            end <= static_cast<std::int64_t>(b.size() + kVdbTrailer))
            found.push_back(i);
    }
    if (found.empty()) return {};
    std::minstd_rand rng(seed);
    const std::size_t at = found[rng() % found.size()];
    constexpr std::int64_t kReach = kVdbTrailer + 8;  // the trailer's size and a few bytes more
    std::int64_t by = static_cast<std::int64_t>(rng() % (2 * kReach + 1)) - kReach;
    if (by == 0) by = 1;
    if (rng() % 2 == 0) {  // an offset moved
        const std::size_t field = at + 8 * (rng() % 3);
        store<std::int64_t>(b, field, load<std::int64_t>(b, field) + by);
    } else {  // the file cut near the grid's end
        const std::int64_t end = load<std::int64_t>(b, at + 16);
        const std::int64_t cut = std::max<std::int64_t>(at + 24, std::min<std::int64_t>(end + by, static_cast<std::int64_t>(b.size())));
        b.resize(static_cast<std::size_t>(cut));
    }
    return rng() % 4 == 0 ? b : fix_vdb_trailer(b);
}

}  // namespace hp::fuzz
