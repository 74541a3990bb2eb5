#include "core/mapped_file.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.hpp"

namespace hp {

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path) {
    const std::string name = path.string();
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail_input(name, std::string("cannot be opened (") + std::strerror(errno) + ")");
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        fail_input(name, "is not a regular file that can be mapped");
    }
    std::shared_ptr<MappedFile> m(new MappedFile());
    m->size_ = static_cast<std::size_t>(st.st_size);
    if (m->size_ == 0) {
        ::close(fd);
        return m;
    }
    // Reserve the size plus 2 MiB of address space, then map the file over the reservation's first
    // 2 MiB boundary: file offset 0 at an aligned address, so that 2 MiB folios map whole.
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    m->region_size_ = m->size_ + kHuge;
    void* region = ::mmap(nullptr, m->region_size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) {
        ::close(fd);
        fail_input(name, std::string("cannot be mapped (") + std::strerror(errno) + ")");
    }
    m->region_ = region;
    const std::uintptr_t start = reinterpret_cast<std::uintptr_t>(region);
    void* at = reinterpret_cast<void*>((start + kHuge - 1) / kHuge * kHuge);
    void* data = ::mmap(at, m->size_, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
    const int mapped_errno = errno;
    ::close(fd);  // the mapping keeps the file
    if (data == MAP_FAILED) fail_input(name, std::string("cannot be mapped (") + std::strerror(mapped_errno) + ")");
#ifdef MADV_HUGEPAGE
    (void)::madvise(data, m->size_, MADV_HUGEPAGE);  // advice only: small pages read the same bytes
#endif
    m->data_ = data;
    return m;
}

MappedFile::~MappedFile() {
    if (region_) ::munmap(region_, region_size_);  // the file's mapping lies inside the reservation
}

}  // namespace hp
