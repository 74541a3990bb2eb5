#include "core/clock.hpp"
#include "voxel/voxelize.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>

#include <tbb/parallel_for.h>

#include "core/error.hpp"
#include "geometry/sat.hpp"
#include "geometry/winding.hpp"

namespace hp {

const char* fill_name(FillMethod m) {
    switch (m) {
    case FillMethod::automatic: return "auto";
    case FillMethod::scanline: return "scanline";
    case FillMethod::vote: return "vote";
    case FillMethod::winding: return "winding";
    case FillMethod::flood: return "flood";
    }
    return "?";
}

namespace {


// Working cells: (distance << 1) | inside. Surface cells are 0.
constexpr std::uint16_t kFarDist = 32767;
constexpr std::uint16_t kUnknown = static_cast<std::uint16_t>(kFarDist << 1);

struct Work {
    GridSpec grid;
    std::size_t nx = 0, ny = 0, nz = 0, slice = 0;
    std::vector<std::vector<std::uint16_t>> cells;  // [z][y * nx + x]

    std::uint16_t& at(std::size_t i, std::size_t j, std::size_t k) { return cells[k][j * nx + i]; }
    std::uint16_t at(std::size_t i, std::size_t j, std::size_t k) const { return cells[k][j * nx + i]; }
};

// ---------------------------------------------------------------------------------------------
// Phase 1: surface voxels.

void mark_surface(const TriMesh& mesh, Work& w, const Progress& progress) {
    const GridSpec& g = w.grid;
    const double s = g.voxel_size;
    const Vec3d half{s / 2, s / 2, s / 2};
    const std::size_t n = mesh.triangles.size();
    std::atomic<std::size_t> done{0};
    auto range = [&](double lo, double hi, int axis, int& a, int& b) {
        // Voxels whose closed extent [o + i s, o + (i+1) s] meets [lo, hi].
        a = std::max(0, static_cast<int>(std::ceil((lo - g.origin[axis]) / s)) - 1);
        b = std::min(g.dims[axis] - 1, static_cast<int>(std::floor((hi - g.origin[axis]) / s)));
    };
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 256), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t t = r.begin(); t != r.end(); ++t) {
            const auto& tri = mesh.triangles[t];
            const Vec3d& a = mesh.vertices[tri[0]];
            const Vec3d& b = mesh.vertices[tri[1]];
            const Vec3d& c = mesh.vertices[tri[2]];
            Vec3d lo = cwise_min(a, cwise_min(b, c)), hi = cwise_max(a, cwise_max(b, c));
            int i0, i1, j0, j1, k0, k1;
            range(lo.x, hi.x, 0, i0, i1);
            range(lo.y, hi.y, 1, j0, j1);
            range(lo.z, hi.z, 2, k0, k1);
            for (int k = k0; k <= k1; ++k)
                for (int j = j0; j <= j1; ++j)
                    for (int i = i0; i <= i1; ++i) {
                        std::uint16_t& cell = w.at(static_cast<std::size_t>(i), static_cast<std::size_t>(j), static_cast<std::size_t>(k));
                        if (std::atomic_ref<std::uint16_t>(cell).load(std::memory_order_relaxed) == 0) continue;
                        if (triangle_box_overlap(g.center(i, j, k), half, a, b, c))
                            std::atomic_ref<std::uint16_t>(cell).store(0, std::memory_order_relaxed);
                    }
        }
        std::size_t d = done.fetch_add(r.size()) + r.size();
        (void)d;
    });
    progress.report("surface", 1.0);
}

// ---------------------------------------------------------------------------------------------
// Phase 2: crossings of grid rows with the triangles.

// Integer coordinates: snapped to s / 2^20 relative to the grid origin. Row centres are then the
// exact integers (2j + 1) 2^19; a grid of at most 32000 voxels needs < 2^36, products < 2^73.
constexpr double kSnap = 1048576.0;  // 2^20
constexpr std::int64_t kHalf = 524288;  // 2^19

struct Snapped {
    std::int64_t u, v;
};

int perturbed_orient(const Snapped& a, const Snapped& b, std::int64_t pu, std::int64_t pv) {
    __int128 det = static_cast<__int128>(b.u - a.u) * (pv - a.v) - static_cast<__int128>(b.v - a.v) * (pu - a.u);
    if (det > 0) return 1;
    if (det < 0) return -1;
    // The row point is moved by (eps, eps^2): the first non-zero term decides.
    if (b.v != a.v) return b.v > a.v ? -1 : 1;
    if (b.u != a.u) return b.u > a.u ? 1 : -1;
    return 0;
}

