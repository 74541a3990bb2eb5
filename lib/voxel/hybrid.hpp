#pragma once
// Internal to lib/voxel: the hybrid fill's decision (docs/voxelize.md, "Hybrid"), one code for the
// dense fill (fill.cpp) and the narrow band (band.cpp), so that both decide every voxel alike,
// bit for bit. The steps, each a function here:
//   lattice       positions every kLatticeStride voxels along each axis (and the last voxel);
//                 the lattice's points are the corners of the 8^3 blocks, each voxel's cell is
//                 the cell of its block (the last cell of an axis may be shorter);
//   lattice_f     f_a = w - c_a at a lattice point, a = x, y, z (w the fast winding number there,
//                 c_a the signed crossing count of the row along a up to the point);
//   curvature     the second-difference estimate of f_a at a lattice point, from its neighbours;
//   hybrid_cell   per cell: which axes are smooth (curvature at the 8 corners) and f_a's range;
//   hybrid_voxel  per voxel: settled from the cell's ranges, interpolated, or to be evaluated;
//   hybrid_decide the vote near 1/2, else |w| > 1/2.
// The dense fill keeps every lattice point and cell; the band only those its bricks need. Same
// arithmetic in the same order in both (no fused multiply-add: the build targets baseline x86-64).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "geometry/winding.hpp"
#include "voxel/work.hpp"

