#include "core/atomic_file.hpp"
#include "core/module.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>
#include <unistd.h>

#include "core/error.hpp"

namespace hp {
namespace fs = std::filesystem;

namespace {
// Follows symbolic links (relative targets resolve against the link's folder) to the path that
// is written; a dangling link gives its target, which is then created.
fs::path follow_links(const fs::path& dest) {
    fs::path p = dest;
    for (int hops = 0; hops < 40; ++hops) {
        std::error_code ec;
        if (fs::symlink_status(p, ec).type() != fs::file_type::symlink) return p;
        fs::path target = fs::read_symlink(p, ec);
        if (ec) fail_write(dest.string(), "cannot read the symbolic link " + p.string() + " (" + ec.message() + ")");
        p = target.is_absolute() ? target : (p.has_parent_path() ? p.parent_path() : fs::path(".")) / target;
    }
    fail_write(dest.string(), "too many levels of symbolic links (a loop?); give a file name");
}

// An existing path that must be written as a stream, not replaced.
bool is_stream(const fs::path& path) {
    std::error_code ec;
    switch (fs::status(path, ec).type()) {
    case fs::file_type::character:
    case fs::file_type::block:
    case fs::file_type::fifo:
    case fs::file_type::socket: return true;
    default: return false;
    }
}

// What every write of the process shares: the descriptor `-o -` writes into, the temporary files
// being written (for remove_pending_temporaries(), which a signal handler calls: fixed slots of
// plain characters, each published by an atomic state (0 free, 1 being filled, 2 ready), so the
// handler reads only complete paths and never allocates) and the temporaries' numbering. A
// module loaded with dlopen carries its own copy of this file's code and is handed the program's
// state (share_atomic_file_state), so its writes are cleaned up by the program's handler and go
// to the program's standard output.
constexpr int kSlots = 64;
constexpr std::size_t kPathMax = 4096;
}  // namespace

struct AtomicFileState {
    std::atomic<int> standard_output_fd{1};
    std::atomic<unsigned> temporaries{0};  // temporary files named so far (their names' suffix)
    char pending_path[kSlots][kPathMax];
    std::atomic<int> pending_state[kSlots];
};

namespace {
AtomicFileState own_state;
std::atomic<AtomicFileState*> shared_state{&own_state};
AtomicFileState& state() { return *shared_state.load(std::memory_order_acquire); }

// Copies the finished file `from` into the stream `to` ("-": the standard output), checking every
// write.
void copy_into_stream(const fs::path& from, const fs::path& to, const std::string& dest) {
    const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) fail_write(dest, std::string("cannot reopen the finished file (") + std::strerror(errno) + ")");
    const bool standard = to == "-";
    const int out = standard ? ::dup(state().standard_output_fd.load()) : ::open(to.c_str(), O_WRONLY | O_CLOEXEC);
    if (out < 0) {
        const int err = errno;
        ::close(in);
        fail_write(dest, std::string("cannot open for writing (") + std::strerror(err) +
                             (err == ENXIO ? "; a socket cannot be written as a file, give a file name" : "") + ")");
    }
    auto fail = [&](const char* what, int err) {
        ::close(in);
        ::close(out);
        fail_write(dest, std::string(what) + " (" + std::strerror(err) +
                             (err == ENOSPC ? "; free some space or choose another output" : "") + ")");
    };
    std::vector<char> buf(1 << 20);
    for (;;) {
        ssize_t n = ::read(in, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("cannot read the finished file", errno);
        if (n == 0) break;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = ::write(out, buf.data() + done, static_cast<std::size_t>(n - done));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) fail("write failed", errno);
            done += w;
        }
    }
    ::close(in);
    if (::close(out) != 0 && errno != EINTR) fail_write(dest, std::string("write failed (") + std::strerror(errno) + ")");
}

// Registers `tmp` for the lifetime of the guard (not at all when every slot is taken or the path
// is too long: the file is then only removed by the normal error paths).
class PendingGuard {
public:
    explicit PendingGuard(const fs::path& tmp) {
        const std::string& s = tmp.native();
        if (s.size() >= kPathMax) return;
        for (int i = 0; i < kSlots; ++i) {
            int free = 0;
            if (state_.pending_state[i].compare_exchange_strong(free, 1)) {
                std::memcpy(state_.pending_path[i], s.c_str(), s.size() + 1);
                state_.pending_state[i].store(2);
                slot_ = i;
                return;
            }
        }
    }
    ~PendingGuard() {
        if (slot_ >= 0) state_.pending_state[slot_].store(0);
    }
    PendingGuard(const PendingGuard&) = delete;
    PendingGuard& operator=(const PendingGuard&) = delete;

private:
    AtomicFileState& state_ = state();
    int slot_ = -1;
};

fs::path temporary_beside(const fs::path& dest) {
    fs::path dir = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
    // Built with append(): GCC 12 warns falsely (-Wrestrict) on "." + std::string&&.
    std::string name(".");
    name.append(dest.filename().string()).append(".tmp-").append(std::to_string(::getpid()));
    name.append("-").append(std::to_string(state().temporaries++));
    return dir / name;
}
}  // namespace

void set_standard_output_fd(int fd) noexcept { state().standard_output_fd.store(fd); }

AtomicFileState* atomic_file_state() noexcept { return &state(); }

void share_atomic_file_state(AtomicFileState* program) noexcept {
    if (program) shared_state.store(program, std::memory_order_release);
}

void write_atomically(const fs::path& given, const std::function<void(const fs::path&)>& write) {
    const bool standard = given == "-";
    const fs::path dest = standard ? given : follow_links(given);
    std::error_code ec;
    if (standard || is_stream(dest)) {
        fs::path tmp = temporary_beside(fs::temp_directory_path(ec) / (standard ? fs::path("stdout") : dest.filename()));
        const PendingGuard pending(tmp);
        try {
            write(tmp);
            copy_into_stream(tmp, dest, given.string());
        } catch (...) {
            fs::remove(tmp, ec);
            throw;
        }
        fs::remove(tmp, ec);
        return;
    }
    fs::path dir = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
    if (!fs::is_directory(dir, ec))
        fail_write(given.string(), "the folder " + dir.string() + " does not exist (create it first)");
    if (fs::is_directory(dest, ec))
        fail_write(given.string(), "is a folder (give a file name)");
    fs::path tmp = temporary_beside(dest);
    const PendingGuard pending(tmp);
    try {
        write(tmp);
    } catch (...) {
        fs::remove(tmp, ec);
        throw;
    }
    fs::rename(tmp, dest, ec);
    if (ec) {
        fs::remove(tmp, ec);
        fail_write(given.string(), "cannot move the finished file into place (" + ec.message() + ")");
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

void remove_pending_temporaries() noexcept {
    AtomicFileState& st = state();
    for (int i = 0; i < kSlots; ++i)
        if (st.pending_state[i].load() == 2) ::unlink(st.pending_path[i]);
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
