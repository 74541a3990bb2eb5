#include "distance/distance.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <chrono>
#include <cmath>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "core/error.hpp"
#include "geometry/bvh.hpp"
#include "geometry/pseudo_normals.hpp"

namespace hp {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
constexpr int kMaxPasses = 4;  // raster passes at most (they stop earlier when nothing changes)

struct State {
    const TriMesh& mesh;
    const GridSpec& g;
    std::size_t nx, ny, nz, slice;
    std::vector<std::uint32_t> tri;  // closest triangle so far
    std::vector<double> d2;          // its squared distance from the voxel centre
    std::vector<double> dist;        // sqrt(d2), for the triangle-inequality test
    std::vector<signed char> changed_in;  // per voxel: the last pass that changed it (-1: none)
};

// Offsets of the 13 neighbours that precede a voxel in forward raster order (z, y, x ascending).
constexpr int kPrev[13][3] = {{-1, 0, 0},  {-1, -1, 0}, {0, -1, 0},  {1, -1, 0},  {-1, -1, -1},
                              {0, -1, -1}, {1, -1, -1}, {-1, 0, -1}, {0, 0, -1},  {1, 0, -1},
                              {-1, 1, -1}, {0, 1, -1},  {1, 1, -1}};

// One row (j, k) of a raster pass (dir +1: forward, -1: backward): every voxel outside the exact
// band is offered the closest triangles of its 13 neighbours that precede it in this pass's
// order. A candidate equal to the voxel's own triangle or already tried, or one that the
// triangle inequality rules out (d(neighbour) - |step| >= current distance), is not evaluated.
bool raster_row(State& s, const std::vector<char>& fixed, int pass, int dir, int j, int k) {
    const int nx = static_cast<int>(s.nx), ny = static_cast<int>(s.ny), nz = static_cast<int>(s.nz);
    const double h = s.g.voxel_size * (1 + 1e-12);
    const double step_length[4] = {0, h, h * std::sqrt(2.0), h * std::sqrt(3.0)};
    // Neighbours valid for this row (y, z inside the grid), and offsets in memory.
    std::ptrdiff_t offset[13];
    double step[13];
    unsigned row_mask = 0, low_mask = 0, high_mask = 0;  // low/high: valid at i = first/last of the row
    for (int n = 0; n < 13; ++n) {
        const int a = dir * kPrev[n][0], b = dir * kPrev[n][1], c = dir * kPrev[n][2];
        offset[n] = a + static_cast<std::ptrdiff_t>(b) * nx + static_cast<std::ptrdiff_t>(c) * nx * ny;
        step[n] = step_length[std::abs(a) + std::abs(b) + std::abs(c)];
        if (j + b < 0 || j + b >= ny || k + c < 0 || k + c >= nz) continue;
        row_mask |= 1u << n;
        if (a >= 0) low_mask |= 1u << n;   // at i = 0 nothing to the left
        if (a <= 0) high_mask |= 1u << n;  // at i = nx - 1 nothing to the right
    }
    bool changed = false;
    const std::size_t row = (static_cast<std::size_t>(k) * s.ny + static_cast<std::size_t>(j)) * s.nx;
    for (int ii = 0; ii < nx; ++ii) {
        const int i = dir > 0 ? ii : nx - 1 - ii;
        const std::size_t v = row + static_cast<std::size_t>(i);
        if (fixed[v]) continue;
        const unsigned mask = row_mask & (i == 0 ? low_mask : ~0u) & (i == nx - 1 ? high_mask : ~0u);
        std::uint32_t tried[13];
        int ntried = 0;
        for (int n = 0; n < 13; ++n) {
            if (!(mask >> n & 1u)) continue;
            const std::size_t nb = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(v) + offset[n]);
            const std::uint32_t t = s.tri[nb];
            if (t == UINT32_MAX || t == s.tri[v] || std::find(tried, tried + ntried, t) != tried + ntried) continue;
            tried[ntried++] = t;
            // Already offered in the previous pass of this direction (and rejected, or taken:
            // v's distance only decreases since): nb has not changed since then.
            if (pass >= 2 && s.changed_in[nb] <= pass - 2) continue;
            const double lower = s.dist[nb] - step[n];
            if (lower > 0 && lower * lower >= s.d2[v]) continue;
            const Vec3d x = s.g.center(i, j, k);
            const auto& f = s.mesh.triangles[t];
            const ClosestPoint cp =
                closest_point_on_triangle(x, s.mesh.vertices[f[0]], s.mesh.vertices[f[1]], s.mesh.vertices[f[2]]);
            if (cp.distance2 < s.d2[v]) {
                s.d2[v] = cp.distance2;
                s.dist[v] = std::sqrt(cp.distance2);
                s.tri[v] = t;
                s.changed_in[v] = static_cast<signed char>(pass);
                changed = true;
            }
        }
    }
    return changed;
}

