#pragma once
// lib/field/field — the static object's distance function V(P) for queries.
//
// In: one signed distance per voxel of a grid (inside positive, world units). Out: V(P), the
// trilinear interpolant of the samples at voxel centres, continued outside the grid's centre box
// as V(c(P)) - |P - c(P)| (c: projection onto the box); grad V; upper bounds of V over a ball
// (the query's sphere test) and local and global slope (Lipschitz) bounds, from a pyramid of
// per-block maxima. Samples held as float when every value is a float, else double.
// Cost: value and upper_bound read one cell and one 64-byte pyramid entry; probe_* issue those
// reads ahead (prefetch) for a traversal. Construction O(voxels).
// Threads: const methods may run concurrently; build once, then read.
// Why trilinear (not Sagardia et al. 2014, eq. 4 or 5), the storage, and the proof of the bounds:
// docs/field.md.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "math/vec.hpp"
#include "voxel/brick.hpp"
#include "voxel/grid.hpp"

namespace hp {

namespace detail {
// Allocator of the field's samples: 2 MiB aligned and, on Linux, advised to use transparent huge
// pages. Queries read the field at random places (each contact pose starts cold); with 4 KiB
// pages almost every read of a large field also misses the TLB.
template <class T>
struct HugePageAllocator {
    using value_type = T;
    HugePageAllocator() = default;
    template <class U>
    HugePageAllocator(const HugePageAllocator<U>&) {}
    T* allocate(std::size_t n);
    void deallocate(T* p, std::size_t) noexcept;
    template <class U>
    bool operator==(const HugePageAllocator<U>&) const { return true; }
};

// The three axes of a point in vector lanes, for the hot paths of field.cpp (defined there).
struct AxisLanes;
}  // namespace detail

// What a ball of the moving object's tree needs to know of V inside it (ball_bound).
struct BallBound {
    double lipschitz = 0;  // bound on |V(P) - V(Q)| / |P - Q| for P, Q in the ball
    double interior_lipschitz = 0;  // the same for P, Q in the ball's projection onto the centre box
    double max_value = 0;  // bound on V(P) for P in the ball (from the samples of the cells it meets)
};

class DistanceSampler {
public:
    DistanceSampler() = default;
    // `values`: one signed distance per voxel of `grid` (x fastest), inside positive. Held in
    // bricks of 4^3 samples, as float when every value is a float (a float or scaled field file:
    // half the memory traffic of double, nothing lost), as double otherwise (a double field
    // keeps its precision).
    DistanceSampler(const GridSpec& grid, std::span<const double> values);
    // The same from float values (a float field in memory): the sampler the doubles of those
    // floats give, bit for bit, without a double copy.
    DistanceSampler(const GridSpec& grid, std::span<const float> values);
    // A narrow-band field, sparse: its bricks of 8^3 samples are kept (as float when every value
    // is a float) behind a table of one brick number per block of the coarse grid; a tiled block
    // points at one shared brick per distinct tile value. Band samples below the least negative
    // tile value (-B s outside) or above the largest positive one (+B s inside) read that value,
    // as the band's definition has it; otherwise values, gradients and contacts are those of the
    // dense sampler over the expanded field, bit for bit (the contacts too where no point is
    // deeper than (B - sqrt 3) s). The sphere test adds the bound of the field's floor F (the
    // least tile value, the far tiles' -B s): a ball (X, r) whose centre lies at least T from
    // every cell with a corner above F stays at most F + L (r - T). Memory: the bricks, and per
    // block of the coarse grid a brick number, the bound pyramid's entries (from blocks of 8^3
    // cells up) and eight sub-block distances. docs/field.md, "Narrow-band fields".
    explicit DistanceSampler(const BrickField<double>& band);

