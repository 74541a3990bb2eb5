#pragma once
// This process's memory: peak resident set size (VmHWM of /proc/self/status, bytes; 0 where the
// kernel does not say) and a reset of the peak (/proc/self/clear_refs; false where not allowed);
// large arrays whose pages are faulted in on all threads.
#include <cstddef>
#include <new>

namespace hp {

std::size_t peak_rss_bytes();
bool reset_peak_rss();

// `bytes` of fresh zero pages mapped from the system and faulted in on all threads: most of the
// cost of a large fresh array is its page faults, which one thread takes a page at a time (a
// fresh 592 MB float array on 2 cores: about 0.22 s as std::vector<float>(n, 0), 0.11 s mapped,
// touched on both threads, then zeroed). Throws std::bad_alloc when the system refuses. Release
// with unmap_pages.
void* map_pages(std::size_t bytes);
void unmap_pages(void* p, std::size_t bytes) noexcept;

// A std::allocator whose arrays of kMapBytes and more come from map_pages (the vector then
// initialises them without page faults), smaller ones from operator new.
template <class T>
struct LargeArrayAllocator {
    using value_type = T;
    static constexpr std::size_t kMapBytes = std::size_t{32} << 20;
    LargeArrayAllocator() = default;
    template <class U>
    LargeArrayAllocator(const LargeArrayAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
        const std::size_t bytes = n * sizeof(T);
        if (bytes >= kMapBytes) return static_cast<T*>(map_pages(bytes));
        return static_cast<T*>(::operator new(bytes, std::align_val_t{alignof(T)}));
    }
    void deallocate(T* p, std::size_t n) noexcept {
        const std::size_t bytes = n * sizeof(T);
        if (bytes >= kMapBytes) unmap_pages(p, bytes);
        else ::operator delete(p, std::align_val_t{alignof(T)});
    }
    template <class U>
    bool operator==(const LargeArrayAllocator<U>&) const noexcept { return true; }
};

}  // namespace hp
