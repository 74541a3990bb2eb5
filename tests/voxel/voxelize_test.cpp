#include "voxel/voxelize.hpp"

#include <array>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include "core/error.hpp"
#include "core/pipelined.hpp"
#include "geometry/sat.hpp"
#include "geometry/winding.hpp"

namespace {

hp::TriMesh sample(const char* name) {
    return hp::load_mesh(std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / name).mesh;
}

std::map<int, std::size_t> histogram(const hp::LayerMap& m) {
    std::map<int, std::size_t> h;
    for (const auto& s : m.slices)
        for (auto v : s) ++h[v];
    return h;
}

// Independent checks of a voxelmap: layer 0 exactly where some triangle overlaps the voxel (brute
// force over all triangles), and the sign of every other voxel by the winding number.
void check_surface_and_signs(const hp::TriMesh& mesh, const hp::LayerMap& m, std::size_t* sign_errors) {
    const hp::GridSpec& g = m.grid;
    const hp::Vec3d half{g.voxel_size / 2, g.voxel_size / 2, g.voxel_size / 2};
    *sign_errors = 0;
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i) {
                bool overlaps = false;
                for (const auto& t : mesh.triangles)
                    if (hp::triangle_box_overlap(g.center(i, j, k), half, mesh.vertices[t[0]], mesh.vertices[t[1]],
                                                 mesh.vertices[t[2]])) {
                        overlaps = true;
                        break;
                    }
                const int v = m.at(i, j, k);
                ASSERT_EQ(overlaps, v == 0) << "voxel " << i << " " << j << " " << k;
                if (v != 0) {
                    bool inside = std::abs(hp::winding_number(mesh, g.center(i, j, k))) > 0.5;
                    if (inside != (v > 0)) ++*sign_errors;
                }
            }
}

// Reference layers by a queue BFS from the surface through same-side voxels.
std::vector<int> bfs_layers(const hp::LayerMap& m, int connectivity) {
    const hp::GridSpec& g = m.grid;
    std::vector<int> d(g.count(), -1);
    std::deque<std::array<int, 3>> q;
    for (int k = 0; k < g.dims[2]; ++k)
        for (int j = 0; j < g.dims[1]; ++j)
            for (int i = 0; i < g.dims[0]; ++i)
                if (m.at(i, j, k) == 0) {
                    d[g.index(i, j, k)] = 0;
                    q.push_back({i, j, k});
                }
    while (!q.empty()) {
        auto [i, j, k] = q.front();
        q.pop_front();
        for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    if (connectivity == 6 && std::abs(dx) + std::abs(dy) + std::abs(dz) != 1) continue;
                    int a = i + dx, b = j + dy, c = k + dz;
                    if (!g.contains(a, b, c) || d[g.index(a, b, c)] >= 0) continue;
                    // Same side only (the source's side, or any side when leaving the surface).
                    int here = m.at(i, j, k), there = m.at(a, b, c);
                    if (here != 0 && (here > 0) != (there > 0)) continue;
                    d[g.index(a, b, c)] = d[g.index(i, j, k)] + 1;
                    q.push_back({a, b, c});
                }
    }
    return d;
}

}  // namespace