    const GridSpec& grid() const { return grid_; }
    double value(const Vec3d& p) const;
    // Sagardia et al. 2014, eq. 5: V(C) + grad(C) . (P - C) at the nearest voxel centre C, with the gradient
    // by central differences; defined inside the grid only (clamped outside).
    double gradient_value(const Vec3d& p) const;
    // grad V at p: the interpolant's own gradient in the cell that holds p (on a face between
    // cells, the upper cell's), and outside the centre box the gradient of the extension
    // V(c(P)) - |P - c(P)|; points towards increasing V (into the static object). One cell read;
    // defined in field_gradient.cpp.
    Vec3d gradient(const Vec3d& p) const;
    double lipschitz() const { return lipschitz_; }
    // A bound on |V(P) - V(Q)| / |P - Q| for P and Q in the ball (center, radius); never above
    // lipschitz().
    double lipschitz(const Vec3d& center, double radius) const { return ball_bound(center, radius).lipschitz; }
    // Both bounds of the ball (center, radius) from one read of the pyramid (one 64-byte entry).
    BallBound ball_bound(const Vec3d& center, double radius) const;
    // An upper bound of V over the ball (center, radius): the largest sample of the ball's blocks
    // less the ball's least distance outside the centre box, when that is negative (no read of
    // the field: cheap pruning away from the static object), else the smallest of it,
    // V(c(center)) + L_in radius less that distance (c: projection onto the centre box) and
    // V(center) + L radius (docs/field.md).
    double upper_bound(const Vec3d& center, double radius) const;
    double max_value() const { return max_value_; }

    // The sphere test in two steps, so that a traversal can ask the memory for a sphere's reads a
    // few spheres before it needs them (their cold reads would otherwise wait one after another):
    // probe_sphere finds the ball's pyramid entry and issues prefetches for it and for the
    // centre's cell; upper_bound(probe) is then upper_bound(center, radius), bit for bit.
    // BlockBound: the bounds of a pyramid entry for one mask (see the pyramid below).
    struct BlockBound {
        float lipschitz, max_value;
    };
    // Where the cell holding (the projection onto the centre box of) a point lies, and the
    // point's place in it.
    struct CellRef {
        std::size_t offset[3][2];  // corner (di, dj, dk) at offset[0][di] + offset[1][dj] + offset[2][dk]
        double frac[3];            // the point's fractions in the cell
        double out[3];             // the point minus its projection, per axis (cell units; 0 inside)
    };
    struct SphereProbe {
        CellRef cell;  // the centre's
        double radius = 0;
        const BlockBound* block = nullptr;  // the ball's merged pyramid bounds
        bool leaves = false;  // the ball's box leaves the centre box
        // Sparse: the bound of the centre's sub-block on the distance to the cells above the floor
        // (gap_) and the distance (cells) from c(center) to the sub-block's centre.
        const float* gap_entry = nullptr;
        double centre_offset = 0;
    };
    // A pyramid entry (see the pyramid below): one cache line.
    struct alignas(64) PyramidEntry {
        BlockBound by_mask[8];
    };
    // The arrays and scalars the lookups read, where they lie: what a prepared sampler file
    // stores (formats/sampler.md). The rest (axis tables, the pyramid's levels, the sub-block
    // grid) follows from the grid. One of samples_f and samples_d holds the samples; block_brick
    // and gap are empty for a dense sampler.
    struct Layout {
        GridSpec grid;
        bool sparse = false;
        std::span<const float> samples_f;
        std::span<const double> samples_d;
        std::span<const PyramidEntry> pyramid;
        std::span<const std::uint32_t> block_brick;
        std::span<const float> gap;
        double lipschitz = 1, max_value = 0;
        double floor_sample = 0;  // sparse: the least tile value (+inf without tiles)
        std::uint32_t first_tile_brick = 0;
    };
    Layout layout() const;
    // A sampler that reads the arrays of `layout` where they lie, without a copy (a mapped file):
    // `keep` holds them alive, shared by the copies of the sampler. Checks that every array has
    // the size the grid gives and the pyramid's alignment, that a sparse table names only held
    // bricks, and that the scalars are finite; throws hp::Error(bad_input) saying which (the
    // caller names the file). Values, gradients and bounds are then those of the sampler whose
    // layout() it was, bit for bit.
    DistanceSampler(const Layout& layout, std::shared_ptr<const void> keep);

