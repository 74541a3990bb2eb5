// The parallel VDB writer against OpenVDB's own (openvdb::io::File, WriteOptions::openvdb_writer):
// the same bytes for every value type, slice- and block-produced grids, several grids per file,
// partial leaves on every axis, tiles, a level-set grid, and enough leaves for many chunks.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "formats/vdb.hpp"

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
