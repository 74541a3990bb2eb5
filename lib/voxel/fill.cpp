// Phase 2 of the voxelizer, second half: the fill methods (FillMethod in voxelize.hpp).
// In: the working grid with its surface cells cleared. Out: the inside bit of every other cell.
//   scanline  parity of the x row (crossings.cpp); vote  parities along x, y and z, majority,
//   then undecided cells from their face neighbours, then the winding number; winding  the
//   generalized winding number at every centre (|w| > 0.5 inside); flood  not 26-connected to
//   the border through non-surface voxels = inside; hybrid  the winding number where it is
//   decisive or the vote is not unanimous, the unanimous vote elsewhere, with w interpolated from
//   a lattice where it is smooth (docs/voxelize.md, "Hybrid").
// Cost: scanline/vote O(voxels + crossings); winding O(voxels log triangles); flood O(voxels);
// hybrid O(voxels + crossings) plus the fast winding number at the lattice and near the rims.
// Threads: TBB over slices or cells (flood is sequential); progress from the calling thread only.
#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <span>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "geometry/winding.hpp"
#include "voxel/work.hpp"

namespace hp::voxel_detail {

void fill_scanline(const TriMesh& mesh, Work& w, const Progress& progress) {
    classify(w, {crossing_table(mesh, w.grid, 0)}, false);
    progress.report("fill", 1.0);
}

std::size_t fill_vote(const TriMesh& mesh, Work& w, const Progress& progress, std::size_t& by_winding) {
    std::vector<CrossingTable> tables;
    for (int axis = 0; axis < 3; ++axis) {
        tables.push_back(crossing_table(mesh, w.grid, axis));
        progress.report("fill", (axis + 1) / 4.0);
    }
    const std::vector<std::size_t> undecided = classify(w, tables, true);
    tables.clear();
    // Undecided voxels first join the majority of their decided face neighbours (repeated sweeps,
    // so a run of them fills in from its ends); what stays undecided (no decided neighbour, or a
    // tie) gets the generalized winding number at its centre.
    std::vector<std::size_t> open = undecided;
    for (int sweep = 0; sweep < 16 && !open.empty(); ++sweep) {
        std::vector<std::size_t> still;
        std::vector<std::pair<std::size_t, bool>> decided;
        for (std::size_t idx : open) {
            std::size_t k = idx / w.slice, o = idx % w.slice, j = o / w.nx, i = o % w.nx;
            int in = 0, out = 0;
            const int d[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
            for (const auto& dd : d) {
                long ni = static_cast<long>(i) + dd[0], nj = static_cast<long>(j) + dd[1], nk = static_cast<long>(k) + dd[2];
                if (!w.grid.contains(static_cast<int>(ni), static_cast<int>(nj), static_cast<int>(nk))) {
                    ++out;  // beyond the padded grid is outside
                    continue;
                }
                const std::size_t nidx = (static_cast<std::size_t>(nk) * w.ny + static_cast<std::size_t>(nj)) * w.nx +
                                         static_cast<std::size_t>(ni);
                std::uint16_t c = w.cells[static_cast<std::size_t>(nk)][nidx % w.slice];
                if (c == 0 || std::binary_search(open.begin(), open.end(), nidx)) continue;  // surface or undecided
                (c & 1 ? in : out) += 1;
            }
            if (in != out) decided.emplace_back(idx, in > out);
            else still.push_back(idx);
        }
        if (decided.empty()) break;
        for (const auto& [idx, inside] : decided)
            if (inside) w.cells[idx / w.slice][idx % w.slice] |= 1;
        open = std::move(still);
    }
    by_winding = open.size();
    if (!open.empty()) {
        const WindingTree winding(mesh);
        const BoundaryWinding exact(mesh);
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, open.size(), 16), [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t u = r.begin(); u != r.end(); ++u) {
                std::size_t idx = open[u], k = idx / w.slice, o = idx % w.slice;
                int j = static_cast<int>(o / w.nx), i = static_cast<int>(o % w.nx);
                if (inside_by_winding(winding, exact, w.grid.center(i, j, static_cast<int>(k)))) w.cells[k][o] |= 1;
            }
        });
    }
    progress.report("fill", 1.0);
    return undecided.size();
}

