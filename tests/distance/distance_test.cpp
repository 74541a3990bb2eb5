#include "distance/distance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "core/pipelined.hpp"
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

namespace {
// Largest error (voxels) of the field beyond the exact band (|layer| > 3) against the exact
// distance, brute force over all triangles; also whether every such value is an upper bound.
struct BeyondBand {
    double max_err = 0;
    std::size_t voxels = 0, below_truth = 0;
};
BeyondBand beyond_band_error(const hp::TriMesh& mesh, const hp::GridSpec& g, const std::vector<std::int32_t>& layers,
                             const hp::DistanceField& f) {
    const int nz = g.dims[2];
    std::vector<BeyondBand> per(static_cast<std::size_t>(nz));
    tbb::parallel_for(0, nz, [&](int k) {
        BeyondBand& b = per[static_cast<std::size_t>(k)];
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                const std::size_t v = g.index(i, j, k);
                if (std::abs(layers[v]) <= 3) continue;
                const hp::Vec3d c = g.center(i, j, k);
                double best = INFINITY;
                for (const auto& t : mesh.triangles)
                    best = std::min(best, hp::closest_point_on_triangle(c, mesh.vertices[t[0]], mesh.vertices[t[1]],
                                                                         mesh.vertices[t[2]]).distance2);
                const double err = (std::abs(f.values[v]) - std::sqrt(best)) / g.voxel_size;
                b.max_err = std::max(b.max_err, std::abs(err));
                b.below_truth += err < -1e-12;
                ++b.voxels;
            }
    });
    BeyondBand all;
    for (const BeyondBand& b : per) all.max_err = std::max(all.max_err, b.max_err), all.voxels += b.voxels, all.below_truth += b.below_truth;
    return all;
}
}  // namespace

// Beyond the exact band the field is the exact distance to a propagated triangle: an upper bound
// within 0.25 voxel of the truth (docs/distance-method.md). A sphere, a torus (a hole: the medial
// axis is a circle) and a gear (concave: the closest feature jumps between teeth), at voxel
// sizes that put tens of thousands of voxels beyond the band.
TEST(Distance, BeyondTheBandWithinAQuarterVoxelOfBruteForce) {
    struct Case {
        const char* mesh;
        double voxel;
    };
    for (const Case c : {Case{"sphere.obj", 0.06}, Case{"torus.off", 0.03}, Case{"gear.obj", 0.02}}) {
        const hp::TriMesh mesh = sample(c.mesh);
        const hp::GridSpec g = hp::grid_around(mesh.bounds(), c.voxel, 6);
        const std::vector<std::int32_t> layers = dense(hp::voxelize(mesh, g, {}));
        const hp::DistanceField f = hp::compute_distance(mesh, g, layers, {});
        const BeyondBand b = beyond_band_error(mesh, g, layers, f);
        std::printf("%s at %g: %zu voxels beyond the band, max error %.4f voxel\n", c.mesh, c.voxel, b.voxels, b.max_err);
        EXPECT_GT(b.voxels, 20000u) << c.mesh;
        EXPECT_EQ(b.below_truth, 0u) << c.mesh;
        EXPECT_LE(b.max_err, 0.25) << c.mesh;
    }
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
    // Fine enough that most voxels are beyond the band (the propagation, pipelined over slices).
    hp::TriMesh gear = sample("gear.obj");
    hp::GridSpec g = hp::grid_around(gear.bounds(), 0.02, 8);
    std::vector<std::int32_t> layers = dense(hp::voxelize(gear, g, {}));
    const hp::ScopedPipelineMinCells small_grids_too(0);  // pipelined whatever the grid's size
    auto run = [&](int threads) {
        hp::DistanceField f;
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
        tbb::task_arena arena(threads);
        arena.execute([&] { f = hp::compute_distance(gear, g, layers, {.gradient = true}); });
        return f;
    };
    const hp::DistanceField one = run(1);
    std::size_t beyond = 0;
    for (std::int32_t l : layers) beyond += std::abs(l) > 3;
    EXPECT_GT(beyond, layers.size() / 2);
    for (int threads : {2, 3, 5}) {
        const hp::DistanceField f = run(threads);
        EXPECT_EQ(f.values, one.values) << threads << " threads";
        EXPECT_EQ(f.gradient, one.gradient) << threads << " threads";
    }
}