// One raster pass, pipelined over slices: thread t takes slices t, t + T, t + 2T, ... in pass
// order, and starts row r of its slice once the previous slice has finished rows up to r + 1
// (the rows its voxels read). Every voxel therefore sees exactly the values the sequential pass
// would give it: the result is the same for any number of threads.
bool raster_pass(State& s, const std::vector<char>& fixed, int pass, int threads) {
    const int dir = pass % 2 == 0 ? +1 : -1;
    const int ny = static_cast<int>(s.ny), nz = static_cast<int>(s.nz);
    threads = std::clamp(threads, 1, nz);
    std::vector<std::atomic<int>> rows_done(s.nz);
    for (auto& r : rows_done) r.store(0, std::memory_order_relaxed);
    std::atomic<bool> changed{false};
    auto work = [&](int t) {
        bool any = false;
        for (int kk = t; kk < nz; kk += threads) {
            const int k = dir > 0 ? kk : nz - 1 - kk;
            for (int jj = 0; jj < ny; ++jj) {
                if (kk > 0) {
                    const int need = std::min(jj + 2, ny);
                    for (int seen = rows_done[kk - 1].load(std::memory_order_acquire); seen < need;
                         seen = rows_done[kk - 1].load(std::memory_order_acquire))
                        rows_done[kk - 1].wait(seen, std::memory_order_acquire);
                }
                any |= raster_row(s, fixed, pass, dir, dir > 0 ? jj : ny - 1 - jj, k);
                rows_done[kk].store(jj + 1, std::memory_order_release);
                rows_done[kk].notify_all();
            }
        }
        if (any) changed = true;
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
    return changed;
}
}  // namespace

