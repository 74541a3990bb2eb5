#include "core/clock.hpp"
#include "distance/distance.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <chrono>
#include <cmath>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "distance/brick_nearest.hpp"
#include "geometry/bvh.hpp"

namespace hp {

namespace {
constexpr int kMaxPasses = 6;  // raster passes at most (they stop earlier when nothing changes)

// Closest-point propagation state. Per voxel: the triangle it holds, its own closest point on
// that triangle (float, in voxel units relative to the grid origin: voxel (i, j, k) has its centre
// at (i + 0.5, j + 0.5, k + 0.5)), and in `dist` (the output array) the exact distance to it in
// world units (double; infinity while the voxel holds none). Band voxels (|layer| <= band) hold
// their exact closest point and never change. 16 bytes per voxel besides the output and layers.
struct Prop {
    const TriMesh* mesh;
    const GridSpec* grid;
    double inv_s;
    std::size_t nx, ny, nz;
    const std::int32_t* layers;
    int band;
    double* dist;
    // Large arrays faulted in on all threads (core/memory.hpp): a quarter of the run's page faults.
    std::vector<float, LargeArrayAllocator<float>> px, py, pz;
    std::vector<std::uint32_t, LargeArrayAllocator<std::uint32_t>> tri;
    bool visit_every_voxel;
    bool fixed(std::size_t v) const { return std::abs(layers[v]) <= band; }
};

// Which parts of each row changed in a pass: per row a mask of up to 64 chunks of `width` voxels
// (bit c: some voxel in [c * width, (c + 1) * width) took another triangle). Two passes are kept:
// the one running and the one before.
struct ChangeMasks {
    int width = 1, chunks = 1;
    std::uint64_t all = 1;
    std::vector<std::uint64_t> pass[2];  // by pass parity, row (k * ny + j)
};

// Rows read before the direction (dy, dz): (-1, 0), (-1, -1), (0, -1), (1, -1).
constexpr int kRows[4][2] = {{-1, 0}, {-1, -1}, {0, -1}, {1, -1}};

// best[i], from[i] for i in [x0, x1): the nearest of the points held by voxel i's 12 neighbours in
// the earlier rows (ties: the first in the order of kRows, then x - 1, x, x + 1). Each voxel's
// result depends only on the other rows, never on the range it is computed in. An AVX2 clone,
// chosen at run time, ranks 8 voxels at a time; AVX2 without FMA keeps every float operation as it
// is, so the results are the same.
__attribute__((target_clones("avx2", "default"))) void rank_neighbours(const Prop& s, int dir, int j, int k, int x0,
                                                                        int x1, float* __restrict bp,
                                                                        std::uint32_t* __restrict fp) {
    const int nx = static_cast<int>(s.nx), ny = static_cast<int>(s.ny), nz = static_cast<int>(s.nz);
    const float cy = static_cast<float>(j) + 0.5f, cz = static_cast<float>(k) + 0.5f;
    std::fill(bp + x0, bp + x1, INFINITY);
    std::fill(fp + x0, fp + x1, UINT32_MAX);
    for (const auto& rr : kRows) {
        const int jj = j + dir * rr[0], kk = k + dir * rr[1];
        if (jj < 0 || jj >= ny || kk < 0 || kk >= nz) continue;
        const std::size_t src = (static_cast<std::size_t>(kk) * s.ny + static_cast<std::size_t>(jj)) * s.nx;
        const float* px = s.px.data() + src;
        const float* py = s.py.data() + src;
        const float* pz = s.pz.data() + src;
        for (int a = -1; a <= 1; ++a) {
            const int i0 = std::max(x0, -a), i1 = std::min(x1, nx - a);
            const std::uint32_t base = static_cast<std::uint32_t>(static_cast<std::ptrdiff_t>(src) + a);
            const float* __restrict qx = px + a;
            const float* __restrict qy = py + a;
            const float* __restrict qz = pz + a;
            // Branch free, so that it vectorizes.
            for (int i = i0; i < i1; ++i) {
                const float dx = static_cast<float>(i) + 0.5f - qx[i], dy = cy - qy[i], dz = cz - qz[i];
                const float e = dx * dx + dy * dy + dz * dz;
                const float b = bp[i];
                const std::uint32_t m = 0u - static_cast<std::uint32_t>(e < b);
                bp[i] = e < b ? e : b;
                fp[i] = (fp[i] & ~m) | ((base + static_cast<std::uint32_t>(i)) & m);
            }
        }
    }
}

// One row (j, k) of raster pass `pass` (dir +1: forward, -1: backward): every voxel outside the
// band looks at the closest points held by its 13 neighbours that precede it in the pass order; the
// nearest of them (ties: the first in a fixed order) names a candidate triangle, which the voxel
// takes when its exact distance to that triangle is smaller than to its own. The 12 neighbours
// in earlier rows are read first (their values are final for this pass), the one in this row
// last. A voxel that takes a triangle stores its own closest point on it, so that the points its
// neighbours compare are always their distances' witnesses, never a band voxel's point.
//
// From the third pass on, a voxel is visited only when one of its 13 neighbours changed since its
// visit in the pass before the last (the same direction, the same neighbours): in the last pass, or
// in this one before it. Otherwise the visit cannot change it: the same neighbours name the same
// candidate, whose distance did not beat the voxel's own then (or is the voxel's own triangle's, or
// lost to the one the voxel took since), and the voxel's distance only decreased. Changes are
// tracked by chunks of the row (ChangeMasks), widened by one chunk for the x +-1 neighbours; within
// the row a change carries on to the next voxel. The result is exactly that of visiting every voxel.
bool propagate_row(Prop& s, int dir, int pass, int j, int k, ChangeMasks& cm, std::vector<float>& best,
                   std::vector<std::uint32_t>& from, std::size_t& visits) {
    const int nx = static_cast<int>(s.nx), ny = static_cast<int>(s.ny), nz = static_cast<int>(s.nz);
    const std::size_t r = static_cast<std::size_t>(k) * s.ny + static_cast<std::size_t>(j);
    const std::size_t row = r * s.nx;
    std::uint64_t* cur = cm.pass[pass & 1].data();
    const std::uint64_t* prev = cm.pass[(pass + 1) & 1].data();
    std::uint64_t dirty = cm.all;
    if (pass >= 2 && !s.visit_every_voxel) {
        dirty = 0;
        auto widen = [&dirty](std::uint64_t m) { dirty |= m | (m << 1) | (m >> 1); };
        for (const auto& rr : kRows) {
            const int jj = j + dir * rr[0], kk = k + dir * rr[1];
            if (jj < 0 || jj >= ny || kk < 0 || kk >= nz) continue;
            const std::size_t q = static_cast<std::size_t>(kk) * s.ny + static_cast<std::size_t>(jj);
            widen(prev[q] | cur[q]);
        }
        widen(prev[r]);
        dirty &= cm.all;
    }
    if (!dirty) {
        cur[r] = 0;
        return false;
    }
    best.resize(s.nx);
    from.resize(s.nx);
    const int w = cm.width;
    for (int c = 0; c < cm.chunks;) {  // runs of dirty chunks, each ranked at once
        if (!((dirty >> c) & 1)) {
            ++c;
            continue;
        }
        int e = c;
        while (e < cm.chunks && ((dirty >> e) & 1)) ++e;
        rank_neighbours(s, dir, j, k, c * w, std::min(nx, e * w), best.data(), from.data());
        c = e;
    }
    std::uint64_t ranked = dirty;
    const float cy = static_cast<float>(j) + 0.5f, cz = static_cast<float>(k) + 0.5f;
    const TriMesh& mesh = *s.mesh;
    std::uint64_t changed = 0;
    bool carry = false;  // the voxel before in this row changed in this pass
    for (int cc = 0; cc < cm.chunks; ++cc) {  // chunks in pass order
        const int c = dir > 0 ? cc : cm.chunks - 1 - cc;
        const bool dirty_c = (dirty >> c) & 1;
        if (!dirty_c && !carry) continue;
        const int lo = c * w, hi = std::min(nx, lo + w);
        if (!((ranked >> c) & 1)) {
            rank_neighbours(s, dir, j, k, lo, hi, best.data(), from.data());
            ranked |= std::uint64_t{1} << c;
        }
        for (int n = 0; n < hi - lo; ++n) {
            if (!dirty_c && !carry) break;  // a clean chunk: only while a change carries on
            carry = false;
            const int i = dir > 0 ? lo + n : hi - 1 - n;
            const std::size_t v = row + static_cast<std::size_t>(i);
            if (s.fixed(v)) continue;
            ++visits;
            float b = best[static_cast<std::size_t>(i)];
            std::size_t f = from[static_cast<std::size_t>(i)];
            if (i != (dir > 0 ? 0 : nx - 1)) {  // the neighbour before in this row, final already
                const std::size_t u = v - static_cast<std::size_t>(dir);
                const float dx = static_cast<float>(i) + 0.5f - s.px[u], dy = cy - s.py[u], dz = cz - s.pz[u];
                const float e = dx * dx + dy * dy + dz * dz;
                if (e < b) b = e, f = u;
            }
            // The point's distance only bounds the distance to its triangle from above (the point
            // is the neighbour's closest, not this voxel's): the candidate is tested exactly.
            if (f == UINT32_MAX || s.tri[f] == s.tri[v]) continue;
            const auto& t = mesh.triangles[s.tri[f]];
            const Vec3d x = s.grid->center(i, j, k);
            const ClosestPoint cp = closest_point_on_triangle(x, mesh.vertices[t[0]], mesh.vertices[t[1]], mesh.vertices[t[2]]);
            const double d = std::sqrt(cp.distance2);
            if (d < s.dist[v]) {
                s.dist[v] = d;
                const Vec3d q = (cp.point - s.grid->origin) * s.inv_s;
                s.px[v] = static_cast<float>(q.x), s.py[v] = static_cast<float>(q.y), s.pz[v] = static_cast<float>(q.z);
                s.tri[v] = s.tri[f];
                changed |= std::uint64_t{1} << c;
                carry = true;
            }
        }
    }
    cur[r] = changed;
    return changed != 0;
}

// One raster pass, pipelined over slices: thread t takes slices t, t + T, t + 2T, ... in pass
// order, and starts row r of its slice once the previous slice has finished rows up to r + 1
// (the rows its voxels read). Every voxel therefore sees exactly the values the sequential pass
// would give it: the result is the same for any number of threads.
bool propagate_pass(Prop& s, int dir, int pass, ChangeMasks& cm, int threads, std::size_t& visits) {
    const int ny = static_cast<int>(s.ny), nz = static_cast<int>(s.nz);
    threads = std::clamp(threads, 1, nz);
    std::vector<std::atomic<int>> rows_done(s.nz);
    for (auto& r : rows_done) r.store(0, std::memory_order_relaxed);
    std::atomic<bool> changed{false};
    std::atomic<std::size_t> visited{0};
    auto work = [&](int t) {
        bool any = false;
        std::size_t n = 0;
        std::vector<float> best;
        std::vector<std::uint32_t> from;
        for (int kk = t; kk < nz; kk += threads) {
            const int k = dir > 0 ? kk : nz - 1 - kk;
            for (int jj = 0; jj < ny; ++jj) {
                if (kk > 0) {
                    const int need = std::min(jj + 2, ny);
                    for (int seen = rows_done[kk - 1].load(std::memory_order_acquire); seen < need;
                         seen = rows_done[kk - 1].load(std::memory_order_acquire))
                        rows_done[kk - 1].wait(seen, std::memory_order_acquire);
                }
                any |= propagate_row(s, dir, pass, dir > 0 ? jj : ny - 1 - jj, k, cm, best, from, n);
                rows_done[kk].store(jj + 1, std::memory_order_release);
                rows_done[kk].notify_all();
            }
        }
        if (any) changed = true;
        visited.fetch_add(n, std::memory_order_relaxed);
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
    visits += visited.load();
    return changed;
}
}  // namespace

DistanceField compute_distance(const TriMesh& mesh, const GridSpec& grid, const std::vector<std::int32_t>& layers,
                               const DistanceOptions& options, const Progress& progress) {
    if (layers.size() != grid.count()) fail_input("", "the voxelmap's layer count does not match its grid");
    if (mesh.triangles.empty()) fail_input("", "the mesh has no triangles");
    const std::size_t n = grid.count();
    const std::size_t nx = static_cast<std::size_t>(grid.dims[0]), ny = static_cast<std::size_t>(grid.dims[1]),
                      nz = static_cast<std::size_t>(grid.dims[2]);
    auto t0 = Clock::now();
    DistanceField out;
    out.grid = grid;
    const int band = std::max(default_exact_layers(options.connectivity), options.exact_layers);
    const double vs = grid.voxel_size;
    // Unsigned distances (infinity: no triangle yet), except surface voxels, signed at once.
    out.values.assign(n, INFINITY);
    // Far from everything (voxels not reached yet): a point that loses to any real one.
    Prop ps{&mesh, &grid, 1 / vs, nx, ny, nz, layers.data(), band, out.values.data(), decltype(Prop::px)(n, 1e30f),
            decltype(Prop::py)(n), decltype(Prop::pz)(n), decltype(Prop::tri)(n, UINT32_MAX), options.visit_every_voxel};

    TriangleBvh bvh(mesh);
    const NearestSign signs(mesh);
    out.seconds_prepare = seconds_since(t0);

    // Exact band, brick by brick (distance/brick_nearest.hpp), parallel over 8^3 bricks; ties
    // between equidistant triangles resolve as the BVH query's would.
    t0 = Clock::now();
    const NearestIndex index(bvh, grid, true);
    const std::size_t bx = (nx + kBrickDim - 1) / kBrickDim, by = (ny + kBrickDim - 1) / kBrickDim,
                      bz = (nz + kBrickDim - 1) / kBrickDim;
    std::atomic<std::size_t> exact{0};
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bx * by * bz, 16), [&](const tbb::blocked_range<std::size_t>& r) {
        BrickNearest nearest(index);
        std::size_t count = 0;
        for (std::size_t b = r.begin(); b != r.end(); ++b) {
            const int x0 = static_cast<int>(b % bx) * kBrickDim, y0 = static_cast<int>((b / bx) % by) * kBrickDim,
                      z0 = static_cast<int>(b / (bx * by)) * kBrickDim;
            auto at = [&](int dx, int dy, int dz) {
                return (static_cast<std::size_t>(z0 + dz) * ny + static_cast<std::size_t>(y0 + dy)) * nx +
                       static_cast<std::size_t>(x0 + dx);
            };
            const int ex = std::min<int>(kBrickDim, static_cast<int>(nx) - x0), ey = std::min<int>(kBrickDim, static_cast<int>(ny) - y0),
                      ez = std::min<int>(kBrickDim, static_cast<int>(nz) - z0);
            nearest.begin(x0, y0, z0);
            for (int dz = 0; dz < ez; ++dz)
                for (int dy = 0; dy < ey; ++dy)
                    for (int dx = 0; dx < ex; ++dx)
                        if (std::abs(layers[at(dx, dy, dz)]) <= band) nearest.add(dx, dy, dz);
            for (const BrickNearest::Hit& hit : nearest.run()) {
                const int dx = hit.offset & 7, dy = (hit.offset >> 3) & 7, dz = hit.offset >> 6;
                const std::size_t v = at(dx, dy, dz);
                const Vec3d c = grid.center(x0 + dx, y0 + dy, z0 + dz);
                const ClosestPoint& cp = hit.closest;
                const std::uint32_t tri = bvh.triangle_at(hit.slot);
                const Vec3d u = (cp.point - grid.origin) * (1 / vs);
                ps.px[v] = static_cast<float>(u.x), ps.py[v] = static_cast<float>(u.y), ps.pz[v] = static_cast<float>(u.z);
                ps.tri[v] = tri;
                out.values[v] = layers[v] == 0 ? signs(0, tri, cp, c) * hit.distance : hit.distance;
                ++count;
            }
        }
        exact.fetch_add(count, std::memory_order_relaxed);
    });
    out.exact_voxels = exact.load();
    out.seconds_exact = seconds_since(t0);
    progress.report("distance", 0.3);

