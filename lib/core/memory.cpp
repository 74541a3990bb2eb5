#include "core/memory.hpp"

#include <fstream>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

namespace hp {

namespace {

// A "Key:   N kB" line of /proc/self/status, in bytes (0 where it is missing).
std::size_t status_bytes(const std::string& key) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size())) * 1024;
    return 0;
}

}  // namespace

std::size_t peak_rss_bytes() { return status_bytes("VmHWM:"); }

std::size_t anonymous_rss_bytes() { return status_bytes("RssAnon:"); }

bool reset_peak_rss() {
    std::ofstream f("/proc/self/clear_refs");
    if (!f) return false;
    f << "5";
    f.flush();
    return static_cast<bool>(f);
}

void* map_pages(std::size_t bytes, Pages pages) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    if (pages == Pages::lazy) return p;
    static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    auto* bytes_at = static_cast<volatile char*>(p);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, (bytes + page - 1) / page, 256), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t n = r.begin(); n != r.end(); ++n) bytes_at[n * page] = 0;
    });
    return p;
}

void unmap_pages(void* p, std::size_t bytes) noexcept { ::munmap(p, bytes); }

}  // namespace hp
