#include "distance/distance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include "geometry/closest_point.hpp"
#include "voxel/voxelize.hpp"

namespace {
hp::TriMesh sample(const char* name) {
    hp::MeshLoadOptions as_wound;  // inverted-box.obj stays inward: these tests are about that
    as_wound.repair_orientation = false;
    return hp::load_mesh(std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / name, as_wound).mesh;
}
std::vector<std::int32_t> dense(const hp::LayerMap& m) {
    std::vector<std::int32_t> out(m.grid.count());
    for (int k = 0; k < m.grid.dims[2]; ++k)
        for (int j = 0; j < m.grid.dims[1]; ++j)
            for (int i = 0; i < m.grid.dims[0]; ++i) out[m.grid.index(i, j, k)] = m.at(i, j, k);
    return out;
}
// Closed-form signed distance to the unit cube [0,1]^3, inside positive.
double cube_distance(const hp::Vec3d& p) {
    double out2 = 0, in = INFINITY;
    for (int a = 0; a < 3; ++a) {
        double d = std::max({0.0, -p[a], p[a] - 1});
        out2 += d * d;
        in = std::min({in, p[a], 1 - p[a]});
    }
    return out2 > 0 ? -std::sqrt(out2) : in;
}
}  // namespace

TEST(Distance, UnitCubeMatchesTheClosedForm) {
    hp::TriMesh cube = sample("seam-cube.obj");
    hp::GridSpec g = hp::grid_around(cube.bounds(), 0.07, 6);
    hp::LayerMap map = hp::voxelize(cube, g, {});
    std::vector<std::int32_t> layers = dense(map);
    hp::DistanceField f = hp::compute_distance(cube, g, layers, {.gradient = true});
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                const std::size_t v = g.index(i, j, k);
                const double want = cube_distance(g.center(i, j, k));
                ASSERT_NEAR(f.values[v], want, 1e-12) << i << " " << j << " " << k;
                // The gradient has unit length and points to increasing penetration.
                hp::Vec3d grad{f.gradient[3 * v], f.gradient[3 * v + 1], f.gradient[3 * v + 2]};
                ASSERT_NEAR(hp::length(grad), 1.0, 1e-5);
                // Off the medial axis (one nearest face inside), a small step along it gains ~ the step.
                const hp::Vec3d c = g.center(i, j, k);
                std::vector<double> faces;
                for (int a = 0; a < 3; ++a) faces.push_back(c[a]), faces.push_back(1 - c[a]);
                std::sort(faces.begin(), faces.end());
                if (want < 0 || faces[1] - faces[0] > 1e-3) {
                    ASSERT_GE(cube_distance(c + grad * 1e-4) - want, 0.5e-4) << "gradient at " << i << " " << j << " " << k;
                }
            }
    EXPECT_GT(f.exact_voxels, 0u);
}

TEST(Distance, SphereWithinHalfAVoxelAndExactNearTheSurface) {
    // The icosphere's exact distance is not the analytic sphere's; compare with the distance to
    // the faceted mesh by brute force instead, at every voxel.
    hp::TriMesh sphere = sample("sphere.obj");
    hp::GridSpec g = hp::grid_around(sphere.bounds(), 0.1, 4);
    hp::LayerMap map = hp::voxelize(sphere, g, {});
    std::vector<std::int32_t> layers = dense(map);
    hp::DistanceField f = hp::compute_distance(sphere, g, layers, {});
    double band_err = 0, far_err = 0;
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                const hp::Vec3d c = g.center(i, j, k);
                double best = INFINITY;
                for (const auto& t : sphere.triangles)
                    best = std::min(best, hp::closest_point_on_triangle(c, sphere.vertices[t[0]], sphere.vertices[t[1]],
                                                                         sphere.vertices[t[2]]).distance2);
                const std::size_t v = g.index(i, j, k);
                const double err = std::abs(std::abs(f.values[v]) - std::sqrt(best)) / g.voxel_size;
                (std::abs(layers[v]) <= 3 ? band_err : far_err) = std::max(std::abs(layers[v]) <= 3 ? band_err : far_err, err);
                // Signs: inside the unit sphere (away from the faceting) positive.
                if (std::abs(hp::length(c) - 1) > 0.05) {
                    ASSERT_EQ(f.values[v] > 0, hp::length(c) < 1);
                }
            }
    EXPECT_LT(band_err, 1e-9);
    EXPECT_LT(far_err, 0.5);
}