namespace {

// Hybrid fill constants (docs/voxelize.md, "Hybrid").
constexpr int kLatticeStride = 8;        // voxels between lattice points along each axis
constexpr double kInterpError = 0.03;    // a cell is smooth when f's estimated interpolation error is below this
constexpr double kInterpMargin = 0.2;    // an interpolated w this far from 1/2 decides without evaluation
constexpr double kAxesAgree = 0.1;       // interpolations along two or three axes agree within this
constexpr double kDecisive = 0.1;        // |w - 1/2| > this: the winding number decides
constexpr double kFastError = 0.04;      // worst measured |fast - exact| at beta 3 (geometry/winding.hpp)
constexpr double kBoundSlack = 1e-9;     // covers the rounding of a trilinear interpolation of values of order 1

// Lattice positions along one axis of n voxels: 0, stride, 2 stride, ... and n - 1; per voxel its
// cell (between positions c and c + 1) and its weight within the cell.
struct Axis {
    std::vector<int> pos;
    std::vector<std::uint32_t> cell;
    std::vector<double> t;
    explicit Axis(std::size_t n) {
        for (std::size_t i = 0; i < n; i += kLatticeStride) pos.push_back(static_cast<int>(i));
        if (pos.back() != static_cast<int>(n) - 1 || pos.size() == 1) pos.push_back(static_cast<int>(n) - 1);
        cell.resize(n);
        t.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t c = std::min(i / kLatticeStride, pos.size() - 2);
            cell[i] = static_cast<std::uint32_t>(c);
            const int span = pos[c + 1] - pos[c];
            t[i] = span > 0 ? static_cast<double>(static_cast<int>(i) - pos[c]) / span : 0.0;
        }
    }
};

}  // namespace

