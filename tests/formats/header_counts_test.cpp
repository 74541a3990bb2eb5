// Our container readers (.hps, .hcfm, .hoct) take their counts from a header that a damaged or
// forged file can set to anything. A file of a few hundred bytes, its checksums right (written
// by container::Writer), that claims 2^32 - 1 sections, spheres or records, or 2^62 octree nodes,
// must be refused with exit 3 and a line naming the section, before anything of that size is
// allocated: each reader sizes a section against its real bytes first.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "formats/cfm.hpp"
#include "formats/container.hpp"
#include "formats/octree.hpp"
#include "formats/shell.hpp"

namespace fs = std::filesystem;
using hp::container::Kind;

namespace {

// The bytes of trivially copyable values, one after the other.
template <class... T>
std::string record(const T&... values) {
    std::string out;
    (out.append(reinterpret_cast<const char*>(&values), sizeof(T)), ...);
    return out;
}

fs::path spill(const std::string& name, const std::string& bytes) {
    const fs::path p = fs::temp_directory_path() / ("hp_counts_" + std::to_string(::getpid()) + "_" + name);
    hp::write_file_atomically(p, bytes);
    return p;
}

// Runs `read` on `bytes` written to a file; the message of its refusal (bad input), or "" if it read.
template <class F>
std::string refusal(const std::string& name, const std::string& bytes, F&& read) {
    const fs::path p = spill(name, bytes);
    std::string message;
    try {
        read(p);
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << e.what();
        message = e.what();
    }
    fs::remove(p);
    return message;
}

}  // namespace

TEST(HeaderCounts, ContainerClaimingFourBillionSectionsIsRefused) {
    hp::container::Writer w(Kind::pointshell, {{"tool", "test"}});
    w.add_array<double>("points", {0, 0, 0});
    std::string bytes = w.serialize();
    // The header's section count (bytes 24..27) set to 2^32 - 1, its checksum (32..35) made right.
    const std::uint32_t count = UINT32_MAX;
    std::memcpy(bytes.data() + 24, &count, 4);
    const std::uint32_t crc = hp::crc32(bytes.data(), 32);
    std::memcpy(bytes.data() + 32, &crc, 4);
    const std::string why = refusal("sections.hps", bytes, [](const fs::path& p) { hp::read_shell_file(p, false); });
    EXPECT_NE(why.find("runs past the end of the file"), std::string::npos) << why;
}

TEST(HeaderCounts, CfmClaimingFourBillionSpheresIsRefused) {
    // params: sampling, store, root and min stacks, levels, spheres; records. One sphere's bytes.
    hp::container::Writer w(Kind::cfm, {{"tool", "test"}});
    w.add_bytes("params", record<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                                 std::uint64_t>(0, 0, 8, 4, 1, UINT32_MAX, UINT64_MAX));
    w.add_bytes("spheres", std::string(56, '\0'));
    const std::string why = refusal("spheres.hcfm", w.serialize(), [](const fs::path& p) { hp::read_cfm_file(p); });
    EXPECT_NE(why.find("section 'spheres' has 56 bytes, which does not fit 4294967295 elements"), std::string::npos) << why;
}

TEST(HeaderCounts, OctreeClaimingTwoToThe62NodesIsRefused) {
    // params: levels, flags, nodes, voxels, origin, voxel size. One byte of masks.
    hp::container::Writer w(Kind::octree, {{"tool", "test"}});
    const std::uint64_t nodes = std::uint64_t{1} << 62;
    w.add_bytes("params", record(std::uint32_t{3}, std::uint32_t{0}, nodes, nodes, 0.0, 0.0, 0.0, 0.001));
    w.add_bytes("masks", std::string(1, '\xff'));
    const std::string why = refusal("nodes.hoct", w.serialize(), [](const fs::path& p) { hp::read_octree_file(p); });
    EXPECT_NE(why.find("section 'masks' has 1 bytes, which does not fit " + std::to_string(nodes) + " elements"), std::string::npos)
        << why;
}
