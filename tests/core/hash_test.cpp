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

TEST(Hash, Xxh3KnownValuesAndStreaming) {
    // The reference values of the empty input (xxHash's sanity table; xxhsum -H3 / -H2).
    EXPECT_EQ(hp::xxh3_64("", 0), 0x2D06800538D394C2ULL);
    hp::Xxh3 empty128(hp::Xxh3::Width::bits128);
    EXPECT_EQ(empty128.digest128()[0], 0x99AA06D3014798D8ULL);
    EXPECT_EQ(empty128.digest128()[1], 0x6001C324468D497FULL);
    // Streaming in uneven pieces gives the one-call value (lengths across XXH3's 240-byte and
    // 1 KiB stripe boundaries).
    std::string data;
    for (int i = 0; i < 5000; ++i) data.push_back(static_cast<char>((i * 131 + 7) % 251));
    for (std::size_t piece : {1u, 7u, 240u, 1024u, 4999u}) {
        hp::Xxh3 stream;
        for (std::size_t at = 0; at < data.size(); at += piece) stream.update(data.data() + at, std::min(piece, data.size() - at));
        EXPECT_EQ(stream.digest64(), hp::xxh3_64(data.data(), data.size())) << piece;
    }
    EXPECT_NE(hp::xxh3_64(data.data(), data.size()), hp::xxh3_64(data.data(), data.size() - 1));
}