TEST(Voxelize, UnitCubeGoldenLayerCounts) {
    // Unit cube, voxel 0.15, pad 2: 11^3 grid; the faces x = 0 and x = 1 fall inside voxels 2 and
    // 8, so surface = 7^3 - 5^3, inside = 5^3 (layers 98 / 26 / 1 from the outside in), outside
    // layers -1 = 9^3 - 7^3 and -2 = 11^3 - 9^3 (26-neighbourhood). Counted by hand.
    hp::TriMesh cube = sample("seam-cube.obj");
    hp::GridSpec g = hp::grid_around(cube.bounds(), 0.15, 2);
    ASSERT_EQ(g.dims, (std::array<int, 3>{11, 11, 11}));
    hp::LayerMap m = hp::voxelize(cube, g, {});
    auto h = histogram(m);
    EXPECT_EQ(m.fill_used, hp::FillMethod::scanline);
    EXPECT_EQ(h[0], 218u);
    EXPECT_EQ(h[1], 98u);
    EXPECT_EQ(h[2], 26u);
    EXPECT_EQ(h[3], 1u);
    EXPECT_EQ(h[-1], 386u);
    EXPECT_EQ(h[-2], 602u);
    EXPECT_EQ(h.size(), 6u);
    // Clamped at 2 layers.
    hp::LayerMap c = hp::voxelize(cube, g, {.max_layers = 2});
    EXPECT_EQ(histogram(c)[2], 27u);
    EXPECT_EQ(c.max_layer, 2);
}

TEST(Voxelize, ClosedShapesMatchTheWindingNumber) {
    for (const char* name : {"sphere.obj", "torus.off", "two-boxes.obj", "inverted-box.obj", "gear.obj", "bracket.obj"}) {
        hp::TriMesh mesh = sample(name);
        hp::GridSpec g = hp::grid_around(mesh.bounds(), mesh.bounds().diagonal() / 24, 2);
        hp::LayerMap m = hp::voxelize(mesh, g, {});
        EXPECT_EQ(m.fill_used, hp::FillMethod::scanline) << name;
        EXPECT_GT(m.inside, 0u) << name;
        std::size_t errors = 0;
        check_surface_and_signs(mesh, m, &errors);
        EXPECT_EQ(errors, 0u) << name;
        // The other exact methods agree voxel for voxel on closed meshes.
        for (hp::FillMethod f : {hp::FillMethod::vote, hp::FillMethod::flood, hp::FillMethod::winding, hp::FillMethod::hybrid}) {
            hp::LayerMap other = hp::voxelize(mesh, g, {.fill = f});
            EXPECT_EQ(other.slices, m.slices) << name << " " << hp::fill_name(f);
        }
    }
}

TEST(Voxelize, RowsThroughVerticesAndEdgesCountOnce) {
    // An octahedron with its vertices on voxel centres: rows along x pass exactly through the
    // vertices (+-1, 0, 0) and along its edges.
    hp::TriMesh octa;
    octa.vertices = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    octa.triangles = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4}, {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
    for (double s : {0.25, 0.125, 0.1}) {
        hp::GridSpec g;
        g.voxel_size = s;
        int n = static_cast<int>(std::lround(3.0 / s)) | 1;  // odd: a centre at 0
        g.dims = {n, n, n};
        g.origin = hp::Vec3d{-n * s / 2, -n * s / 2, -n * s / 2};
        hp::LayerMap m = hp::voxelize(octa, g, {.fill = hp::FillMethod::scanline});
        std::size_t errors = 0;
        check_surface_and_signs(octa, m, &errors);
        EXPECT_EQ(errors, 0u) << "voxel size " << s;
        EXPECT_GT(m.inside, 0u);
    }
}

TEST(Voxelize, OpenBoxIsSolidWithVote) {
    hp::TriMesh open = sample("open-box.obj");
    hp::GridSpec g = hp::grid_around(open.bounds(), 0.07, 2);
    hp::LayerMap m = hp::voxelize(open, g, {.fill = hp::FillMethod::vote});
    EXPECT_EQ(m.fill_used, hp::FillMethod::vote);
    std::size_t errors = 0;
    check_surface_and_signs(open, m, &errors);
    EXPECT_EQ(errors, 0u);
    EXPECT_GT(m.inside, 100u);
    // Scanline along x is also right here (x rows cross two walls); flood leaks through the top.
    hp::LayerMap flood = hp::voxelize(open, g, {.fill = hp::FillMethod::flood});
    EXPECT_EQ(flood.inside, 0u);
}

