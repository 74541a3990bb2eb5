// The narrow-band voxelizer (voxel/band.hpp): the layers of the dense voxelizer within B voxels
// of the surface, in bricks of 8^3, with tiles of +-B beyond. Phases, each scaling with the band:
//   1. surface voxels, per triangle (13-axis SAT near its plane, surface.hpp), collected per thread;
//   2. band blocks: every block within B voxels (Chebyshev) of a surface voxel's block gets a
//      brick of working cells (work.hpp's encoding: (distance << 1) | inside, surface 0);
//   3. the inside bit of every brick voxel and of one voxel per tiled block: x-row crossing parity
//      (crossings.cpp, the scanline rule; counts per brick row by one search and a walk), the
//      winding number (inside_by_winding with geometry/winding.hpp's BoundaryWinding) or the
//      dense hybrid's decision (hybrid.hpp; the lattice only at the bricks' cells);
//   4. layers: breadth-first search of depth B from the surface voxels through the bricks, under
//      the dense sweeps' side rule (a step may leave a surface voxel to either side, never cross
//      inside/outside), which gives the same distances as the sweeps of layers.cpp up to B; run
//      level by level on bit masks (8 words of 64 bits per brick);
//   5. bricks whose every voxel reads +B (or -B) become tiles.
// Threads: TBB; the result does not depend on the schedule (the surface marks are idempotent, BFS levels
// computed brick by brick from the previous level only). Method: docs/voxelize.md, "Narrow band".
// voxelize_band at the end reads as these steps: 1, 2 and 5 below, 3 in band_fill.cpp, 4 in
// band_layers.cpp (band_work.hpp declares them).
#include "voxel/band.hpp"

#include <algorithm>
#include <atomic>
#include <array>
#include <cmath>

#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "geometry/sat.hpp"
#include "geometry/bvh.hpp"
#include "voxel/band_work.hpp"
#include "voxel/surface.hpp"
#include "voxel/work.hpp"

namespace hp {

double band_voxel_estimate(double surface_area, double voxel_size, int band) {
    // A surface crosses about area / s^2 * 1.5 voxels (the mean over orientations of the voxel
    // slab thickness is 1.5 s); each band side adds a layer of that size; bricks round up.
    const double surface = 1.5 * surface_area / (voxel_size * voxel_size);
    const double layers = 2.0 * band + 1;
    const double brick_waste = 1.0 + 8.0 / std::max(1, band);
    return surface * layers * brick_waste;
}

namespace {
using voxel_detail::BandCells;
using voxel_detail::block_index;
using voxel_detail::dist;
using voxel_detail::kUnknown;

static_assert(kMaxGridDim < (1 << 21));
std::uint64_t pack_ijk(int i, int j, int k) {
    return static_cast<std::uint64_t>(i) | static_cast<std::uint64_t>(j) << 21 | static_cast<std::uint64_t>(k) << 42;
}
int unpack(std::uint64_t v, int axis) { return static_cast<int>((v >> (21 * axis)) & ((1u << 21) - 1)); }

// Per thread, the surface voxels its triangles overlap (repeats allowed: marking is idempotent),
// as i | j << 21 | k << 42 (kMaxGridDim < 2^21).
using SurfaceLists = std::vector<std::vector<std::uint64_t>>;

void check_band_arguments(const TriMesh& mesh, const GridSpec& grid, const VoxelizeOptions& options, int band) {
    for (int a = 0; a < 3; ++a)
        if (grid.dims[a] < 1 || grid.dims[a] > kMaxGridDim)
            fail_usage("the grid has " + std::to_string(grid.dims[a]) + " voxels along an axis; at most " +
                       std::to_string(kMaxGridDim) + " are supported");
    if (options.connectivity != 26 && options.connectivity != 6) fail_usage("--connectivity must be 26 or 6");
    if (band < 1 || band > 16383) fail_usage("--band must be between 1 and 16383 voxels");
    if (mesh.triangles.empty()) fail_input("", "the mesh has no triangles");
}

FillMethod band_fill_method(const TriMesh& mesh, FillMethod method) {
    if (method == FillMethod::automatic) method = diagnose(mesh).watertight ? FillMethod::scanline : FillMethod::hybrid;
    if (method != FillMethod::scanline && method != FillMethod::winding && method != FillMethod::hybrid)
        fail_usage(std::string("--fill ") + fill_name(method) +
                   " needs the dense grid; with --band use --fill scanline (closed meshes), hybrid or winding (open meshes)");
    return method;
}

// 1. Surface voxels of every triangle.
SurfaceLists surface_voxels(const TriMesh& mesh, const GridSpec& g) {
    tbb::combinable<std::vector<std::uint64_t>> found;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, mesh.triangles.size(), 256), [&](const tbb::blocked_range<std::size_t>& r) {
        std::vector<std::uint64_t>& mine = found.local();
        for (std::size_t t = r.begin(); t != r.end(); ++t) {
            const auto& tri = mesh.triangles[t];
            voxel_detail::for_each_surface_voxel(
                g, mesh.vertices[tri[0]], mesh.vertices[tri[1]], mesh.vertices[tri[2]], [](int, int, int) { return false; },
                [&](int i, int j, int k) { mine.push_back(pack_ijk(i, j, k)); });
        }
    });
    SurfaceLists surface;
    found.combine_each([&](std::vector<std::uint64_t>& v) { surface.push_back(std::move(v)); });
    return surface;
}

