// Narrow-band voxelmaps against the dense voxelizer: on every voxel of the grid the band map's
// layer equals the dense map's clamped to +-B (bit for bit), blocks beyond the band are tiles of
// +-B, and the bricks cover every voxel within B of a surface voxel.
#include "voxel/band.hpp"

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "voxel/voxelize.hpp"

namespace {

std::filesystem::path sample_path(const char* name) { return std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / name; }
hp::TriMesh sample(const char* name) { return hp::load_mesh(sample_path(name)).mesh; }

// nx: the grid's voxels along x, when the test needs a particular count (0: any).
void expect_band_equals_dense(const std::filesystem::path& path, hp::FillMethod fill, int band, int connectivity, int resolution,
                              bool sparse_expected = true, bool closed = true, int nx = 0);
void expect_band_equals_dense(const char* name, hp::FillMethod fill, int band, int connectivity, int resolution,
                              bool sparse_expected = true, bool closed = true, int nx = 0) {
    expect_band_equals_dense(sample_path(name), fill, band, connectivity, resolution, sparse_expected, closed, nx);
}

void expect_band_equals_dense(const std::filesystem::path& path, hp::FillMethod fill, int band, int connectivity, int resolution,
                              bool sparse_expected, bool closed, int nx) {
    SCOPED_TRACE(path.filename().string() + " band " + std::to_string(band) + " connectivity " + std::to_string(connectivity));
    const hp::TriMesh mesh = hp::load_mesh(path).mesh;
    const hp::Aabb box = hp::diagnose(mesh).bbox;
    const double longest = std::max({box.size().x, box.size().y, box.size().z});
    const hp::GridSpec grid = hp::grid_around(box, longest / resolution, 2);
    if (nx > 0) {
        ASSERT_EQ(grid.dims[0], nx);
    }
    hp::VoxelizeOptions opt;
    opt.fill = fill;
    opt.connectivity = connectivity;
    const hp::LayerMap dense = hp::voxelize(mesh, grid, opt);  // unclamped
    const hp::BandLayerMap sparse = hp::voxelize_band(mesh, grid, opt, band);
    ASSERT_EQ(sparse.layers.grid.dims, grid.dims);
    std::size_t differ = 0, inside = 0, surface = 0, outside = 0, in_band = 0;
    for (int k = 0; k < grid.dims[2]; ++k)
        for (int j = 0; j < grid.dims[1]; ++j)
            for (int i = 0; i < grid.dims[0]; ++i) {
                const int d = dense.at(i, j, k);
                const int clamped = std::clamp(d, -band, band);
                const int b = sparse.layers.at(i, j, k);
                // Open meshes: a tiled block takes the sign of one voxel, while the winding number
                // may change sign inside it (sides touch away from the surface); compare bricks.
                const bool in_brick = sparse.layers.brick(sparse.layers.block_of(i, j, k)) != nullptr;
                if (b != clamped && (closed || in_brick)) ++differ;
                (d > 0 ? inside : d < 0 ? outside : surface) += 1;
                if (std::abs(d) < band) {
                    ++in_band;
                    // Every voxel nearer than the band lies in a brick.
                    EXPECT_NE(sparse.layers.brick(sparse.layers.block_of(i, j, k)), nullptr);
                }
            }
    EXPECT_EQ(dense.flipped, 0u) << "the dense map moved pockets the band cannot see";
    EXPECT_EQ(differ, 0u);
    EXPECT_EQ(sparse.surface, surface);
    if (closed) {
        EXPECT_EQ(sparse.inside, inside);
        EXPECT_EQ(sparse.outside, outside);
    }
    EXPECT_EQ(sparse.band_voxels, in_band);
    // Tiles carry +-B; some blocks are tiles at all (the band is sparse).
    std::size_t tiles = 0;
    for (std::size_t b = 0; b < sparse.layers.block_count(); ++b)
        if (!sparse.layers.brick(b)) {
            ++tiles;
            EXPECT_EQ(std::abs(sparse.layers.tile[b]), band);
        }
    if (sparse_expected) {
        EXPECT_GT(tiles, 0u);
        EXPECT_LT(sparse.layers.brick_count(), sparse.layers.block_count());
    }
}

TEST(BandVoxelize, EqualsDenseClampedOnClosedMeshes) {
    expect_band_equals_dense("sphere.obj", hp::FillMethod::scanline, 3, 26, 80);
    expect_band_equals_dense("torus.off", hp::FillMethod::automatic, 4, 26, 72);
    expect_band_equals_dense("two-boxes.obj", hp::FillMethod::scanline, 2, 6, 96);
    expect_band_equals_dense("gear.obj", hp::FillMethod::scanline, 8, 26, 64, false);  // every block in the band
}

TEST(BandVoxelize, EqualsDenseInTheBricksWithTheWindingFillOnAnOpenMesh) {
    expect_band_equals_dense("cup.obj", hp::FillMethod::winding, 3, 26, 40, true, false);
    expect_band_equals_dense("half-pipe.obj", hp::FillMethod::winding, 4, 26, 40, false, false);
}

// The band's hybrid decides every brick voxel as the dense hybrid does (the same lattice cells,
// interpolation, vote and fast winding numbers): the same layers on every brick voxel of the open
// sample meshes, bit for bit. Tiled blocks take one voxel's side (see above), so they are not
// compared on open meshes.
TEST(BandVoxelize, HybridEqualsTheDenseHybridInTheBricksOnOpenMeshes) {
    for (const char* name : {"cup.obj", "corrugated-sheet.obj", "half-pipe.obj", "open-tube.obj", "open-box.obj"})
        expect_band_equals_dense(name, hp::FillMethod::hybrid, 3, 26, 48, false, false);
    expect_band_equals_dense("cup.obj", hp::FillMethod::automatic, 2, 6, 64, true, false);
    // 48 and 49 voxels along x: the last lattice cell a whole brick wide, and one whose far corner
    // is the first voxel of a brick (that brick lies in the cell before it).
    expect_band_equals_dense("half-pipe.obj", hp::FillMethod::hybrid, 2, 26, 44, false, false, 48);
    expect_band_equals_dense("half-pipe.obj", hp::FillMethod::hybrid, 2, 26, 45, false, false, 49);
}

// The same on the Stanford bunny (open at the bottom) at a coarse voxel, where the lattice's
// interpolation and the evaluations at voxel centres both occur near the opening.
TEST(BandVoxelize, HybridEqualsTheDenseHybridInTheBricksOnTheBunny) {
    std::filesystem::path bunny = std::filesystem::path(HP_SOURCE_DIR) / ".." / "shared" / "meshes" / "stanford-bunny.obj";
    if (const char* env = std::getenv("HP_MESHES")) bunny = std::filesystem::path(env) / "stanford-bunny.obj";
    if (!std::filesystem::exists(bunny)) GTEST_SKIP() << "reference meshes not found";
    expect_band_equals_dense(bunny, hp::FillMethod::automatic, 4, 26, 160, true, false);
}

TEST(BandVoxelize, RefusesFillsThatNeedTheDenseGrid) {
    const hp::TriMesh mesh = sample("sphere.obj");
    const hp::GridSpec grid = hp::grid_around(hp::diagnose(mesh).bbox, 0.1, 2);
    hp::VoxelizeOptions opt;
    opt.fill = hp::FillMethod::flood;
    EXPECT_THROW(hp::voxelize_band(mesh, grid, opt, 4), hp::Error);
    opt.fill = hp::FillMethod::scanline;
    EXPECT_THROW(hp::voxelize_band(mesh, grid, opt, 0), hp::Error);
}

// Band voxels and the estimate used before any work: a sphere of radius r has area 4 pi r^2; the
// band holds about (2B + 1) area / s^2 voxels, which the estimate must not undercut.
TEST(BandVoxelize, EstimateBoundsTheBand) {
    const hp::TriMesh mesh = sample("sphere.obj");
    const hp::Aabb box = hp::diagnose(mesh).bbox;
    const double r = box.size().x / 2;
    const double s = 2 * r / 60;
    const hp::GridSpec grid = hp::grid_around(box, s, 2);
    const hp::BandLayerMap m = hp::voxelize_band(mesh, grid, {}, 4);
    const double estimate = hp::band_voxel_estimate(4 * 3.141592653589793 * r * r, s, 4);
    EXPECT_GE(estimate, static_cast<double>(m.layers.brick_count()) * 512 * 0.5);
    EXPECT_LE(estimate, static_cast<double>(m.layers.brick_count()) * 512 * 4);
}

// A consumer reading bricks once, in order, hands the ones it has read back: the bricks from n on
// keep their values, the index and tiles are untouched.
TEST(BrickField, ReleasingEarlierBricksKeepsTheLaterOnes) {
    hp::BrickField<float> f;
    f.reset(hp::GridSpec{{0, 0, 0}, 1.0, {128, 64, 64}}, 2.5f);  // 1024 blocks
    const std::size_t bricks = 200;  // 400 KB: spans many pages
    for (std::size_t b = 0; b < bricks; ++b) f.index[2 * b] = static_cast<std::uint32_t>(b);
    f.bricks.resize(bricks * hp::kBrickVoxels);
    for (std::size_t v = 0; v < f.bricks.size(); ++v) f.bricks[v] = static_cast<float>(v);
    for (std::size_t n : {std::size_t{1}, std::size_t{37}, std::size_t{120}}) {
        f.release_bricks_before(n);
        for (std::size_t v = n * hp::kBrickVoxels; v < f.bricks.size(); ++v) ASSERT_EQ(f.bricks[v], static_cast<float>(v)) << n;
    }
    EXPECT_EQ(f.bricks.size(), bricks * hp::kBrickVoxels);
    EXPECT_EQ(f.index[2 * 150], 150u);
    EXPECT_EQ(f.tile[1], 2.5f);
    f.release_bricks_before(bricks + 10);  // beyond the end: all of them, nothing else
    EXPECT_EQ(f.tile[3], 2.5f);
}

// After the bricks shrink, the spare capacity's pages go back to the system: the bricks in use
// keep their values (also those sharing a page with the released part), the storage stays.
TEST(BrickField, ReleasingSpareCapacityKeepsTheBricksInUse) {
    for (std::size_t bricks : {std::size_t{300}, std::size_t{40000}}) {  // below and above the mapping threshold
        hp::BrickField<float> f;
        f.reset(hp::GridSpec{{0, 0, 0}, 1.0, {8, 8, 8}}, 0.0f);
        f.bricks.resize(bricks * hp::kBrickVoxels);
        for (std::size_t v = 0; v < f.bricks.size(); ++v) f.bricks[v] = static_cast<float>(v % 100003);
        const float* data = f.bricks.data();
        const std::size_t capacity = f.bricks.capacity();
        const std::size_t kept = bricks / 3 * hp::kBrickVoxels + 77;  // ends inside a page
        f.bricks.resize(kept);
        f.release_spare_capacity();
        EXPECT_EQ(f.bricks.data(), data);
        EXPECT_EQ(f.bricks.capacity(), capacity);
        for (std::size_t v = 0; v < kept; ++v) ASSERT_EQ(f.bricks[v], static_cast<float>(v % 100003)) << bricks;
        f.bricks.resize(kept + 1000);  // grows into the released pages: value-initialised as ever
        for (std::size_t v = kept; v < kept + 1000; ++v) ASSERT_EQ(f.bricks[v], 0.0f) << bricks;
    }
}

}  // namespace