    // Writes the probe into `out` (a traversal's ring slot).
    void probe_sphere(const Vec3d& center, double radius, SphereProbe& out) const;
    // For a probe made a few tests earlier, whose reads have arrived: every term is computed and
    // the result chosen without a branch (whether the block's largest sample decides the test
    // alone is close to random from one ball to the next, and a wrong guess costs more than the
    // arithmetic).
    double upper_bound(const SphereProbe& probe) const;
    // The same value for a probe tested at once (its reads still on their way): the centre's cell
    // is read only when the block's largest sample leaves the test undecided, so that such a ball
    // waits for one cold line, not for the block's and the cell's.
    double upper_bound_lazy(const SphereProbe& probe) const;
    // The same for a point: probe_value(p, cell) issues prefetches for what value(p) reads;
    // value(cell) is then value(p).
    void probe_value(const Vec3d& p, CellRef& out) const;
    double value(const CellRef& cell) const;

    // The largest value on the grid's six border faces of voxels. Negative when the static object
    // stays inside the grid, which makes the extension outside the grid safe (never a contact).
    double border_max_value() const;
    // The stored sample of voxel (i, j, k) (inside the grid).
    double sample(int i, int j, int k) const { return at(i, j, k); }

    // True when the samples are held as float (see the constructor).
    bool float_samples() const { return !samples_f_.empty(); }
    // True for a sparse (narrow-band) sampler.
    bool sparse() const { return sparse_; }
    // Bytes held by the samples, the tables (axes, blocks, sub-block bounds) and the pyramid.
    std::size_t memory_bytes() const;

private:
    // Index of sample (i, j, k): brick (i/4, j/4, k/4) in x-fastest order, 64 samples per brick,
    // (i%4) + 4 (j%4) + 16 (k%4) inside it. It is a sum of one term per axis.
    std::size_t axis_offset(int axis, int i) const {
        return static_cast<std::size_t>(i >> 2) * brick_stride_[axis] + (static_cast<std::size_t>(i & 3) << (2 * axis));
    }
    std::size_t offset(int i, int j, int k) const { return axis_offset(0, i) + axis_offset(1, j) + axis_offset(2, k); }
    // The place of a sample from its summed axis terms (axis_table_): dense, the index itself;
    // sparse, block number (high bits, from bit 9) and place in the block (low 9 bits).
    template <bool Sparse>
    std::size_t resolve(std::size_t s) const {
        if constexpr (Sparse)
            return (static_cast<std::size_t>(block_brick_[s >> 9]) << 9) + (s & 511);
        else
            return s;
    }
    std::size_t place(int i, int j, int k) const {
        const std::size_t s = axis_table_[0][static_cast<std::size_t>(i)] + axis_table_[1][static_cast<std::size_t>(j)] +
                              axis_table_[2][static_cast<std::size_t>(k)];
        return sparse_ ? resolve<true>(s) : s;
    }
    double at(int i, int j, int k) const {
        return float_samples() ? samples_f_[place(i, j, k)] : samples_d_[place(i, j, k)];
    }
    // The cell that holds the projection of a point onto the centre box (locate_cell) and its
    // eight samples (corner (di, dj, dk) at di + 2 dj + 4 dk).
    struct Cell {
        CellRef ref;
        double corner[8];
    };
    // Writes the cell of world point p (of its projection onto the centre box) into `out`.
    void locate_cell(const Vec3d& p, CellRef& out) const;
    void locate_cell_at(const detail::AxisLanes& u, CellRef& out) const;  // u: continuous cell coordinates
    // Continuous cell coordinates of world point p: voxel centre (i, j, k) is at (i, j, k).
    detail::AxisLanes to_cells(const Vec3d& p) const;
    void prefetch(const CellRef& cell) const;
    void read_corners(const CellRef& cell, double (&corner)[8]) const;
    void read_cell(const Vec3d& p, Cell& cell) const;  // p: world point
    // V at the projection of the cell's point onto the centre box (the trilinear interpolant of
    // the cell's samples).
    double trilinear(const CellRef& cell) const;
    // The world distance from the cell's point to its projection onto the centre box (0 inside).
    double outside_distance(const CellRef& cell) const;
    // The pyramid entry of a ball (cell coordinates) and whether its box leaves the centre box.
    const BlockBound& locate(const detail::AxisLanes& u, double rc, bool& leaves) const;
    BallBound merge_block(const BlockBound& b, bool leaves) const;
    template <bool Lazy>
    double probe_bound(const SphereProbe& probe) const;  // upper_bound (false), upper_bound_lazy (true)
    void locate_sphere(const Vec3d& center, double radius, SphereProbe& out) const;  // probe_sphere without prefetching
    // A ball's radius in voxels, a hair wider: a point placed on its surface by a rounded
    // transform still falls in a cell that is read.
    double radius_in_cells(double radius) const { return radius * inv_s_ + 1e-7; }