HybridCounts fill_hybrid(const TriMesh& mesh, Work& w, const Progress& progress) {
    const GridSpec& g = w.grid;
    std::vector<CrossingTable> tables;
    for (int axis = 0; axis < 3; ++axis) {
        tables.push_back(crossing_table(mesh, g, axis, true));
        progress.report("fill", (axis + 1) / 8.0);
    }
    const WindingTree tree(mesh);
    const Axis ax(w.nx), ay(w.ny), az(w.nz);
    const Axis* axes[3] = {&ax, &ay, &az};
    const std::size_t lx = ax.pos.size(), ly = ay.pos.size(), lz = az.pos.size();
    const std::size_t lat[3] = {lx, ly, lz}, step[3] = {1, lx, lx * ly};

    // Signed crossing count of the row along `axis` through voxel (i, j, k), before its centre;
    // `count` gets the number of crossings before it, `even` whether the row's total is even.
    auto signed_count = [&](int axis, std::size_t i, std::size_t j, std::size_t k, int& count, bool& even) {
        const CrossingTable& t = tables[static_cast<std::size_t>(axis)];
        const std::size_t ijk[3] = {i, j, k};
        const std::size_t u = ijk[(axis + 1) % 3], v = ijk[(axis + 2) % 3];
        const std::size_t row = u + t.nu * v;
        even = ((t.offsets[row + 1] - t.offsets[row]) & 1) == 0;
        return t.signed_before(u, v, g.origin[axis] + (static_cast<double>(ijk[axis]) + 0.5) * g.voxel_size, count);
    };

    // w = c_a + f_a for each axis a: c_a is the signed crossing count along the row in direction
    // a from the grid's border (exact, from the table), f_a the rest, smooth except near the
    // mesh's boundary curves and the sheets they sweep along a. f_a at the lattice points from
    // one fast winding number evaluation each.
    std::vector<Vec3d> points(lx * ly * lz);
    for (std::size_t c = 0; c < lz; ++c)
        for (std::size_t b = 0; b < ly; ++b)
            for (std::size_t a = 0; a < lx; ++a) points[(c * ly + b) * lx + a] = g.center(ax.pos[a], ay.pos[b], az.pos[c]);
    std::vector<double> wl(points.size());
    tree.fast().at(points, wl);
    std::vector<double> f[3];
    for (int d = 0; d < 3; ++d) f[d].resize(points.size());
    for (std::size_t c = 0; c < lz; ++c)
        for (std::size_t b = 0; b < ly; ++b)
            for (std::size_t a = 0; a < lx; ++a) {
                const std::size_t idx = (c * ly + b) * lx + a;
                for (int d = 0; d < 3; ++d) {
                    int count = 0;
                    bool even = true;
                    f[d][idx] = wl[idx] - signed_count(d, static_cast<std::size_t>(ax.pos[a]), static_cast<std::size_t>(ay.pos[b]),
                                                       static_cast<std::size_t>(az.pos[c]), count, even);
                }
            }
    progress.report("fill", 0.5);

    // Where f_a is smooth, trilinear interpolation errs by about H^2 / 8 times its second
    // derivative along an axis (H the cell's width), estimated at every lattice point by divided
    // differences with its lattice neighbours. A jump of f_a (the a-sheet of a hole's rim) or a
    // rim itself shows up there as a large second difference on both sides. A feature of the
    // surface thinner than a cell can hide a jump from the corners, so a voxel's interpolated w
    // is only used where at least two axes are smooth in its cell and agree (bit a of the mask:
    // axis a is smooth).
    std::vector<double> curv[3];
    for (int fa = 0; fa < 3; ++fa) {
        curv[fa].assign(points.size(), 0.0);
        for (std::size_t c = 0; c < lz; ++c)
            for (std::size_t b = 0; b < ly; ++b)
                for (std::size_t a = 0; a < lx; ++a) {
                    const std::size_t idx = (c * ly + b) * lx + a, at[3] = {a, b, c};
                    double k2 = 0;
                    for (int d = 0; d < 3; ++d) {
                        if (at[d] == 0 || at[d] + 1 >= lat[d]) continue;
                        const auto& pos = axes[d]->pos;
                        const double h1 = pos[at[d]] - pos[at[d] - 1], h2 = pos[at[d] + 1] - pos[at[d]];
                        if (h1 <= 0 || h2 <= 0) continue;
                        const std::vector<double>& fv = f[fa];
                        const double d2 = 2 * ((fv[idx + step[d]] - fv[idx]) / h2 - (fv[idx] - fv[idx - step[d]]) / h1) / (h1 + h2);
                        k2 = std::max(k2, std::abs(d2));
                    }
                    curv[fa][idx] = k2;
                }
    }
    const std::size_t cx = lx - 1, cy = ly - 1, cz = lz - 1;
    std::vector<std::uint8_t> smooth_axes(cx * cy * cz, 0);
    for (std::size_t c = 0; c < cz; ++c)
        for (std::size_t b = 0; b < cy; ++b)
            for (std::size_t a = 0; a < cx; ++a) {
                const double width = std::max({ax.pos[a + 1] - ax.pos[a], ay.pos[b + 1] - ay.pos[b], az.pos[c + 1] - az.pos[c]});
                for (std::uint8_t fa = 0; fa < 3; ++fa) {
                    double k2 = 0;
                    for (int corner = 0; corner < 8; ++corner)
                        k2 = std::max(k2, curv[fa][((c + (corner >> 2 & 1)) * ly + b + (corner >> 1 & 1)) * lx + a + (corner & 1)]);
                    if (k2 * width * width / 8 <= kInterpError) smooth_axes[(c * cy + b) * cx + a] |= static_cast<std::uint8_t>(1u << fa);
                }
            }
    for (auto& cv : curv) std::vector<double>().swap(cv);
    // Per cell and axis the range of f over its corners (min, max).
    std::vector<double> range[3];
    for (int fa = 0; fa < 3; ++fa) {
        range[fa].resize(2 * cx * cy * cz);
        for (std::size_t c = 0; c < cz; ++c)
            for (std::size_t b = 0; b < cy; ++b)
                for (std::size_t a = 0; a < cx; ++a) {
                    double lo = 1e300, hi = -1e300;
                    for (int corner = 0; corner < 8; ++corner) {
                        const double v = f[fa][((c + (corner >> 2 & 1)) * ly + b + (corner >> 1 & 1)) * lx + a + (corner & 1)];
                        lo = std::min(lo, v), hi = std::max(hi, v);
                    }
                    range[fa][2 * ((c * cy + b) * cx + a)] = lo, range[fa][2 * ((c * cy + b) * cx + a) + 1] = hi;
                }
    }

    // Per voxel: the vote (unanimous when all three rows are even and agree) and w (interpolated
    // along every smooth axis of its cell; used when two or three agree within kAxesAgree and lie
    // clearly on one side of 1/2, else the fast tree at the centre).
    // The inside bit from w: the unanimous vote where w is not decisive, else |w| > 1/2.
    auto decide = [](HybridCounts& n, double wv, bool unanimous, bool odd) {
        const double off = std::abs(std::abs(wv) - 0.5);
        if (unanimous && off <= kDecisive - kFastError) {
            ++n.by_vote;
            return odd;  // the winding number is not decisive: the vote
        }
        ++n.by_winding;
        return std::abs(wv) > 0.5;
    };
    std::vector<HybridCounts> per_slice(w.nz);
    const std::size_t block = std::max<std::size_t>(1, w.nz / 16);
    for (std::size_t k0 = 0; k0 < w.nz; k0 += block) {
        const std::size_t k1 = std::min(w.nz, k0 + block);
        tbb::parallel_for(tbb::blocked_range<std::size_t>(k0, k1), [&](const tbb::blocked_range<std::size_t>& r) {
            // The x and y rows' counts by walks (x along the voxel's row, y along the rows of the
            // slice's columns, one cursor per column), the z rows' by search: lower_bound's counts.
            const CrossingTable &tx_table = tables[0], &ty_table = tables[1];
            std::vector<std::uint64_t> ycur(w.nx);
            struct Pending {
                std::uint32_t i, j;
                bool unanimous, odd;
            };
            std::vector<Pending> pending;
            std::array<Vec3d, FastWinding::kPacket> centres;
            std::array<double, FastWinding::kPacket> values;
            for (std::size_t k = r.begin(); k != r.end(); ++k) {
                HybridCounts& n = per_slice[k];
                const std::size_t c = az.cell[k];
                const double tz = az.t[k];
                for (std::size_t i = 0; i < w.nx; ++i) ycur[i] = ty_table.offsets[k + ty_table.nu * i];
                for (std::size_t j = 0; j < w.ny; ++j) {
                    const std::size_t b = ay.cell[j];
                    const double ty = ay.t[j];
                    std::uint16_t* row = &w.cells[k][j * w.nx];
                    const double yc = g.origin[1] + (static_cast<double>(j) + 0.5) * g.voxel_size;
                    const std::size_t xrow = j + tx_table.nu * k;
                    const std::uint64_t xbegin = tx_table.offsets[xrow], xend = tx_table.offsets[xrow + 1];
                    const bool xeven = ((xend - xbegin) & 1) == 0;
                    std::uint64_t xcur = xbegin;
                    for (std::size_t i = 0; i < w.nx; ++i) {
                        if (row[i] == 0) continue;
                        int count[3] = {0, 0, 0}, signed_c[3] = {0, 0, 0};
                        bool even[3] = {true, true, true};
                        const double xc = g.origin[0] + (static_cast<double>(i) + 0.5) * g.voxel_size;
                        while (xcur < xend && tx_table.xs[xcur] < xc) ++xcur;
                        count[0] = static_cast<int>(xcur - xbegin);
                        signed_c[0] = xcur == xbegin ? 0 : tx_table.winding_after[xcur - 1];
                        even[0] = xeven;
                        {
                            const std::size_t yrow = k + ty_table.nu * i;
                            const std::uint64_t ybegin = ty_table.offsets[yrow], yend = ty_table.offsets[yrow + 1];
                            std::uint64_t& yp = ycur[i];
                            while (yp < yend && ty_table.xs[yp] < yc) ++yp;
                            count[1] = static_cast<int>(yp - ybegin);
                            signed_c[1] = yp == ybegin ? 0 : ty_table.winding_after[yp - 1];
                            even[1] = ((yend - ybegin) & 1) == 0;
                        }
                        const std::size_t a = ax.cell[i], cell = (c * cy + b) * cx + a;
                        const std::uint8_t mask = smooth_axes[cell];
                        const bool interpolate = mask == 3 || mask == 5 || mask == 6 || mask == 7;
                        if (!interpolate || (mask & 4)) signed_c[2] = signed_count(2, i, j, k, count[2], even[2]);
                        if (interpolate) {
                            // Every axis's interpolated w lies within signed_c + the cell's corner
                            // range (to rounding, which kBoundSlack covers): where those bounds
                            // settle the test below, its outcome, without interpolating.
                            double lo = 1e300, hi = -1e300;
                            for (std::size_t fa = 0; fa < 3; ++fa) {
                                if (!(mask >> fa & 1)) continue;
                                lo = std::min(lo, signed_c[fa] + range[fa][2 * cell]);
                                hi = std::max(hi, signed_c[fa] + range[fa][2 * cell + 1]);
                            }
                            lo -= kBoundSlack, hi += kBoundSlack;
                            if (hi - lo < kAxesAgree - kBoundSlack) {
                                const double far = 0.5 + kInterpMargin, near = 0.5 - kInterpMargin;
                                const bool in = lo > far || hi < -far, out = lo > -near && hi < near;
                                if (in || out) {
                                    ++n.by_winding;  // as decide() with the interpolated w
                                    if (in) row[i] |= 1;
                                    continue;
                                }
                            }
                            if (!(mask & 4)) signed_c[2] = signed_count(2, i, j, k, count[2], even[2]);
                        }
                        const bool unanimous = even[0] && even[1] && even[2] && (count[0] & 1) == (count[1] & 1) &&
                                               (count[1] & 1) == (count[2] & 1);
                        double wv = 0;
                        bool have = false;
                        if (interpolate) {
                            const double tx = ax.t[i];
                            double lo = 1e300, hi = -1e300;
                            for (int fa = 0; fa < 3; ++fa) {
                                if (!(mask >> fa & 1)) continue;
                                const std::vector<double>& fv = f[fa];
                                auto at = [&](std::size_t da, std::size_t db, std::size_t dc) {
                                    return fv[((c + dc) * ly + b + db) * lx + a + da];
                                };
                                const double f00 = at(0, 0, 0) + tx * (at(1, 0, 0) - at(0, 0, 0));
                                const double f10 = at(0, 1, 0) + tx * (at(1, 1, 0) - at(0, 1, 0));
                                const double f01 = at(0, 0, 1) + tx * (at(1, 0, 1) - at(0, 0, 1));
                                const double f11 = at(0, 1, 1) + tx * (at(1, 1, 1) - at(0, 1, 1));
                                const double f0 = f00 + ty * (f10 - f00), f1 = f01 + ty * (f11 - f01);
                                const double est = signed_c[fa] + f0 + tz * (f1 - f0);
                                lo = std::min(lo, est), hi = std::max(hi, est);
                            }
                            wv = 0.5 * (lo + hi);
                            have = hi - lo <= kAxesAgree && std::abs(std::abs(lo) - 0.5) > kInterpMargin &&
                                   std::abs(std::abs(hi) - 0.5) > kInterpMargin && (std::abs(lo) > 0.5) == (std::abs(hi) > 0.5);
                        }
                        if (!have) {  // evaluated below, with the slice's other such voxels
                            pending.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), unanimous, (count[0] & 1) != 0});
                            continue;
                        }
                        if (decide(n, wv, unanimous, (count[0] & 1) != 0)) row[i] |= 1;
                    }
                }
                // The fast winding number at the pending centres, in packets of neighbours in
                // row order (one tree walk per packet; the same values as one walk per centre).
                n.evaluated += pending.size();
                for (std::size_t p0 = 0; p0 < pending.size(); p0 += FastWinding::kPacket) {
                    const std::size_t m = std::min(FastWinding::kPacket, pending.size() - p0);
                    for (std::size_t q = 0; q < m; ++q)
                        centres[q] = g.center(static_cast<int>(pending[p0 + q].i), static_cast<int>(pending[p0 + q].j), static_cast<int>(k));
                    tree.fast().at_packet(std::span<const Vec3d>(centres.data(), m), std::span<double>(values.data(), m));
                    for (std::size_t q = 0; q < m; ++q) {
                        const Pending& v = pending[p0 + q];
                        if (decide(n, values[q], v.unanimous, v.odd)) w.cells[k][v.j * w.nx + v.i] |= 1;
                    }
                }
                pending.clear();
            }
        });
        progress.report("fill", 0.5 + 0.5 * static_cast<double>(k1) / static_cast<double>(w.nz));
    }
    HybridCounts total;
    total.lattice = points.size();
    for (const HybridCounts& n : per_slice) {
        total.by_vote += n.by_vote;
        total.by_winding += n.by_winding;
        total.evaluated += n.evaluated;
    }
    return total;
}

