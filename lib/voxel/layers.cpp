// Phase 3 of the voxelizer: layers, the breadth-first distance from the surface within each side.
// In: the working grid with surface cells 0 and inside bits set. Out: each cell's distance field
// (cell >> 1) is its layer: steps to the nearest surface voxel through voxels of its side (26- or
// 6-neighbourhood); a step may leave a surface voxel to either side, never cross inside/outside.
// Method: chamfer sweeps forward and backward in memory order; two are exact when the sides never
// touch (closed meshes), else sweeps repeat until stable and unreachable pockets join the side
// around them (docs/voxelize.md). Cost: O(voxels) per sweep, memory bound. Threads: a sweep's
// slices are pipelined across the threads (the same result as one thread); the touch test is
// TBB-parallel. Progress from the calling thread.
#include <algorithm>
#include <atomic>
#include <cstring>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/cpu.hpp"
#include "core/pipelined.hpp"
#include "voxel/work.hpp"

namespace hp::voxel_detail {
namespace {

// kFarDist where a step from neighbour v to cell c is refused (v on the other side and not a
// surface cell), else 0. Branch free in 16-bit lanes so that the row loops vectorize (kFarDist is
// all ones in 15 bits).
inline std::uint16_t refused(std::uint16_t v, std::uint16_t c) {
    return static_cast<std::uint16_t>(-((v ^ c) & 1) & -static_cast<int>(v != 0) & kFarDist);
}

// Distance of neighbour v as seen from cell c: with kSided, kFarDist where the step is refused.
template <bool kSided>
inline std::uint16_t seen(std::uint16_t v, std::uint16_t c) {
    if constexpr (!kSided) {
        (void)c;
        return dist(v);
    } else {
        return static_cast<std::uint16_t>(dist(v) | refused(v, c));
    }
}

// Scratch rows of a sweep's lane (a cache line of its own: each row resizes them).
struct alignas(64) RowScratch {
    std::vector<std::uint16_t> d;        // the cells' distances in the making
    std::vector<std::uint8_t> improves;  // 1 where the row neighbour before would lower the cell
};

// One row of one sweep. `prev` are neighbour rows already final in this sweep (nullptr: absent);
// for 26 each contributes i-1, i, i+1 (diag = true), for 6 only i. `step` is +1 (forward) or -1.
// Returns whether some cell got nearer.
//
// A cell's distance is the least of its own, one more than the least of its neighbours in `prev`
// (d below, in vector lanes), and one more than its row neighbour before it, just made final: a
// chain along the row. A cell that its row neighbour does not lower keeps d; the next cell then
// sees the neighbour's d, and `improves` (in vector lanes) says whether that lowers it. So only the
// chains are walked one cell at a time, each from a cell that `improves` marks (found with memchr)
// to the first cell it does not lower.
template <bool kSided>
__attribute__((target_clones("avx2", "default"))) bool relax_row(std::uint16_t* cur, std::size_t nx, const std::uint16_t* const* prev, int nprev, bool diag, int step,
               RowScratch& s) {
    std::vector<std::uint16_t>& d = s.d;
    d.assign(nx, kFarDist);
    for (int p = 0; p < nprev; ++p) {
        const std::uint16_t* r = prev[p];
        if (!r) continue;
        for (std::size_t i = 0; i < nx; ++i) d[i] = std::min<std::uint16_t>(d[i], seen<kSided>(r[i], cur[i]));
        if (diag) {
            for (std::size_t i = 1; i < nx; ++i) d[i] = std::min<std::uint16_t>(d[i], seen<kSided>(r[i - 1], cur[i]));
            for (std::size_t i = 0; i + 1 < nx; ++i) d[i] = std::min<std::uint16_t>(d[i], seen<kSided>(r[i + 1], cur[i]));
        }
    }
    // Without the row neighbour (at most kFarDist + 1, which no cell is beyond).
    for (std::size_t i = 0; i < nx; ++i) d[i] = std::min<std::uint16_t>(static_cast<std::uint16_t>(d[i] + 1), dist(cur[i]));
    s.improves.resize(nx);
    // (restrict: stores through a byte pointer may otherwise alias the rows, which keeps the
    // compiler from vector lanes.)
    std::uint8_t* __restrict improves = s.improves.data();
    const std::uint16_t* __restrict cells = cur;
    const std::uint16_t* __restrict dd = d.data();
    auto along = [&](std::size_t from, std::size_t to, std::uint16_t df) {
        return static_cast<std::uint16_t>((kSided ? df | refused(cells[from], cells[to]) : df) + 1);
    };
    if (step > 0) {
        improves[0] = 0;
        for (std::size_t i = 1; i < nx; ++i) improves[i] = along(i - 1, i, dd[i - 1]) < dd[i];
        bool chain = false;  // whether the cell before i was lowered by its own row neighbour
        for (std::size_t i = 1; i < nx; ++i) {
            if (!chain && !improves[i]) {  // the cell keeps d: on to the next that starts a chain
                const void* next = std::memchr(improves + i, 1, nx - i);
                if (!next) break;
                i = static_cast<std::size_t>(static_cast<const std::uint8_t*>(next) - improves);
            }
            const std::uint16_t a = along(i - 1, i, d[i - 1]);
            chain = a < d[i];
            if (chain) d[i] = a;
        }
    } else {
        improves[nx - 1] = 0;
        for (std::size_t i = 0; i + 1 < nx; ++i) improves[i] = along(i + 1, i, dd[i + 1]) < dd[i];
        bool chain = false;
        for (std::size_t i = nx - 1; i-- > 0;) {
            if (!chain && !improves[i]) {
                const void* next = ::memrchr(improves, 1, i + 1);
                if (!next) break;
                i = static_cast<std::size_t>(static_cast<const std::uint8_t*>(next) - improves);
            }
            const std::uint16_t a = along(i + 1, i, d[i + 1]);
            chain = a < d[i];
            if (chain) d[i] = a;
        }
    }
    std::uint16_t changed = 0;
    for (std::size_t i = 0; i < nx; ++i) {
        const std::uint16_t c = cur[i];
        const std::uint16_t lower = d[i] < dist(c);
        cur[i] = lower ? static_cast<std::uint16_t>((d[i] << 1) | (c & 1)) : c;
        changed |= lower;
    }
    return changed != 0;
}

// True when some non-surface inside voxel has a non-surface outside voxel among its 26
// neighbours (then layers must be constrained to one side). Bit rows, dilated by shifts and ORs.
bool sides_touch(const Work& w) {
    const std::size_t words = (w.nx + 63) / 64;
    auto build = [&](std::size_t k, std::vector<std::uint64_t>& in, std::vector<std::uint64_t>& out) {
        in.assign(w.ny * words, 0);
        out.assign(w.ny * words, 0);
        const std::uint16_t* c = w.cells[k].data();
        for (std::size_t j = 0; j < w.ny; ++j)
            for (std::size_t q = 0; q < words; ++q) {
                std::uint64_t bi = 0, bo = 0;
                const std::size_t end = std::min<std::size_t>(64, w.nx - q * 64);
                for (std::size_t b = 0; b < end; ++b) {
                    const std::uint16_t v = c[j * w.nx + q * 64 + b];
                    bi |= static_cast<std::uint64_t>(v & 1) << b;
                    bo |= static_cast<std::uint64_t>((v != 0) & !(v & 1)) << b;
                }
                in[j * words + q] = bi;
                out[j * words + q] = bo;
            }
    };
    std::atomic<bool> touch{false};
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, w.nz, 8), [&](const tbb::blocked_range<std::size_t>& r) {
        // Rolling masks of slices k-1, k, k+1 (empty when outside the grid).
        std::vector<std::uint64_t> in[3], out[3], dil(words);
        const std::size_t k0 = r.begin();
        if (k0 > 0) build(k0 - 1, in[0], out[0]);
        else in[0].assign(w.ny * words, 0);
        build(k0, in[1], out[1]);
        for (std::size_t k = k0; k != r.end() && !touch.load(std::memory_order_relaxed); ++k) {
            if (k + 1 < w.nz) build(k + 1, in[2], out[2]);
            else in[2].assign(w.ny * words, 0);
            for (std::size_t j = 0; j < w.ny; ++j) {
                std::fill(dil.begin(), dil.end(), 0);
                for (const auto& m : in)
                    for (std::size_t jj = j > 0 ? j - 1 : 0; jj <= std::min(j + 1, w.ny - 1); ++jj) {
                        const std::uint64_t* row = &m[jj * words];
                        for (std::size_t q = 0; q < words; ++q)
                            dil[q] |= row[q] | (row[q] << 1) | (row[q] >> 1) | (q > 0 ? row[q - 1] >> 63 : 0) |
                                      (q + 1 < words ? row[q + 1] << 63 : 0);
                    }
                for (std::size_t q = 0; q < words; ++q)
                    if (dil[q] & out[1][j * words + q]) touch.store(true, std::memory_order_relaxed);
            }
            std::swap(in[0], in[1]);
            std::swap(in[1], in[2]);
            std::swap(out[0], out[1]);
            std::swap(out[1], out[2]);
        }
    });
    return touch.load();
}

