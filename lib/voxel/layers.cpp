// Phase 3 of the voxelizer: layers, the breadth-first distance from the surface within each side.
// In: the working grid with surface cells 0 and inside bits set. Out: each cell's distance field
// (cell >> 1) is its layer: steps to the nearest surface voxel through voxels of its side (26- or
// 6-neighbourhood); a step may leave a surface voxel to either side, never cross inside/outside.
// Method: chamfer sweeps forward and backward in memory order; two are exact when the sides never
// touch (closed meshes), else sweeps repeat until stable and unreachable pockets join the side
// around them (docs/voxelize.md). Cost: O(voxels) per sweep, memory bound. Threads: a sweep runs
// slice after slice (sequential); the touch test is TBB-parallel. Progress from the calling thread.
#include <algorithm>
#include <atomic>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "voxel/work.hpp"

namespace hp::voxel_detail {
namespace {

// Distance of neighbour v as seen from cell c. With kSided, kFarDist when v is on the other side
// (branch free in 16-bit lanes so the row loops vectorize; kFarDist is all ones in 15 bits).
template <bool kSided>
inline std::uint16_t seen(std::uint16_t v, std::uint16_t c) {
    if constexpr (!kSided) {
        (void)c;
        return dist(v);
    } else {
        const std::uint16_t other = static_cast<std::uint16_t>(-((v ^ c) & 1) & -static_cast<int>(v != 0));
        return static_cast<std::uint16_t>(dist(v) | (other & kFarDist));
    }
}

// One row of one sweep. `prev` are neighbour rows already final in this sweep (nullptr: absent);
// for 26 each contributes i-1, i, i+1 (diag = true), for 6 only i. `step` is +1 (forward) or -1.
// Returns whether some cell got nearer.
template <bool kSided>
bool relax_row(std::uint16_t* cur, std::size_t nx, const std::uint16_t* const* prev, int nprev, bool diag, int step,
               std::vector<std::uint16_t>& best) {
    best.assign(nx, kFarDist);
    for (int p = 0; p < nprev; ++p) {
        const std::uint16_t* r = prev[p];
        if (!r) continue;
        for (std::size_t i = 0; i < nx; ++i) best[i] = std::min<std::uint16_t>(best[i], seen<kSided>(r[i], cur[i]));
        if (diag) {
            for (std::size_t i = 1; i < nx; ++i) best[i] = std::min<std::uint16_t>(best[i], seen<kSided>(r[i - 1], cur[i]));
            for (std::size_t i = 0; i + 1 < nx; ++i) best[i] = std::min<std::uint16_t>(best[i], seen<kSided>(r[i + 1], cur[i]));
        }
    }
    bool changed = false;
    auto update = [&](std::size_t i, std::uint16_t along) {
        std::uint16_t cand = static_cast<std::uint16_t>(std::min<std::uint16_t>(best[i], along) + 1);
        if (cand < dist(cur[i])) {
            cur[i] = static_cast<std::uint16_t>((cand << 1) | (cur[i] & 1));
            changed = true;
        }
    };
    if (step > 0) {
        update(0, kFarDist);
        for (std::size_t i = 1; i < nx; ++i) update(i, seen<kSided>(cur[i - 1], cur[i]));
    } else {
        update(nx - 1, kFarDist);
        for (std::size_t i = nx - 1; i-- > 0;) update(i, seen<kSided>(cur[i + 1], cur[i]));
    }
    return changed;
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

// When each slice last changed and was last swept in each direction (event counter), so that
// later sweeps skip slices whose inputs did not change: a forward sweep of slice k reads only
// slices k-1 and k; if neither changed since k was last swept forward, sweeping it again would
// change nothing (likewise backward with k+1).
struct SliceClock {
    std::uint64_t now = 1;
    std::vector<std::uint64_t> changed, forward, backward;
    explicit SliceClock(std::size_t nz) : changed(nz, 1), forward(nz, 0), backward(nz, 0) {}
};

// One chamfer sweep over the grid, forward (z, y, x increasing) or backward, slice after slice in
// memory order (rows depend on the row before, so a sweep is sequential; it is memory bound).
template <bool kSided>
bool sweep(Work& w, bool diag, bool forward, SliceClock& clock, const Progress& progress, double p0, double p1) {
    bool any = false;
    std::vector<std::uint16_t> best;
    const std::uint16_t* prev[4];
    for (std::size_t kk = 0; kk < w.nz; ++kk) {
        const std::size_t k = forward ? kk : w.nz - 1 - kk;
        const std::size_t kp = forward ? k - 1 : k + 1;  // the slice before in sweep order
        std::uint64_t& last = forward ? clock.forward[k] : clock.backward[k];
        if (clock.changed[k] <= last && (kk == 0 || clock.changed[kp] <= last)) continue;
        last = ++clock.now;
        const std::vector<std::uint16_t>* other = kk > 0 ? &w.cells[kp] : nullptr;
        bool changed = false;
        for (std::size_t jj = 0; jj < w.ny; ++jj) {
            const std::size_t j = forward ? jj : w.ny - 1 - jj;
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
            changed |= relax_row<kSided>(&w.cells[k][j * w.nx], w.nx, prev, n, diag, forward ? 1 : -1, best);
        }
        if (changed) clock.changed[k] = last;
        any |= changed;
        if ((kk & 15) == 15) progress.report("layers", p0 + (p1 - p0) * static_cast<double>(kk + 1) / static_cast<double>(w.nz));
    }
    return any;
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