void fill_winding(const TriMesh& mesh, Work& w, const Progress& progress) {
    const WindingTree winding(mesh);
    const BoundaryWinding exact(mesh);
    // Blocks of about 1/32 of the slices in turn, the rows of a block in parallel, so that the
    // calling thread reports progress between blocks (core/progress.hpp).
    const std::size_t block = std::max<std::size_t>(1, w.nz / 32);
    for (std::size_t k0 = 0; k0 < w.nz; k0 += block) {
        const std::size_t k1 = std::min(w.nz, k0 + block);
        tbb::parallel_for(tbb::blocked_range<std::size_t>(k0 * w.ny, k1 * w.ny), [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t row = r.begin(); row != r.end(); ++row) {
                const std::size_t k = row / w.ny, j = row % w.ny;
                std::uint16_t* cells = &w.cells[k][j * w.nx];
                for (std::size_t i = 0; i < w.nx; ++i) {
                    if (cells[i] == 0) continue;
                    const Vec3d centre = w.grid.center(static_cast<int>(i), static_cast<int>(j), static_cast<int>(k));
                    if (inside_by_winding(winding, exact, centre)) cells[i] |= 1;
                }
            }
        });
        progress.report("fill", static_cast<double>(k1) / static_cast<double>(w.nz));
    }
}

