// Narrow-band gradients: on every voxel with |layer| < B the same floats as the dense field's
// gradient where the dense field is exact too (|layer| <= 3), a unit vector, and a step of the
// voxel's distance against it (with the sign) lands on the mesh (brute force over every triangle,
// independent of the BVH); zero on every other voxel and tile.
#include "distance/distance.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include <gtest/gtest.h>

#include "formats/vdb.hpp"
#include "geometry/closest_point.hpp"
#include "voxel/band.hpp"
#include "voxel/voxelize.hpp"

namespace {

hp::TriMesh sample(const char* name) {
    return hp::load_mesh(std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / name).mesh;
}

void check(const char* name, int band, int resolution) {
    SCOPED_TRACE(name);
    const hp::TriMesh mesh = sample(name);
    const hp::Aabb box = hp::diagnose(mesh).bbox;
    const double longest = std::max({box.size().x, box.size().y, box.size().z});
    const hp::GridSpec grid = hp::grid_around(box, longest / resolution, 2);
    const double s = grid.voxel_size;
    const std::vector<std::int32_t> layers = hp::voxelize(mesh, grid, {}).values();
    hp::DistanceOptions dopt;
    dopt.gradient = true;
    const hp::DistanceField dense = hp::compute_distance(mesh, grid, layers, dopt);
    const hp::BandLayerMap band_map = hp::voxelize_band(mesh, grid, {}, band);
    const hp::BandGradientField sparse = hp::compute_gradient_band(mesh, band_map.layers, band);
    std::size_t exact = 0, same = 0;
    for (int k = 0; k < grid.dims[2]; ++k)
        for (int j = 0; j < grid.dims[1]; ++j)
            for (int i = 0; i < grid.dims[0]; ++i) {
                const std::size_t v = grid.index(i, j, k);
                const int layer = layers[v];
                const hp::Vec3f g = sparse.values.at(i, j, k);
                if (std::abs(layer) >= band) {
                    ASSERT_EQ(g[0], 0.0f) << i << " " << j << " " << k;
                    ASSERT_EQ(g[1], 0.0f) << i << " " << j << " " << k;
                    ASSERT_EQ(g[2], 0.0f) << i << " " << j << " " << k;
                    continue;
                }
                ++exact;
                if (std::abs(layer) <= 3) {
                    for (int a = 0; a < 3; ++a) ASSERT_EQ(g[a], dense.gradient[3 * v + a]) << i << " " << j << " " << k << " " << a;
                    ++same;
                }
                const hp::Vec3d gd{g[0], g[1], g[2]};
                ASSERT_NEAR(hp::length(gd), 1.0, 1e-6);
                // The distance and its sign, by brute force; from the centre, a step of that distance
                // down the gradient (outside: towards the surface; inside: away from it, so back) ends
                // on the mesh.
                const hp::Vec3d x = grid.center(i, j, k);
                double best = std::numeric_limits<double>::infinity();
                for (const auto& t : mesh.triangles)
                    best = std::min(best, hp::closest_point_on_triangle(x, mesh.vertices[t[0]], mesh.vertices[t[1]],
                                                                        mesh.vertices[t[2]]).distance2);
                const double d = std::sqrt(best);
                const double sign = layer != 0 ? (layer > 0 ? 1.0 : -1.0) : (dense.values[v] > 0 ? 1.0 : -1.0);
                const hp::Vec3d q = x - gd * (sign * d);
                double on = std::numeric_limits<double>::infinity();
                for (const auto& t : mesh.triangles)
                    on = std::min(on, hp::closest_point_on_triangle(q, mesh.vertices[t[0]], mesh.vertices[t[1]],
                                                                      mesh.vertices[t[2]]).distance2);
                ASSERT_LE(std::sqrt(on), 1e-5 * s) << i << " " << j << " " << k;
            }
    EXPECT_EQ(sparse.exact_voxels, exact);
    EXPECT_GT(same, 0u);
    for (std::size_t b = 0; b < sparse.values.block_count(); ++b)
        if (!sparse.values.brick(b)) {
            EXPECT_EQ(sparse.values.tile[b], (hp::Vec3f{0.0f, 0.0f, 0.0f}));
        }
}

TEST(BandGradient, DenseGradientOnTheBandZeroBeyond) {
    check("sphere.obj", 6, 32);
    check("torus.off", 4, 32);
    check("gear.obj", 5, 28);
}

// Round trip: the band gradients written block by block (as the band distance stage writes them:
// tiles of zero beyond the band) and the dense gradients written slice by slice read back as the
// same floats on every band voxel where both are exact, and zero beyond the band.
TEST(BandGradient, FileRoundTripAgainstDenseFile) {
    const hp::TriMesh mesh = sample("sphere.obj");
    const hp::Aabb box = hp::diagnose(mesh).bbox;
    const double longest = std::max({box.size().x, box.size().y, box.size().z});
    const hp::GridSpec grid = hp::grid_around(box, longest / 40, 2);
    const int band = 3;
    const std::vector<std::int32_t> layers = hp::voxelize(mesh, grid, {}).values();
    hp::DistanceOptions dopt;
    dopt.gradient = true;
    const hp::DistanceField dense = hp::compute_distance(mesh, grid, layers, dopt);
    hp::BandGradientField sparse = hp::compute_gradient_band(mesh, hp::voxelize_band(mesh, grid, {}, band).layers, band);
    const auto dir = std::filesystem::path(::testing::TempDir()) / "band_gradient_rt";
    std::filesystem::create_directories(dir);
    const std::size_t slice = static_cast<std::size_t>(grid.dims[0]) * static_cast<std::size_t>(grid.dims[1]);
    hp::vdb::GridOut dg{"gradient", hp::vdb::ValueType::vec3f, [&](int z, void* out) {
                            std::copy_n(dense.gradient.data() + 3 * slice * static_cast<std::size_t>(z), 3 * slice,
                                        static_cast<float*>(out));
                        }, 0.0};
    hp::vdb::write(dir / "dense.vdb", grid, {dg}, {{"kind", "distance"}}, "test");
    hp::vdb::GridOut bg{"gradient", hp::vdb::ValueType::vec3f, nullptr, 0.0};
    bg.blocks = [&sparse](std::size_t b, void* tile) -> const void* {
        const hp::Vec3f* src = sparse.values.brick(b);
        if (!src) std::copy_n(sparse.values.tile[b].data(), 3, static_cast<float*>(tile));
        return src;
    };
    hp::vdb::write(dir / "band.vdb", grid, {bg}, {{"kind", "distance"}, {"band", band}}, "test");
    std::vector<float> d, s;
    hp::vdb::read_slices(dir / "dense.vdb", "gradient", hp::vdb::ValueType::vec3f, [&](int, const void* v) {
        d.insert(d.end(), static_cast<const float*>(v), static_cast<const float*>(v) + 3 * slice);
    });
    hp::vdb::read_slices(dir / "band.vdb", "gradient", hp::vdb::ValueType::vec3f, [&](int, const void* v) {
        s.insert(s.end(), static_cast<const float*>(v), static_cast<const float*>(v) + 3 * slice);
    });
    ASSERT_EQ(d.size(), 3 * grid.count());
    ASSERT_EQ(s.size(), 3 * grid.count());
    std::size_t same = 0, zero = 0;
    for (std::size_t v = 0; v < grid.count(); ++v) {
        const int layer = std::abs(layers[v]);
        for (int a = 0; a < 3; ++a) {
            if (layer >= band) {
                ASSERT_EQ(s[3 * v + a], 0.0f) << v;
            } else if (layer <= 3) {
                ASSERT_EQ(std::memcmp(&s[3 * v + a], &d[3 * v + a], sizeof(float)), 0) << v << " " << a;
            }
        }
        same += layer < band && layer <= 3;
        zero += layer >= band;
    }
    EXPECT_GT(same, 0u);
    EXPECT_GT(zero, 0u);
    // Block by block, tiles beyond the band read back as tiles of zero.
    std::size_t tiles = 0;
    hp::vdb::Reader::open(dir / "band.vdb").read_blocks("gradient", hp::vdb::ValueType::vec3f,
                                                        [&](std::size_t b, const void* brick, const void* tile) {
                                                            if (brick) return;
                                                            const auto* t = static_cast<const float*>(tile);
                                                            EXPECT_TRUE(t[0] == 0.0f && t[1] == 0.0f && t[2] == 0.0f) << b;
                                                            ++tiles;
                                                        });
    EXPECT_GT(tiles, 0u);
    std::filesystem::remove_all(dir);
}

}  // namespace