// 2a. A brick of unknown cells for every block within `band` voxels of a surface voxel's block.
void allocate_band_bricks(BandCells& w, const SurfaceLists& surface, int band) {
    const auto& bl = w.cells.blocks;
    std::vector<std::uint8_t> surface_block(w.cells.block_count(), 0), in_band(w.cells.block_count(), 0);
    for (const auto& list : surface)
        for (std::uint64_t v : list) surface_block[w.cells.block_of(unpack(v, 0), unpack(v, 1), unpack(v, 2))] = 1;
    for (std::size_t b = 0; b < surface_block.size(); ++b) {
        if (!surface_block[b]) continue;
        const auto c = w.cells.block_coords(b);
        int lo[3], hi[3];
        for (int a = 0; a < 3; ++a) {
            lo[a] = std::max(0, (c[static_cast<std::size_t>(a)] * kBrickDim - band) / kBrickDim);
            hi[a] = std::min(bl[static_cast<std::size_t>(a)] - 1, (c[static_cast<std::size_t>(a)] * kBrickDim + kBrickDim - 1 + band) / kBrickDim);
        }
        for (int z = lo[2]; z <= hi[2]; ++z)
            for (int y = lo[1]; y <= hi[1]; ++y)
                for (int x = lo[0]; x <= hi[0]; ++x) in_band[block_index(bl, x, y, z)] = 1;
    }
    std::uint32_t n = 0;
    for (std::size_t b = 0; b < in_band.size(); ++b)
        if (in_band[b]) w.cells.index[b] = n++;
    w.cells.bricks.assign(static_cast<std::size_t>(n) * kBrickVoxels, kUnknown);
}

// 2b. Surface cells to 0. A thread's list may hold a voxel twice (two of its triangles touch it), and the
// halves of a list run on different workers: relaxed atomic stores of the same 0.
void mark_surface(BandCells& w, const SurfaceLists& surface) {
    for (const auto& list : surface)
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, list.size(), 4096), [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t e = r.begin(); e != r.end(); ++e) {
                const std::uint64_t v = list[e];
                std::atomic_ref<std::uint16_t>(*w.cell(unpack(v, 0), unpack(v, 1), unpack(v, 2))).store(0, std::memory_order_relaxed);
            }
        });
}

// Voxel counts of the grid by side, and the layer range, per worker.
struct LayerCounts {
    std::size_t inside = 0, surface = 0, outside = 0, band = 0;
    int lo = 0, hi = 0;
};