    // Checks the voxel size and sets the hot paths' per-axis constants (inv_s_, top_, last_cell_,
    // origin_) from grid_.
    void set_axes();
    // The dense constructors' body: bricks of T from `values` (x fastest), then the bounds.
    template <class T, class V>
    void build_dense(std::span<const V> values);
    // The arrays a sampler builds; shared by its copies, read through the spans below.
    struct Owned {
        std::vector<float, detail::HugePageAllocator<float>> samples_f;
        std::vector<double, detail::HugePageAllocator<double>> samples_d;
        std::vector<PyramidEntry, detail::HugePageAllocator<PyramidEntry>> pyramid;
        std::vector<std::uint32_t> block_brick;
        std::vector<float> gap;
    };
    void build_local_bounds(Owned& own);
    // levels_, top_shift_ from level 0's blocks per axis; returns the pyramid's entries.
    std::size_t set_levels(std::array<int, 3> bd);
    // Level 0's blocks per axis (of 4^3 cells dense, 8^3 sparse).
    std::array<int, 3> level0_dims() const;
    // The axis tables (axis_table_, brick_stride_) of a dense or sparse sampler of grid_.
    void set_axis_tables();
    // Cells per axis: between centres i..i+1; an axis with one centre has one degenerate cell.
    std::array<int, 3> cell_counts() const;
    double at_clamped(int i, int j, int k) const;  // at() with each index clamped to the grid's top
    // Cell (i, j, k)'s largest slope and largest corner merged into block bound `m`, the slope
    // also into `inside`; returns the largest corner.
    double add_cell(int i, int j, int k, BlockBound& m, double& inside) const;
    // Level 0 of the pyramid (blocks of 4^3 cells dense, 8^3 sparse, dims `bd`) and the largest
    // cell slope; sparse, also the blocks holding a cell above the floor (`raised`).
    double dense_level0(std::vector<BlockBound>& level, const std::array<int, 3>& bd) const;
    // The box (cell coordinates) of a block's cells with a corner above the floor; empty if none.
    struct RaisedBox {
        int lo[3] = {1 << 30, 1 << 30, 1 << 30}, hi[3] = {-(1 << 30), -(1 << 30), -(1 << 30)};
        bool empty() const { return lo[0] > hi[0]; }
    };
    double sparse_level0(std::vector<BlockBound>& level, const std::array<int, 3>& bd, std::vector<RaisedBox>& raised) const;
    // gap_ from the raised blocks (sparse).
    void build_gaps(const std::vector<RaisedBox>& raised, const std::array<int, 3>& bd, Owned& own);
    // f(sparse, samples): `sparse` std::true_type or std::false_type (sparse_), `samples` the
    // float or double array; one branch per call, not one per read (read_corners). trilinear and
    // prefetch spell the same choice out: through this function they compile to other code.
    template <class F>
    decltype(auto) with_samples(F&& f) const;
    template <bool Sparse, class T>
    void prefetch_in(const T* base, const CellRef& cell) const;
    template <bool Sparse, class T>
    double trilinear_in(const T* samples, const CellRef& cell) const;