// When each slice last changed and was last swept in each direction (a stamp per slice and
// sweep, increasing in sweep order), so that later sweeps skip slices whose inputs did not change:
// a forward sweep of slice k reads only slices k-1 and k; if neither changed since k was last swept
// forward, sweeping it again would change nothing (likewise backward with k+1).
struct SliceClock {
    std::uint64_t now = 1;
    std::vector<std::uint64_t> changed, forward, backward;
    explicit SliceClock(std::size_t nz) : changed(nz, 1), forward(nz, 0), backward(nz, 0) {}
};

// One chamfer sweep over the grid, forward (z, y, x increasing) or backward, in memory order. Rows
// depend on the row before and on the slice before, so the slices are pipelined across the
// threads (SlicePipeline): the result is that of one thread. Progress from lane 0 (the caller).
template <bool kSided>
bool sweep(Work& w, bool diag, bool forward, SliceClock& clock, const Progress& progress, double p0, double p1) {
    const int nz = static_cast<int>(w.nz), ny = static_cast<int>(w.ny);
    const int lanes = pipeline_lanes(worker_threads(), nz, w.nx * w.ny * w.nz);
    std::vector<RowScratch> scratch(static_cast<std::size_t>(lanes));
    std::vector<char> lane_changed(static_cast<std::size_t>(lanes), 0);
    const std::uint64_t base = clock.now;
    SlicePipeline pipeline(nz, ny);
    pipeline.run(lanes, [&](int kk, int lane, const SlicePipeline::Gate& gate) {
        const std::size_t k = forward ? static_cast<std::size_t>(kk) : w.nz - 1 - static_cast<std::size_t>(kk);
        const std::size_t kp = forward ? k - 1 : k + 1;  // the slice before in sweep order
        std::uint64_t& last = forward ? clock.forward[k] : clock.backward[k];
        if (clock.changed[k] <= last) {
            gate.wait_previous();  // clock.changed[kp] is final once slice kp is complete
            if (kk == 0 || clock.changed[kp] <= last) return;
        }
        last = base + static_cast<std::uint64_t>(kk) + 1;
        const std::span<std::uint16_t>* other = kk > 0 ? &w.cells[kp] : nullptr;
        const std::uint16_t* prev[4];
        bool changed = false;
        for (int jj = 0; jj < ny; ++jj) {
            const std::size_t j = forward ? static_cast<std::size_t>(jj) : w.ny - 1 - static_cast<std::size_t>(jj);
            int n = 0;
            prev[n++] = jj > 0 ? &w.cells[k][(forward ? j - 1 : j + 1) * w.nx] : nullptr;
            if (diag) {
                if (other) {
                    prev[n++] = &(*other)[j * w.nx];
                    prev[n++] = j > 0 ? &(*other)[(j - 1) * w.nx] : nullptr;
                    prev[n++] = j + 1 < w.ny ? &(*other)[(j + 1) * w.nx] : nullptr;
                }
            } else {
                prev[n++] = other ? &(*other)[j * w.nx] : nullptr;
            }
            gate.before_row(jj);
            changed |= relax_row<kSided>(&w.cells[k][j * w.nx], w.nx, prev, n, diag, forward ? 1 : -1,
                                         scratch[static_cast<std::size_t>(lane)]);
            gate.after_row(jj);
        }
        if (changed) clock.changed[k] = last;
        lane_changed[static_cast<std::size_t>(lane)] |= static_cast<char>(changed);
        if (lane == 0 && (kk & 15) < lanes)
            progress.report("layers", p0 + (p1 - p0) * static_cast<double>(kk + 1) / static_cast<double>(w.nz));
    });
    clock.now = base + w.nz;
    return std::find(lane_changed.begin(), lane_changed.end(), 1) != lane_changed.end();
}