DistanceField compute_distance(const TriMesh& mesh, const GridSpec& grid, const std::vector<std::int32_t>& layers,
                               const DistanceOptions& options, const Progress& progress) {
    if (layers.size() != grid.count()) fail_input("", "the voxelmap's layer count does not match its grid");
    if (mesh.triangles.empty()) fail_input("", "the mesh has no triangles");
    const std::size_t n = grid.count();
    State s{mesh, grid, static_cast<std::size_t>(grid.dims[0]), static_cast<std::size_t>(grid.dims[1]),
            static_cast<std::size_t>(grid.dims[2]), static_cast<std::size_t>(grid.dims[0]) * static_cast<std::size_t>(grid.dims[1]),
            std::vector<std::uint32_t>(n, UINT32_MAX), std::vector<double>(n, INFINITY), std::vector<double>(n, INFINITY),
            std::vector<signed char>(n, -1)};
    DistanceField out;
    out.grid = grid;
    const int band = options.connectivity == 6 ? 9 : 3;
    const double vs = grid.voxel_size;

    TriangleBvh bvh(mesh);
    PseudoNormals normals(mesh);
    double volume = 0;
    for (const auto& t : mesh.triangles)
        volume += dot(mesh.vertices[t[0]], cross(mesh.vertices[t[1]], mesh.vertices[t[2]]));
    const double orient = volume < 0 ? -1.0 : 1.0;  // inward-wound meshes: flip the pseudo-normals
    std::vector<signed char> surface_sign(n, 0);

    // Exact band, parallel over z-slices. A voxel at Chebyshev distance L from a surface voxel
    // is within sqrt(3) (L + 1) s of the mesh: that bound prunes the BVH search.
    auto t0 = Clock::now();
    std::vector<std::size_t> band_count(s.nz, 0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, s.nz), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t k = r.begin(); k != r.end(); ++k)
            for (std::size_t j = 0; j < s.ny; ++j) {
                std::uint32_t seed = UINT32_MAX;  // the previous voxel's triangle bounds the search
                for (std::size_t i = 0; i < s.nx; ++i) {
                    const std::size_t v = (k * s.ny + j) * s.nx + i;
                    const int layer = std::abs(layers[v]);
                    if (layer > band) continue;
                    const Vec3d c = grid.center(static_cast<int>(i), static_cast<int>(j), static_cast<int>(k));
                    // (Chebyshev <= Manhattan, so the bound also holds for 6-neighbourhood layers.)
                    const double reach = std::sqrt(3.0) * (layer + 1) * vs;
                    double bound = reach * reach * (1 + 1e-9);
                    if (seed != UINT32_MAX) {
                        const auto& f = mesh.triangles[seed];
                        bound = std::min(bound, closest_point_on_triangle(c, mesh.vertices[f[0]], mesh.vertices[f[1]], mesh.vertices[f[2]]).distance2);
                    }
                    MeshHit hit = bvh.closest(c, bound);
                    if (hit.triangle == UINT32_MAX) hit = bvh.closest(c);  // layers clamped below the true distance
                    seed = hit.triangle;
                    s.tri[v] = hit.triangle;
                    s.d2[v] = hit.closest.distance2;
                    s.dist[v] = std::sqrt(hit.closest.distance2);
                    ++band_count[k];
                    if (layer == 0) {
                        Vec3d nrm = normals.at(hit.triangle, hit.closest) * orient;
                        surface_sign[v] = dot(c - hit.closest.point, nrm) > 0 ? -1 : 1;
                    }
                }
            }
    });
    for (std::size_t c : band_count) out.exact_voxels += c;
    out.seconds_exact = since(t0);
    progress.report("distance", 0.3);

    // Closest-feature propagation: raster passes, forward and backward in turn.
    t0 = Clock::now();
    std::vector<char> fixed(n);
    for (std::size_t v = 0; v < n; ++v) fixed[v] = s.tri[v] != UINT32_MAX;
    // Forward and backward passes until nothing changes (usually 2 to 4 passes).
    const int threads = tbb::this_task_arena::max_concurrency();
    for (int pass = 0; pass < kMaxPasses; ++pass) {
        const bool changed = raster_pass(s, fixed, pass, threads);
        ++out.propagation_passes;
        progress.report("distance", 0.3 + 0.6 * (pass + 1) / kMaxPasses);
        if (!changed && pass >= 1) break;
    }

    out.seconds_propagate = since(t0);

    out.values.resize(n);
    if (options.gradient) out.gradient.resize(3 * n);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, s.nz), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t k = r.begin(); k != r.end(); ++k)
            for (std::size_t j = 0; j < s.ny; ++j)
                for (std::size_t i = 0; i < s.nx; ++i) {
                    const std::size_t v = (k * s.ny + j) * s.nx + i;
                    const int layer = layers[v];
                    const double sign = layer > 0 ? 1.0 : (layer < 0 ? -1.0 : surface_sign[v]);
                    const double d = std::sqrt(s.d2[v]);
                    out.values[v] = sign * d;
                    if (!options.gradient) continue;
                    const Vec3d c = grid.center(static_cast<int>(i), static_cast<int>(j), static_cast<int>(k));
                    const auto& f = mesh.triangles[s.tri[v]];
                    ClosestPoint cp = closest_point_on_triangle(c, mesh.vertices[f[0]], mesh.vertices[f[1]], mesh.vertices[f[2]]);
                    Vec3d g = d > 1e-12 * vs ? (cp.point - c) * (-sign / d) : normals.at(s.tri[v], cp) * (-orient);
                    // Outside (sign -1): towards the surface; inside: away from it. Both increase V.
                    out.gradient[3 * v] = static_cast<float>(g.x);
                    out.gradient[3 * v + 1] = static_cast<float>(g.y);
                    out.gradient[3 * v + 2] = static_cast<float>(g.z);
                }
    });
    progress.report("distance", 1.0);
    return out;
}

}  // namespace hp
