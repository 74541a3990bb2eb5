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
#include "voxel/band.hpp"

#include <algorithm>
#include <atomic>
#include <array>
#include <cmath>
#include <memory>
#include <span>

#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "geometry/sat.hpp"
#include "geometry/bvh.hpp"
#include "geometry/winding.hpp"
#include "voxel/hybrid.hpp"
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
using voxel_detail::dist;
using voxel_detail::kFarDist;
using voxel_detail::kUnknown;

struct Band {
    const GridSpec& g;
    BrickField<std::uint16_t> cells;  // working cells; tiles hold the block's inside bit (0 or 1)
    explicit Band(const GridSpec& grid) : g(grid) {}

    std::uint16_t* cell(int i, int j, int k) {
        std::uint16_t* b = cells.brick(cells.block_of(i, j, k));
        return b ? b + BrickField<std::uint16_t>::offset_in(i, j, k) : nullptr;
    }
};

static_assert(kMaxGridDim < (1 << 21));
std::uint64_t pack_ijk(int i, int j, int k) {
    return static_cast<std::uint64_t>(i) | static_cast<std::uint64_t>(j) << 21 | static_cast<std::uint64_t>(k) << 42;
}
int unpack(std::uint64_t v, int axis) { return static_cast<int>((v >> (21 * axis)) & ((1u << 21) - 1)); }

}  // namespace

