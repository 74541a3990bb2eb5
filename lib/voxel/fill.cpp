// Phase 2 of the voxelizer, second half: the fill methods (FillMethod in voxelize.hpp).
// In: the working grid with its surface cells cleared. Out: the inside bit of every other cell.
//   scanline  parity of the x row (crossings.cpp); vote  parities along x, y and z, majority,
//   then undecided cells from their face neighbours, then the winding number; winding  the
//   generalized winding number at every centre (|w| > 0.5 inside); flood  not 26-connected to
//   the border through non-surface voxels = inside.
// Cost: scanline/vote O(voxels + crossings); winding O(voxels log triangles); flood O(voxels).
// Threads: TBB over slices or cells (flood is sequential); progress from the calling thread only.
#include <algorithm>
#include <deque>
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
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, open.size(), 16), [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t u = r.begin(); u != r.end(); ++u) {
                std::size_t idx = open[u], k = idx / w.slice, o = idx % w.slice;
                int j = static_cast<int>(o / w.nx), i = static_cast<int>(o % w.nx);
                if (inside_by_winding(winding, mesh, w.grid.center(i, j, static_cast<int>(k)))) w.cells[k][o] |= 1;
            }
        });
    }
    progress.report("fill", 1.0);
    return undecided.size();
}

void fill_winding(const TriMesh& mesh, Work& w, const Progress& progress) {
    const WindingTree winding(mesh);
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
                    if (inside_by_winding(winding, mesh, centre)) cells[i] |= 1;
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