// 5a. Signed, clamped int16 layers of every block, counting the grid's voxels by side.
void signed_layers(const BandCells& w, int band, BandLayerMap& out) {
    const GridSpec& g = w.g;
    const int nx = g.dims[0], ny = g.dims[1], nz = g.dims[2];
    out.layers.reset(g, 0);
    out.layers.index = w.cells.index;
    out.layers.bricks.resize(w.cells.bricks.size());
    const std::size_t blocks = w.cells.block_count();
    tbb::combinable<LayerCounts> counts;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 64), [&](const tbb::blocked_range<std::size_t>& r) {
        LayerCounts& n = counts.local();
        for (std::size_t b = r.begin(); b != r.end(); ++b) {
            const auto c = w.cells.block_coords(b);
            const int x0 = c[0] * kBrickDim, y0 = c[1] * kBrickDim, z0 = c[2] * kBrickDim;
            const std::size_t ex = static_cast<std::size_t>(std::min(kBrickDim, nx - x0)),
                              ey = static_cast<std::size_t>(std::min(kBrickDim, ny - y0)),
                              ez = static_cast<std::size_t>(std::min(kBrickDim, nz - z0));
            const std::uint16_t* src = w.cells.brick(b);
            if (!src) {
                const bool in = w.cells.tile[b] != 0;
                out.layers.tile[b] = static_cast<std::int16_t>(in ? band : -band);
                (in ? n.inside : n.outside) += ex * ey * ez;
                (in ? n.hi : n.lo) = in ? std::max(n.hi, band) : std::min(n.lo, -band);
                continue;
            }
            std::int16_t* dst = out.layers.brick(b);
            if (ex == kBrickDim && ey == kBrickDim && ez == kBrickDim) {
                // A brick inside the grid: one pass the compiler vectorizes, counts per brick.
                int inside = 0, outside = 0, surface = 0, in_band = 0, lo = n.lo, hi = n.hi;
                for (int o = 0; o < kBrickVoxels; ++o) {
                    const std::uint16_t cell = src[o];
                    const int d = std::min<int>(dist(cell), band);
                    const int v = cell & 1 ? d : -d;
                    dst[o] = static_cast<std::int16_t>(v);
                    inside += v > 0, outside += v < 0, surface += v == 0, in_band += d < band;
                    lo = std::min(lo, v), hi = std::max(hi, v);
                }
                n.inside += static_cast<std::size_t>(inside), n.outside += static_cast<std::size_t>(outside);
                n.surface += static_cast<std::size_t>(surface), n.band += static_cast<std::size_t>(in_band);
                n.lo = lo, n.hi = hi;
                continue;
            }
            for (std::size_t dz = 0; dz < kBrickDim; ++dz)
                for (std::size_t dy = 0; dy < kBrickDim; ++dy)
                    for (std::size_t dx = 0; dx < kBrickDim; ++dx) {
                        const std::size_t o = dx | (dy << 3) | (dz << 6);
                        const std::uint16_t cell = src[o];
                        const int d = std::min<int>(dist(cell), band);
                        const int v = cell & 1 ? d : -d;
                        dst[o] = static_cast<std::int16_t>(v);
                        if (dx >= ex || dy >= ey || dz >= ez) continue;  // beyond the grid
                        if (v > 0) ++n.inside;
                        else if (v < 0) ++n.outside;
                        else ++n.surface;
                        if (d < band) ++n.band;
                        n.lo = std::min(n.lo, v), n.hi = std::max(n.hi, v);
                    }
        }
    });
    counts.combine_each([&](const LayerCounts& n) {
        out.inside += n.inside, out.surface += n.surface, out.outside += n.outside, out.band_voxels += n.band;
        out.min_layer = std::min(out.min_layer, n.lo), out.max_layer = std::max(out.max_layer, n.hi);
    });
}

// 5b. Bricks that hold no voxel nearer than the band (every value +B, or every value -B) become
// tiles of that value: the same value on every voxel, no voxels stored.
void tile_uniform_bricks(BrickField<std::int16_t>& f, int band) {
    const std::size_t nb = f.brick_count();
    std::vector<std::int16_t> uniform(nb, 0);  // +-band when the brick is constant at +-band
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 256), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t n = r.begin(); n != r.end(); ++n) {
            const std::int16_t* v = f.bricks.data() + n * kBrickVoxels;
            if (std::abs(v[0]) != band) continue;
            if (std::all_of(v, v + kBrickVoxels, [&](std::int16_t x) { return x == v[0]; })) uniform[n] = v[0];
        }
    });
    std::uint32_t kept = 0;
    for (std::size_t b = 0; b < f.block_count(); ++b) {
        const std::uint32_t n = f.index[b];
        if (n == BrickField<std::int16_t>::kTile) continue;
        if (uniform[n] != 0) {
            f.index[b] = BrickField<std::int16_t>::kTile;
            f.tile[b] = uniform[n];
            continue;
        }
        if (kept != n)
            std::copy_n(f.bricks.begin() + static_cast<std::ptrdiff_t>(n) * kBrickVoxels, kBrickVoxels,
                        f.bricks.begin() + static_cast<std::ptrdiff_t>(kept) * kBrickVoxels);
        f.index[b] = kept++;
    }
    f.bricks.resize(static_cast<std::size_t>(kept) * kBrickVoxels);
    f.release_spare_capacity();
}

}  // namespace

BandLayerMap voxelize_band(const TriMesh& mesh, const GridSpec& grid, const VoxelizeOptions& options, int band,
                           const Progress& progress) {
    check_band_arguments(mesh, grid, options, band);
    const FillMethod method = band_fill_method(mesh, options.fill);
    BandLayerMap out;
    out.band = band;
    out.fill_used = method;

    auto t0 = Clock::now();
    SurfaceLists surface = surface_voxels(mesh, grid);
    out.seconds_surface = seconds_since(t0);
    progress.report("surface", 1.0);

    t0 = Clock::now();
    BandCells w(grid);
    w.cells.reset(grid, 0);
    allocate_band_bricks(w, surface, band);
    mark_surface(w, surface);
    SurfaceLists().swap(surface);
    voxel_detail::fill_band_inside(mesh, w, method);
    out.seconds_fill = seconds_since(t0);
    progress.report("fill", 1.0);

    t0 = Clock::now();
    voxel_detail::grow_band_layers(w, band, options.connectivity, progress);
    signed_layers(w, band, out);
    w.cells = {};
    tile_uniform_bricks(out.layers, band);
    out.seconds_layers = seconds_since(t0);
    return out;
}

}  // namespace hp
