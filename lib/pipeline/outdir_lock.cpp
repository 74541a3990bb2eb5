#include "pipeline/outdir_lock.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
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
    // A POSIX record lock (fcntl): the kernel (and NFS) tell a second writer who holds it, so the
    // file stays empty and two finished runs leave identical folders.
    struct flock whole {};
    whole.l_type = F_WRLCK;
    whole.l_whence = SEEK_SET;
    if (::fcntl(fd_, F_SETLK, &whole) == 0) return;
    const int err = errno;
    struct flock holder {};
    holder.l_type = F_WRLCK;
    holder.l_whence = SEEK_SET;
    const bool known = ::fcntl(fd_, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK && holder.l_pid > 0;
    ::close(fd_);
    fd_ = -1;
    if (err == EACCES || err == EAGAIN)
        fail_write(folder.string(), "is being written by another haptic-pipeline" +
                                        (known ? " (pid " + std::to_string(holder.l_pid) + ")" : std::string()) +
                                        "; wait for it to finish, or write to another folder (shards of one batch: "
                                        "--shard writes a manifest of its own)");
    fail_write(folder.string(), std::string("cannot lock ") + file.filename().string() + " (" + std::strerror(err) + ")");
}

OutdirLock::~OutdirLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace hp::pipeline