namespace hp::voxel_detail {

inline constexpr int kLatticeStride = 8;        // voxels between lattice points along each axis
inline constexpr double kInterpError = 0.03;    // a cell is smooth when f's estimated interpolation error is below this
inline constexpr double kInterpMargin = 0.2;    // an interpolated w this far from 1/2 decides without evaluation
inline constexpr double kAxesAgree = 0.1;       // interpolations along two or three axes agree within this
inline constexpr double kDecisive = 0.1;        // |w - 1/2| > this: the winding number decides
inline constexpr double kFastError = 0.04;      // worst measured |fast - exact| at beta 3 (geometry/winding.hpp)
inline constexpr double kBoundSlack = 1e-9;     // covers the rounding of a trilinear interpolation of values of order 1

// Lattice positions along one axis of n voxels: 0, stride, 2 stride, ... and n - 1; per voxel its
// cell (between positions c and c + 1) and its weight within the cell.
struct HybridAxis {
    std::vector<int> pos;
    std::vector<std::uint32_t> cell;
    std::vector<double> t;
    explicit HybridAxis(std::size_t n);
};

struct HybridLattice {
    HybridAxis axis[3];
    std::size_t n[3];      // lattice points along each axis
    std::size_t cells[3];  // cells along each axis (n - 1)
    explicit HybridLattice(const GridSpec& g);
    std::size_t point(std::size_t a, std::size_t b, std::size_t c) const { return (c * n[1] + b) * n[0] + a; }
    std::size_t cell(std::size_t a, std::size_t b, std::size_t c) const { return (c * cells[1] + b) * cells[0] + a; }
    // The widest of the cell's three spans, in voxels.
    double width(std::size_t a, std::size_t b, std::size_t c) const;
};

// f_a at lattice point (a, b, c) for a = x, y, z, given the fast winding number w at its centre;
// tables: the three axes' crossing tables with signed counts.
void lattice_f(const HybridLattice& lattice, const std::vector<CrossingTable>& tables, const GridSpec& g, std::size_t a,
               std::size_t b, std::size_t c, double w, double f[3]);

// Where f_a is smooth, trilinear interpolation errs by about H^2 / 8 times its second derivative
// along an axis (H the cell's width), estimated at a lattice point by divided differences with its
// lattice neighbours (none across the lattice's border). get(d, s) gives f_a at the neighbour
// s = -1, 0 or +1 along axis d. A jump of f_a (the a-sheet of a hole's rim) or a rim itself shows
// up there as a large second difference on both sides.
template <class Get>
double lattice_curvature(const HybridLattice& lattice, const std::size_t at[3], Get&& get) {
    double k2 = 0;
    for (int d = 0; d < 3; ++d) {
        if (at[d] == 0 || at[d] + 1 >= lattice.n[d]) continue;
        const std::vector<int>& pos = lattice.axis[d].pos;
        const double h1 = pos[at[d]] - pos[at[d] - 1], h2 = pos[at[d] + 1] - pos[at[d]];
        if (h1 <= 0 || h2 <= 0) continue;
        const double f0 = get(d, 0);
        const double d2 = 2 * ((get(d, 1) - f0) / h2 - (f0 - get(d, -1)) / h1) / (h1 + h2);
        k2 = std::max(k2, std::abs(d2));
    }
    return k2;
}

// A lattice cell: bit a of `smooth` when f_a's estimated interpolation error is at most
// kInterpError; lo, hi: the range of f_a over the cell's corners.
struct HybridCell {
    std::uint8_t smooth = 0;
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
};

// The cell from its corners (corner = dx | dy << 1 | dz << 2): f(a, corner) and curv(a, corner),
// f_a and its curvature there; width: HybridLattice::width.
template <class F, class K>
HybridCell hybrid_cell(double width, F&& f, K&& curv) {
    HybridCell cell;
    for (int fa = 0; fa < 3; ++fa) {
        double k2 = 0, lo = 1e300, hi = -1e300;
        for (int corner = 0; corner < 8; ++corner) {
            k2 = std::max(k2, curv(fa, corner));
            const double v = f(fa, corner);
            lo = std::min(lo, v), hi = std::max(hi, v);
        }
        if (k2 * width * width / 8 <= kInterpError) cell.smooth |= static_cast<std::uint8_t>(1u << fa);
        cell.lo[fa] = lo, cell.hi[fa] = hi;
    }
    return cell;
}

// The corners' f of a cell: f_a at corner (da, db, dc) is f[a][da * step[0] + db * step[1] + dc * step[2]].
struct HybridCorners {
    const double* f[3] = {nullptr, nullptr, nullptr};
    std::size_t step[3] = {1, 2, 4};
};

// The three rows through a voxel: crossings before its centre, their signed sum (c_a), and
// whether the row's total is even.
struct HybridRows {
    int count[3] = {0, 0, 0}, signed_c[3] = {0, 0, 0};
    bool even[3] = {true, true, true};
};

enum class HybridStep : std::uint8_t { outside, inside, evaluate };

// The vote is unanimous when all three rows are even and agree on the voxel's parity.
inline bool hybrid_unanimous(const HybridRows& rows) {
    const int* count = rows.count;
    return rows.even[0] && rows.even[1] && rows.even[2] && (count[0] & 1) == (count[1] & 1) && (count[1] & 1) == (count[2] & 1);
}

// The inside bit from w: the unanimous vote where w is not decisive (the exact w is then within
// kDecisive of 1/2 when the fast one is within kDecisive - kFastError), else |w| > 1/2.
inline bool hybrid_decide(HybridCounts& n, double wv, bool unanimous, bool odd) {
    const double off = std::abs(std::abs(wv) - 0.5);
    if (unanimous && off <= kDecisive - kFastError) {
        ++n.by_vote;
        return odd;
    }
    ++n.by_winding;
    return std::abs(wv) > 0.5;
}

// One voxel of a cell, t its weights in the cell. rows holds the x and y rows; z_row(rows) fills
// in the z row (called at most once, only when needed). A part of the surface thinner than a cell
// can hide a jump of f_a from the corners, so the interpolated w is used only where at least two
// axes are smooth in the cell, agree within kAxesAgree and lie more than kInterpMargin from 1/2 on
// the same side. Returns the decision, or `evaluate`: then the caller evaluates the fast winding
// number w at the centre and calls hybrid_decide(n, w, unanimous, rows.count[0] & 1).
template <class ZRow>
HybridStep hybrid_voxel(const HybridCell& cell, const HybridCorners& corners, const double t[3], HybridRows& rows,
                        ZRow&& z_row, HybridCounts& n, bool& unanimous) {
    const std::uint8_t mask = cell.smooth;
    const bool interpolate = mask == 3 || mask == 5 || mask == 6 || mask == 7;
    bool have_z = false;
    if (!interpolate || (mask & 4)) z_row(rows), have_z = true;
    if (interpolate) {
        // Every axis's interpolated w lies within signed_c + the cell's corner range (to rounding,
        // which kBoundSlack covers): where those bounds settle the test below, its outcome,
        // without interpolating.
        double lo = 1e300, hi = -1e300;
        for (int fa = 0; fa < 3; ++fa) {
            if (!(mask >> fa & 1)) continue;
            lo = std::min(lo, rows.signed_c[fa] + cell.lo[fa]);
            hi = std::max(hi, rows.signed_c[fa] + cell.hi[fa]);
        }
        lo -= kBoundSlack, hi += kBoundSlack;
        if (hi - lo < kAxesAgree - kBoundSlack) {
            const double far = 0.5 + kInterpMargin, near = 0.5 - kInterpMargin;
            const bool in = lo > far || hi < -far, out = lo > -near && hi < near;
            if (in || out) {
                ++n.by_winding;  // as hybrid_decide() with the interpolated w
                return in ? HybridStep::inside : HybridStep::outside;
            }
        }
        if (!have_z) z_row(rows);
    }
    unanimous = hybrid_unanimous(rows);
    if (!interpolate) return HybridStep::evaluate;
    const double tx = t[0], ty = t[1], tz = t[2];
    double lo = 1e300, hi = -1e300;
    for (int fa = 0; fa < 3; ++fa) {
        if (!(mask >> fa & 1)) continue;
        const double* fv = corners.f[fa];
        const std::size_t* st = corners.step;
        auto at = [&](std::size_t da, std::size_t db, std::size_t dc) { return fv[da * st[0] + db * st[1] + dc * st[2]]; };
        const double f00 = at(0, 0, 0) + tx * (at(1, 0, 0) - at(0, 0, 0));
        const double f10 = at(0, 1, 0) + tx * (at(1, 1, 0) - at(0, 1, 0));
        const double f01 = at(0, 0, 1) + tx * (at(1, 0, 1) - at(0, 0, 1));
        const double f11 = at(0, 1, 1) + tx * (at(1, 1, 1) - at(0, 1, 1));
        const double f0 = f00 + ty * (f10 - f00), f1 = f01 + ty * (f11 - f01);
        const double est = rows.signed_c[fa] + f0 + tz * (f1 - f0);
        lo = std::min(lo, est), hi = std::max(hi, est);
    }
    const bool have = hi - lo <= kAxesAgree && std::abs(std::abs(lo) - 0.5) > kInterpMargin &&
                      std::abs(std::abs(hi) - 0.5) > kInterpMargin && (std::abs(lo) > 0.5) == (std::abs(hi) > 0.5);
    if (!have) return HybridStep::evaluate;
    return hybrid_decide(n, 0.5 * (lo + hi), unanimous, (rows.count[0] & 1) != 0) ? HybridStep::inside : HybridStep::outside;
}

// The cells of the lattice that some voxels need (the band's bricks), each with its HybridCell and
// its corners' f: evaluates the fast winding number only at those cells' corners and at the
// corners' lattice neighbours (the curvature reads them), with the same values, curvature and
// cells as the dense fill computes for them. The points are found and numbered through a table of
// one 32-bit slot per lattice point (as many as the grid's 8^3 blocks), freed at the end.
struct SparseHybridLattice {
    std::vector<std::size_t> ids;    // HybridLattice::cell numbers, sorted
    std::vector<HybridCell> cells;   // parallel to ids
    std::vector<double> corner_f;    // 24 per cell: f_a at corner q is [24 slot + 8 a + q]

    // cell_ids in any order, repeats allowed.
    SparseHybridLattice(const HybridLattice& lattice, const std::vector<CrossingTable>& tables, const GridSpec& g,
                        const FastWinding& fast, std::vector<std::size_t> cell_ids);
    // The slot of cell `id` (one of the cells asked for).
    std::size_t slot(std::size_t id) const {
        return static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
    }
    HybridCorners corners(std::size_t slot) const {
        HybridCorners c;
        for (int fa = 0; fa < 3; ++fa) c.f[fa] = corner_f.data() + 24 * slot + 8 * static_cast<std::size_t>(fa);
        return c;
    }
};

}  // namespace hp::voxel_detail
