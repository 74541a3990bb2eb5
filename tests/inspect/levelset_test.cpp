// --export levelset read back with OpenVDB itself: grid name, class, background, sign convention.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>
#include <openvdb/io/File.h>
#include <openvdb/openvdb.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "formats/vdb.hpp"
#include "inspect/export.hpp"
#include "../core/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

fs::path temp_dir() { return hp::test::temp_dir("hp_levelset_test_"); }

// A ball of radius 0.8 centred in a 24^3 grid of 0.1 voxels: d = 0.8 - |p - c|, inside positive.
hp::GridSpec ball_grid() {
    hp::GridSpec g;
    g.origin = {-1.2, -1.2, -1.2};
    g.voxel_size = 0.1;
    g.dims = {24, 24, 24};
    return g;
}
double ball(const hp::GridSpec& g, int i, int j, int k) {
    const hp::Vec3d c = g.center(i, j, k);
    return 0.8 - std::sqrt(c.x * c.x + c.y * c.y + c.z * c.z);
}

openvdb::FloatGrid::Ptr read_surface(const fs::path& p) {
    openvdb::initialize();
    openvdb::io::File file(p.string());
    file.open();
    openvdb::GridPtrVecPtr grids = file.getGrids();
    file.close();
    EXPECT_EQ(grids->size(), 1u);
    openvdb::FloatGrid::Ptr g = openvdb::gridPtrCast<openvdb::FloatGrid>(grids->at(0));
    EXPECT_TRUE(g) << "not a FloatGrid";
    return g;
}

}  // namespace

TEST(LevelSetExport, DistanceFieldBecomesAStandardLevelSet) {
    const fs::path dir = temp_dir();
    const hp::GridSpec g = ball_grid();
    hp::vdb::GridOut d{"distance", hp::vdb::ValueType::float32, [&](int z, void* o) {
                           auto* v = static_cast<float*>(o);
                           for (int j = 0; j < 24; ++j)
                               for (int i = 0; i < 24; ++i) v[j * 24 + i] = static_cast<float>(ball(g, i, j, z));
                       }, -1};
    hp::vdb::write(dir / "ball.vdb", g, {d}, {{"kind", "distance"}, {"encoding", "float"}}, "hapticprep test");
    const hp::inspect::Summary s = hp::inspect::export_levelset(dir / "ball.vdb", dir / "ball.ls.vdb");
    EXPECT_EQ(s.json["grid"], "surface");

    openvdb::FloatGrid::Ptr ls = read_surface(dir / "ball.ls.vdb");
    ASSERT_TRUE(ls);
    EXPECT_EQ(ls->getName(), "surface");
    EXPECT_EQ(ls->getGridClass(), openvdb::GRID_LEVEL_SET);
    EXPECT_NEAR(ls->background(), 0.3, 1e-6);  // 3 voxels
    EXPECT_NEAR(ls->voxelSize()[0], 0.1, 1e-12);
    auto acc = ls->getConstAccessor();
    // The centre voxel (deep inside, 0.75 from the surface) is negative: -background.
    const openvdb::Coord centre = openvdb::Coord::round(ls->worldToIndex(openvdb::Vec3d(0.05, 0.05, 0.05)));
    EXPECT_EQ(centre, openvdb::Coord(12, 12, 12));
    EXPECT_LT(acc.getValue(centre), 0.0f);
    EXPECT_FLOAT_EQ(acc.getValue(centre), -ls->background());
    // A far corner is outside: +background.
    EXPECT_FLOAT_EQ(acc.getValue(openvdb::Coord(0, 0, 0)), ls->background());
    EXPECT_FLOAT_EQ(acc.getValue(openvdb::Coord(-50, 7, 300)), ls->background());
    // In the band every voxel holds -d, active; brute force over the grid.
    std::size_t band = 0;
    for (int k = 0; k < 24; ++k)
        for (int j = 0; j < 24; ++j)
            for (int i = 0; i < 24; ++i) {
                const double want = -ball(g, i, j, k);
                const openvdb::Coord c(i, j, k);
                if (std::abs(static_cast<float>(want)) < 0.3f) {
                    ++band;
                    EXPECT_TRUE(acc.isValueOn(c));
                    EXPECT_NEAR(acc.getValue(c), want, 1e-6);
                } else {
                    EXPECT_FALSE(acc.isValueOn(c));
                    EXPECT_FLOAT_EQ(acc.getValue(c), want < 0 ? -0.3f : 0.3f) << i << " " << j << " " << k;
                }
            }
    EXPECT_EQ(ls->activeVoxelCount(), band);
    // World position of index (i, j, k) is the centre of our voxel (i, j, k).
    const openvdb::Vec3d w = ls->indexToWorld(openvdb::Coord(3, 4, 5));
    EXPECT_NEAR(w.x(), g.center(3, 4, 5).x, 1e-12);
    EXPECT_NEAR(w.z(), g.center(3, 4, 5).z, 1e-12);
}

