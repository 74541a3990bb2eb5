// Narrow-band gradients: on every voxel with |layer| < B the same floats as the dense field's
// gradient where the dense field is exact too (|layer| <= 3), a unit vector, and a step of the
// voxel's distance against it (with the sign) lands on the mesh (brute force over every triangle,
// independent of the BVH); zero on every other voxel and tile.
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

}  // namespace
