// Phase 2 of the voxelizer, second half: the fill methods (FillMethod in voxelize.hpp).
// In: the working grid with its surface cells cleared. Out: the inside bit of every other cell.
//   scanline  parity of the x row (crossings.cpp); vote  parities along x, y and z, majority,
//   then undecided cells from their face neighbours, then the winding number; winding  the
//   generalized winding number at every centre (|w| > 0.5 inside); flood  not 26-connected to
//   the border through non-surface voxels = inside; hybrid  the winding number where it is
//   decisive or the vote is not unanimous, the unanimous vote elsewhere, with w interpolated from
//   a lattice where it is smooth (docs/voxelize.md, "Hybrid"; the decision is hybrid.hpp's, shared
//   with the narrow band).
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
#include "voxel/hybrid.hpp"

namespace hp::voxel_detail {

void fill_scanline(const TriMesh& mesh, Work& w, const Progress& progress) {
    classify(w, {crossing_table(mesh, w.grid, 0)}, false);
    progress.report("fill", 1.0);
}

std::size_t fill_vote(const TriMesh& mesh, Work& w, const Progress& progress, std::size_t& by_winding) {
    std::vector<CrossingTable> tables = crossing_tables(mesh, w.grid, 3);
    progress.report("fill", 0.75);
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

HybridCounts fill_hybrid(const TriMesh& mesh, Work& w, const Progress& progress) {
    const GridSpec& g = w.grid;
    std::vector<CrossingTable> tables = crossing_tables(mesh, g, 3, true);
    progress.report("fill", 3 / 8.0);
    const WindingTree tree(mesh);
    const HybridLattice lattice(g);
    const HybridAxis &ax = lattice.axis[0], &ay = lattice.axis[1], &az = lattice.axis[2];
    const std::size_t lx = lattice.n[0], ly = lattice.n[1], lz = lattice.n[2];
    const std::size_t step[3] = {1, lx, lx * ly};

    // w = c_a + f_a for each axis a (hybrid.hpp): f_a at every lattice point from one fast
    // winding number evaluation each.
    std::vector<Vec3d> points(lx * ly * lz);
    for (std::size_t c = 0; c < lz; ++c)
        for (std::size_t b = 0; b < ly; ++b)
            for (std::size_t a = 0; a < lx; ++a) points[lattice.point(a, b, c)] = g.center(ax.pos[a], ay.pos[b], az.pos[c]);
    std::vector<double> wl(points.size());
    tree.fast().at(points, wl);
    std::vector<double> f[3];
    for (int d = 0; d < 3; ++d) f[d].resize(points.size());
    for (std::size_t c = 0; c < lz; ++c)
        for (std::size_t b = 0; b < ly; ++b)
            for (std::size_t a = 0; a < lx; ++a) {
                const std::size_t idx = lattice.point(a, b, c);
                double fv[3];
                lattice_f(lattice, tables, g, a, b, c, wl[idx], fv);
                for (int d = 0; d < 3; ++d) f[d][idx] = fv[d];
            }
    progress.report("fill", 0.5);

    // The curvature of each f_a at every lattice point, then every cell's smooth axes and ranges.
    std::vector<double> curv[3];
    for (int fa = 0; fa < 3; ++fa) {
        curv[fa].assign(points.size(), 0.0);
        const std::vector<double>& fv = f[fa];
        for (std::size_t c = 0; c < lz; ++c)
            for (std::size_t b = 0; b < ly; ++b)
                for (std::size_t a = 0; a < lx; ++a) {
                    const std::size_t idx = lattice.point(a, b, c), at[3] = {a, b, c};
                    curv[fa][idx] = lattice_curvature(lattice, at, [&](int d, int sgn) {
                        return fv[sgn == 0 ? idx : sgn > 0 ? idx + step[d] : idx - step[d]];
                    });
                }
    }
    const std::size_t cx = lattice.cells[0], cy = lattice.cells[1], cz = lattice.cells[2];
    std::vector<HybridCell> cells(cx * cy * cz);
    for (std::size_t c = 0; c < cz; ++c)
        for (std::size_t b = 0; b < cy; ++b)
            for (std::size_t a = 0; a < cx; ++a) {
                const std::size_t p = lattice.point(a, b, c);
                auto corner = [&](int q) { return p + static_cast<std::size_t>(q & 1) * step[0] + static_cast<std::size_t>(q >> 1 & 1) * step[1] + static_cast<std::size_t>(q >> 2 & 1) * step[2]; };
                cells[lattice.cell(a, b, c)] = hybrid_cell(
                    lattice.width(a, b, c), [&](int fa, int q) { return f[fa][corner(q)]; },
                    [&](int fa, int q) { return curv[fa][corner(q)]; });
            }
    for (auto& cv : curv) std::vector<double>().swap(cv);

    // Per voxel (hybrid_voxel): the x and y rows' counts by walks (x along the voxel's row, y
    // along the rows of the slice's columns, one cursor per column), the z rows' by search when
    // needed; the voxels to evaluate, per slice in packets.
    std::vector<HybridCounts> per_slice(w.nz);
    const std::size_t block = std::max<std::size_t>(1, w.nz / 16);
    for (std::size_t k0 = 0; k0 < w.nz; k0 += block) {
        const std::size_t k1 = std::min(w.nz, k0 + block);
        tbb::parallel_for(tbb::blocked_range<std::size_t>(k0, k1), [&](const tbb::blocked_range<std::size_t>& r) {
            const CrossingTable &tx_table = tables[0], &ty_table = tables[1], &tz_table = tables[2];
            std::vector<std::uint64_t> ycur(w.nx);
            struct Pending {
                std::uint32_t i, j;
                bool unanimous, odd;
            };
            std::vector<Pending> pending;
            std::array<Vec3d, FastWinding::kPacket> centres;
            std::array<double, FastWinding::kPacket> values;
            HybridCorners corners;
            for (int d = 0; d < 3; ++d) corners.step[d] = step[d];
            for (std::size_t k = r.begin(); k != r.end(); ++k) {
                HybridCounts& n = per_slice[k];
                const std::size_t c = az.cell[k];
                const double zc = g.origin[2] + (static_cast<double>(k) + 0.5) * g.voxel_size;
                for (std::size_t i = 0; i < w.nx; ++i) ycur[i] = ty_table.offsets[k + ty_table.nu * i];
                for (std::size_t j = 0; j < w.ny; ++j) {
                    const std::size_t b = ay.cell[j];
                    std::uint16_t* row = &w.cells[k][j * w.nx];
                    const double yc = g.origin[1] + (static_cast<double>(j) + 0.5) * g.voxel_size;
                    const std::size_t xrow = j + tx_table.nu * k;
                    const std::uint64_t xbegin = tx_table.offsets[xrow], xend = tx_table.offsets[xrow + 1];
                    const bool xeven = ((xend - xbegin) & 1) == 0;
                    std::uint64_t xcur = xbegin;
                    for (std::size_t i = 0; i < w.nx; ++i) {
                        if (row[i] == 0) continue;
                        HybridRows rows;
                        const double xc = g.origin[0] + (static_cast<double>(i) + 0.5) * g.voxel_size;
                        while (xcur < xend && tx_table.xs[xcur] < xc) ++xcur;
                        rows.count[0] = static_cast<int>(xcur - xbegin);
                        rows.signed_c[0] = xcur == xbegin ? 0 : tx_table.winding_after[xcur - 1];
                        rows.even[0] = xeven;
                        {
                            const std::size_t yrow = k + ty_table.nu * i;
                            const std::uint64_t ybegin = ty_table.offsets[yrow], yend = ty_table.offsets[yrow + 1];
                            std::uint64_t& yp = ycur[i];
                            while (yp < yend && ty_table.xs[yp] < yc) ++yp;
                            rows.count[1] = static_cast<int>(yp - ybegin);
                            rows.signed_c[1] = yp == ybegin ? 0 : ty_table.winding_after[yp - 1];
                            rows.even[1] = ((yend - ybegin) & 1) == 0;
                        }
                        const std::size_t a = ax.cell[i], p = lattice.point(a, b, c);
                        for (int d = 0; d < 3; ++d) corners.f[d] = f[d].data() + p;
                        const double t[3] = {ax.t[i], ay.t[j], az.t[k]};
                        bool unanimous = false;
                        const HybridStep s = hybrid_voxel(cells[lattice.cell(a, b, c)], corners, t, rows, [&](HybridRows& rw) {
                            const std::size_t zrow = i + tz_table.nu * j;
                            rw.even[2] = ((tz_table.offsets[zrow + 1] - tz_table.offsets[zrow]) & 1) == 0;
                            rw.signed_c[2] = tz_table.signed_before(i, j, zc, rw.count[2]);
                        }, n, unanimous);
                        if (s == HybridStep::inside) row[i] |= 1;
                        else if (s == HybridStep::evaluate)  // evaluated below, with the slice's other such voxels
                            pending.push_back({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j), unanimous, (rows.count[0] & 1) != 0});
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
                        if (hybrid_decide(n, values[q], v.unanimous, v.odd)) w.cells[k][v.j * w.nx + v.i] |= 1;
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
