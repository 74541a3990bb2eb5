#include "formats/vdb.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir() {
    fs::path d = fs::temp_directory_path() / ("hp_vdb_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
}

hp::GridSpec odd_grid() {
    hp::GridSpec g;
    g.origin = {-0.3, 0.25, 1.5};
    g.voxel_size = 0.125;
    g.dims = {13, 9, 21};  // partial leaves on every axis
    return g;
}

// A test pattern: a constant block (becomes tiles) below z = 8, varying values above.
std::int32_t pattern(int i, int j, int k) { return k < 8 ? -7 : (i * 31 + j * 17 + k * 5) % 23 - 11; }

fs::path write_sample(const fs::path& path) {
    hp::GridSpec g = odd_grid();
    std::vector<hp::vdb::GridOut> grids;
    int next_layers = 0, next_dist = 0;
    grids.push_back({"layers", hp::vdb::ValueType::int32,
                     [&](int z, void* out) {
                         EXPECT_EQ(z, next_layers++) << "slices come in order, once each";
                         auto* v = static_cast<std::int32_t*>(out);
                         for (int j = 0; j < g.dims[1]; ++j)
                             for (int i = 0; i < g.dims[0]; ++i) v[j * g.dims[0] + i] = pattern(i, j, z);
                     },
                     -99});
    grids.push_back({"distance", hp::vdb::ValueType::float64,
                     [&](int z, void* out) {
                         ++next_dist;
                         auto* v = static_cast<double*>(out);
                         for (int j = 0; j < g.dims[1]; ++j)
                             for (int i = 0; i < g.dims[0]; ++i) v[j * g.dims[0] + i] = 0.1 * i - 0.01 * j + 1e-3 * z;
                     },
                     -1.0});
    nlohmann::json meta{{"source_name", "cube.obj"}, {"parameters", {{"pad", 2}}}, {"max_layers", 0}, {"closed", true}};
    hp::vdb::write(path, g, grids, meta, "hapticprep test");
    EXPECT_EQ(next_layers, g.dims[2]);
    EXPECT_EQ(next_dist, g.dims[2]);
    return path;
}

}  // namespace

TEST(Vdb, RoundTripEveryVoxelAndMetadata) {
    fs::path p = write_sample(temp_dir() / "sample.vdb");
    EXPECT_TRUE(hp::vdb::looks_like_vdb(p));
    hp::vdb::FileInfo info;
    std::vector<std::int32_t> layers = hp::vdb::read_int32(p, "layers", &info);
    hp::GridSpec g = odd_grid();
    ASSERT_TRUE(info.ours);
    EXPECT_EQ(info.grid.dims, g.dims);
    EXPECT_EQ(info.grid.origin, g.origin);
    EXPECT_EQ(info.grid.voxel_size, g.voxel_size);
    ASSERT_EQ(layers.size(), g.count());
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) ASSERT_EQ(layers[g.index(i, j, k)], pattern(i, j, k)) << i << j << k;
    std::vector<double> dist = hp::vdb::read_real(p, "distance");
    ASSERT_EQ(dist.size(), g.count());
    EXPECT_EQ(dist[g.index(12, 8, 20)], 0.1 * 12 - 0.01 * 8 + 1e-3 * 20);
    EXPECT_EQ(info.creator, "hapticprep test");
    EXPECT_EQ(info.metadata["source_name"], "cube.obj");
    EXPECT_EQ(info.metadata["max_layers"], 0);
    EXPECT_EQ(info.metadata["closed"], true);
    EXPECT_EQ(nlohmann::json::parse(info.metadata["parameters"].get<std::string>())["pad"], 2);
    EXPECT_EQ(info.metadata["sign_convention"], "inside_positive");

    // The constant region below z = 8 is stored as tiles, not leaves.
    hp::vdb::FileInfo deep = hp::vdb::inspect(p, true);
    ASSERT_EQ(deep.grids.size(), 2u);
    for (const auto& gi : deep.grids) {
        EXPECT_EQ(gi.active_voxels, g.count()) << gi.name;
        if (gi.name == "layers") {
            EXPECT_EQ(gi.tiles, 1u) << "the one constant 8x8x8 block";
        }
        if (gi.name == "distance") {
            EXPECT_EQ(gi.tiles, 0u);
        }
    }
}

TEST(Vdb, SameInputGivesByteIdenticalFiles) {
    fs::path a = write_sample(temp_dir() / "a.vdb"), b = write_sample(temp_dir() / "b.vdb");
    EXPECT_EQ(hp::read_file(a), hp::read_file(b));
}

TEST(Vdb, WrongGridTypeAndMissingGrid) {
    fs::path p = write_sample(temp_dir() / "kinds.vdb");
    EXPECT_THROW(hp::vdb::read_int32(p, "distance"), hp::Error);
    EXPECT_THROW(hp::vdb::read_int32(p, "nothing"), hp::Error);
    fs::path text = temp_dir() / "text.vdb";
    std::ofstream(text) << "hello";
    EXPECT_THROW(hp::vdb::inspect(text), hp::Error);
    EXPECT_FALSE(hp::vdb::looks_like_vdb(text));
}

TEST(Vdb, EveryTruncationAndBitFlipIsDetected) {
    fs::path p = write_sample(temp_dir() / "damage.vdb");
    const std::string good = hp::read_file(p);
    fs::path bad = temp_dir() / "damaged.vdb";
    std::mt19937 rng(1);
    auto expect_rejected = [&](const std::string& bytes, const std::string& what) {
        { std::ofstream(bad, std::ios::binary | std::ios::trunc) << bytes; }
        try {
            hp::vdb::read_int32(bad, "layers");
            ADD_FAILURE() << what << " was not detected";
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << what;
        }
    };
    for (std::size_t cut = 0; cut < good.size(); cut += 1 + good.size() / 97) expect_rejected(good.substr(0, cut), "cut at " + std::to_string(cut));
    for (int flip = 0; flip < 200; ++flip) {
        std::string bytes = good;
        std::size_t at = rng() % bytes.size();
        bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8)));
        expect_rejected(bytes, "bit flip at " + std::to_string(at));
    }
}

TEST(Vdb, WriteIntoMissingFolderIsCannotWrite) {
    try {
        write_sample("/nonexistent-hp-folder/x.vdb");
        FAIL();
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::cannot_write);
    }
}
