// The parallel VDB writer against OpenVDB's own (openvdb::io::File, WriteOptions::openvdb_writer):
// the same bytes for every value type, slice- and block-produced grids, several grids per file,
// partial leaves on every axis, tiles, a level-set grid, enough leaves for many chunks, and
// incompressible and corner-case leaves; and the files read back block by block.
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "formats/vdb.hpp"
#include "formats/vdb_internal.hpp"

namespace fs = std::filesystem;

namespace {

std::string bytes_of(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes `grids` both ways and expects the same file.
void same_as_openvdb(const hp::GridSpec& g, const std::vector<hp::vdb::GridOut>& grids, const char* name) {
    SCOPED_TRACE(name);
    const fs::path dir = fs::temp_directory_path() / ("hp_vdb_pw_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path a = dir / "parallel.vdb", b = dir / "openvdb.vdb";
    hp::vdb::WriteOptions openvdb;
    openvdb.openvdb_writer = true;
    hp::vdb::write(a, g, grids, {{"kind", "test"}}, "hapticprep test");
    hp::vdb::write(b, g, grids, {{"kind", "test"}}, "hapticprep test", openvdb);
    const std::string x = bytes_of(a), y = bytes_of(b);
    EXPECT_GT(x.size(), 1000u);
    EXPECT_TRUE(x == y) << "sizes " << x.size() << " and " << y.size();
    fs::remove_all(dir);
}

hp::GridSpec grid(int nx, int ny, int nz) {
    hp::GridSpec g;
    g.origin = {-0.3, 0.25, 1.5};
    g.voxel_size = 0.125;
    g.dims = {nx, ny, nz};
    return g;
}

TEST(VdbParallelWrite, SlicesOfEveryTypeAsOpenVdbWritesThem) {
    const hp::GridSpec g = grid(45, 38, 51);  // partial leaves on every axis
    auto at = [&](int i, int j, int k) { return k < 16 ? -7 : (i * 31 + j * 17 + k * 5) % 23 - 11; };
    const std::size_t slice = static_cast<std::size_t>(g.dims[0]) * static_cast<std::size_t>(g.dims[1]);
    std::vector<hp::vdb::GridOut> grids;
    grids.push_back({"layers", hp::vdb::ValueType::int32, [&](int z, void* out) {
                         auto* v = static_cast<std::int32_t*>(out);
                         for (std::size_t n = 0; n < slice; ++n) v[n] = at(static_cast<int>(n % 45), static_cast<int>(n / 45), z);
                     }, -99});
    grids.push_back({"distance", hp::vdb::ValueType::float32, [&](int z, void* out) {
                         auto* v = static_cast<float*>(out);
                         for (std::size_t n = 0; n < slice; ++n) v[n] = z < 24 ? 1.5f : 0.01f * static_cast<float>(n % 97) - 0.3f * static_cast<float>(z);
                     }, -2.0});
    grids.push_back({"double", hp::vdb::ValueType::float64, [&](int z, void* out) {
                         auto* v = static_cast<double*>(out);
                         for (std::size_t n = 0; n < slice; ++n) v[n] = 1e-3 * static_cast<double>(n) - 0.5 * z;
                     }, -1.0});
    grids.push_back({"gradient", hp::vdb::ValueType::vec3f, [&](int z, void* out) {
                         auto* v = static_cast<float*>(out);
                         for (std::size_t n = 0; n < 3 * slice; ++n) v[n] = z % 3 ? 0.0f : 0.25f * static_cast<float>(n % 5);
                     }, 0.0});
    same_as_openvdb(g, grids, "four types");
    hp::vdb::GridOut level{"surface", hp::vdb::ValueType::float32, grids[1].slices, 3 * g.voxel_size, true};
    same_as_openvdb(g, {level}, "level set");
}

TEST(VdbParallelWrite, BlocksWithTilesAndManyLeavesAsOpenVdbWritesThem) {
    // About 6000 leaves (several chunks of the parallel writer); every third block a tile.
    const hp::GridSpec g = grid(150, 140, 163);
    std::vector<std::int32_t> brick(512);
    std::vector<float> fbrick(512);
    hp::vdb::GridOut lay{"layers", hp::vdb::ValueType::int32, nullptr, -9};
    lay.blocks = [&](std::size_t b, void* tile) -> const void* {
        if (b % 3 == 1) {
            *static_cast<std::int32_t*>(tile) = b % 2 ? 8 : -8;
            return nullptr;
        }
        for (int o = 0; o < 512; ++o) brick[static_cast<std::size_t>(o)] = static_cast<std::int32_t>((o * 7 + static_cast<int>(b)) % 17) - 8;
        return brick.data();
    };
    hp::vdb::GridOut dist{"distance", hp::vdb::ValueType::float32, nullptr, -1.0};
    dist.blocks = [&](std::size_t b, void* tile) -> const void* {
        if (b % 3 == 1) {
            *static_cast<float*>(tile) = b % 2 ? 1.0f : -1.0f;
            return nullptr;
        }
        for (int o = 0; o < 512; ++o) fbrick[static_cast<std::size_t>(o)] = 1e-3f * static_cast<float>((o * 13 + static_cast<int>(b) * 7) % 1001) - 0.5f;
        return fbrick.data();
    };
    same_as_openvdb(g, {dist, lay}, "blocks");
}

}  // namespace

namespace {

// Block grids of every value type whose leaves hold pseudo-random values: int32 values that
// Blosc cannot shrink (it stores them raw), floats, doubles and vectors that shrink a little,
// plus the corner cases of a leaf's bytes: all-equal leaves (partial blocks of one value), leaves
// of 64, 8 and 1 active voxels at the far faces (dims 8k + 1: below Blosc's minimum size), and
// tiles. Each block's values depend only on (seed, block, offset), so both writers see the same.
struct RandomBlocks {
    std::uint64_t seed;
    std::vector<char> brick = std::vector<char>(512 * 12);
    static std::uint64_t mix(std::uint64_t x) {
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ULL;
        return x ^ (x >> 33);
    }
    hp::vdb::GridOut grid(const std::string& name, hp::vdb::ValueType type, double background) {
        hp::vdb::GridOut out{name, type, nullptr, background};
        out.blocks = [this, type](std::size_t b, void* tile) -> const void* {
            const std::uint64_t kind = mix(seed * 977 + b) % 7;
            for (int o = 0; o < 512 * 3; ++o) {
                const std::uint64_t r = kind == 1 ? 12345 : mix(seed + (b << 12) + static_cast<std::uint64_t>(o));
                const double u = static_cast<double>(r >> 11) * 0x1.0p-53 - 0.5;  // [-0.5, 0.5)
                // 30 random bits: OpenVDB's prune compares int32 values by their difference, which
                // must not overflow (wider values can collapse a leaf into a tile).
                if (type == hp::vdb::ValueType::int32) reinterpret_cast<std::int32_t*>(brick.data())[o % 512] = static_cast<std::int32_t>(r >> 34) - (1 << 29);
                if (type == hp::vdb::ValueType::float32) reinterpret_cast<float*>(brick.data())[o % 512] = static_cast<float>(u);
                if (type == hp::vdb::ValueType::float64) reinterpret_cast<double*>(brick.data())[o % 512] = u;
                if (type == hp::vdb::ValueType::vec3f) reinterpret_cast<float*>(brick.data())[o] = static_cast<float>(u);
            }
            if (kind == 0) {  // a tile: the block's first value
                std::memcpy(tile, brick.data(), type == hp::vdb::ValueType::vec3f ? 12 : type == hp::vdb::ValueType::float64 ? 8 : 4);
                return nullptr;
            }
            return brick.data();
        };
        return out;
    }
};

// The four grids of the random-block tests (int32, float, double, Vec3f), their sources seeded
// 1..4; `sources` must outlive the grids (their block producers point into it).
std::vector<hp::vdb::GridOut> random_grids(std::array<RandomBlocks, 4>& sources) {
    for (std::size_t n = 0; n < sources.size(); ++n) sources[n].seed = n + 1;
    return {sources[0].grid("layers", hp::vdb::ValueType::int32, -9), sources[1].grid("distance", hp::vdb::ValueType::float32, -1.0),
            sources[2].grid("double", hp::vdb::ValueType::float64, 2.0), sources[3].grid("gradient", hp::vdb::ValueType::vec3f, 0.0)};
}

TEST(VdbParallelWrite, IncompressibleAndCornerCaseLeavesAsOpenVdbWritesThem) {
    const hp::GridSpec g = grid(65, 57, 41);  // 9 x 8 x 6 blocks; the last ones 1 voxel thick
    std::array<RandomBlocks, 4> sources{};
    const std::vector<hp::vdb::GridOut> grids = random_grids(sources);
    const std::uint64_t before = hp::vdb::detail::leaves_incompressible();
    same_as_openvdb(g, grids, "random blocks");
    // The raw int32 leaves are recorded with more bytes than their values (the grid has 432
    // blocks, about 5 in 7 of them random): more than 100 of them.
    EXPECT_GT(hp::vdb::detail::leaves_incompressible(), before + 100);
}

// The same file read back block by block: every voxel of every grid as written (the file spans
// several of the reader's 1 MiB windows, so its seeks cross them).
TEST(VdbParallelWrite, RandomBlocksReadBackBlockByBlock) {
    const hp::GridSpec g = grid(65, 57, 41);
    std::array<RandomBlocks, 4> sources{};
    const std::vector<hp::vdb::GridOut> grids = random_grids(sources);
    const fs::path dir = fs::temp_directory_path() / ("hp_vdb_pw_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path p = dir / "random.vdb";
    hp::vdb::write(p, g, grids, {{"kind", "test"}}, "hapticprep test");
    EXPECT_GT(fs::file_size(p), std::uintmax_t{2} << 20);  // two windows at least
    const hp::vdb::Reader reader = hp::vdb::Reader::open(p);
    const std::size_t sizes[] = {4, 4, 8, 12};
    std::array<RandomBlocks, 4> again_sources{};
    const std::vector<hp::vdb::GridOut> again = random_grids(again_sources);
    for (std::size_t n = 0; n < grids.size(); ++n) {
        SCOPED_TRACE(grids[n].name);
        const hp::vdb::GridOut& expected = again[n];
        std::vector<char> tile(12);
        std::size_t next = 0, mismatches = 0;
        reader.read_blocks(grids[n].name, grids[n].type, [&](std::size_t block, const void* brick, const void* got_tile) {
            EXPECT_EQ(block, next++);
            const auto* want = static_cast<const char*>(expected.blocks(block, tile.data()));
            const auto [bx, by, bz] = std::array<int, 3>{static_cast<int>(block % 9), static_cast<int>(block / 9 % 8), static_cast<int>(block / 72)};
            const bool full = bx < 8 && by < 7 && bz < 5;
            bool uniform = want != nullptr;  // an all-equal full brick is pruned to a tile
            for (int o = 1; uniform && o < 512; ++o) uniform = std::memcmp(want, want + static_cast<std::size_t>(o) * sizes[n], sizes[n]) == 0;
            if (uniform) std::memcpy(tile.data(), want, sizes[n]);
            if ((!want || uniform) && full) {  // a tile: read as one
                EXPECT_EQ(brick, nullptr);
                if (got_tile) mismatches += std::memcmp(got_tile, tile.data(), sizes[n]) != 0;
                return;
            }
            ASSERT_NE(brick, nullptr) << "block " << block;
            // Compare the voxels inside the grid (a partial block's others read as background).
            for (int o = 0; o < 512; ++o) {
                const int x = bx * 8 + (o & 7), y = by * 8 + (o >> 3 & 7), z = bz * 8 + (o >> 6);
                if (x >= g.dims[0] || y >= g.dims[1] || z >= g.dims[2]) continue;
                const char* w = want ? want + static_cast<std::size_t>(o) * sizes[n] : tile.data();
                mismatches += std::memcmp(static_cast<const char*>(brick) + static_cast<std::size_t>(o) * sizes[n], w, sizes[n]) != 0;
            }
        });
        EXPECT_EQ(next, std::size_t{9 * 8 * 6});
        EXPECT_EQ(mismatches, 0u);
    }
    fs::remove_all(dir);
}

}  // namespace
