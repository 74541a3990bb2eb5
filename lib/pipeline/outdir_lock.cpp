#include "pipeline/outdir_lock.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/error.hpp"

namespace hp::pipeline {

namespace fs = std::filesystem;

OutdirLock::OutdirLock(const fs::path& manifest) {
    const fs::path folder = manifest.has_parent_path() ? manifest.parent_path() : fs::path(".");
    const fs::path file = folder / ("." + manifest.filename().string() + ".lock");
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
        fail_write(folder.string(), "cannot create the lock file " + file.filename().string() + " (" +
                                        std::strerror(errno) + ")");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        char pid[32] = {};
        const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
        std::string holder = n > 0 ? std::string(pid, static_cast<std::size_t>(n)) : std::string();
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
        ::close(fd_);
        fd_ = -1;
        if (err == EWOULDBLOCK)
            fail_write(folder.string(), "is being written by another haptic-pipeline" +
                                            (holder.empty() ? std::string() : " (pid " + holder + ")") +
                                            "; wait for it to finish, or write to another folder (shards of one "
                                            "batch: --shard writes a manifest of its own)");
        fail_write(folder.string(), std::string("cannot lock ") + file.filename().string() + " (" + std::strerror(err) + ")");
    }
    // The pid is for the message of a second writer; the lock holds without it.
    const std::string mine = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) == 0) {
        const ssize_t written = ::pwrite(fd_, mine.data(), mine.size(), 0);
        (void)written;
    }
}

OutdirLock::~OutdirLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace hp::pipeline