void fill_flood(Work& w, const Progress& progress) {
    // Outside = 26-connected to the border through non-surface voxels. Mark inside first, then
    // clear the bit on every voxel the flood reaches.
    for (auto& sl : w.cells)
        for (auto& c : sl)
            if (c != 0) c |= 1;
    std::deque<std::uint64_t> queue;
    auto push = [&](std::size_t i, std::size_t j, std::size_t k) {
        std::uint16_t& c = w.at(i, j, k);
        if (c != 0 && (c & 1)) {
            c &= static_cast<std::uint16_t>(~1u);
            queue.push_back((static_cast<std::uint64_t>(k) * w.ny + j) * w.nx + i);
        }
    };
    for (std::size_t k = 0; k < w.nz; ++k)
        for (std::size_t j = 0; j < w.ny; ++j)
            for (std::size_t i = 0; i < w.nx; ++i)
                if (i == 0 || j == 0 || k == 0 || i + 1 == w.nx || j + 1 == w.ny || k + 1 == w.nz) push(i, j, k);
    while (!queue.empty()) {
        std::uint64_t idx = queue.front();
        queue.pop_front();
        std::size_t i = idx % w.nx, j = (idx / w.nx) % w.ny, k = idx / (w.nx * w.ny);
        for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
                for (int dx = -1; dx <= 1; ++dx) {
                    long ni = static_cast<long>(i) + dx, nj = static_cast<long>(j) + dy, nk = static_cast<long>(k) + dz;
                    if (ni < 0 || nj < 0 || nk < 0 || ni >= static_cast<long>(w.nx) || nj >= static_cast<long>(w.ny) ||
                        nk >= static_cast<long>(w.nz))
                        continue;
                    push(static_cast<std::size_t>(ni), static_cast<std::size_t>(nj), static_cast<std::size_t>(nk));
                }
    }
    progress.report("fill", 1.0);
}
}  // namespace hp::voxel_detail
