#include "core/file_hash.hpp"

#include <fstream>
#include <vector>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace hp {

std::string hash_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_input(path.string(), "cannot be read (missing, or no permission to read it)");
    std::uint64_t h = 0xcbf29ce484222325ULL;
    std::vector<char> buf(1 << 20);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        h = hash64(buf.data(), static_cast<std::size_t>(in.gcount()), h);
    }
    if (in.bad()) fail_input(path.string(), "read error");
    return hex64(h);
}

}  // namespace hp
