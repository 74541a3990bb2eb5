#include "core/clock.hpp"
#include "distance/distance.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <type_traits>

#include <sys/mman.h>
#include <unistd.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/cpu.hpp"
#include "core/error.hpp"
#include "core/pipelined.hpp"
#include "distance/brick_nearest.hpp"
#include "geometry/bvh.hpp"
#include "geometry/closest_point4.hpp"

namespace hp {

// closest_points_on_triangles4's vectors never cross a call (it is inlined into row_closest's clones).
#pragma GCC diagnostic ignored "-Wpsabi"

namespace {
constexpr int kMaxPasses = 6;  // raster passes at most (they stop earlier when nothing changes)

// Closest-point propagation state. Per voxel: the triangle it holds and its own closest point on
// that triangle (float, in voxel units relative to the grid origin: voxel (i, j, k) has its centre
// at (i + 0.5, j + 0.5, k + 0.5)). Its distance is the exact distance from its centre to that
// triangle (computed again where needed, not stored; infinity while the voxel holds none). Band
// voxels (|layer| <= band) hold their exact closest point and never change. 16 bytes per voxel:
// the triangle shares its word with the voxel's layer class (DenseCells), so no layer is read.
struct Prop {
    const PreparedTriangle* tris;  // the mesh's triangles, prepared for closest-point queries
    const GridSpec* grid;
    double inv_s;
    double reach;  // 1 + the largest |origin| coordinate in voxels (the rounding of the points' shift)
    std::size_t nx, ny, nz;
    // In pages mapped at once (MappedPages): the points (px, py, pz one after the other) and the
    // cells (DenseCells: each voxel's class and triangle).
    float *px, *py, *pz;
    std::uint32_t* cells;
    bool visit_every_voxel;
    int layer(std::size_t v) const { return DenseCells::layer_sign(cells[v]); }
    bool fixed(std::size_t v) const { return (cells[v] & DenseCells::kFixed) != 0; }
    std::uint32_t tri(std::size_t v) const { return cells[v] & DenseCells::kTriangle; }
    void hold(std::size_t v, std::uint32_t t) { cells[v] = (cells[v] & ~DenseCells::kTriangle) | t; }
    // The closest point on triangle t to x (x the centre of the voxel holding it).
    ClosestPoint closest(const Vec3d& x, std::uint32_t t) const { return closest_point_on_triangle(x, tris[t]); }
    // Whether d (world units) is below the distance from x, the centre of voxel v = (i, j, k), to
    // the triangle v holds (infinity while it holds none). Its stored closest point, rounded to
    // float (at most 2^-24 of each coordinate in voxel units), decides unless d lies within a
    // margin 16 times that rounding of the point's distance; there the exact distance does.
    bool beats_own(const Vec3d& x, std::size_t v, int i, int j, int k, double d) const {
        if (tri(v) == DenseCells::kNone) return d < INFINITY;
        const double dx = i + 0.5 - px[v], dy = j + 0.5 - py[v], dz = k + 0.5 - pz[v];
        const double near = std::sqrt(dx * dx + dy * dy + dz * dz) / inv_s;
        const double margin = (std::abs(px[v]) + std::abs(py[v]) + std::abs(pz[v]) + reach) * 1e-6 / inv_s;
        if (d < near - margin) return true;
        if (d > near + margin) return false;
        return d < std::sqrt(closest(x, tri(v)).distance2);
    }
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
        const float* px = s.px + src;
        const float* py = s.py + src;
        const float* pz = s.pz + src;
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
            if (f == UINT32_MAX || s.tri(f) == s.tri(v)) continue;
            const Vec3d x = s.grid->center(i, j, k);
            const ClosestPoint cp = s.closest(x, s.tri(f));
            const double d = std::sqrt(cp.distance2);
            if (s.beats_own(x, v, i, j, k, d)) {
                const Vec3d q = (cp.point - s.grid->origin) * s.inv_s;
                s.px[v] = static_cast<float>(q.x), s.py[v] = static_cast<float>(q.y), s.pz[v] = static_cast<float>(q.z);
                s.hold(v, s.tri(f));
                changed |= std::uint64_t{1} << c;
                carry = true;
            }
        }
    }
    cur[r] = changed;
    return changed != 0;
}

