// LargeArrayAllocator: vectors above its mapping threshold (pages faulted in on all threads) and
// below it behave as std::vector does: value-initialised, copied on growth, released.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/memory.hpp"

TEST(LargeArray, MappedAndSmallVectorsKeepVectorSemantics) {
    using V = std::vector<std::int32_t, hp::LargeArrayAllocator<std::int32_t>>;
    const std::size_t big = hp::LargeArrayAllocator<std::int32_t>::kMapBytes / sizeof(std::int32_t) + 12345;
    V v(big);
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](std::int32_t x) { return x == 0; }));
    std::iota(v.begin(), v.end(), 7);
    v.push_back(-1);  // grows: a new mapping, the values copied
    ASSERT_EQ(v.size(), big + 1);
    EXPECT_EQ(v[0], 7);
    EXPECT_EQ(v[big - 1], static_cast<std::int32_t>(big - 1 + 7));
    EXPECT_EQ(v.back(), -1);
    V w(big, 5);  // filled with a value, not zeros
    EXPECT_TRUE(std::all_of(w.begin(), w.end(), [](std::int32_t x) { return x == 5; }));
    w.resize(10);
    w.shrink_to_fit();  // now below the threshold: from operator new
    EXPECT_EQ(w, V(10, 5));
    V small(100);
    EXPECT_EQ(small, V(100, 0));
    V copy = v;
    EXPECT_EQ(copy, v);
    EXPECT_THROW((void)hp::LargeArrayAllocator<std::int32_t>().allocate(static_cast<std::size_t>(-1) / 2), std::bad_alloc);
}

namespace {

// Pages of [p, p + bytes) resident now (p page-aligned).
std::size_t resident_pages(const void* p, std::size_t bytes) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in((bytes + page - 1) / page);
    if (::mincore(const_cast<void*>(p), bytes, in.data()) != 0) return static_cast<std::size_t>(-1);
    return static_cast<std::size_t>(std::count_if(in.begin(), in.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

}  // namespace

// A lazy allocator's large vector maps its pages without faulting them in, and resize() writes
// none of them: the resident pages are those written. Its elements read as zeros; small lazy
// vectors are zeros too; the allocator goes with the storage on copy and move.
TEST(LargeArray, LazyPagesAreResidentOnlyOnceWritten) {
    using A = hp::LargeArrayAllocator<std::int32_t>;
    using V = std::vector<std::int32_t, A>;
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t n = A::kMapBytes / sizeof(std::int32_t) + 12345, bytes = n * sizeof(std::int32_t), pages = (bytes + page - 1) / page;
    V faulted(n);
    EXPECT_EQ(resident_pages(faulted.data(), bytes), pages);
    V lazy{A(hp::Pages::lazy)};
    lazy.resize(n);
    EXPECT_EQ(resident_pages(lazy.data(), bytes), 0u);
    lazy[0] = 1;
    lazy[n / 2] = 2;
    // Two pages written (each a huge page at most, where the system maps them so).
    const std::size_t written = resident_pages(lazy.data(), bytes);
    EXPECT_GE(written, 2u);
    EXPECT_LE(written, 2 * (std::size_t{2} << 20) / page);
    EXPECT_EQ(std::count(lazy.begin(), lazy.end(), 0), static_cast<std::ptrdiff_t>(n - 2));
    EXPECT_EQ(lazy[n / 2], 2);
    V copy = lazy;
    EXPECT_EQ(copy.get_allocator().pages, hp::Pages::lazy);
    EXPECT_EQ(copy, lazy);
    V moved;
    moved = std::move(copy);
    EXPECT_EQ(moved.get_allocator().pages, hp::Pages::lazy);
    EXPECT_EQ(moved, lazy);
    V small{A(hp::Pages::lazy)};
    small.resize(100);
    EXPECT_EQ(small, V(100, 0));
    small.resize(5000);  // grows: the new elements are zeros as well
    EXPECT_EQ(std::count(small.begin(), small.end(), 0), 5000);
}
