// Step 3 of the narrow-band voxelizer (band.cpp): the inside bit of every brick voxel and of one
// voxel per tiled block: x-row crossing parity (crossings.cpp, the scanline rule; counts per brick
// row by one search and a walk), the winding number (inside_by_winding with geometry/winding.hpp's
// BoundaryWinding) or the dense hybrid's decision (hybrid.hpp; the lattice only at the bricks' cells).
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <span>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "geometry/winding.hpp"
#include "voxel/band_work.hpp"
#include "voxel/hybrid.hpp"
#include "voxel/work.hpp"

namespace hp::voxel_detail {
namespace {

// The rows of a brick along `axis`: per row one binary search, then a walk along it (the
// count of crossings below each centre, as before() gives it), or, where no crossing lies
// between the brick's first and last centres (most rows), that count for all of them;
// with signed counts, also c_a and whether the row's total is even.
inline void brick_counts(const GridSpec& g, const CrossingTable& t, int axis, const int o0[3], int* count, int* signed_c,
                         std::uint8_t* even) {
    const double s = g.voxel_size;
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
}

// Per worker, the scratch of step 3 for one brick at a time.
struct FillScratch {
    std::vector<int> counts = std::vector<int>(3 * kBrickVoxels, 0), signed_c = std::vector<int>(3 * kBrickVoxels, 0);
    std::vector<std::uint8_t> even = std::vector<std::uint8_t>(3 * kBrickVoxels, 1);
    std::vector<std::uint16_t> pending;  // hybrid: voxels for the fast winding number (offset, unanimous << 9)
    std::array<Vec3d, FastWinding::kPacket> centres;
    std::array<double, FastWinding::kPacket> values;
    HybridCounts n;
};

// 3. What decides the inside bit under the band's fill: the crossing tables (scanline, hybrid),
// the winding numbers (winding, hybrid) and, for hybrid, the dense fill's lattice cells that the
// bricks lie in (a brick is in one cell).
class InsideTest {
public:
    InsideTest(const TriMesh& mesh, const BandCells& w, FillMethod method) : g_(w.g), method_(method), hybrid_(method == FillMethod::hybrid) {
        if (method != FillMethod::winding) tables_ = crossing_tables(mesh, g_, hybrid_ ? 3 : 1, hybrid_);
        if (method != FillMethod::scanline) winding_ = std::make_unique<WindingTree>(mesh);
        if (method == FillMethod::winding) exact_ = std::make_unique<BoundaryWinding>(mesh);
        if (hybrid_) {
            lattice_ = std::make_unique<HybridLattice>(g_);
            std::vector<std::size_t> ids;
            ids.reserve(w.cells.brick_count());
            for (std::size_t b = 0; b < w.cells.block_count(); ++b)
                if (w.cells.brick(b)) {
                    const auto c = w.cells.block_coords(b);
                    ids.push_back(cell_of(c[0] * kBrickDim, c[1] * kBrickDim, c[2] * kBrickDim));
                }
            cells_ = std::make_unique<SparseHybridLattice>(*lattice_, tables_, g_, winding_->fast(), std::move(ids));
        }
    }

    // A tiled block's voxel (scanline, winding: the dense fill's rule; hybrid: the unanimous
    // vote of the three rows, else |w| > 1/2 with the fast winding number).
    bool tile_inside(int i, int j, int k) const {
        const std::size_t ijk[3] = {static_cast<std::size_t>(i), static_cast<std::size_t>(j), static_cast<std::size_t>(k)};
        if (method_ == FillMethod::winding) return inside_by_winding(*winding_, *exact_, g_.center(i, j, k));
        HybridRows rows;
        for (std::size_t a = 0; a < tables_.size(); ++a) {
            const CrossingTable& t = tables_[a];
            const std::size_t u = ijk[(a + 1) % 3], v = ijk[(a + 2) % 3], row = u + t.nu * v;
            rows.count[a] = t.before(u, v, g_.origin[static_cast<int>(a)] + (static_cast<double>(ijk[a]) + 0.5) * g_.voxel_size, false);
            rows.even[a] = ((t.offsets[row + 1] - t.offsets[row]) & 1) == 0;
        }
        if (!hybrid_ || hybrid_unanimous(rows)) return (rows.count[0] & 1) != 0;
        return std::abs((*winding_)(g_.center(i, j, k))) > 0.5;
    }