// One raster pass, pipelined over slices (SlicePipeline): row r of a slice starts once the previous
// slice has finished rows up to r + 1 (the rows its voxels read). Every voxel therefore sees exactly
// the values the sequential pass would give it: the result is the same for any number of threads.
bool propagate_pass(Prop& s, int dir, int pass, ChangeMasks& cm, int threads, std::size_t& visits) {
    const int ny = static_cast<int>(s.ny), nz = static_cast<int>(s.nz);
    threads = pipeline_lanes(threads, nz, s.nx * s.ny * s.nz);
    struct alignas(64) Lane {  // a cache line of its own: `visits` counts every voxel's visit
        bool any = false;
        std::size_t visits = 0;
        std::vector<float> best;
        std::vector<std::uint32_t> from;
    };
    std::vector<Lane> lanes(static_cast<std::size_t>(threads));
    SlicePipeline pipeline(nz, ny);
    pipeline.run(threads, [&](int kk, int t, const SlicePipeline::Gate& gate) {
        Lane& l = lanes[static_cast<std::size_t>(t)];
        const int k = dir > 0 ? kk : nz - 1 - kk;
        for (int jj = 0; jj < ny; ++jj) {
            gate.before_row(jj);
            l.any |= propagate_row(s, dir, pass, dir > 0 ? jj : ny - 1 - jj, k, cm, l.best, l.from, l.visits);
            gate.after_row(jj);
        }
    });
    bool changed = false;
    for (const Lane& l : lanes) {
        changed |= l.any;
        visits += l.visits;
    }
    return changed;
}
// cp[i] for the voxels i of row (j, k): the closest point on the triangle the voxel holds, four
// voxels at a time (closest_points_on_triangles4: the same bits as closest_point_on_triangle; an
// AVX2 clone, chosen at run time, computes the four at once).
__attribute__((target_clones("avx2", "default"))) void row_closest(const Prop& s, int j, int k, ClosestPoint* cp) {
    const int nx = static_cast<int>(s.nx);
    const std::size_t row = (static_cast<std::size_t>(k) * s.ny + static_cast<std::size_t>(j)) * s.nx;
    Vec3d x[4];
    const Vec3d* xs[4] = {&x[0], &x[1], &x[2], &x[3]};
    const PreparedTriangle* ts[4];
    ClosestPoint four[4];
    for (int i0 = 0; i0 < nx; i0 += 4) {
        for (int l = 0; l < 4; ++l) {
            const int i = std::min(i0 + l, nx - 1);  // beyond the row's end: its last voxel again
            x[l] = s.grid->center(i, j, k);
            ts[l] = &s.tris[s.tri(row + static_cast<std::size_t>(i))];
        }
        closest_points_on_triangles4(xs, ts, four);
        for (int l = 0; l < 4 && i0 + l < nx; ++l) cp[i0 + l] = four[l];
    }
}

