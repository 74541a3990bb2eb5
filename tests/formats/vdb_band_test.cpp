// Band (block-produced) VDB grids: written block by block with tiles beyond the band, read back
// block by block and slice by slice with the same value on every voxel, tiles kept as tiles.
#include <cstdlib>
#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/atomic_file.hpp"
#include "formats/vdb.hpp"

namespace fs = std::filesystem;

namespace {

// A band-like pattern over a grid with partial blocks on every axis: blocks whose block
// coordinates sum to an even number hold voxels, the others are tiles of +-5.
hp::BrickField<std::int32_t> pattern(std::array<int, 3> dims = {37, 20, 29}) {
    hp::GridSpec g;
    g.origin = {0.5, -1.25, 2.0};
    g.voxel_size = 0.25;
    g.dims = dims;
    hp::BrickField<std::int32_t> f;
    f.reset(g, 0);
    for (std::size_t b = 0; b < f.block_count(); ++b) {
        const auto c = f.block_coords(b);
        if ((c[0] + c[1] + c[2]) % 2 == 0) {
            f.index[b] = static_cast<std::uint32_t>(f.brick_count());
            for (int o = 0; o < 512; ++o) f.bricks.push_back(static_cast<std::int32_t>((o * 7 + static_cast<int>(b) * 3) % 11 - 5));
        } else {
            f.tile[b] = c[2] % 2 ? 5 : -5;
        }
    }
    return f;
}

// The blocks of `f` as the writer asks for them: a brick's values, or its tile's value.
std::function<const void*(std::size_t, void*)> blocks_of(const hp::BrickField<std::int32_t>& f) {
    return [&f](std::size_t b, void* tile) -> const void* {
        if (const std::int32_t* v = f.brick(b)) return v;
        *static_cast<std::int32_t*>(tile) = f.tile[b];
        return nullptr;
    };
}

// `f` written at `path` as a band voxelmap's layers (band 5, background -6).
void write_layers(const fs::path& path, const hp::BrickField<std::int32_t>& f) {
    hp::vdb::GridOut out{"layers", hp::vdb::ValueType::int32, nullptr, -6.0};
    out.blocks = blocks_of(f);
    hp::vdb::write(path, f.grid, {out}, {{"kind", "voxelmap"}, {"band", 5}}, "test");
}

TEST(VdbBand, BlockGridsRoundTrip) {
    const fs::path dir = fs::temp_directory_path() / ("hp_vdb_band_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path path = dir / "band.vdb";
    const hp::BrickField<std::int32_t> f = pattern();
    hp::vdb::GridOut out{"layers", hp::vdb::ValueType::int32, nullptr, -6.0};
    std::vector<std::int32_t> scratch(512);  // one buffer reused for every block, as producers do
    out.blocks = [&](std::size_t b, void* tile) -> const void* {
        if (const std::int32_t* v = f.brick(b)) {
            std::copy(v, v + 512, scratch.begin());
            return scratch.data();
        }
        *static_cast<std::int32_t*>(tile) = f.tile[b];
        return nullptr;
    };
    hp::vdb::write(path, f.grid, {out}, {{"kind", "voxelmap"}, {"band", 5}}, "test");

    const hp::vdb::Reader reader = hp::vdb::Reader::open(path, true);
    EXPECT_EQ(reader.info().grid.dims, f.grid.dims);
    EXPECT_EQ(reader.info().metadata.value("band", 0), 5);
    ASSERT_EQ(reader.info().grids.size(), 1u);
    // Every voxel of the grid is active, none beyond; full constant blocks are tiles.
    EXPECT_EQ(reader.info().grids[0].active_voxels, f.grid.count());
    EXPECT_GT(reader.info().grids[0].tiles, 0u);
    const hp::BrickField<std::int32_t> back = reader.read_int32_bricks("layers");
    std::size_t checked = 0;
    reader.read_slices("layers", hp::vdb::ValueType::int32, [&](int z, const void* values) {
        const auto* v = static_cast<const std::int32_t*>(values);
        for (int y = 0; y < f.grid.dims[1]; ++y)
            for (int x = 0; x < f.grid.dims[0]; ++x) {
                const std::int32_t want = f.at(x, y, z);
                ASSERT_EQ(v[static_cast<std::size_t>(y * f.grid.dims[0] + x)], want);
                ASSERT_EQ(back.at(x, y, z), want);
                ++checked;
            }
    });
    EXPECT_EQ(checked, f.grid.count());
    // Full tiled blocks come back as tiles (no voxels stored), bricks as bricks.
    for (std::size_t b = 0; b < f.block_count(); ++b) {
        const auto c = f.block_coords(b);
        const bool full = (c[0] + 1) * 8 <= f.grid.dims[0] && (c[1] + 1) * 8 <= f.grid.dims[1] && (c[2] + 1) * 8 <= f.grid.dims[2];
        if (full) {
            EXPECT_EQ(back.brick(b) == nullptr, f.brick(b) == nullptr) << b;
        }
    }
    fs::remove_all(dir);
}

// read_int16_bricks: the int32 grid clamped to +-limit voxel by voxel, with the same blocks tiled,
// whether one thread or all fill the bricks.
TEST(VdbBand, Int16BricksAreTheLayersClamped) {
    const fs::path dir = fs::temp_directory_path() / ("hp_vdb_band16_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path path = dir / "band.vdb";
    const hp::BrickField<std::int32_t> f = pattern();
    write_layers(path, f);
    const hp::vdb::Reader reader = hp::vdb::Reader::open(path);
    for (int limit : {0, 3, 5, 32767}) {
        hp::BrickField<std::int16_t> one;
        {
            tbb::global_control serial(tbb::global_control::max_allowed_parallelism, 1);
            one = reader.read_int16_bricks("layers", limit);
        }
        const hp::BrickField<std::int16_t> all = reader.read_int16_bricks("layers", limit);
        EXPECT_EQ(one.index, all.index);
        EXPECT_EQ(one.tile, all.tile);
        EXPECT_EQ(one.bricks, all.bricks);
        std::size_t clamped = 0;
        for (int z = 0; z < f.grid.dims[2]; ++z)
            for (int y = 0; y < f.grid.dims[1]; ++y)
                for (int x = 0; x < f.grid.dims[0]; ++x) {
                    const int v = f.at(x, y, z);
                    const int want = v > limit ? limit : (v < -limit ? -limit : v);
                    ASSERT_EQ(all.at(x, y, z), want) << x << " " << y << " " << z << " limit " << limit;
                    clamped += want != v;
                }
        if (limit < 5) {
            EXPECT_GT(clamped, 0u);
        }
        for (std::size_t b = 0; b < f.block_count(); ++b) {
            const auto c = f.block_coords(b);
            const bool full = (c[0] + 1) * 8 <= f.grid.dims[0] && (c[1] + 1) * 8 <= f.grid.dims[1] && (c[2] + 1) * 8 <= f.grid.dims[2];
            if (full) {
                EXPECT_EQ(all.brick(b) == nullptr, f.brick(b) == nullptr) << b;
            }
        }
    }
    EXPECT_THROW(reader.read_int16_bricks("layers", -1), std::invalid_argument);
    EXPECT_THROW(reader.read_int16_bricks("layers", 40000), std::invalid_argument);
    fs::remove_all(dir);
}

// A grid of more leaves than the reader transposes in one run (it takes each run's leaves out of
// OpenVDB's tree as it goes): every voxel as written, clamped or not, on one thread and on all.
TEST(VdbBand, Int16BricksOfAGridReadInSeveralRuns) {
    const fs::path dir = fs::temp_directory_path() / ("hp_vdb_band_runs_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path path = dir / "band.vdb";
    const hp::BrickField<std::int32_t> f = pattern({230, 221, 170});  // 29 x 28 x 22 blocks, 8,932 of them bricks
    ASSERT_GT(f.brick_count(), 2u * 4096u);
    write_layers(path, f);
    const hp::vdb::Reader reader = hp::vdb::Reader::open(path);
    for (int limit : {3, 32767}) {
        hp::BrickField<std::int16_t> one;
        {
            tbb::global_control serial(tbb::global_control::max_allowed_parallelism, 1);
            one = reader.read_int16_bricks("layers", limit);
        }
        bool clamped = false;
        const hp::BrickField<std::int16_t> all = reader.read_int16_bricks("layers", limit, &clamped);
        EXPECT_EQ(clamped, limit < 5);
        EXPECT_EQ(one.index, all.index);
        EXPECT_EQ(one.tile, all.tile);
        EXPECT_TRUE(one.bricks == all.bricks);
        for (int z = 0; z < f.grid.dims[2]; ++z)
            for (int y = 0; y < f.grid.dims[1]; ++y)
                for (int x = 0; x < f.grid.dims[0]; ++x) {
                    const int v = f.at(x, y, z);
                    ASSERT_EQ(all.at(x, y, z), std::clamp(v, -limit, limit)) << x << " " << y << " " << z << " limit " << limit;
                }
    }
    fs::remove_all(dir);
}

// A grid copied from a stored file (GridOut::stored) is written as the same bytes as the grid built
// from its blocks; a stored grid laid out otherwise (another background, another transform) is
// not copied, and the blocks give the same file as without it.
TEST(VdbBand, StoredGridsAreCopiedAsTheBytesTheBlocksWouldGive) {
    const fs::path dir = fs::temp_directory_path() / ("hp_vdb_stored_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const hp::BrickField<std::int32_t> f = pattern();
    hp::vdb::GridOut layers{"layers", hp::vdb::ValueType::int32, nullptr, -6.0};
    layers.blocks = blocks_of(f);
    hp::vdb::write(dir / "map.vdb", f.grid, {layers}, {{"kind", "voxelmap"}, {"band", 5}}, "test");
    const hp::vdb::Reader map = hp::vdb::Reader::open(dir / "map.vdb");
    const hp::BrickField<std::int32_t> back = map.read_int32_bricks("layers");
    const auto stored = map.stored_grid("layers");
    ASSERT_TRUE(stored);
    EXPECT_EQ(hp::vdb::stored_background(*stored), -6.0);
    // A field file: a float grid first, then the layers, with other metadata.
    std::vector<float> fb(512);
    hp::vdb::GridOut dist{"distance", hp::vdb::ValueType::float32, nullptr, -1.0};
    dist.blocks = [&](std::size_t b, void*) -> const void* {
        for (int o = 0; o < 512; ++o) fb[static_cast<std::size_t>(o)] = 0.01f * static_cast<float>((o + static_cast<int>(b)) % 101);
        return fb.data();
    };
    auto field_file = [&](const std::string& name, const hp::GridSpec& grid, double background, bool copy) {
        hp::vdb::GridOut lay{"layers", hp::vdb::ValueType::int32, nullptr, background};
        lay.blocks = blocks_of(back);
        if (copy) lay.stored = stored;
        hp::vdb::write(dir / name, grid, {dist, lay}, {{"kind", "distance"}, {"band", 5}}, "test");
        return hp::read_file(dir / name);
    };
    const std::string copied = field_file("copied.vdb", f.grid, -6.0, true), built = field_file("built.vdb", f.grid, -6.0, false);
    EXPECT_EQ(copied.size(), built.size());
    EXPECT_TRUE(copied == built);
    // Another background: the stored bytes would differ, so the blocks are used.
    EXPECT_TRUE(field_file("bg.vdb", f.grid, -7.0, true) == field_file("bg2.vdb", f.grid, -7.0, false));
    // Another voxel size: another transform, the blocks again.
    hp::GridSpec other = f.grid;
    other.voxel_size *= 2;
    EXPECT_TRUE(field_file("tr.vdb", other, -6.0, true) == field_file("tr2.vdb", other, -6.0, false));
    // The copy reads back as the grid.
    const hp::BrickField<std::int32_t> again = hp::vdb::Reader::open(dir / "copied.vdb").read_int32_bricks("layers");
    for (int z = 0; z < f.grid.dims[2]; ++z)
        for (int y = 0; y < f.grid.dims[1]; ++y)
            for (int x = 0; x < f.grid.dims[0]; ++x) ASSERT_EQ(again.at(x, y, z), f.at(x, y, z));
    EXPECT_FALSE(map.stored_grid("no such grid"));
    fs::remove_all(dir);
}

}  // namespace
