#include "core/file_hash.hpp"

#include <cctype>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

fs::path write_bytes(const std::string& name, const std::string& bytes) {
    const fs::path p = hp::test::temp_dir("hp_file_hash_") / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
}

// 3 MiB and a few bytes: the file is streamed in several pieces.
std::string large_bytes() {
    std::string data(3 * (1 << 20) + 123, '\0');
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131 + i / 7) % 251);
    return data;
}

}  // namespace

// Reference values of the algorithms (xxHash's sanity table for the empty input, the FNV
// reference test vectors), not from this code.
TEST(FileHash, KnownValuesOfBothAlgorithms) {
    const fs::path empty = write_bytes("empty", "");
    EXPECT_EQ(hp::content_hash(empty), "xxh3:2d06800538d394c2");
    EXPECT_EQ(hp::hash_file(empty), "cbf29ce484222325");
    const fs::path a = write_bytes("a", "a");
    EXPECT_EQ(hp::hash_file(a), "af63dc4c8601ec8c");
}

TEST(FileHash, StreamedEqualsTheOneCallHashOfAllBytes) {
    const std::string data = large_bytes();
    const fs::path p = write_bytes("large", data);
    EXPECT_EQ(hp::content_hash(p), "xxh3:" + hp::hex64(hp::xxh3_64(data.data(), data.size())));
    EXPECT_EQ(hp::hash_file(p), hp::hex64(hp::hash64(data.data(), data.size())));
}

TEST(FileHash, MatchesInTheAlgorithmTheRecordedFormNames) {
    std::string data = large_bytes();
    const fs::path p = write_bytes("match", data);
    const std::string xxh3 = hp::content_hash(p), fnv = hp::hash_file(p);
    EXPECT_TRUE(hp::hash_matches(p, xxh3));
    EXPECT_TRUE(hp::hash_matches(p, fnv));
    // Malformed forms never match: another prefix, upper case, too short, the FNV value under the XXH3 prefix.
    EXPECT_FALSE(hp::hash_matches(p, "xxh64:" + xxh3.substr(5)));
    std::string upper = "xxh3:" + xxh3.substr(5);
    for (std::size_t i = 5; i < upper.size(); ++i) upper[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(upper[i])));
    ASSERT_NE(upper, xxh3);  // the digits hold a letter
    EXPECT_FALSE(hp::hash_matches(p, upper));
    EXPECT_FALSE(hp::hash_matches(p, fnv.substr(1)));
    EXPECT_FALSE(hp::hash_matches(p, "xxh3:" + fnv));
    EXPECT_FALSE(hp::hash_matches(p, ""));
    // One bit flipped past the first piece: neither matches.
    data[2 * (1 << 20) + 5] ^= 0x10;
    const fs::path q = write_bytes("flipped", data);
    EXPECT_FALSE(hp::hash_matches(q, xxh3));
    EXPECT_FALSE(hp::hash_matches(q, fnv));
}

TEST(FileHash, AMissingFileIsBadInputNamingIt) {
    const fs::path p = hp::test::temp_dir("hp_file_hash_") / "no-such-file";
    try {
        hp::content_hash(p);
        FAIL() << "no error";
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input);
        EXPECT_NE(std::string(e.what()).find("no-such-file"), std::string::npos) << e.what();
    }
}