// Every voxel's value (and gradient) from the triangle it holds, written once into `values`: the
// exact distance from its centre to that triangle (the one the band or the propagation computed,
// with the same operations), signed by its layer, on the surface by the pseudo-normal at the
// closest point; a voxel no band reached takes the BVH query's nearest triangle. `values` may be
// the pages of the points (no longer read). Sets run.min and run.max.
template <class V>
void sign_values(Prop& s, const TriangleBvh& bvh, const NearestSign& signs, V* values, float* gradient, DistanceRun& run) {
    const GridSpec& grid = *s.grid;
    const std::size_t nx = s.nx, ny = s.ny, nz = s.nz;
    std::vector<double> lo(nz, 0.0), hi(nz, 0.0);  // per slice, merged in order below
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nz), [&](const tbb::blocked_range<std::size_t>& r) {
        std::vector<ClosestPoint> cp(nx);
        std::vector<double> queried(nx);  // distances of the voxels that took a BVH query, else -1
        for (std::size_t k = r.begin(); k != r.end(); ++k) {
            double l = 0, h = 0;
            for (std::size_t j = 0; j < ny; ++j) {
                const std::size_t row = (k * ny + j) * nx;
                for (std::size_t i = 0; i < nx; ++i) {
                    queried[i] = -1;
                    if (s.tri(row + i) != DenseCells::kNone) continue;
                    // No band voxel anywhere: an exact query.
                    const MeshHit hit = bvh.closest(grid.center(static_cast<int>(i), static_cast<int>(j), static_cast<int>(k)));
                    s.hold(row + i, hit.triangle);
                    queried[i] = std::sqrt(hit.closest.distance2);
                }
                row_closest(s, static_cast<int>(j), static_cast<int>(k), cp.data());
                for (std::size_t i = 0; i < nx; ++i) {
                    const std::size_t v = row + i;
                    const Vec3d c = grid.center(static_cast<int>(i), static_cast<int>(j), static_cast<int>(k));
                    const double d = queried[i] >= 0 ? queried[i] : std::sqrt(cp[i].distance2);
                    const double sign = signs(s.layer(v), s.tri(v), cp[i], c);
                    const double value = sign * d;
                    values[v] = static_cast<V>(value);
                    l = std::min(l, value), h = std::max(h, value);
                    if (!gradient) continue;
                    // Outside (sign -1): towards the surface; inside: away from it. Both increase V.
                    const Vec3d g = signs.gradient(sign, d, grid.voxel_size, s.tri(v), cp[i], c);
                    gradient[3 * v] = static_cast<float>(g.x);
                    gradient[3 * v + 1] = static_cast<float>(g.y);
                    gradient[3 * v + 2] = static_cast<float>(g.z);
                }
            }
            lo[k] = l, hi[k] = h;
        }
    });
    for (std::size_t k = 0; k < nz; ++k) run.min = std::min(run.min, lo[k]), run.max = std::max(run.max, hi[k]);
}

}  // namespace

// MAP_POPULATE: the kernel maps every page in one call, several times faster than the page faults
// of touching them (on all threads or not).
MappedPages::MappedPages(std::size_t bytes) : bytes_(bytes) {
    if (!bytes) return;
    data_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (data_ == MAP_FAILED) data_ = nullptr, bytes_ = 0, throw std::bad_alloc();
}

MappedPages& MappedPages::operator=(MappedPages&& o) noexcept {
    if (this != &o) {
        reset();
        data_ = o.data_, bytes_ = o.bytes_;
        o.data_ = nullptr, o.bytes_ = 0;
    }
    return *this;
}

void MappedPages::shrink(std::size_t bytes) {
    static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t keep = (bytes + page - 1) / page * page;
    if (!data_ || keep >= bytes_) return;
    ::munmap(static_cast<char*>(data_) + keep, bytes_ - keep);
    bytes_ = keep;
    if (keep == 0) data_ = nullptr;
}

void MappedPages::reset() {
    if (data_) ::munmap(data_, bytes_);
    data_ = nullptr, bytes_ = 0;
}