    // Closest-triangle propagation from the band, each voxel holding the exact distance to its
    // triangle.
    t0 = Clock::now();
    out.propagation_passes = 0;
    const int threads = tbb::this_task_arena::max_concurrency();
    ChangeMasks cm;
    cm.width = static_cast<int>((nx + 63) / 64);
    cm.chunks = static_cast<int>((nx + static_cast<std::size_t>(cm.width) - 1) / static_cast<std::size_t>(cm.width));
    cm.all = cm.chunks == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << cm.chunks) - 1;
    for (auto& m : cm.pass) m.assign(ny * nz, 0);
    for (int pass = 0; pass < kMaxPasses; ++pass) {
        const bool changed = propagate_pass(ps, pass % 2 == 0 ? +1 : -1, pass, cm, threads, out.propagation_visits);
        ++out.propagation_passes;
        progress.report("distance", 0.3 + 0.5 * (pass + 1) / kMaxPasses);
        if (!changed && pass >= 1) break;
    }
    for (auto* v : {&ps.px, &ps.py, &ps.pz}) decltype(Prop::px)().swap(*v);
    out.seconds_propagate = seconds_since(t0);
    progress.report("distance", 0.9);

    t0 = Clock::now();
    if (options.gradient) out.gradient.resize(3 * n);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nz), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t k = r.begin(); k != r.end(); ++k)
            for (std::size_t j = 0; j < ny; ++j)
                for (std::size_t i = 0; i < nx; ++i) {
                    const std::size_t v = (k * ny + j) * nx + i;
                    const int layer = layers[v];
                    const Vec3d c = grid.center(static_cast<int>(i), static_cast<int>(j), static_cast<int>(k));
                    if (ps.tri[v] == UINT32_MAX) {  // no band voxel anywhere: an exact query
                        const MeshHit hit = bvh.closest(c);
                        ps.tri[v] = hit.triangle;
                        out.values[v] = std::sqrt(hit.closest.distance2);
                    }
                    double d = out.values[v];
                    double sign = layer > 0 ? 1.0 : -1.0;
                    if (layer == 0) sign = d < 0 ? -1.0 : 1.0, d = std::abs(d);  // signed in the band already
                    else out.values[v] = sign * d;
                    if (!options.gradient) continue;
                    const auto& f = mesh.triangles[ps.tri[v]];
                    ClosestPoint cp = closest_point_on_triangle(c, mesh.vertices[f[0]], mesh.vertices[f[1]], mesh.vertices[f[2]]);
                    const Vec3d g = signs.gradient(sign, d, vs, ps.tri[v], cp, c);
                    // Outside (sign -1): towards the surface; inside: away from it. Both increase V.
                    out.gradient[3 * v] = static_cast<float>(g.x);
                    out.gradient[3 * v + 1] = static_cast<float>(g.y);
                    out.gradient[3 * v + 2] = static_cast<float>(g.z);
                }
    });
    out.seconds_sign = seconds_since(t0);
    progress.report("distance", 1.0);
    return out;
}

}  // namespace hp