// From the third pass on the passes visit only voxels a neighbour of which changed: the field is the
// one visiting every voxel gives, bit for bit (grids wider than 64 voxels, so that a row's change
// mask has chunks of several voxels; 1 and 3 threads).
TEST(Distance, SkippingUnchangedVoxelsGivesTheSameField) {
    struct Case {
        const char* mesh;
        double voxel;
    };
    for (const Case c : {Case{"gear.obj", 0.012}, Case{"torus.off", 0.025}, Case{"bracket.obj", 0.0}}) {
        const hp::TriMesh mesh = sample(c.mesh);
        const hp::Vec3d size = mesh.bounds().size();
        const double s = c.voxel > 0 ? c.voxel : std::max({size.x, size.y, size.z}) / 150;
        const hp::GridSpec g = hp::grid_around(mesh.bounds(), s, 4);
        ASSERT_GT(g.dims[0], 64) << c.mesh;
        const std::vector<std::int32_t> layers = dense(hp::voxelize(mesh, g, {}));
        for (int threads : {1, 3}) {
            tbb::task_arena arena(threads);
            hp::DistanceField skip, every;
            arena.execute([&] {
                skip = hp::compute_distance(mesh, g, layers, {.gradient = true});
                every = hp::compute_distance(mesh, g, layers, {.gradient = true, .visit_every_voxel = true});
            });
            EXPECT_GE(skip.propagation_passes, 3) << c.mesh;
            EXPECT_EQ(skip.propagation_passes, every.propagation_passes) << c.mesh;
            // Visiting every voxel: all passes alike; skipping: fewer from the third pass on.
            EXPECT_EQ(every.propagation_visits % static_cast<std::size_t>(every.propagation_passes), 0u) << c.mesh;
            EXPECT_LT(skip.propagation_visits, every.propagation_visits) << c.mesh;
            EXPECT_GT(skip.propagation_visits, 2 * every.propagation_visits / static_cast<std::size_t>(every.propagation_passes)) << c.mesh;
            std::printf("%s, %d threads: %zu of %zu visits in %d passes\n", c.mesh, threads, skip.propagation_visits,
                        every.propagation_visits, skip.propagation_passes);
            EXPECT_TRUE(skip.values == every.values) << c.mesh << ", " << threads << " threads";
            EXPECT_TRUE(skip.gradient == every.gradient) << c.mesh << ", " << threads << " threads";
        }
    }
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

// The form the executable uses (int16 layers, float values in the propagation's pages) gives the
// double field rounded to float, value for value, and the same gradients; only |layer| <= the
// exact band, the sign and 0 matter, so int32 layers far beyond int16 (the deep ones scaled up)
// give the same field too. min and max: those of the double values and 0.
TEST(Distance, FloatValuesFromInt16OrWideLayersAreTheDoubleFieldRounded) {
    const hp::TriMesh gear = sample("gear.obj");
    const hp::GridSpec g = hp::grid_around(gear.bounds(), 0.02, 8);
    const std::vector<std::int32_t> layers = dense(hp::voxelize(gear, g, {}));
    const hp::DistanceField ref = hp::compute_distance(gear, g, layers, {.gradient = true});
    std::vector<std::int16_t> narrow(layers.begin(), layers.end());
    std::vector<std::int32_t> wide = layers;
    std::size_t deep = 0;
    for (std::int32_t& l : wide)
        if (std::abs(l) > 3) l *= 20000, ++deep;
    ASSERT_GT(deep, layers.size() / 2);
    double lo = 0, hi = 0;
    for (double v : ref.values) lo = std::min(lo, v), hi = std::max(hi, v);
    ASSERT_LT(lo, 0);
    ASSERT_GT(hi, 0);
    std::vector<float> gradient(3 * g.count());
    const hp::DistanceOptions opt{.gradient = true};
    auto check = [&](const auto& f, const char* what) {
        EXPECT_EQ(f.min, lo) << what;
        EXPECT_EQ(f.max, hi) << what;
        EXPECT_EQ(f.exact_voxels, ref.exact_voxels) << what;
        for (std::size_t v = 0; v < g.count(); ++v) ASSERT_EQ(f.values()[v], static_cast<float>(ref.values[v])) << what << " " << v;
        EXPECT_EQ(gradient, ref.gradient) << what;
    };
    check(hp::compute_distance_as<float>(gear, g, narrow.data(), gradient.data(), opt), "int16");
    std::fill(gradient.begin(), gradient.end(), 0.0f);
    check(hp::compute_distance_as<float>(gear, g, wide.data(), gradient.data(), opt), "int32 beyond int16");
    // The double values, the pages shrunk to them.
    const hp::DenseDistance<double> d = hp::compute_distance_as<double>(gear, g, narrow.data(), nullptr, {});
    EXPECT_TRUE(std::equal(ref.values.begin(), ref.values.end(), d.values()));
}

// A voxel's cell: fixed within the exact band (both signs, and the surface), the layer's sign, no
// triangle yet; written out bit by bit here.
TEST(Distance, DenseCellsKeepTheExactBandAndTheLayersSign) {
    using C = hp::DenseCells;
    const std::uint32_t none = (1u << 29) - 1;
    EXPECT_EQ(C::of(0, 3), (1u << 31) | none);
    EXPECT_EQ(C::of(3, 3), (1u << 31) | (1u << 30) | none);
    EXPECT_EQ(C::of(-3, 3), (1u << 31) | (1u << 29) | none);
    EXPECT_EQ(C::of(4, 3), (1u << 30) | none);
    EXPECT_EQ(C::of(-4, 3), (1u << 29) | none);
    EXPECT_EQ(C::of(-2147483648LL, 9), (1u << 29) | none);
    EXPECT_EQ(C::of(9, 9), (1u << 31) | (1u << 30) | none);
    for (int l : {-5, -1, 0, 1, 7}) EXPECT_EQ(C::layer_sign(C::of(l, 3)), l > 0 ? 1 : l < 0 ? -1 : 0) << l;
    EXPECT_EQ(C::kNone, none);
}

// The executable's form: the cells written from the layers as they are read (here by hand, with a
// wider exact band), consumed by the run; the same field as from the layers themselves.
TEST(Distance, CellsWrittenByTheCallerGiveTheFieldOfTheLayers) {
    const hp::TriMesh gear = sample("gear.obj");
    const hp::GridSpec g = hp::grid_around(gear.bounds(), 0.02, 8);
    const std::vector<std::int32_t> layers = dense(hp::voxelize(gear, g, {}));
    const hp::DistanceOptions opt{.exact_layers = 5, .gradient = true};
    const hp::DistanceField ref = hp::compute_distance(gear, g, layers, opt);
    hp::DenseCells cells(g.count());
    for (std::size_t v = 0; v < g.count(); ++v) {
        const std::int32_t l = layers[v];
        cells.data()[v] = (std::abs(l) <= 5 ? 0x80000000u : 0u) | (l > 0 ? 0x40000000u : l < 0 ? 0x20000000u : 0u) | 0x1FFFFFFFu;
    }
    std::vector<float> gradient(3 * g.count());
    const hp::DenseDistance<float> f = hp::compute_distance_as<float>(gear, g, std::move(cells), gradient.data(), opt);
    EXPECT_EQ(cells.data(), nullptr);  // consumed
    EXPECT_EQ(f.exact_voxels, ref.exact_voxels);
    EXPECT_GT(f.exact_voxels, 0u);
    for (std::size_t v = 0; v < g.count(); ++v) ASSERT_EQ(f.values()[v], static_cast<float>(ref.values[v])) << v;
    EXPECT_EQ(gradient, ref.gradient);
}