template <class V>
DenseDistance<V> compute_distance_as(const TriMesh& mesh, const GridSpec& grid, DenseCells&& cells, float* gradient,
                                     const DistanceOptions& options, const Progress& progress) {
    if (mesh.triangles.empty()) fail_input("", "the mesh has no triangles");
    if (mesh.triangles.size() >= DenseCells::kNone)
        fail_input("", "the mesh has more than " + std::to_string(DenseCells::kNone - 1) +
                           " triangles, more than the dense field indexes");
    const std::size_t n = grid.count();
    const std::size_t nx = static_cast<std::size_t>(grid.dims[0]), ny = static_cast<std::size_t>(grid.dims[1]),
                      nz = static_cast<std::size_t>(grid.dims[2]);
    auto t0 = Clock::now();
    DenseDistance<V> out;
    const double vs = grid.voxel_size;
    // The points, then the values (V at most 8 of the points' 12 bytes per voxel), in pages mapped
    // at once, zero; the cells are the caller's, freed on return.
    out.pages = MappedPages(3 * n * sizeof(float));
    const DenseCells held = std::move(cells);
    float* points = static_cast<float*>(out.pages.data());
    const double reach = 1 + std::max({std::abs(grid.origin.x), std::abs(grid.origin.y), std::abs(grid.origin.z)}) / vs;
    std::vector<PreparedTriangle> tris(mesh.triangles.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tris.size(), 4096), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t t = r.begin(); t != r.end(); ++t) {
            const auto& f = mesh.triangles[t];
            tris[t] = prepare_triangle(mesh.vertices[f[0]], mesh.vertices[f[1]], mesh.vertices[f[2]]);
        }
    });
    Prop ps{tris.data(), &grid, 1 / vs, reach, nx, ny, nz, points, points + n, points + 2 * n, held.data(),
            options.visit_every_voxel};
    // Far from everything (voxels not reached yet, no triangle): a point that loses to any real
    // one (its y and z stay 0).
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, std::size_t{1} << 16), [&](const tbb::blocked_range<std::size_t>& r) {
        std::fill(ps.px + r.begin(), ps.px + r.end(), 1e30f);
    });

    TriangleBvh bvh(mesh);
    const NearestSign signs(mesh);
    out.seconds_prepare = seconds_since(t0);

    // Exact band, brick by brick (distance/brick_nearest.hpp), parallel over 8^3 bricks; ties
    // between equidistant triangles resolve as the BVH query's would. A band voxel keeps its
    // closest point and triangle; its distance is the centre's to that triangle, the same bits
    // (BrickNearest takes the minimum of the same point-triangle distances).
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
                        if (ps.fixed(at(dx, dy, dz))) nearest.add(dx, dy, dz);
            for (const BrickNearest::Hit& hit : nearest.run()) {
                const int dx = hit.offset & 7, dy = (hit.offset >> 3) & 7, dz = hit.offset >> 6;
                const std::size_t v = at(dx, dy, dz);
                const Vec3d u = (hit.closest.point - grid.origin) * (1 / vs);
                ps.px[v] = static_cast<float>(u.x), ps.py[v] = static_cast<float>(u.y), ps.pz[v] = static_cast<float>(u.z);
                ps.hold(v, bvh.triangle_at(hit.slot));
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
    const int threads = worker_threads();
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
    out.seconds_propagate = seconds_since(t0);
    progress.report("distance", 0.9);

    t0 = Clock::now();
    sign_values(ps, bvh, signs, static_cast<V*>(out.pages.data()), options.gradient ? gradient : nullptr, out);
    out.pages.shrink(n * sizeof(V));
    out.seconds_sign = seconds_since(t0);
    progress.report("distance", 1.0);
    return out;
}

template <class V, class L>
DenseDistance<V> compute_distance_as(const TriMesh& mesh, const GridSpec& grid, const L* layers, float* gradient,
                                     const DistanceOptions& options, const Progress& progress) {
    static_assert(std::is_same_v<L, std::int16_t> || std::is_same_v<L, std::int32_t>);
    const std::size_t n = grid.count();
    const int band = dense_exact_band(options);
    DenseCells cells(n);
    std::uint32_t* c = cells.data();
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, std::size_t{1} << 16), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t v = r.begin(); v != r.end(); ++v) c[v] = DenseCells::of(layers[v], band);
    });
    return compute_distance_as<V>(mesh, grid, std::move(cells), gradient, options, progress);
}

template DenseDistance<float> compute_distance_as(const TriMesh&, const GridSpec&, DenseCells&&, float*,
                                                  const DistanceOptions&, const Progress&);
template DenseDistance<double> compute_distance_as(const TriMesh&, const GridSpec&, DenseCells&&, float*,
                                                   const DistanceOptions&, const Progress&);
#define HP_DISTANCE_AS(V, L)                                                                                          \
    template DenseDistance<V> compute_distance_as(const TriMesh&, const GridSpec&, const L*, float*, const DistanceOptions&, \
                                                  const Progress&);
HP_DISTANCE_AS(float, std::int16_t)
HP_DISTANCE_AS(double, std::int16_t)
HP_DISTANCE_AS(float, std::int32_t)
HP_DISTANCE_AS(double, std::int32_t)
#undef HP_DISTANCE_AS

DistanceField compute_distance(const TriMesh& mesh, const GridSpec& grid, const std::vector<std::int32_t>& layers,
                               const DistanceOptions& options, const Progress& progress) {
    if (layers.size() != grid.count()) fail_input("", "the voxelmap's layer count does not match its grid");
    DistanceField out;
    out.grid = grid;
    if (options.gradient) out.gradient.resize(3 * grid.count());
    DenseDistance<double> d = compute_distance_as<double>(mesh, grid, layers.data(), out.gradient.data(), options, progress);
    out.values.assign(d.values(), d.values() + grid.count());
    static_cast<DistanceRun&>(out) = d;
    return out;
}

}  // namespace hp