    GridSpec grid_;
    double inv_s_ = 1;  // 1 / voxel size: the hot paths multiply instead of dividing
    // Per axis x, y, z and a fourth, unused lane 0 (detail::AxisLanes).
    alignas(16) std::array<double, 4> origin_{0, 0, 0, 0};  // grid_.origin
    alignas(16) std::array<double, 4> top_{0, 0, 0, 0};  // dims - 1: the centre box in cell coordinates
    // max(0, dims - 2): the last cell (its lower corner), as double for the clamps.
    alignas(16) std::array<double, 4> last_cell_{0, 0, 0, 0};
    std::array<std::size_t, 3> brick_stride_{0, 0, 0};  // samples from one brick to the next along each axis
    // axis_table_[a][i] = axis_offset(a, i) for i in 0..dims - 1, and once more for dims - 1 at
    // index dims (a cell's upper corner on a one-voxel axis): the hot paths look offsets up.
    std::array<std::vector<std::size_t>, 3> axis_table_;
    // What holds the arrays below: the Owned a constructor built, or a mapped file (Layout).
    std::shared_ptr<const void> storage_;
    // Bricks in x-fastest order, 64 samples each, x fastest inside (the last bricks' slots beyond
    // the grid are never read). One of the two holds them, the other is empty.
    std::span<const float> samples_f_;
    std::span<const double> samples_d_;
    // Pyramid of per-block bounds: level m has blocks of (4 * 2^m)^3 cells, dims
    // `levels_[m].dims`, x fastest; per block the largest cell gradient bound (already divided
    // by s) and the largest sample of its cells, merged over the blocks from it upwards along
    // the axes of a mask (bit a set: blocks b and b + 1 along axis a, clipped to the grid). A
    // ball's box that spans at most two blocks per axis then reads one entry, one cache line,
    // with the same bound as the union of the blocks it meets (PyramidEntry).
    // All levels in one array, level after level: entry (i, j, k) of level m at
    // levels_[m].first + k * levels_[m].dxy + j * levels_[m].dx + i.
    struct PyramidLevel {
        std::size_t first = 0, dxy = 0, dx = 0;
        std::array<int, 3> dims{0, 0, 0};
    };
    std::span<const PyramidEntry> pyramid_;
    std::vector<PyramidLevel> levels_;
    int base_shift_ = 2;  // log2 of level 0's block edge in cells: 2 dense, 3 sparse
    int top_shift_ = 2;  // log2 of the top level's block edge in cells (base_shift_ + the top level)
    // Sparse: per block of 8^3 voxels (x fastest, BrickField's order) the number of its brick in
    // the samples (a tiled block: its tile value's shared brick); per sub-block of 4^3 cells a
    // lower bound (in voxel sizes; 0, no bound, when its centre may lie in such a cell) of the
    // distance from its centre to every cell with a corner above floor_ (build_gaps). floor_: the
    // least tile value (the far tiles' -B s) widened by the interpolation's rounding, so that a
    // cell whose corners are all at or below the tile value stays below floor_.
    bool sparse_ = false;
    std::span<const std::uint32_t> block_brick_;
    std::span<const float> gap_;
    std::array<int, 3> gap_dims_{0, 0, 0};  // sub-blocks of 4^3 cells per axis
    double floor_ = 0;
    double floor_sample_ = 0;  // the least tile value itself
    std::uint32_t first_tile_brick_ = 0;  // the tiles' shared bricks follow the band's
    double lipschitz_ = 1;
    double max_value_ = 0;
};

}  // namespace hp
