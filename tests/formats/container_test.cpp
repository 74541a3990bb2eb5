#include "formats/container.hpp"

#include <filesystem>
#include <fstream>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "core/atomic_file.hpp"
#include "core/hash.hpp"
#include "core/version.hpp"

namespace fs = std::filesystem;
using hp::container::Kind;

namespace {

// The meta block the writer should produce for small_file(): the caller's keys plus the defaults
// (nlohmann::json keeps keys sorted, so dump() is canonical).
nlohmann::json small_meta() {
    return {{"tool", "test"}, {"units", "m"}, {"tool_version", hp::kVersion}, {"sign_convention", "inside_positive"}};
}

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
    std::string meta = small_meta().dump();
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

// Payloads written in place (add_array_view) give the bytes of copied ones, through serialize()
// and through write(), padding sections included; the aligned payload starts on its boundary.
TEST(Container, BorrowedPayloadsAreWrittenAsCopiedOnes) {
    const std::vector<float> samples = {1.f, -2.f, 3.5f, 4.f, 5.f};
    const std::vector<std::uint32_t> none;
    auto make = [&](bool borrowed) {
        hp::container::Writer w(Kind::sampler, {{"tool", "test"}});
        w.add_array<std::uint32_t>("small", {7u});
        if (borrowed) {
            w.add_array_view("samples", std::span<const float>(samples), 64);
            w.add_array_view("empty", std::span<const std::uint32_t>(none), 64);
        } else {
            w.add_array("samples", samples, 64);
            w.add_array("empty", none, 64);
        }
        return w;
    };
    const std::string copied = make(false).serialize();
    EXPECT_EQ(make(true).serialize(), copied);
    fs::path p = fs::temp_directory_path() / ("hp_container_view_" + std::to_string(::getpid()) + ".hsmp");
    make(true).write(p);
    EXPECT_EQ(hp::read_file(p), copied);
    fs::remove(p);
    const hp::container::Reader r = hp::container::Reader::parse(copied, "x.hsmp");
    EXPECT_EQ(r.array<float>("samples", 5)[2], 3.5f);
    for (const auto& s : r.sections()) {
        if (s.name == "samples" || s.name == "empty") {
            EXPECT_EQ(s.offset % 64, 0u) << s.name;
        }
    }
    EXPECT_TRUE(r.has("pad:samples"));
    // By container.md's rule: an aligned payload whose header would leave it off its boundary gets
    // a padding section (a 32-byte header and zeros) first.
    auto header_of_aligned = [](std::size_t at) {  // where the payload starts
        if ((at + 32) % 64 == 0) return at + 32;
        at += 32;  // the padding section's header
        while ((at + 32) % 64 != 0) ++at;
        return at + 32;
    };
    const std::string meta = nlohmann::json{{"tool", "test"}, {"tool_version", hp::kVersion},
                                            {"sign_convention", "inside_positive"}}.dump();
    std::size_t at = header_of_aligned(40 + 32 + meta.size() + 32 + 4) + 20;  // "samples"' end
    EXPECT_EQ(copied.size(), header_of_aligned(at));                            // "empty": no payload
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

TEST(Container, TruncationNamesTheByteAndTheSection) {
    const std::string good = small_file();
    std::string msg;
    // Cut inside the payload of "points" (the second section): header 40, meta section 32 + meta,
    // then the points header (32) and 24 payload bytes; cut 10 bytes into the payload.
    const std::size_t meta = small_meta().dump().size();
    const std::size_t cut = 40 + 32 + meta + 32 + 10;
    EXPECT_EQ(parse_error(good.substr(0, cut), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("truncated at byte " + std::to_string(cut) + " of " + std::to_string(good.size())), std::string::npos) << msg;
    EXPECT_NE(msg.find("in section 'points'"), std::string::npos) << msg;
    EXPECT_EQ(parse_error(good.substr(0, 40 + 32 + meta + 5), &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("in the header of section 2"), std::string::npos) << msg;
    EXPECT_EQ(parse_error(good + "x", &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("unexpected bytes after the end"), std::string::npos) << msg;
    EXPECT_EQ(parse_error("", &msg), hp::ExitCode::bad_input);
    EXPECT_NE(msg.find("empty"), std::string::npos) << msg;
}

TEST(Container, MetadataDefaultsAndSectionNames) {
    hp::container::Reader r = hp::container::Reader::parse(small_file(), "x.hps");
    EXPECT_EQ(r.metadata()["tool_version"], hp::kVersion);
    EXPECT_EQ(r.metadata()["sign_convention"], "inside_positive");
    ASSERT_EQ(r.sections().size(), 3u);
    EXPECT_EQ(r.sections()[0].name, "meta");
    EXPECT_EQ(r.sections()[1].name, "points");
    EXPECT_EQ(r.sections()[1].size, 24u);
    EXPECT_TRUE(r.has("triangles"));
    EXPECT_FALSE(r.has("normals"));
    hp::container::Writer w(Kind::cfm, {{"tool_version", "0.0.1"}});
    w.add_bytes("a", "xyz");
    EXPECT_THROW(w.add_bytes("a", ""), std::invalid_argument);
    EXPECT_THROW(w.add_bytes("meta", ""), std::invalid_argument);
    EXPECT_THROW(w.add_bytes("a-name-longer-than-16", ""), std::invalid_argument);
    hp::container::Reader c = hp::container::Reader::parse(w.serialize(), "x.hcfm");
    EXPECT_EQ(c.kind(), Kind::cfm);
    EXPECT_EQ(c.metadata()["tool_version"], "0.0.1");
    EXPECT_EQ(c.bytes("a"), "xyz");
    // Same content, same bytes (no timestamps).
    EXPECT_EQ(small_file(), small_file());
}
