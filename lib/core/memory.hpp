#pragma once
// This process's memory: peak resident set size (VmHWM of /proc/self/status, bytes; 0 where the
// kernel does not say) and a reset of the peak (/proc/self/clear_refs; false where not allowed);
// large arrays whose pages are faulted in on all threads, or as they are written.
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace hp {

std::size_t peak_rss_bytes();
// This process's resident anonymous memory (RssAnon of /proc/self/status, bytes; 0 where the
// kernel does not say): the pages a fork makes copy-on-write in both processes.
std::size_t anonymous_rss_bytes();
bool reset_peak_rss();

// How a large array's pages come from the system: `faulted`, all of them faulted in on all threads
// when the array is made (most of the cost of a large fresh array is its page faults, which one
// thread takes a page at a time: a fresh 592 MB float array on 2 cores, about 0.22 s as
// std::vector<float>(n, 0), 0.11 s mapped, touched on both threads, then zeroed); `lazy`, each
// page when it is first written, so that the array's resident memory grows with what has been
// written (for a producer that gives back what it consumes meanwhile, and whose writers run on
// all threads anyway).
enum class Pages { faulted, lazy };

// `bytes` of fresh zero pages mapped from the system, faulted in on all threads or left to fault
// in as written. Throws std::bad_alloc when the system refuses. Release with unmap_pages.
void* map_pages(std::size_t bytes, Pages pages = Pages::faulted);
void unmap_pages(void* p, std::size_t bytes) noexcept;

// A std::allocator whose arrays of kMapBytes and more come from map_pages (the vector then
// initialises them without page faults), smaller ones from operator new. A `Pages::lazy`
// allocator also leaves a vector's new elements of a trivial type as its memory holds them
// instead of writing them (zeros in fresh storage), so that `resize` touches no page; the
// allocator goes with the vector's storage when it is moved, copied or swapped.
template <class T>
struct LargeArrayAllocator {
    using value_type = T;
    using propagate_on_container_copy_assignment = std::true_type;
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;
    static constexpr std::size_t kMapBytes = std::size_t{32} << 20;
    Pages pages = Pages::faulted;
    LargeArrayAllocator() = default;
    explicit LargeArrayAllocator(Pages p) noexcept : pages(p) {}
    template <class U>
    LargeArrayAllocator(const LargeArrayAllocator<U>& other) noexcept : pages(other.pages) {}
    T* allocate(std::size_t n) {
        if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
        const std::size_t bytes = n * sizeof(T);
        if (bytes >= kMapBytes) return static_cast<T*>(map_pages(bytes, pages));
        void* p = ::operator new(bytes, std::align_val_t{alignof(T)});
        if (pages == Pages::lazy) std::memset(p, 0, bytes);
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        const std::size_t bytes = n * sizeof(T);
        if (bytes >= kMapBytes) unmap_pages(p, bytes);
        else ::operator delete(p, std::align_val_t{alignof(T)});
    }
    // A new element without a value: value-initialised, or for a lazy allocator and a trivial
    // type, left as the memory holds it.
    template <class U>
    void construct(U* p) {
        if constexpr (std::is_trivially_default_constructible_v<U>)
            if (pages == Pages::lazy) return;
        ::new (static_cast<void*>(p)) U();
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
    // Either can release what the other allocated.
    template <class U>
    bool operator==(const LargeArrayAllocator<U>&) const noexcept { return true; }
};

}  // namespace hp