BandLayerMap voxelize_band(const TriMesh& mesh, const GridSpec& grid, const VoxelizeOptions& options, int band,
                           const Progress& progress) {
    for (int a = 0; a < 3; ++a)
        if (grid.dims[a] < 1 || grid.dims[a] > kMaxGridDim)
            fail_usage("the grid has " + std::to_string(grid.dims[a]) + " voxels along an axis; at most " +
                       std::to_string(kMaxGridDim) + " are supported");
    if (options.connectivity != 26 && options.connectivity != 6) fail_usage("--connectivity must be 26 or 6");
    if (band < 1 || band > 16383) fail_usage("--band must be between 1 and 16383 voxels");
    if (mesh.triangles.empty()) fail_input("", "the mesh has no triangles");
    FillMethod method = options.fill;
    if (method == FillMethod::automatic) method = diagnose(mesh).watertight ? FillMethod::scanline : FillMethod::hybrid;
    if (method != FillMethod::scanline && method != FillMethod::winding && method != FillMethod::hybrid)
        fail_usage(std::string("--fill ") + fill_name(method) +
                   " needs the dense grid; with --band use --fill scanline (closed meshes), hybrid or winding (open meshes)");

    BandLayerMap out;
    out.band = band;
    out.fill_used = method;
    const GridSpec& g = grid;
    const int nx = g.dims[0], ny = g.dims[1], nz = g.dims[2];
    const double s = g.voxel_size;

    // 1. Surface voxels.
    auto t0 = Clock::now();
    // Per thread, the surface voxels its triangles overlap (repeats allowed: marking is idempotent),
    // as i | j << 21 | k << 42 (kMaxGridDim < 2^21).
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
    std::vector<std::vector<std::uint64_t>> surface;
    found.combine_each([&](std::vector<std::uint64_t>& v) { surface.push_back(std::move(v)); });
    out.seconds_surface = seconds_since(t0);
    progress.report("surface", 1.0);

    // 2. Band blocks and their working bricks.
    t0 = Clock::now();
    Band w(g);
    w.cells.reset(g, 0);
    {
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
                    for (int x = lo[0]; x <= hi[0]; ++x)
                        in_band[(static_cast<std::size_t>(z) * static_cast<std::size_t>(bl[1]) + static_cast<std::size_t>(y)) *
                                    static_cast<std::size_t>(bl[0]) +
                                static_cast<std::size_t>(x)] = 1;
        }
        std::uint32_t n = 0;
        for (std::size_t b = 0; b < in_band.size(); ++b)
            if (in_band[b]) w.cells.index[b] = n++;
        w.cells.bricks.assign(static_cast<std::size_t>(n) * kBrickVoxels, kUnknown);
    }
    // Surface cells to 0. A thread's list may hold a voxel twice (two of its triangles touch it), and the
    // halves of a list run on different workers: relaxed atomic stores of the same 0.
    for (const auto& list : surface)
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, list.size(), 4096), [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t e = r.begin(); e != r.end(); ++e) {
                const std::uint64_t v = list[e];
                std::atomic_ref<std::uint16_t>(*w.cell(unpack(v, 0), unpack(v, 1), unpack(v, 2))).store(0, std::memory_order_relaxed);
            }
        });
    std::vector<std::vector<std::uint64_t>>().swap(surface);

    // 3. Inside bits: every non-surface voxel of the bricks, one voxel per tiled block.
    {
        const bool hybrid = method == FillMethod::hybrid;
        std::vector<voxel_detail::CrossingTable> tables;
        std::unique_ptr<WindingTree> winding;
        std::unique_ptr<BoundaryWinding> exact;
        if (method != FillMethod::winding) tables = voxel_detail::crossing_tables(mesh, g, hybrid ? 3 : 1, hybrid);
        if (method != FillMethod::scanline) winding = std::make_unique<WindingTree>(mesh);
        if (method == FillMethod::winding) exact = std::make_unique<BoundaryWinding>(mesh);
        // hybrid: the dense fill's lattice cells that the bricks lie in (a brick is in one cell).
        std::unique_ptr<voxel_detail::HybridLattice> lattice;
        std::unique_ptr<voxel_detail::SparseHybridLattice> cells;
        auto cell_of = [&](int x0, int y0, int z0) {
            return lattice->cell(lattice->axis[0].cell[static_cast<std::size_t>(x0)], lattice->axis[1].cell[static_cast<std::size_t>(y0)],
                                 lattice->axis[2].cell[static_cast<std::size_t>(z0)]);
        };
        if (hybrid) {
            lattice = std::make_unique<voxel_detail::HybridLattice>(g);
            std::vector<std::size_t> ids;
            ids.reserve(w.cells.brick_count());
            for (std::size_t b = 0; b < w.cells.block_count(); ++b)
                if (w.cells.brick(b)) {
                    const auto c = w.cells.block_coords(b);
                    ids.push_back(cell_of(c[0] * kBrickDim, c[1] * kBrickDim, c[2] * kBrickDim));
                }
            cells = std::make_unique<voxel_detail::SparseHybridLattice>(*lattice, tables, g, winding->fast(), std::move(ids));
        }
        // A tiled block's voxel (scanline, winding: the dense fill's rule; hybrid: the unanimous
        // vote of the three rows, else |w| > 1/2 with the fast winding number).
        auto tile_inside = [&](int i, int j, int k) {
            const std::size_t ijk[3] = {static_cast<std::size_t>(i), static_cast<std::size_t>(j), static_cast<std::size_t>(k)};
            if (method == FillMethod::winding) return inside_by_winding(*winding, *exact, g.center(i, j, k));
            voxel_detail::HybridRows rows;
            for (std::size_t a = 0; a < tables.size(); ++a) {
                const voxel_detail::CrossingTable& t = tables[a];
                const std::size_t u = ijk[(a + 1) % 3], v = ijk[(a + 2) % 3], row = u + t.nu * v;
                rows.count[a] = t.before(u, v, g.origin[static_cast<int>(a)] + (static_cast<double>(ijk[a]) + 0.5) * s, false);
                rows.even[a] = ((t.offsets[row + 1] - t.offsets[row]) & 1) == 0;
            }
            if (!hybrid || voxel_detail::hybrid_unanimous(rows)) return (rows.count[0] & 1) != 0;
            return std::abs((*winding)(g.center(i, j, k))) > 0.5;
        };
        // The rows of a brick along `axis`: per row one binary search, then a walk along it (the
        // count of crossings below each centre, as before() gives it), or, where no crossing lies
        // between the brick's first and last centres (most rows), that count for all of them;
        // with signed counts, also c_a and whether the row's total is even.
        auto brick_counts = [&](const voxel_detail::CrossingTable& t, int axis, const int o0[3], int* count, int* signed_c,
                                std::uint8_t* even) {
            const int u = (axis + 1) % 3, v = (axis + 2) % 3;
            const int stride[3] = {1, kBrickDim, kBrickDim * kBrickDim};
            const int su = stride[u], sv = stride[v], sa = stride[axis];
            const int na = std::min(kBrickDim, g.dims[axis] - o0[axis]);
            double centre[kBrickDim];
            for (int da = 0; da < na; ++da) centre[da] = g.origin[axis] + (static_cast<double>(o0[axis] + da) + 0.5) * s;
            const double* xs = t.xs.data();
            for (int dv = 0; dv < kBrickDim && o0[v] + dv < g.dims[v]; ++dv)
                for (int du = 0; du < kBrickDim && o0[u] + du < g.dims[u]; ++du) {
                    const std::size_t row = static_cast<std::size_t>(o0[u] + du) + t.nu * static_cast<std::size_t>(o0[v] + dv);
                    const double* b = xs + t.offsets[row];
                    const double* e = xs + t.offsets[row + 1];
                    // Most rows hold a few crossings: count those below the first centre without
                    // branches (the same position as std::lower_bound on the sorted row).
                    const double* p;
                    if (e - b <= 8) {
                        std::ptrdiff_t below = 0;
                        for (const double* q = b; q != e; ++q) below += *q < centre[0];
                        p = b + below;
                    } else {
                        p = std::lower_bound(b, e, centre[0]);
                    }
                    const int base = du * su + dv * sv;
                    const std::uint8_t ev = ((e - b) & 1) == 0;
                    auto put = [&](int da) {
                        const int off = base + da * sa;
                        count[off] = static_cast<int>(p - b);
                        if (!signed_c) return;
                        signed_c[off] = p == b ? 0 : t.winding_after[t.offsets[row] + static_cast<std::size_t>(p - b) - 1];
                        even[off] = ev;
                    };
                    if (p == e || *p >= centre[na - 1]) {
                        // No crossing below a later centre that is not below the first.
                        const int off0 = base;
                        put(0);
                        for (int da = 1; da < na; ++da) {
                            const int off = base + da * sa;
                            count[off] = count[off0];
                            if (signed_c) signed_c[off] = signed_c[off0], even[off] = ev;
                        }
                        continue;
                    }
                    put(0);
                    for (int da = 1; da < na; ++da) {
                        while (p < e && *p < centre[da]) ++p;
                        put(da);
                    }
                }
        };
        const std::size_t blocks = w.cells.block_count();
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 64), [&](const tbb::blocked_range<std::size_t>& r) {
            std::vector<int> counts(3 * kBrickVoxels, 0), signed_c(3 * kBrickVoxels, 0);
            std::vector<std::uint8_t> even(3 * kBrickVoxels, 1);
            std::vector<std::uint16_t> pending;  // hybrid: voxels for the fast winding number (offset, unanimous << 9)
            std::array<Vec3d, FastWinding::kPacket> centres;
            std::array<double, FastWinding::kPacket> values;
            voxel_detail::HybridCounts n;
            for (std::size_t b = r.begin(); b != r.end(); ++b) {
                const auto c = w.cells.block_coords(b);
                const int x0 = c[0] * kBrickDim, y0 = c[1] * kBrickDim, z0 = c[2] * kBrickDim;
                std::uint16_t* brick = w.cells.brick(b);
                if (!brick) {
                    w.cells.tile[b] = tile_inside(x0, y0, z0) ? 1 : 0;
                    continue;
                }
                const int o0[3] = {x0, y0, z0};
                for (std::size_t a = 0; a < tables.size(); ++a)
                    brick_counts(tables[a], static_cast<int>(a), o0, counts.data() + a * kBrickVoxels,
                                 hybrid ? signed_c.data() + a * kBrickVoxels : nullptr, even.data() + a * kBrickVoxels);
                const voxel_detail::HybridCell* cell = nullptr;
                voxel_detail::HybridCorners corners;
                if (hybrid) {
                    const std::size_t slot = cells->slot(cell_of(x0, y0, z0));
                    cell = &cells->cells[slot], corners = cells->corners(slot);
                }
                for (int dz = 0; dz < kBrickDim && z0 + dz < nz; ++dz)
                    for (int dy = 0; dy < kBrickDim && y0 + dy < ny; ++dy)
                        for (int dx = 0; dx < kBrickDim && x0 + dx < nx; ++dx) {
                            const std::size_t o = static_cast<std::size_t>(dx | (dy << 3) | (dz << 6));
                            std::uint16_t& cv = brick[o];
                            if (cv == 0) continue;
                            if (method == FillMethod::scanline) {
                                if (counts[o] & 1) cv |= 1;
                                continue;
                            }
                            if (method == FillMethod::winding) {
                                if (inside_by_winding(*winding, *exact, g.center(x0 + dx, y0 + dy, z0 + dz))) cv |= 1;
                                continue;
                            }
                            // hybrid: the dense fill's decision (voxel/hybrid.hpp), the z row from the brick's counts.
                            voxel_detail::HybridRows rows;
                            for (std::size_t a = 0; a < 2; ++a)
                                rows.count[a] = counts[a * kBrickVoxels + o], rows.signed_c[a] = signed_c[a * kBrickVoxels + o],
                                rows.even[a] = even[a * kBrickVoxels + o] != 0;
                            const double t[3] = {lattice->axis[0].t[static_cast<std::size_t>(x0 + dx)], lattice->axis[1].t[static_cast<std::size_t>(y0 + dy)],
                                                 lattice->axis[2].t[static_cast<std::size_t>(z0 + dz)]};
                            bool unanimous = false;
                            const voxel_detail::HybridStep step = voxel_detail::hybrid_voxel(*cell, corners, t, rows, [&](voxel_detail::HybridRows& rw) {
                                rw.count[2] = counts[2 * kBrickVoxels + o], rw.signed_c[2] = signed_c[2 * kBrickVoxels + o],
                                rw.even[2] = even[2 * kBrickVoxels + o] != 0;
                            }, n, unanimous);
                            if (step == voxel_detail::HybridStep::inside) cv |= 1;
                            else if (step == voxel_detail::HybridStep::evaluate)
                                pending.push_back(static_cast<std::uint16_t>(o | (unanimous ? 1u << 9 : 0u)));
                        }
                // The fast winding number at the brick's pending centres, in packets (the same
                // values as one walk per centre).
                for (std::size_t p0 = 0; p0 < pending.size(); p0 += FastWinding::kPacket) {
                    const std::size_t m = std::min(FastWinding::kPacket, pending.size() - p0);
                    for (std::size_t q = 0; q < m; ++q) {
                        const int o = pending[p0 + q] & 511;
                        centres[q] = g.center(x0 + (o & 7), y0 + ((o >> 3) & 7), z0 + (o >> 6));
                    }
                    winding->fast().at_packet(std::span<const Vec3d>(centres.data(), m), std::span<double>(values.data(), m));
                    for (std::size_t q = 0; q < m; ++q) {
                        const std::size_t o = pending[p0 + q] & 511u;
                        if (voxel_detail::hybrid_decide(n, values[q], (pending[p0 + q] >> 9) != 0, (counts[o] & 1) != 0)) brick[o] |= 1;
                    }
                }
                pending.clear();
            }
        });
    }
    out.seconds_fill = seconds_since(t0);
    progress.report("fill", 1.0);

    // 4. Layers: breadth-first, level by level, from the surface voxels, on bit masks: a brick is
    // 8 words of 64 bits (one per z slice, bit x + 8 y). A level dilates the previous level's
    // inside and outside fronts (26: the 3x3x3 box, separably along x, y, z; 6: the six faces)
    // across bricks, and keeps the unknown voxels of the same side; the surface voxels (level 0)
    // reach both sides. The same voxel sets per level as a breadth-first search under the side
    // rule, computed brick by brick without atomics.
    t0 = Clock::now();
    {
        using Mask = std::array<std::uint64_t, 8>;
        const std::size_t nb = w.cells.brick_count();
        const auto& bl = w.cells.blocks;
        std::vector<std::size_t> block_of_brick(nb);
        for (std::size_t b = 0; b < w.cells.block_count(); ++b)
            if (w.cells.index[b] != BrickField<std::uint16_t>::kTile) block_of_brick[w.cells.index[b]] = b;
        // Neighbour brick across each face (-x, +x, -y, +y, -z, +z), or UINT32_MAX.
        std::vector<std::array<std::uint32_t, 6>> nbr(nb);
        std::vector<Mask> unknown(nb), inside(nb), front_in(nb), front_out(nb);
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 256), [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t n = r.begin(); n != r.end(); ++n) {
                const std::size_t b = block_of_brick[n];
                const auto c = w.cells.block_coords(b);
                for (int a = 0; a < 3; ++a)
                    for (int sgn = 0; sgn < 2; ++sgn) {
                        auto cc = c;
                        cc[static_cast<std::size_t>(a)] += sgn ? 1 : -1;
                        std::uint32_t m = UINT32_MAX;
                        if (cc[static_cast<std::size_t>(a)] >= 0 && cc[static_cast<std::size_t>(a)] < bl[static_cast<std::size_t>(a)])
                            m = w.cells.index[(static_cast<std::size_t>(cc[2]) * static_cast<std::size_t>(bl[1]) + static_cast<std::size_t>(cc[1])) *
                                                  static_cast<std::size_t>(bl[0]) +
                                              static_cast<std::size_t>(cc[0])];
                        nbr[n][static_cast<std::size_t>(2 * a + sgn)] = m;
                    }
                const int x0 = c[0] * kBrickDim, y0 = c[1] * kBrickDim, z0 = c[2] * kBrickDim;
                const std::uint16_t* cell = w.cells.bricks.data() + n * kBrickVoxels;
                Mask un{}, in{}, surf{};
                if (x0 + kBrickDim <= nx && y0 + kBrickDim <= ny && z0 + kBrickDim <= nz) {
                    // A brick inside the grid: the masks word by word, without bounds tests.
                    for (std::size_t z = 0; z < 8; ++z) {
                        std::uint64_t sf = 0, ib = 0;
                        for (std::size_t b = 0; b < 64; ++b) {
                            const std::uint16_t v = cell[z * 64 + b];
                            sf |= static_cast<std::uint64_t>(v == 0) << b;
                            ib |= static_cast<std::uint64_t>(v & 1) << b;
                        }
                        surf[z] = sf, un[z] = ~sf, in[z] = ib;
                    }
                    unknown[n] = un, inside[n] = in, front_in[n] = surf, front_out[n] = surf;
                    continue;
                }
                for (int o = 0; o < kBrickVoxels; ++o) {
                    const int dx = o & 7, dy = (o >> 3) & 7, dz = o >> 6;
                    const std::uint64_t bit = std::uint64_t{1} << (o & 63);
                    if (x0 + dx >= nx || y0 + dy >= ny || z0 + dz >= nz) continue;  // beyond the grid: never reached
                    if (cell[o] == 0) surf[static_cast<std::size_t>(dz)] |= bit;
                    else un[static_cast<std::size_t>(dz)] |= bit;
                    if (cell[o] & 1) in[static_cast<std::size_t>(dz)] |= bit;
                }
                unknown[n] = un, inside[n] = in, front_in[n] = surf, front_out[n] = surf;
            }
        });
        constexpr std::uint64_t kX0 = 0x0101010101010101ull, kX7 = 0x8080808080808080ull;
        const Mask zero{};
        auto at = [&](const std::vector<Mask>& v, std::uint32_t m) -> const Mask& { return m == UINT32_MAX ? zero : v[m]; };
        // Dilations by one voxel along an axis, with the neighbours' boundary bits.
        auto dil_x = [&](const std::vector<Mask>& f, std::size_t n, Mask& out) {
            const Mask &m = f[n], &l = at(f, nbr[n][0]), &h = at(f, nbr[n][1]);
            for (std::size_t z = 0; z < 8; ++z)
                out[z] = m[z] | ((m[z] << 1) & ~kX0) | ((m[z] >> 1) & ~kX7) | ((l[z] >> 7) & kX0) | ((h[z] << 7) & kX7);
        };
        auto dil_y = [&](const std::vector<Mask>& f, std::size_t n, Mask& out) {
            const Mask &m = f[n], &l = at(f, nbr[n][2]), &h = at(f, nbr[n][3]);
            for (std::size_t z = 0; z < 8; ++z) out[z] = m[z] | (m[z] << 8) | (m[z] >> 8) | (l[z] >> 56) | (h[z] << 56);
        };
        auto dil_z = [&](const std::vector<Mask>& f, std::size_t n, Mask& out) {
            const Mask &m = f[n], &l = at(f, nbr[n][4]), &h = at(f, nbr[n][5]);
            for (std::size_t z = 0; z < 8; ++z) out[z] = m[z] | (z > 0 ? m[z - 1] : l[7]) | (z < 7 ? m[z + 1] : h[0]);
        };
        const bool diag = options.connectivity == 26;
        std::vector<Mask> ax_in(nb), ax_out(nb), ay_in(nb), ay_out(nb), next_in(nb), next_out(nb);
        for (int level = 1; level <= band; ++level) {
            if (diag) {
                tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
                    for (std::size_t n = r.begin(); n != r.end(); ++n) dil_x(front_in, n, ax_in[n]), dil_x(front_out, n, ax_out[n]);
                });
                tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
                    for (std::size_t n = r.begin(); n != r.end(); ++n) dil_y(ax_in, n, ay_in[n]), dil_y(ax_out, n, ay_out[n]);
                });
            }
            std::atomic<bool> any{false};
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 1024), [&](const tbb::blocked_range<std::size_t>& r) {
                bool mine = false;
                for (std::size_t n = r.begin(); n != r.end(); ++n) {
                    Mask din, dout;
                    if (diag) {
                        dil_z(ay_in, n, din), dil_z(ay_out, n, dout);
                    } else {
                        Mask a, b2;
                        dil_x(front_in, n, din), dil_y(front_in, n, a), dil_z(front_in, n, b2);
                        for (std::size_t z = 0; z < 8; ++z) din[z] |= a[z] | b2[z];
                        dil_x(front_out, n, dout), dil_y(front_out, n, a), dil_z(front_out, n, b2);
                        for (std::size_t z = 0; z < 8; ++z) dout[z] |= a[z] | b2[z];
                    }
                    std::uint16_t* cell = w.cells.bricks.data() + n * kBrickVoxels;
                    Mask& un = unknown[n];
                    const Mask& in = inside[n];
                    for (std::size_t z = 0; z < 8; ++z) {
                        const std::uint64_t ni = din[z] & un[z] & in[z], no = dout[z] & un[z] & ~in[z];
                        next_in[n][z] = ni, next_out[n][z] = no;
                        std::uint64_t all = ni | no;
                        if (!all) continue;
                        mine = true;
                        un[z] &= ~all;
                        for (; all; all &= all - 1) {
                            const std::size_t o = z * 64 + static_cast<std::size_t>(__builtin_ctzll(all));
                            cell[o] = static_cast<std::uint16_t>((level << 1) | (cell[o] & 1));
                        }
                    }
                }
                if (mine) any.store(true, std::memory_order_relaxed);
            });
            front_in.swap(next_in), front_out.swap(next_out);
            progress.report("layers", static_cast<double>(level) / band);
            if (!any.load()) break;
        }
    }

    // Signed, clamped int16 layers.
    out.layers.reset(g, 0);
    out.layers.index = w.cells.index;
    out.layers.bricks.resize(w.cells.bricks.size());
    const std::size_t blocks = w.cells.block_count();
    struct Counts {
        std::size_t inside = 0, surface = 0, outside = 0, band = 0;
        int lo = 0, hi = 0;
    };
    tbb::combinable<Counts> counts;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, blocks, 64), [&](const tbb::blocked_range<std::size_t>& r) {
        Counts& n = counts.local();
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
    counts.combine_each([&](const Counts& n) {
        out.inside += n.inside, out.surface += n.surface, out.outside += n.outside, out.band_voxels += n.band;
        out.min_layer = std::min(out.min_layer, n.lo), out.max_layer = std::max(out.max_layer, n.hi);
    });
    w.cells = {};
    // Bricks that hold no voxel nearer than the band (every value +B, or every value -B) become
    // tiles of that value: the same value on every voxel, no voxels stored.
    {
        BrickField<std::int16_t>& f = out.layers;
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
    out.seconds_layers = seconds_since(t0);
    return out;
}

}  // namespace hp
