#pragma once
// Internal to lib/voxel: the working grid the voxelizer's phases share (not installed, not for
// other modules). Method and proofs: docs/voxelize.md.
//
// A working cell is a uint16: (distance << 1) | inside. Surface voxels are 0; every other cell
// starts as kUnknown (distance kFarDist, outside). surface.cpp clears the surface cells, the fills
// (fill.cpp, with the crossing tables of crossings.cpp) set the inside bits, layers.cpp turns the
// distances into breadth-first layers. Each phase is TBB-parallel inside and deterministic; each
// reports progress from the calling thread only.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/progress.hpp"
#include "mesh/mesh.hpp"
#include "voxel/grid.hpp"

namespace hp::voxel_detail {

inline constexpr std::uint16_t kFarDist = 32767;
inline constexpr std::uint16_t kUnknown = static_cast<std::uint16_t>(kFarDist << 1);

inline std::uint16_t dist(std::uint16_t c) { return static_cast<std::uint16_t>(c >> 1); }

struct Work {
    GridSpec grid;
    std::size_t nx = 0, ny = 0, nz = 0, slice = 0;
    // [z][y * nx + x]: views of the output's int16 slices (LayerMap::slices), whose storage the
    // cells share as uint16, the type that may alias it; voxelize() converts them in place.
    std::vector<std::span<std::uint16_t>> cells;

    std::uint16_t& at(std::size_t i, std::size_t j, std::size_t k) { return cells[k][j * nx + i]; }
    std::uint16_t at(std::size_t i, std::size_t j, std::size_t k) const { return cells[k][j * nx + i]; }
};

// surface.cpp: clears every cell whose closed cube overlaps a triangle (13-axis SAT).
void mark_surface(const TriMesh& mesh, Work& w, const Progress& progress);

// crossings.cpp: the crossings of every grid row along `axis` with the mesh, CSR by row
// (ju + nu * jv, ju and jv the next two axes in cyclic order), sorted within a row. With
// `with_winding`, also the signed crossing count along the row: winding_after[e] is the sum over
// the row's crossings up to e of -1 where the triangle's normal points along the row and +1 where
// it points against it, which is the jump of the winding number there.
struct CrossingTable {
    int axis = 0;
    std::size_t nu = 0;
    std::vector<std::uint64_t> offsets;
    std::vector<double> xs;             // positions along `axis`, world units
    std::vector<int> winding_after;     // empty unless asked for

    // Crossings of row (ju, jv) before position c, or -1 when `abstain_odd` is set and the row
    // has an odd number of crossings (it passes through a hole).
    int before(std::size_t ju, std::size_t jv, double c, bool abstain_odd) const {
        const std::size_t row = ju + nu * jv;
        const double* b = xs.data() + offsets[row];
        const double* e = xs.data() + offsets[row + 1];
        if (abstain_odd && ((e - b) & 1)) return -1;
        return static_cast<int>(std::lower_bound(b, e, c) - b);
    }
    // Signed crossing count of row (ju, jv) before position c (needs winding_after); the count of
    // crossings before c (the parity) in `before_count`.
    int signed_before(std::size_t ju, std::size_t jv, double c, int& before_count) const {
        const std::size_t row = ju + nu * jv;
        const double* b = xs.data() + offsets[row];
        const double* e = xs.data() + offsets[row + 1];
        const std::size_t n = static_cast<std::size_t>(std::lower_bound(b, e, c) - b);
        before_count = static_cast<int>(n);
        return n == 0 ? 0 : winding_after[offsets[row] + n - 1];
    }
};
CrossingTable crossing_table(const TriMesh& mesh, const GridSpec& g, int axis, bool with_winding = false);
// The tables of axes 0 .. axes - 1, built at the same time (the same tables as one by one).
std::vector<CrossingTable> crossing_tables(const TriMesh& mesh, const GridSpec& g, int axes, bool with_winding = false);

// crossings.cpp: sets the inside bit of every non-surface cell from the parity of the rows
// through it: one table (scanline) decides alone; with three (vote = true) rows with odd counts
// abstain and the majority decides. Returns the cells without a majority, sorted by index.
std::vector<std::size_t> classify(Work& w, const std::vector<CrossingTable>& tables, bool vote);

// fill.cpp: the inside bit of every non-surface cell, by each FillMethod. fill_vote returns the
// number of cells without a majority and sets `by_winding` to those the winding number decided.
void fill_scanline(const TriMesh& mesh, Work& w, const Progress& progress);
std::size_t fill_vote(const TriMesh& mesh, Work& w, const Progress& progress, std::size_t& by_winding);
void fill_winding(const TriMesh& mesh, Work& w, const Progress& progress);
// fill_hybrid: the generalized winding number where the vote is not unanimous or the winding
// number is decisive (|w - 1/2| > 0.1), the unanimous vote elsewhere; returns how many cells
// each rule decided and how many needed the winding number evaluated at their centre.
struct HybridCounts {
    std::size_t by_vote = 0, by_winding = 0, evaluated = 0, lattice = 0;
};
HybridCounts fill_hybrid(const TriMesh& mesh, Work& w, const Progress& progress);
void fill_flood(Work& w, const Progress& progress);

// layers.cpp: breadth-first distances to the surface within each side (26 or 6 connectivity).
// Returns the chamfer sweeps made (2 when the sides never touch); `flipped` counts the cells of
// unreachable pockets moved to the side around them.
int compute_layers(Work& w, int connectivity, const Progress& progress, std::size_t& flipped);

}  // namespace hp::voxel_detail
