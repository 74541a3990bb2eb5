#include "core/hash.hpp"

#include <cstdint>
#include <vector>

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

// The folding path (64 bytes and more, with carry-less multiplication where the CPU has it) and
// zlib's tail against the definition, one bit at a time: every length up to 700 at every
// alignment of a 16-byte block, running values, and 1 MiB.
std::uint32_t crc32_bitwise(const unsigned char* p, std::size_t n, std::uint32_t crc) {
    crc = ~crc;
    for (std::size_t i = 0; i < n; ++i) {
        crc ^= p[i];
        for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

TEST(Hash, Crc32OfEveryLengthAndAlignmentMatchesTheBitwiseDefinition) {
    std::vector<unsigned char> bytes((1u << 20) + 32);
    std::uint64_t x = 0x9e3779b97f4a7c15ull;
    for (unsigned char& b : bytes) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b = static_cast<unsigned char>(x >> 24);
    }
    for (std::size_t offset = 0; offset < 16; ++offset)
        for (std::size_t n = 0; n <= 700; ++n)
            for (std::uint32_t start : {0u, 0xCBF43926u}) {
                const unsigned char* p = bytes.data() + offset;
                ASSERT_EQ(hp::crc32(p, n, start), crc32_bitwise(p, n, start)) << offset << " " << n << " " << start;
            }
    const unsigned char* p = bytes.data() + 3;
    const std::size_t n = 1u << 20;
    EXPECT_EQ(hp::crc32(p, n), crc32_bitwise(p, n, 0));
    EXPECT_EQ(hp::crc32(p + 1000, n - 1000, hp::crc32(p, 1000)), crc32_bitwise(p, n, 0));
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