// Cells left at kFarDist after the sweeps converged: components of one side that no surface voxel
// borders (votes near a hole can enclose a pocket of one side in the other). They join the side
// around them. Returns how many moved.
std::size_t flip_unreached(Work& w) {
    std::atomic<std::size_t> flipped{0};
    tbb::parallel_for(std::size_t{0}, w.nz, [&](std::size_t k) {
        std::size_t n = 0;
        for (std::uint16_t& c : w.cells[k])
            if (c != 0 && dist(c) == kFarDist) {
                c ^= 1;
                ++n;
            }
        flipped.fetch_add(n, std::memory_order_relaxed);
    });
    return flipped.load();
}

}  // namespace

// Returns the number of sweeps made (2 when the sides never touch); counts flipped cells.
int compute_layers(Work& w, int connectivity, const Progress& progress, std::size_t& flipped) {
    const bool diag = connectivity == 26;
    SliceClock clock(w.nz);
    flipped = 0;
    if (!sides_touch(w)) {
        // No step is ever refused: one round of plain sweeps is exact.
        sweep<false>(w, diag, true, clock, progress, 0.0, 0.5);
        sweep<false>(w, diag, false, clock, progress, 0.5, 1.0);
        return 2;
    }
    int sweeps = 0;
    for (;;) {
        const bool first = sweeps == 0;
        bool changed = sweep<true>(w, diag, true, clock, first ? progress : Progress{}, 0.0, 0.5);
        changed |= sweep<true>(w, diag, false, clock, first ? progress : Progress{}, 0.5, 1.0);
        sweeps += 2;
        if (!first && !changed) {
            const std::size_t n = flip_unreached(w);
            if (n == 0) break;
            flipped += n;
            for (std::size_t k = 0; k < w.nz; ++k) clock.changed[k] = ++clock.now;  // flips can be anywhere
        }
    }
    return sweeps;
}

}  // namespace hp::voxel_detail