TEST(Voxelize, ChamferLayersEqualBreadthFirstLayers) {
    for (int conn : {26, 6}) {
        hp::TriMesh torus = sample("torus.off");
        hp::GridSpec g = hp::grid_around(torus.bounds(), 0.06, 3);
        hp::LayerMap m = hp::voxelize(torus, g, {.connectivity = conn});
        EXPECT_EQ(m.layer_sweeps, 2);
        std::vector<int> ref = bfs_layers(m, conn);
        for (int k = 0; k < g.dims[2]; ++k)
            for (int j = 0; j < g.dims[1]; ++j)
                for (int i = 0; i < g.dims[0]; ++i)
                    ASSERT_EQ(std::abs(m.at(i, j, k)), ref[g.index(i, j, k)]) << conn << ": " << i << " " << j << " " << k;
    }
}

// Adds the axis-aligned box [lo, hi], outward wound, optionally without its top (+z) face.
void add_box(hp::TriMesh& m, const hp::Vec3d& lo, const hp::Vec3d& hi, bool open_top) {
    const auto base = static_cast<std::uint32_t>(m.vertices.size());
    for (int c = 0; c < 8; ++c) m.vertices.push_back({c & 1 ? hi.x : lo.x, c & 2 ? hi.y : lo.y, c & 4 ? hi.z : lo.z});
    // Quads (corner bits: 1 = x, 2 = y, 4 = z), counter-clockwise seen from outside.
    const std::uint32_t quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    for (int f = 0; f < 6; ++f) {
        if (open_top && f == 1) continue;
        const auto* q = quads[f];
        m.triangles.push_back({base + q[0], base + q[1], base + q[2]});
        m.triangles.push_back({base + q[0], base + q[2], base + q[3]});
    }
}

TEST(Voxelize, LayersOfOpenMeshesStayOnTheirSide) {
    // An open box with a small closed cube floating above its opening. Inside and outside voxels
    // touch at the opening; the inside voxels there are 2-3 steps from the cube's bottom through
    // the outside but 10 from the walls through the inside: layers count the latter.
    hp::TriMesh cup;
    add_box(cup, {0, 0, 0}, {1, 1, 1}, true);
    add_box(cup, {0.4, 0.4, 1.1}, {0.6, 0.6, 1.3}, false);
    EXPECT_NEAR(hp::winding_number(cup, {0.5, 0.5, 0.5}), 5.0 / 6.0 + 0.0, 0.05);  // wound outward
    for (int conn : {26, 6}) {
        hp::GridSpec g = hp::grid_around(cup.bounds(), 1.0 / 19, 2);
        hp::LayerMap m = hp::voxelize(cup, g, {.fill = hp::FillMethod::vote, .connectivity = conn});
        ASSERT_EQ(m.fill_used, hp::FillMethod::vote);
        EXPECT_GT(m.layer_sweeps, 2);
        std::vector<int> ref = bfs_layers(m, conn);
        int i = g.dims[0] / 2, j = g.dims[1] / 2, k = static_cast<int>((0.97 - g.origin.z) / g.voxel_size);
        EXPECT_GT(m.at(i, j, k), 0) << "the top centre of the cup is inside";
        EXPECT_GE(m.at(i, j, k), 8) << "its layer counts steps through the inside";
        for (int k = 0; k < g.dims[2]; ++k)
            for (int j = 0; j < g.dims[1]; ++j)
                for (int i = 0; i < g.dims[0]; ++i)
                    ASSERT_EQ(std::abs(m.at(i, j, k)), ref[g.index(i, j, k)]) << conn << ": " << i << " " << j << " " << k;
    }
    // The open box alone, at several voxel sizes, by the vote and by the default (hybrid) fill.
    hp::TriMesh open = sample("open-box.obj");
    for (double s : {0.07, 0.045, 0.033}) {
        for (int conn : {26, 6}) {
            for (hp::FillMethod fill : {hp::FillMethod::vote, hp::FillMethod::automatic}) {
                hp::GridSpec g = hp::grid_around(open.bounds(), s, 3);
                hp::LayerMap m = hp::voxelize(open, g, {.fill = fill, .connectivity = conn});
                ASSERT_EQ(m.fill_used, fill == hp::FillMethod::vote ? hp::FillMethod::vote : hp::FillMethod::hybrid);
                std::vector<int> ref = bfs_layers(m, conn);
                for (int k = 0; k < g.dims[2]; ++k)
                    for (int j = 0; j < g.dims[1]; ++j)
                        for (int i = 0; i < g.dims[0]; ++i)
                            ASSERT_EQ(std::abs(m.at(i, j, k)), ref[g.index(i, j, k)]) << s << " " << conn << ": " << i << " " << j << " " << k;
            }
        }
    }
}

