// Support of the fuzz entries: the scratch folder, the checksum fix-ups, the report of a failed
// invariant. Layouts: formats/container.md (header, sections) and formats/vdb.md (the trailer).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include <unistd.h>

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

std::string fix_vdb_trailer(std::string b) {
    constexpr std::size_t kTrailer = 16;
    static constexpr char kMagic[8] = {'H', 'P', 'V', 'D', 'B', 'X', 'H', '3'};
    if (b.size() >= kTrailer && std::memcmp(b.data() + b.size() - kTrailer, kMagic, 8) == 0)
        b.resize(b.size() - kTrailer);
    const std::uint64_t h = xxh3_64(b.data(), b.size());
    b.append(kMagic, 8);
    b.resize(b.size() + 8);
    store<std::uint64_t>(b, b.size() - 8, h);
    return b;
}

}  // namespace hp::fuzz
