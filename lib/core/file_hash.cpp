#include "core/file_hash.hpp"

#include <cctype>
#include <fstream>
#include <vector>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace hp {

namespace {

constexpr const char* kXxh3Prefix = "xxh3:";

// Calls add(bytes, n) over the whole file, 1 MiB at a time.
template <class Add>
void stream_file(const std::filesystem::path& path, Add&& add) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_input(path.string(), "cannot be read (missing, or no permission to read it)");
    std::vector<char> buf(1 << 20);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        add(buf.data(), static_cast<std::size_t>(in.gcount()));
    }
    if (in.bad()) fail_input(path.string(), "read error");
}

bool is_hex64(const std::string& s, std::size_t from) {
    if (s.size() != from + 16) return false;
    for (std::size_t i = from; i < s.size(); ++i)
        if (!std::isxdigit(static_cast<unsigned char>(s[i])) || std::isupper(static_cast<unsigned char>(s[i]))) return false;
    return true;
}

}  // namespace

std::string hash_file(const std::filesystem::path& path) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    stream_file(path, [&](const char* d, std::size_t n) { h = hash64(d, n, h); });
    return hex64(h);
}

std::string content_hash(const std::filesystem::path& path) {
    Xxh3 sum;
    stream_file(path, [&](const char* d, std::size_t n) { sum.update(d, n); });
    return kXxh3Prefix + hex64(sum.digest64());
}

bool is_content_hash(const std::string& recorded) {
    return recorded.rfind(kXxh3Prefix, 0) == 0 && is_hex64(recorded, std::char_traits<char>::length(kXxh3Prefix));
}

bool hash_matches(const std::filesystem::path& path, const std::string& recorded) {
    if (recorded.rfind(kXxh3Prefix, 0) == 0) return is_content_hash(recorded) && content_hash(path) == recorded;
    return is_hex64(recorded, 0) && hash_file(path) == recorded;
}

}  // namespace hp