struct RowBins {
    int axis = 0, au = 1, av = 2;  // row direction and the two row-index axes
    std::size_t nu = 0, nv = 0;
    std::vector<std::uint64_t> offsets;  // CSR: rows (ju + nu * jv) -> triangle ids
    std::vector<std::uint32_t> tris;
};

std::int64_t snap(double c, double origin, double s) { return std::llround((c - origin) / s * kSnap); }

RowBins bin_rows(const TriMesh& mesh, const GridSpec& g, int axis) {
    RowBins b;
    b.axis = axis;
    b.au = (axis + 1) % 3;
    b.av = (axis + 2) % 3;
    b.nu = static_cast<std::size_t>(g.dims[b.au]);
    b.nv = static_cast<std::size_t>(g.dims[b.av]);
    const double s = g.voxel_size;
    auto row_span = [&](std::int64_t lo, std::int64_t hi, std::size_t n, std::int64_t& a, std::int64_t& z) {
        // Rows j with centre (2j+1) 2^19 in [lo, hi].
        a = std::max<std::int64_t>(0, (lo - kHalf + (kSnap - 1) >= 0 ? (lo - kHalf + static_cast<std::int64_t>(kSnap) - 1) / static_cast<std::int64_t>(kSnap) : 0));
        z = std::min<std::int64_t>(static_cast<std::int64_t>(n) - 1,
                                   hi - kHalf >= 0 ? (hi - kHalf) / static_cast<std::int64_t>(kSnap) : -1);
    };
    std::vector<std::uint32_t> count(b.nu * b.nv + 1, 0);
    auto for_each_row = [&](auto&& visit) {
        for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
            std::int64_t ulo = INT64_MAX, uhi = INT64_MIN, vlo = INT64_MAX, vhi = INT64_MIN;
            for (std::uint32_t vi : mesh.triangles[t]) {
                std::int64_t u = snap(mesh.vertices[vi][b.au], g.origin[b.au], s);
                std::int64_t v = snap(mesh.vertices[vi][b.av], g.origin[b.av], s);
                ulo = std::min(ulo, u), uhi = std::max(uhi, u), vlo = std::min(vlo, v), vhi = std::max(vhi, v);
            }
            std::int64_t u0, u1, v0, v1;
            row_span(ulo, uhi, b.nu, u0, u1);
            row_span(vlo, vhi, b.nv, v0, v1);
            for (std::int64_t jv = v0; jv <= v1; ++jv)
                for (std::int64_t ju = u0; ju <= u1; ++ju)
                    visit(static_cast<std::size_t>(ju) + b.nu * static_cast<std::size_t>(jv), static_cast<std::uint32_t>(t));
        }
    };
    for_each_row([&](std::size_t row, std::uint32_t) { ++count[row + 1]; });
    b.offsets.assign(count.size(), 0);
    for (std::size_t r = 1; r < count.size(); ++r) b.offsets[r] = b.offsets[r - 1] + count[r];
    b.tris.resize(b.offsets.back());
    std::vector<std::uint64_t> fill(b.offsets.begin(), b.offsets.end() - 1);
    for_each_row([&](std::size_t row, std::uint32_t t) { b.tris[fill[row]++] = t; });
    return b;
}

// Sorted positions (along the row axis, world units) where row (ju, jv) crosses the mesh.
void row_crossings(const TriMesh& mesh, const GridSpec& g, const RowBins& b, std::size_t ju, std::size_t jv,
                   std::vector<double>& xs) {
    xs.clear();
    const double s = g.voxel_size;
    const std::int64_t pu = static_cast<std::int64_t>(2 * ju + 1) * kHalf, pv = static_cast<std::int64_t>(2 * jv + 1) * kHalf;
    const double cu = g.origin[b.au] + (static_cast<double>(ju) + 0.5) * s;
    const double cv = g.origin[b.av] + (static_cast<double>(jv) + 0.5) * s;
    const std::size_t row = ju + b.nu * jv;
    for (std::uint64_t e = b.offsets[row]; e < b.offsets[row + 1]; ++e) {
        const auto& tri = mesh.triangles[b.tris[e]];
        Snapped p[3];
        for (int k = 0; k < 3; ++k) {
            const Vec3d& v = mesh.vertices[tri[static_cast<std::size_t>(k)]];
            p[k] = {snap(v[b.au], g.origin[b.au], s), snap(v[b.av], g.origin[b.av], s)};
        }
        int o0 = perturbed_orient(p[0], p[1], pu, pv), o1 = perturbed_orient(p[1], p[2], pu, pv),
            o2 = perturbed_orient(p[2], p[0], pu, pv);
        if (o0 == 0 || o0 != o1 || o1 != o2) continue;
        const Vec3d& a = mesh.vertices[tri[0]];
        Vec3d n = cross(mesh.vertices[tri[1]] - a, mesh.vertices[tri[2]] - a);
        double x;
        if (n[b.axis] != 0) {
            x = a[b.axis] - (n[b.au] * (cu - a[b.au]) + n[b.av] * (cv - a[b.av])) / n[b.axis];
        } else {
            x = (a[b.axis] + mesh.vertices[tri[1]][b.axis] + mesh.vertices[tri[2]][b.axis]) / 3;
        }
        xs.push_back(x);
    }
    std::sort(xs.begin(), xs.end());
}

