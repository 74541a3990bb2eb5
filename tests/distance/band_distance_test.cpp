// Narrow-band distance fields: exact distances (brute force over every triangle, independent of
// the BVH) on every voxel with |layer| < B, equal bit for bit to the dense field where the dense
// field is exact too (|layer| <= 3), never above the dense field's upper bound elsewhere, and
// +-B voxel sizes on every other voxel and tile; a dense field made exact to B - 1 layers equals the
// band field bit for bit on every voxel the band holds exact.
#include "distance/distance.hpp"

#include <cmath>
#include <filesystem>
#include <limits>

#include <gtest/gtest.h>

#include "geometry/closest_point.hpp"
#include "voxel/band.hpp"
#include "voxel/voxelize.hpp"

namespace {

hp::TriMesh sample(const char* name) {
    return hp::load_mesh(std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / name).mesh;
}

hp::BrickField<std::int32_t> widen(const hp::BrickField<std::int16_t>& in) {
    hp::BrickField<std::int32_t> out;
    out.reset(in.grid, 0);
    out.index = in.index;
    out.tile.assign(in.tile.begin(), in.tile.end());
    out.bricks.assign(in.bricks.begin(), in.bricks.end());
    return out;
}

void check(const char* name, int band, int resolution) {
    SCOPED_TRACE(name);
    const hp::TriMesh mesh = sample(name);
    const hp::Aabb box = hp::diagnose(mesh).bbox;
    const double longest = std::max({box.size().x, box.size().y, box.size().z});
    const hp::GridSpec grid = hp::grid_around(box, longest / resolution, 2);
    const double s = grid.voxel_size;
    const hp::LayerMap dense_map = hp::voxelize(mesh, grid, {});
    const std::vector<std::int32_t> layers = dense_map.values();
    const hp::DistanceField dense = hp::compute_distance(mesh, grid, layers, {});
    hp::DistanceOptions wide;
    wide.exact_layers = band - 1;
    const hp::DistanceField dense_wide = hp::compute_distance(mesh, grid, layers, wide);
    const hp::BandLayerMap band_map = hp::voxelize_band(mesh, grid, {}, band);
    const hp::BandDistanceField sparse = hp::compute_distance_band(mesh, widen(band_map.layers), band);
    std::size_t exact = 0, same = 0, exact_default = 0;
    for (int k = 0; k < grid.dims[2]; ++k)
        for (int j = 0; j < grid.dims[1]; ++j)
            for (int i = 0; i < grid.dims[0]; ++i) {
                const std::size_t v = grid.index(i, j, k);
                const int layer = layers[v];
                const double b = sparse.values.at(i, j, k);
                if (std::abs(layer) >= band) {
                    ASSERT_EQ(b, (layer > 0 ? 1 : -1) * band * s) << i << " " << j << " " << k;
                    continue;
                }
                ++exact;
                ASSERT_EQ(b, dense_wide.values[v]) << i << " " << j << " " << k;
                if (std::abs(layer) <= 3) {
                    ++exact_default;
                    ASSERT_EQ(b, dense.values[v]) << i << " " << j << " " << k;
                    ++same;
                }
                // Brute force: the smallest distance over all triangles.
                const hp::Vec3d x = grid.center(i, j, k);
                double best = std::numeric_limits<double>::infinity();
                for (const auto& t : mesh.triangles)
                    best = std::min(best, hp::closest_point_on_triangle(x, mesh.vertices[t[0]], mesh.vertices[t[1]],
                                                                        mesh.vertices[t[2]]).distance2);
                ASSERT_NEAR(std::abs(b), std::sqrt(best), 1e-12 * s);
                if (layer != 0) {
                    ASSERT_EQ(b > 0, layer > 0);
                }
                ASSERT_LE(std::abs(b), std::abs(dense.values[v]) + 1e-12 * s);  // dense beyond 3 voxels: an upper bound
            }
    EXPECT_EQ(sparse.exact_voxels, exact);
    EXPECT_EQ(dense_wide.exact_voxels, exact);
    EXPECT_EQ(dense.exact_voxels, exact_default);
    EXPECT_GT(same, 0u);
    for (std::size_t b = 0; b < sparse.values.block_count(); ++b)
        if (!sparse.values.brick(b)) {
            EXPECT_EQ(std::abs(sparse.values.tile[b]), band * s);
        }
}

// The distances made while consuming the layers (their bricks given back run by run) are the
// distances made from layers kept, bit for bit, on a grid of several runs of blocks; the layers
// are empty afterwards.
TEST(BandDistance, ConsumingTheLayersGivesTheSameField) {
    const hp::TriMesh mesh = sample("torus.off");
    const hp::Aabb box = hp::diagnose(mesh).bbox;
    const double longest = std::max({box.size().x, box.size().y, box.size().z});
    const hp::GridSpec grid = hp::grid_around(box, longest / 450, 2);
    const hp::BandLayerMap band_map = hp::voxelize_band(mesh, grid, {}, 2);
    ASSERT_GT(band_map.layers.block_count(), 2u * 16384u);  // several runs
    const hp::BandDistanceFieldOf<float> kept = hp::compute_distance_band_as<float>(mesh, band_map.layers, 2);
    hp::BrickField<std::int16_t> layers = band_map.layers;
    const hp::BandDistanceFieldOf<float> consumed = hp::compute_distance_band_as<float>(mesh, std::move(layers), 2);
    EXPECT_TRUE(layers.index.empty());
    EXPECT_TRUE(layers.bricks.empty());
    EXPECT_EQ(consumed.values.index, kept.values.index);
    EXPECT_EQ(consumed.values.tile, kept.values.tile);
    EXPECT_TRUE(consumed.values.bricks == kept.values.bricks);
    EXPECT_EQ(consumed.exact_voxels, kept.exact_voxels);
    EXPECT_GT(kept.exact_voxels, 0u);
    EXPECT_EQ(consumed.min, kept.min);
    EXPECT_EQ(consumed.max, kept.max);
}

TEST(BandDistance, ExactInTheBandAndEqualToDenseWhereBothAreExact) {
    check("sphere.obj", 6, 40);
    check("torus.off", 4, 40);
    check("gear.obj", 5, 36);
}

}  // namespace
