#include "formats/container.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/atomic_file.hpp"
#include "core/hash.hpp"

namespace fs = std::filesystem;
using hp::container::Kind;

namespace {

std::string small_file() {
    hp::container::Writer w(Kind::pointshell, {{"tool", "test"}, {"units", "m"}});
    w.add_array<float>("points", {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
    w.add_array<std::uint32_t>("triangles", {7u, 9u});
    return w.serialize();
}

hp::ExitCode parse_error(const std::string& bytes, std::string* message = nullptr, const Kind* expected = nullptr) {
    try {
        hp::container::Reader::parse(bytes, "x.hps", expected);
    } catch (const hp::Error& e) {
        if (message) *message = e.what();
        return e.code();
    }
    return hp::ExitCode::ok;
}

}  // namespace

TEST(Container, RoundTrip) {
    std::string bytes = small_file();
    hp::container::Reader r = hp::container::Reader::parse(bytes, "x.hps");
    EXPECT_EQ(r.kind(), Kind::pointshell);
    EXPECT_EQ(r.version(), hp::container::kFormatVersion);
    EXPECT_EQ(r.metadata()["units"], "m");
    EXPECT_EQ(r.array<float>("points", 6)[5], 6.f);
    EXPECT_EQ(r.array<std::uint32_t>("triangles")[1], 9u);
    EXPECT_THROW(r.array<float>("points", 7), hp::Error);
    EXPECT_THROW(r.bytes("normals"), hp::Error);
    // Layout by hand: header 40 + (32 + meta) + (32 + 24) + (32 + 8).
    std::string meta = nlohmann::json{{"tool", "test"}, {"units", "m"}}.dump();
    EXPECT_EQ(bytes.size(), 40 + 32 + meta.size() + 32 + 24 + 32 + 8);
    EXPECT_EQ(bytes.substr(0, 8), "HAPTICPF");
    EXPECT_EQ(bytes.substr(12, 4), "SHEL");
}

TEST(Container, WriteAtomicallyAndOpen) {
    fs::path p = fs::temp_directory_path() / ("hp_container_" + std::to_string(::getpid()) + ".hps");
    hp::container::Writer w(Kind::tree, {{"k", 4}});
    w.write(p);
    EXPECT_TRUE(hp::container::looks_like_container(p));
    Kind want = Kind::tree;
    EXPECT_EQ(hp::container::Reader::open(p, &want).metadata()["k"], 4);
    fs::remove(p);
}

TEST(Container, EveryTruncationIsDetected) {
    const std::string good = small_file();
    for (std::size_t cut = 0; cut < good.size(); ++cut) {
        std::string msg;
        ASSERT_EQ(parse_error(good.substr(0, cut), &msg), hp::ExitCode::bad_input) << "cut at " << cut;
    }
}

TEST(Container, EverySingleBitFlipIsDetected) {
    const std::string good = small_file();
    for (std::size_t byte = 0; byte < good.size(); ++byte)
        for (int bit = 0; bit < 8; ++bit) {
            std::string bad = good;
            bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
            ASSERT_EQ(parse_error(bad), hp::ExitCode::bad_input) << "flip at byte " << byte << " bit " << bit;
        }
}

TEST(Container, WrongMagicWrongKindNewerVersion) {
    std::string msg;
    EXPECT_EQ(parse_error("hello world, this is text and not a container at all", &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("not a hapticprep file"), std::string::npos);
    Kind cfm = Kind::cfm;
    EXPECT_EQ(parse_error(small_file(), &msg, &cfm), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("is a pointshell, expected a closest feature map"), std::string::npos) << msg;
    // A valid header of version 2: rewrite the version and the header checksum.
    std::string newer = small_file();
    std::uint32_t v = 2;
    std::memcpy(newer.data() + 8, &v, 4);
    std::uint32_t crc = hp::crc32(newer.data(), 32);
    std::memcpy(newer.data() + 32, &crc, 4);
    EXPECT_EQ(parse_error(newer, &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("newer hapticprep"), std::string::npos) << msg;
}