    // The inside bit of every non-surface voxel of the brick at block origin (x0, y0, z0).
    void fill_brick(std::uint16_t* brick, int x0, int y0, int z0, FillScratch& sc) const {
        const int nx = g_.dims[0], ny = g_.dims[1], nz = g_.dims[2];
        const std::vector<int>& counts = sc.counts;
        const std::vector<int>& signed_c = sc.signed_c;
        const std::vector<std::uint8_t>& even = sc.even;
        const int o0[3] = {x0, y0, z0};
        for (std::size_t a = 0; a < tables_.size(); ++a)
            brick_counts(g_, tables_[a], static_cast<int>(a), o0, sc.counts.data() + a * kBrickVoxels,
                         hybrid_ ? sc.signed_c.data() + a * kBrickVoxels : nullptr, sc.even.data() + a * kBrickVoxels);
        const HybridCell* cell = nullptr;
        HybridCorners corners;
        if (hybrid_) {
            const std::size_t slot = cells_->slot(cell_of(x0, y0, z0));
            cell = &cells_->cells[slot], corners = cells_->corners(slot);
        }
        for (int dz = 0; dz < kBrickDim && z0 + dz < nz; ++dz)
            for (int dy = 0; dy < kBrickDim && y0 + dy < ny; ++dy)
                for (int dx = 0; dx < kBrickDim && x0 + dx < nx; ++dx) {
                    const std::size_t o = static_cast<std::size_t>(dx | (dy << 3) | (dz << 6));
                    std::uint16_t& cv = brick[o];
                    if (cv == 0) continue;
                    if (method_ == FillMethod::scanline) {
                        if (counts[o] & 1) cv |= 1;
                        continue;
                    }
                    if (method_ == FillMethod::winding) {
                        if (inside_by_winding(*winding_, *exact_, g_.center(x0 + dx, y0 + dy, z0 + dz))) cv |= 1;
                        continue;
                    }
                    // hybrid: the dense fill's decision (voxel/hybrid.hpp), the z row from the brick's counts.
                    HybridRows rows;
                    for (std::size_t a = 0; a < 2; ++a)
                        rows.count[a] = counts[a * kBrickVoxels + o], rows.signed_c[a] = signed_c[a * kBrickVoxels + o],
                        rows.even[a] = even[a * kBrickVoxels + o] != 0;
                    const double t[3] = {lattice_->axis[0].t[static_cast<std::size_t>(x0 + dx)], lattice_->axis[1].t[static_cast<std::size_t>(y0 + dy)],
                                         lattice_->axis[2].t[static_cast<std::size_t>(z0 + dz)]};
                    bool unanimous = false;
                    const HybridStep step = hybrid_voxel(*cell, corners, t, rows, [&](HybridRows& rw) {
                        rw.count[2] = counts[2 * kBrickVoxels + o], rw.signed_c[2] = signed_c[2 * kBrickVoxels + o],
                        rw.even[2] = even[2 * kBrickVoxels + o] != 0;
                    }, sc.n, unanimous);
                    if (step == HybridStep::inside) cv |= 1;
                    else if (step == HybridStep::evaluate)
                        sc.pending.push_back(static_cast<std::uint16_t>(o | (unanimous ? 1u << 9 : 0u)));
                }
        decide_pending(brick, x0, y0, z0, sc);
    }

private:
    std::size_t cell_of(int x0, int y0, int z0) const {
        return lattice_->cell(lattice_->axis[0].cell[static_cast<std::size_t>(x0)], lattice_->axis[1].cell[static_cast<std::size_t>(y0)],
                              lattice_->axis[2].cell[static_cast<std::size_t>(z0)]);
    }

    // hybrid: the fast winding number at the brick's pending centres, in packets (the same
    // values as one walk per centre).
    void decide_pending(std::uint16_t* brick, int x0, int y0, int z0, FillScratch& sc) const {
        for (std::size_t p0 = 0; p0 < sc.pending.size(); p0 += FastWinding::kPacket) {
            const std::size_t m = std::min(FastWinding::kPacket, sc.pending.size() - p0);
            for (std::size_t q = 0; q < m; ++q) {
                const int o = sc.pending[p0 + q] & 511;
                sc.centres[q] = g_.center(x0 + (o & 7), y0 + ((o >> 3) & 7), z0 + (o >> 6));
            }
            winding_->fast().at_packet(std::span<const Vec3d>(sc.centres.data(), m), std::span<double>(sc.values.data(), m));
            for (std::size_t q = 0; q < m; ++q) {
                const std::size_t o = sc.pending[p0 + q] & 511u;
                if (hybrid_decide(sc.n, sc.values[q], (sc.pending[p0 + q] >> 9) != 0, (sc.counts[o] & 1) != 0)) brick[o] |= 1;
            }
        }
        sc.pending.clear();
    }

    const GridSpec& g_;
    FillMethod method_;
    bool hybrid_;
    std::vector<CrossingTable> tables_;
    std::unique_ptr<WindingTree> winding_;
    std::unique_ptr<BoundaryWinding> exact_;
    std::unique_ptr<HybridLattice> lattice_;
    std::unique_ptr<SparseHybridLattice> cells_;
};

}  // namespace

// Inside bits: every non-surface voxel of the bricks, one voxel per tiled block.
void fill_band_inside(const TriMesh& mesh, BandCells& w, FillMethod method) {
    const InsideTest test(mesh, w, method);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, w.cells.block_count(), 64), [&](const tbb::blocked_range<std::size_t>& r) {
        FillScratch scratch;
        for (std::size_t b = r.begin(); b != r.end(); ++b) {
            const auto c = w.cells.block_coords(b);
            const int x0 = c[0] * kBrickDim, y0 = c[1] * kBrickDim, z0 = c[2] * kBrickDim;
            std::uint16_t* brick = w.cells.brick(b);
            if (!brick) {
                w.cells.tile[b] = test.tile_inside(x0, y0, z0) ? 1 : 0;
                continue;
            }
            test.fill_brick(brick, x0, y0, z0, scratch);
        }
    });
}

}  // namespace hp::voxel_detail
