#include "core/atomic_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <unistd.h>

#include "core/error.hpp"

namespace hp {
namespace fs = std::filesystem;

namespace {
fs::path temporary_beside(const fs::path& dest) {
    static std::atomic<unsigned> counter{0};
    fs::path dir = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
    // Built with append(): GCC 12 warns falsely (-Wrestrict) on "." + std::string&&.
    std::string name(".");
    name.append(dest.filename().string()).append(".tmp-").append(std::to_string(::getpid()));
    name.append("-").append(std::to_string(counter++));
    return dir / name;
}
}  // namespace

void write_atomically(const fs::path& dest, const std::function<void(const fs::path&)>& write) {
    fs::path dir = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        fail_write(dest.string(), "the folder " + dir.string() + " does not exist (create it first)");
    if (fs::is_directory(dest, ec))
        fail_write(dest.string(), "is a folder (give a file name)");
    fs::path tmp = temporary_beside(dest);
    try {
        write(tmp);
    } catch (...) {
        fs::remove(tmp, ec);
        throw;
    }
    fs::rename(tmp, dest, ec);
    if (ec) {
        fs::remove(tmp, ec);
        fail_write(dest.string(), "cannot move the finished file into place (" + ec.message() + ")");
    }
}

void write_file_atomically(const fs::path& dest, const std::string& bytes) {
    write_atomically(dest, [&](const fs::path& tmp) {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            fail_write(dest.string(), std::string("cannot create a file here (") + std::strerror(errno) + ")");
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out) fail_write(dest.string(), "write failed (disk full?)");
    });
}

std::string read_file(const fs::path& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) fail_input(path.string(), "no such file");
    if (fs::is_directory(path, ec)) fail_input(path.string(), "is a folder, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) fail_input(path.string(), std::string("cannot open (") + std::strerror(errno) + ")");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) fail_input(path.string(), "read error");
    return ss.str();
}

}  // namespace hp