// All crossings of all rows along one axis: CSR by row (ju + nu * jv), sorted within a row.
struct CrossingTable {
    int axis = 0;
    std::size_t nu = 0;
    std::vector<std::uint64_t> offsets;
    std::vector<double> xs;

    // Number of crossings of row (ju, jv) before position c, or -1 when the row abstains (an odd
    // number of crossings: it passes through a hole) and `abstain_odd` is set.
    int before(std::size_t ju, std::size_t jv, double c, bool abstain_odd) const {
        const std::size_t row = ju + nu * jv;
        const double* b = xs.data() + offsets[row];
        const double* e = xs.data() + offsets[row + 1];
        if (abstain_odd && ((e - b) & 1)) return -1;
        return static_cast<int>(std::lower_bound(b, e, c) - b);
    }
};

CrossingTable crossing_table(const TriMesh& mesh, const GridSpec& g, int axis) {
    RowBins b = bin_rows(mesh, g, axis);
    const std::size_t rows = b.nu * b.nv;
    std::vector<std::vector<double>> per_row(rows);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 256), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t row = r.begin(); row != r.end(); ++row)
            if (b.offsets[row] != b.offsets[row + 1]) row_crossings(mesh, g, b, row % b.nu, row / b.nu, per_row[row]);
    });
    CrossingTable t;
    t.axis = axis;
    t.nu = b.nu;
    t.offsets.assign(rows + 1, 0);
    for (std::size_t row = 0; row < rows; ++row) t.offsets[row + 1] = t.offsets[row] + per_row[row].size();
    t.xs.reserve(t.offsets.back());
    for (const auto& v : per_row) t.xs.insert(t.xs.end(), v.begin(), v.end());
    return t;
}

// Inside/outside of every non-surface voxel from the crossing parity of the rows through it:
// one pass in memory order, parallel over z-slices, no per-voxel vote storage. With one table
// (scanline) the x row decides; with three (vote) rows with odd counts abstain, the majority of
// the others decides, and voxels without a majority are returned (sorted) as undecided.
std::vector<std::size_t> classify(Work& w, const std::vector<CrossingTable>& tables, bool vote) {
    const GridSpec& g = w.grid;
    std::vector<std::vector<std::size_t>> undecided(w.nz);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, w.nz), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t k = r.begin(); k != r.end(); ++k) {
            const double cz = g.origin.z + (static_cast<double>(k) + 0.5) * g.voxel_size;
            for (std::size_t j = 0; j < w.ny; ++j) {
                const double cy = g.origin.y + (static_cast<double>(j) + 0.5) * g.voxel_size;
                std::uint16_t* row = &w.cells[k][j * w.nx];
                for (std::size_t i = 0; i < w.nx; ++i) {
                    if (row[i] == 0) continue;
                    const double cx = g.origin.x + (static_cast<double>(i) + 0.5) * g.voxel_size;
                    int ins = 0, valid = 0;
                    for (const CrossingTable& t : tables) {
                        // Rows run along t.axis and are indexed by the next two axes (cyclic).
                        int n = t.axis == 0 ? t.before(j, k, cx, vote)
                                            : (t.axis == 1 ? t.before(k, i, cy, vote) : t.before(i, j, cz, vote));
                        if (n < 0) continue;
                        ++valid;
                        ins += n & 1;
                    }
                    if (2 * ins > valid) row[i] |= 1;
                    else if (vote && 2 * ins == valid) undecided[k].push_back(k * w.slice + j * w.nx + i);
                }
            }
        }
    });
    std::vector<std::size_t> all;
    for (const auto& u : undecided) all.insert(all.end(), u.begin(), u.end());
    return all;
}

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
    std::atomic<std::size_t> done{0};
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, w.nz), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t k = r.begin(); k != r.end(); ++k) {
            for (std::size_t o = 0; o < w.slice; ++o) {
                std::uint16_t& cell = w.cells[k][o];
                if (cell == 0) continue;
                int j = static_cast<int>(o / w.nx), i = static_cast<int>(o % w.nx);
                if (inside_by_winding(winding, mesh, w.grid.center(i, j, static_cast<int>(k)))) cell |= 1;
            }
            progress.report("fill", static_cast<double>(done.fetch_add(1) + 1) / static_cast<double>(w.nz));
        }
    });
    progress.report("fill", 1.0);
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

