#pragma once
// lib/query/field — the static object's distance function V(P) for queries (paper 000 eq. 4/5).
//
// V is the trilinear interpolation of the signed distances stored at voxel centres (inside
// positive, world units). We interpolate instead of the paper's "voxel value + local term"
// (eq. 4) or gradient extrapolation (eq. 5) because trilinear interpolation is continuous across
// voxels (no force jumps at voxel faces) and exact for planes; eq. 5 is kept for comparison in
// `gradient_value`. Outside the grid's centre box, V(P) = V(clamp(P)) - |P - clamp(P)|, a
// continuous extension that keeps decreasing away from the object.
//
// Storage: the samples sit in bricks of 4^3, 16 float samples (one z layer of a brick) per cache
// line, so a cell's eight samples lie on two lines, or up to eight when the cell crosses a brick
// along x or y; as float when every value of the file is a float (the float and scaled encodings:
// nothing lost, half the memory traffic) and as double otherwise, in memory advised to use
// transparent huge pages. Queries read the field at random places (every contact pose starts
// cold) and one cold read waits about 150 ns, so the traversal asks for a sphere's or a point's
// cells a few tests before it reads them (probe_sphere, probe_value).
//
// The sphere test (`upper_bound(center, radius)`): an upper bound of V over a ball. One bad spot
// (an open mesh's hole, where inside voxels meet outside ones across the opening, makes the field
// jump by tens of voxels) would make a global Lipschitz bound useless for pruning, so the bounds
// are local. Per cell: the largest slope of the interpolant is exactly its largest corner
// gradient (inside a cell dV/dx is bilinear in y, z and constant in x, and likewise for y and z,
// so along any axis line |grad V|^2 is a sum of squares of affine functions, convex: its maximum
// over the cell is at a corner, where the gradient is (1/s) times the differences along the three
// cell edges that meet there); and the largest of its eight samples bounds V in it (trilinear
// interpolation is a convex combination). A segment inside the ball's box crosses only cells that
// meet the box, so the largest cell slope L over those cells bounds |V(P) - V(Q)| / |P - Q| in the
// ball, and the largest sample bounds V. Both are kept as maxima over blocks of 4^3 cells in a
// pyramid (each level halves the blocks per axis); a ball reads the union of the (at most 8)
// blocks its box meets at the level where that box spans at most two blocks per axis, stored
// premerged in one 64-byte entry (`ball_bound`). With a = max(0, dist(X, centre box) - r), a
// lower bound of |P - c(P)| over the ball (c: projection onto the grid's centre box),
// upper_bound returns the blocks' largest sample minus a when that is negative (a ball away from
// the static object is pruned without reading the field), else the smallest of it, V(c(X)) +
// L r - a (V(P) = V(c(P)) - |P - c(P)| and |c(P) - c(X)| <= r) and V(X) + sqrt(L^2 + 1) r (the
// slope of the extension outside the grid combined as below). Without the a, a ball a hundred
// voxels below the bunny's open bottom passed the test: its border cells are steep (L ~ 45).
// `lipschitz(center, radius)` is the ball's Lipschitz bound (sqrt(L^2 + 1) when it leaves the box).
//
// Global bound: `lipschitz()` is a bound L on |V(P) - V(Q)| / |P - Q| over all space: the largest
// cell slope L_in combined with the slope 1 of the extension outside the grid as
// sqrt(L_in^2 + 1) (see field.cpp). The query's sphere test is what makes the hierarchical
// traversal find exactly the colliding points that brute force finds.
#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "math/vec.hpp"
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

    const GridSpec& grid() const { return grid_; }
    double value(const Vec3d& p) const;
    // Paper eq. 5: V(C) + grad(C) . (P - C) at the nearest voxel centre C, with the gradient
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
    // V(center) + L radius (see the top of this file).
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
    };
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

private:
    // Index of sample (i, j, k): brick (i/4, j/4, k/4) in x-fastest order, 64 samples per brick,
    // (i%4) + 4 (j%4) + 16 (k%4) inside it. It is a sum of one term per axis.
    std::size_t axis_offset(int axis, int i) const {
        return static_cast<std::size_t>(i >> 2) * brick_stride_[axis] + (static_cast<std::size_t>(i & 3) << (2 * axis));
    }
    std::size_t offset(int i, int j, int k) const { return axis_offset(0, i) + axis_offset(1, j) + axis_offset(2, k); }
    double at(int i, int j, int k) const {
        return float_samples() ? samples_f_[offset(i, j, k)] : samples_d_[offset(i, j, k)];
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

    void build_local_bounds();

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
    // Bricks in x-fastest order, 64 samples each, x fastest inside (the last bricks' slots beyond
    // the grid are never read). One of the two holds them, the other is empty.
    std::vector<float, detail::HugePageAllocator<float>> samples_f_;
    std::vector<double, detail::HugePageAllocator<double>> samples_d_;
    // Pyramid of per-block bounds: level m has blocks of (4 * 2^m)^3 cells, dims
    // `levels_[m].dims`, x fastest; per block the largest cell gradient bound (already divided
    // by s) and the largest sample of its cells, merged over the blocks from it upwards along
    // the axes of a mask (bit a set: blocks b and b + 1 along axis a, clipped to the grid). A
    // ball's box that spans at most two blocks per axis then reads one entry, one cache line,
    // with the same bound as the union of the blocks it meets.
    struct alignas(64) PyramidEntry {
        BlockBound by_mask[8];
    };
    // All levels in one array, level after level: entry (i, j, k) of level m at
    // levels_[m].first + k * levels_[m].dxy + j * levels_[m].dx + i.
    struct PyramidLevel {
        std::size_t first = 0, dxy = 0, dx = 0;
        std::array<int, 3> dims{0, 0, 0};
    };
    std::vector<PyramidEntry, detail::HugePageAllocator<PyramidEntry>> pyramid_;
    std::vector<PyramidLevel> levels_;
    int top_shift_ = 2;  // log2 of the top level's block edge in cells (2 + the top level)
    double lipschitz_ = 1;
    double max_value_ = 0;
};

}  // namespace hp