TEST(LevelSetExport, VoxelmapUsesLayersTimesVoxelSize) {
    const fs::path dir = temp_dir();
    const hp::GridSpec g = ball_grid();
    // Layers of the ball by hand: round(d / s) (0 within half a voxel of the surface).
    auto lay = [&](int i, int j, int k) { return static_cast<std::int32_t>(std::lround(ball(g, i, j, k) / 0.1)); };
    hp::vdb::GridOut l{"layers", hp::vdb::ValueType::int32, [&](int z, void* o) {
                           auto* v = static_cast<std::int32_t*>(o);
                           for (int j = 0; j < 24; ++j)
                               for (int i = 0; i < 24; ++i) v[j * 24 + i] = lay(i, j, z);
                       }, -9};
    hp::vdb::write(dir / "map.vdb", g, {l}, {{"kind", "voxelmap"}}, "hapticprep test");
    hp::inspect::export_levelset(dir / "map.vdb", dir / "map.ls.vdb");
    openvdb::FloatGrid::Ptr ls = read_surface(dir / "map.ls.vdb");
    ASSERT_TRUE(ls);
    EXPECT_EQ(ls->getGridClass(), openvdb::GRID_LEVEL_SET);
    auto acc = ls->getConstAccessor();
    for (int k = 0; k < 24; ++k)
        for (int j = 0; j < 24; ++j)
            for (int i = 0; i < 24; ++i) {
                const int n = lay(i, j, k);
                const float v = acc.getValue(openvdb::Coord(i, j, k));
                if (std::abs(n) < 3) EXPECT_NEAR(v, -0.1 * n, 1e-6);
                else EXPECT_FLOAT_EQ(v, n > 0 ? -0.3f : 0.3f);
            }
}

TEST(LevelSetExport, WrongKindsAndUsage) {
    const fs::path dir = temp_dir();
    hp::GridSpec g = ball_grid();
    hp::vdb::GridOut x{"other", hp::vdb::ValueType::int32, [&](int, void* o) { std::fill_n(static_cast<std::int32_t*>(o), 24 * 24, 1); }, 0};
    hp::vdb::write(dir / "other.vdb", g, {x}, {{"kind", "x"}}, "hapticprep test");
    hp::vdb::WriteOptions plain;
    plain.plain = true;
    hp::vdb::write(dir / "foreign.vdb", g, {x}, {}, "other tool", plain);
    for (const char* name : {"other.vdb", "foreign.vdb"}) {
        try {
            hp::inspect::export_file(dir / name, "levelset", dir / "out.vdb");
            ADD_FAILURE() << name;
        } catch (const hp::Error& e) {
            EXPECT_EQ(e.code(), hp::ExitCode::bad_input) << name << ": " << e.what();
        }
    }
    EXPECT_FALSE(fs::exists(dir / "out.vdb"));
    try {
        hp::inspect::export_file(dir / "other.vdb", "levelset", "");
        ADD_FAILURE();
    } catch (const hp::Error& e) {
        EXPECT_EQ(e.code(), hp::ExitCode::usage);
    }
}

// looks_like_vdb needs no OpenVDB (formats/vdb_host.cpp keeps its own copy of the magic number):
// a file that OpenVDB's own writer makes here is recognised, its first bytes changed are not.
TEST(LevelSetExport, MagicNumberIsOpenVdbs) {
    openvdb::initialize();
    const fs::path p = temp_dir() / "openvdb-own.vdb";
    {
        openvdb::io::File file(p.string());
        file.write({openvdb::FloatGrid::create(1.0f)});
        file.close();
    }
    EXPECT_TRUE(hp::vdb::looks_like_vdb(p));
    std::string bytes = hp::read_file(p);
    ASSERT_GE(bytes.size(), 8u);
    std::int32_t magic = 0;
    std::memcpy(&magic, bytes.data(), 4);
    EXPECT_EQ(magic, openvdb::OPENVDB_MAGIC);
    bytes[0] = static_cast<char>(bytes[0] ^ 1);
    hp::write_file_atomically(p, bytes);
    EXPECT_FALSE(hp::vdb::looks_like_vdb(p));
}
