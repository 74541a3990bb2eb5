#include "core/hash.hpp"

#include <gtest/gtest.h>

// Reference values from the published check values of the algorithms, not from this code.
TEST(Hash, Crc32CheckValue) {
    EXPECT_EQ(hp::crc32("123456789", 9), 0xCBF43926u);  // the CRC-32/ISO-HDLC check value
    EXPECT_EQ(hp::crc32("", 0), 0u);
}

TEST(Hash, Crc32IsIncremental) {
    std::uint32_t part = hp::crc32("1234", 4);
    EXPECT_EQ(hp::crc32("56789", 5, part), 0xCBF43926u);
}

TEST(Hash, Fnv1a64KnownValues) {
    EXPECT_EQ(hp::hash64(""), 0xcbf29ce484222325ULL);  // the FNV-1a 64 offset basis
    EXPECT_EQ(hp::hash64("a"), 0xaf63dc4c8601ec8cULL);  // from the FNV reference test vectors
    EXPECT_EQ(hp::hex64(0xaf63dc4c8601ec8cULL), "af63dc4c8601ec8c");
}
