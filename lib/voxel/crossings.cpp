// Phase 2 of the voxelizer, first half: where grid rows cross the mesh, and the parity rule.
// In: the mesh and the grid. Out: per row along an axis, the sorted crossing positions (world
// units); classify() sets the inside bit of each non-surface voxel from them.
// Exactness: vertices snapped to s / 2^20 relative to the grid origin, 128-bit orientation tests,
// ties broken by a symbolic perturbation of the row, so a row through an edge or a vertex counts
// each crossing once (docs/voxelize.md). Exact for closed meshes, any orientation.
// Cost: O(triangle bounding-box rows) binning + one double per crossing. Threads: TBB over rows
// and z-slices, results merged in row order (deterministic).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "voxel/work.hpp"

namespace hp::voxel_detail {
namespace {

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
    std::vector<Snapped> snapped;  // per vertex: its (u, v) snapped
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
    b.snapped.resize(mesh.vertices.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, mesh.vertices.size(), 4096), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t i = r.begin(); i != r.end(); ++i)
            b.snapped[i] = {snap(mesh.vertices[i][b.au], g.origin[b.au], s), snap(mesh.vertices[i][b.av], g.origin[b.av], s)};
    });
    std::vector<std::uint32_t> count(b.nu * b.nv + 1, 0);
    auto for_each_row = [&](auto&& visit) {
        for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
            std::int64_t ulo = INT64_MAX, uhi = INT64_MIN, vlo = INT64_MAX, vhi = INT64_MIN;
            for (std::uint32_t vi : mesh.triangles[t]) {
                const std::int64_t u = b.snapped[vi].u, v = b.snapped[vi].v;
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

// Sorted positions (along the row axis, world units) where row (ju, jv) crosses the mesh, with the
// sign of each crossing: +1 where the triangle's normal points along the row (leaving an outward
// wound solid), -1 against it.
void row_crossings(const TriMesh& mesh, const GridSpec& g, const RowBins& b, std::size_t ju, std::size_t jv,
                   std::vector<std::pair<double, int>>& xs) {
    xs.clear();
    const double s = g.voxel_size;
    const std::int64_t pu = static_cast<std::int64_t>(2 * ju + 1) * kHalf, pv = static_cast<std::int64_t>(2 * jv + 1) * kHalf;
    const double cu = g.origin[b.au] + (static_cast<double>(ju) + 0.5) * s;
    const double cv = g.origin[b.av] + (static_cast<double>(jv) + 0.5) * s;
    const std::size_t row = ju + b.nu * jv;
    for (std::uint64_t e = b.offsets[row]; e < b.offsets[row + 1]; ++e) {
        const auto& tri = mesh.triangles[b.tris[e]];
        const Snapped p[3] = {b.snapped[tri[0]], b.snapped[tri[1]], b.snapped[tri[2]]};
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
        // All three orientations equal o0: the projected triangle winds counter-clockwise in
        // (u, v) exactly when its normal has a positive component along the row.
        xs.emplace_back(x, o0);
    }
    std::sort(xs.begin(), xs.end());
}

}  // namespace

CrossingTable crossing_table(const TriMesh& mesh, const GridSpec& g, int axis, bool with_winding) {
    RowBins b = bin_rows(mesh, g, axis);
    const std::size_t rows = b.nu * b.nv;
    // Rows in chunks of a fixed size, each chunk's crossings in one buffer (no vector per row):
    // counts per row, then the offsets, then every chunk copied to its place.
    constexpr std::size_t kChunk = 4096;
    const std::size_t chunks = (rows + kChunk - 1) / kChunk;
    std::vector<std::vector<std::pair<double, int>>> found(chunks);
    std::vector<std::uint32_t> count(rows, 0);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, chunks, 1), [&](const tbb::blocked_range<std::size_t>& r) {
        std::vector<std::pair<double, int>> xs;
        for (std::size_t c = r.begin(); c != r.end(); ++c)
            for (std::size_t row = c * kChunk; row < std::min(rows, (c + 1) * kChunk); ++row) {
                if (b.offsets[row] == b.offsets[row + 1]) continue;
                row_crossings(mesh, g, b, row % b.nu, row / b.nu, xs);
                count[row] = static_cast<std::uint32_t>(xs.size());
                found[c].insert(found[c].end(), xs.begin(), xs.end());
            }
    });
    CrossingTable t;
    t.axis = axis;
    t.nu = b.nu;
    t.offsets.assign(rows + 1, 0);
    for (std::size_t row = 0; row < rows; ++row) t.offsets[row + 1] = t.offsets[row] + count[row];
    t.xs.resize(t.offsets.back());
    if (with_winding) t.winding_after.resize(t.offsets.back());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, chunks, 1), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t c = r.begin(); c != r.end(); ++c) {
            const std::size_t first = c * kChunk, at = t.offsets[first];
            const auto& v = found[c];
            for (std::size_t e = 0; e < v.size(); ++e) t.xs[at + e] = v[e].first;
            if (!with_winding) continue;
            // Per row, the signed count after each crossing.
            std::size_t e = 0;
            for (std::size_t row = first; row < std::min(rows, first + kChunk); ++row) {
                int w = 0;
                for (std::uint32_t k = 0; k < count[row]; ++k, ++e) t.winding_after[at + e] = w -= v[e].second;
            }
        }
    });
    return t;
}

std::vector<CrossingTable> crossing_tables(const TriMesh& mesh, const GridSpec& g, int axes, bool with_winding) {
    std::vector<CrossingTable> tables(static_cast<std::size_t>(axes));
    tbb::parallel_for(0, axes, [&](int axis) { tables[static_cast<std::size_t>(axis)] = crossing_table(mesh, g, axis, with_winding); });
    return tables;
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

}  // namespace hp::voxel_detail