TEST(Distance, InvertedMeshKeepsInsidePositive) {
    hp::TriMesh inv = sample("inverted-box.obj");
    hp::GridSpec g = hp::grid_around(inv.bounds(), 0.1, 3);
    hp::LayerMap map = hp::voxelize(inv, g, {});
    hp::DistanceField f = hp::compute_distance(inv, g, dense(map), {});
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i)
                ASSERT_NEAR(f.values[g.index(i, j, k)], cube_distance(g.center(i, j, k)), 1e-12);
}

TEST(Distance, SameFieldWhateverTheThreads) {
    hp::TriMesh gear = sample("gear.obj");
    hp::GridSpec g = hp::grid_around(gear.bounds(), 0.03, 8);
    std::vector<std::int32_t> layers = dense(hp::voxelize(gear, g, {}));
    hp::DistanceField a, b;
    {
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        a = hp::compute_distance(gear, g, layers, {});
    }
    b = hp::compute_distance(gear, g, layers, {});
    EXPECT_EQ(a.values, b.values);
}

// Inconsistently wound closed meshes (CAD exports): signs near the surface come from the faces'
// pseudo-normals, so they are only right once import has oriented the mesh. The reference is the
// same sphere wound consistently; with the repair the fields are identical, without it a share of
// the voxels within 3 voxels of the surface gets the wrong sign (the defect this guards).
TEST(Distance, ShuffledOrientationGivesTheConsistentField) {
    const hp::TriMesh sphere = sample("sphere.obj");
    hp::TriMesh shuffled = sphere;
    std::mt19937 rng(3);
    for (auto& t : shuffled.triangles)
        if (rng() % 3 == 0) std::swap(t[1], t[2]);
    hp::MeshLoadOptions as_wound;
    as_wound.repair_orientation = false;
    const hp::TriMesh repaired = hp::prepare_mesh(shuffled, {}, "shuffled").mesh;
    const hp::TriMesh raw = hp::prepare_mesh(shuffled, as_wound, "shuffled").mesh;

    const hp::GridSpec g = hp::grid_around(sphere.bounds(), 0.05, 3);
    const std::vector<std::int32_t> layers = dense(hp::voxelize(sphere, g, {}));
    const hp::DistanceField ref = hp::compute_distance(sphere, g, layers, {});
    const hp::DistanceField fixed = hp::compute_distance(repaired, g, layers, {});
    const hp::DistanceField broken = hp::compute_distance(raw, g, layers, {});
    std::size_t near = 0, wrong_fixed = 0, wrong_broken = 0;
    for (std::size_t i = 0; i < ref.values.size(); ++i) {
        if (std::abs(ref.values[i]) > 3 * 0.05) continue;
        ++near;
        wrong_fixed += (fixed.values[i] > 0) != (ref.values[i] > 0);
        wrong_broken += (broken.values[i] > 0) != (ref.values[i] > 0);
        ASSERT_DOUBLE_EQ(fixed.values[i], ref.values[i]) << i;
    }
    EXPECT_GT(near, 1000u);
    EXPECT_EQ(wrong_fixed, 0u);
    EXPECT_GT(wrong_broken, 0u) << "the shuffled mesh should show the defect without the repair";
    std::printf("near-surface voxels %zu: wrong sign %zu (%.2f %%) as wound, %zu repaired\n", near, wrong_broken,
                100.0 * static_cast<double>(wrong_broken) / static_cast<double>(near), wrong_fixed);
}
