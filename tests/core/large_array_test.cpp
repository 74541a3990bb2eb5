// LargeArrayAllocator: vectors above its mapping threshold (pages faulted in on all threads) and
// below it behave as std::vector does: value-initialised, copied on growth, released.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

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