// Grids one or two voxels thick along an axis (rows of one cell, slices of one row, a single
// slice), through the torus and the open box, on one thread and on all (the sweeps' slices
// pipelined): the breadth-first layers, the same either way.
TEST(Voxelize, LayersOfThinGridsEqualBreadthFirstLayersOnAnyThreads) {
    hp::TriMesh torus = sample("torus.off");
    hp::TriMesh cup = sample("open-box.obj");
    const hp::ScopedPipelineMinCells small_grids_too(0);  // these grids would run on one lane
    for (const hp::TriMesh* mesh : {&torus, &cup}) {
        const hp::GridSpec around = hp::grid_around(mesh->bounds(), 0.05, 2);
        for (std::array<int, 3> dims : {std::array<int, 3>{1, around.dims[1], around.dims[2]}, {around.dims[0], 1, around.dims[2]},
                                        {around.dims[0], around.dims[1], 1}, {around.dims[0], 2, 2}, {2, 3, around.dims[2]}}) {
            hp::GridSpec g = around;
            g.dims = dims;
            for (int a = 0; a < 3; ++a)  // the slab through the middle of the mesh
                if (dims[a] < around.dims[a]) g.origin[a] += (around.dims[a] / 2) * around.voxel_size;
            for (int conn : {26, 6}) {
                std::vector<std::int16_t> first;
                for (int threads : {1, 8}) {
                    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
                    hp::LayerMap m = hp::voxelize(*mesh, g, {.fill = hp::FillMethod::vote, .connectivity = conn});
                    const std::vector<int> ref = bfs_layers(m, conn);
                    std::vector<std::int16_t> all;
                    for (int k = 0; k < g.dims[2]; ++k)
                        for (int j = 0; j < g.dims[1]; ++j)
                            for (int i = 0; i < g.dims[0]; ++i) {
                                // A column through the torus's hole meets no surface: no layer (kFarDist).
                                const int want = ref[g.index(i, j, k)] < 0 ? 32767 : ref[g.index(i, j, k)];
                                ASSERT_EQ(std::abs(m.at(i, j, k)), want)
                                    << dims[0] << "x" << dims[1] << "x" << dims[2] << " " << conn << " " << threads;
                                all.push_back(m.at(i, j, k));
                            }
                    if (first.empty()) first = all;
                    else EXPECT_EQ(all, first);
                }
            }
        }
    }
}

TEST(Voxelize, DeterministicWhateverTheThreads) {
    hp::TriMesh mesh = sample("gear.obj");
    hp::GridSpec g = hp::grid_around(mesh.bounds(), 0.02, 2);
    hp::LayerMap a, b;
    {
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        a = hp::voxelize(mesh, g, {.fill = hp::FillMethod::vote});
    }
    b = hp::voxelize(mesh, g, {.fill = hp::FillMethod::vote});
    EXPECT_EQ(a.slices, b.slices);
    // The hybrid fill on an open shell, where it evaluates winding numbers in parallel.
    hp::TriMesh shell = sample("half-pipe.obj");
    hp::GridSpec gs = hp::grid_around(shell.bounds(), 0.05, 2);
    {
        tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        a = hp::voxelize(shell, gs, {});
    }
    b = hp::voxelize(shell, gs, {});
    EXPECT_EQ(a.fill_used, hp::FillMethod::hybrid);
    EXPECT_EQ(a.slices, b.slices);
}