// ---------------------------------------------------------------------------------------------
// Phase 3: layers as the breadth-first distance from the surface through voxels of the same side,
// by chamfer sweeps (forward and backward in memory order, half of the 26- or 6-neighbourhood
// each), keeping each cell's inside bit. A step may leave a surface voxel to either side but
// never go from an inside to an outside voxel. When no such step is ever refused (closed meshes:
// a surface that separates two neighbouring centres overlaps one of their cubes) the constraint
// is void and one forward + one backward sweep give the exact Chebyshev (26) or Manhattan (6)
// distance to the nearest surface voxel. Otherwise (fills of open meshes, where inside and
// outside voxels can touch at a hole) sweeps repeat until nothing changes, which is the
// breadth-first distance inside each side.

inline std::uint16_t dist(std::uint16_t c) { return static_cast<std::uint16_t>(c >> 1); }

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

}  // namespace

std::vector<std::int32_t> LayerMap::values() const {
    std::vector<std::int32_t> v;
    v.reserve(grid.count());
    for (const auto& slice : slices) v.insert(v.end(), slice.begin(), slice.end());
    return v;
}

LayerMap voxelize(const TriMesh& mesh, const GridSpec& grid, const VoxelizeOptions& options, const Progress& progress) {
    for (int a = 0; a < 3; ++a)
        if (grid.dims[a] < 1 || grid.dims[a] > kMaxGridDim)
            fail_usage("the grid has " + std::to_string(grid.dims[a]) + " voxels along an axis; at most " +
                       std::to_string(kMaxGridDim) + " are supported");
    if (options.connectivity != 26 && options.connectivity != 6) fail_usage("--connectivity must be 26 or 6");
    if (options.max_layers < 0) fail_usage("--max-layers must be >= 0 (0 = unlimited)");
    if (mesh.triangles.empty()) fail_input("", "the mesh has no triangles");

    Work w;
    w.grid = grid;
    w.nx = static_cast<std::size_t>(grid.dims[0]);
    w.ny = static_cast<std::size_t>(grid.dims[1]);
    w.nz = static_cast<std::size_t>(grid.dims[2]);
    w.slice = w.nx * w.ny;
    w.cells.assign(w.nz, std::vector<std::uint16_t>());
    tbb::parallel_for(std::size_t{0}, w.nz, [&](std::size_t k) { w.cells[k].assign(w.slice, kUnknown); });

    LayerMap out;
    out.grid = grid;
    auto t0 = Clock::now();
    mark_surface(mesh, w, progress);
    out.seconds_surface = seconds_since(t0);

    t0 = Clock::now();
    FillMethod method = options.fill;
    if (method == FillMethod::automatic) {
        MeshDiagnostics d = diagnose(mesh);
        method = d.watertight ? FillMethod::scanline : FillMethod::vote;
    }
    out.fill_used = method;
    switch (method) {
    case FillMethod::scanline: fill_scanline(mesh, w, progress); break;
    case FillMethod::vote: out.undecided = fill_vote(mesh, w, progress, out.by_winding); break;
    case FillMethod::winding: fill_winding(mesh, w, progress); break;
    case FillMethod::flood: fill_flood(w, progress); break;
    case FillMethod::automatic: break;
    }
    out.seconds_fill = seconds_since(t0);

    t0 = Clock::now();
    out.layer_sweeps = compute_layers(w, options.connectivity, progress, out.flipped);
    // Signed layer values, one slice at a time, freeing the working slice as we go.
    out.slices.resize(w.nz);
    int lo = 0, hi = 0;
    for (std::size_t k = 0; k < w.nz; ++k) {
        std::vector<std::int16_t> s(w.slice);
        const std::vector<std::uint16_t>& c = w.cells[k];
        for (std::size_t o = 0; o < w.slice; ++o) {
            int d = dist(c[o]);
            if (options.max_layers > 0) d = std::min(d, options.max_layers);
            int v = c[o] & 1 ? d : -d;
            s[o] = static_cast<std::int16_t>(v);
            if (v > 0) ++out.inside;
            else if (v < 0) ++out.outside;
            else ++out.surface;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
        out.slices[k] = std::move(s);
        std::vector<std::uint16_t>().swap(w.cells[k]);
    }
    out.min_layer = lo;
    out.max_layer = hi;
    out.seconds_layers = seconds_since(t0);
    return out;
}

}  // namespace hp