// core/progress.hpp: operations call the callback from the calling thread only (the app's bar is
// not thread-safe). Every fill method, with more threads than cores so that workers take tasks.
TEST(Voxelize, ProgressComesFromTheCallingThreadOnly) {
    hp::TriMesh mesh = sample("gear.obj");
    hp::GridSpec g = hp::grid_around(mesh.bounds(), 0.02, 2);
    tbb::global_control four(tbb::global_control::max_allowed_parallelism, 4);
    for (hp::FillMethod fill : {hp::FillMethod::scanline, hp::FillMethod::vote, hp::FillMethod::winding, hp::FillMethod::flood,
                                hp::FillMethod::hybrid}) {
        std::mutex m;
        std::set<std::thread::id> threads;
        std::set<std::string> phases;
        std::size_t fill_reports = 0;
        hp::Progress progress{[&](std::string_view phase, double fraction) {
            std::lock_guard<std::mutex> lock(m);
            threads.insert(std::this_thread::get_id());
            phases.insert(std::string(phase));
            if (phase == "fill") {
                ++fill_reports;
                EXPECT_GE(fraction, 0.0);
                EXPECT_LE(fraction, 1.0);
            }
        }};
        hp::voxelize(mesh, g, {.fill = fill}, progress);
        EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()}) << hp::fill_name(fill);
        EXPECT_TRUE(phases.count("surface") && phases.count("fill")) << hp::fill_name(fill);
        if (fill == hp::FillMethod::winding) {
            EXPECT_GT(fill_reports, 2u) << "the slow fill reports as it goes";
        }
    }
}

TEST(Voxelize, BadOptions) {
    hp::TriMesh cube = sample("seam-cube.obj");
    hp::GridSpec g = hp::grid_around(cube.bounds(), 0.1, 2);
    EXPECT_THROW(hp::voxelize(cube, g, {.connectivity = 8}), hp::Error);
    EXPECT_THROW(hp::voxelize(cube, g, {.max_layers = -1}), hp::Error);
    hp::GridSpec huge = g;
    huge.dims = {40000, 1, 1};
    EXPECT_THROW(hp::voxelize(cube, huge, {}), hp::Error);
}

// The peg's top cap (z = 30 mm) lies exactly on a voxel boundary at 0.5 mm voxels: both voxels
// touching it are surface voxels (closed boxes), so inside and outside never meet without a
// surface voxel between them. Checked over every pair of 26-neighbours.
TEST(Voxelize, FacesOnVoxelBoundariesStillMakeSurfaceVoxels) {
    hp::MeshLoadOptions mm;
    mm.units = "mm";
    hp::LoadedMesh m = hp::load_mesh(std::filesystem::path(HP_SOURCE_DIR) / "sample_meshes" / "peg.stl", mm);
    const hp::GridSpec g = hp::grid_around(m.diagnostics.bbox, 0.0005, 2);
    const hp::LayerMap map = hp::voxelize(m.mesh, g, {});
    std::size_t touching = 0;
    for (int k = 0; k + 1 < g.dims[2]; ++k)
        for (int j = 0; j + 1 < g.dims[1]; ++j)
            for (int i = 0; i + 1 < g.dims[0]; ++i) {
                const int a = map.at(i, j, k);
                for (int dk = 0; dk <= 1; ++dk)
                    for (int dj = 0; dj <= 1; ++dj)
                        for (int di = 0; di <= 1; ++di) {
                            const int b = map.at(i + di, j + dj, k + dk);
                            if ((a > 0 && b < 0) || (a < 0 && b > 0)) ++touching;
                        }
            }
    EXPECT_EQ(touching, 0u);
}
