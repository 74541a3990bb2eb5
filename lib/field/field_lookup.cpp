// DistanceSampler (field.hpp): the lookups, the hot paths of the query: locating a point's cell,
// trilinear values, sphere probes and their upper bounds over the block bounds.
#include "field/field.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/prefetch.hpp"

namespace hp {

// The hot paths work on the three axes at once: x and y in the two lanes of one 16-byte vector,
// z in another (its second lane unused). GCC/Clang vector extensions; on x86-64 each operation on
// a pair is one packed SSE2 instruction.
namespace detail {
using Pair = double __attribute__((vector_size(16)));
using IntPair = int __attribute__((vector_size(8)));
struct AxisLanes {
    Pair xy, zw;
    double operator[](int a) const { return a < 2 ? xy[a] : zw[a - 2]; }
};
struct IntAxisLanes {
    IntPair xy, zw;
    int operator[](int a) const { return a < 2 ? xy[a] : zw[a - 2]; }
};
inline AxisLanes lanes(const std::array<double, 4>& a) {
    AxisLanes v;
    std::memcpy(&v, a.data(), sizeof v);
    return v;
}
inline AxisLanes operator-(const AxisLanes& a, const AxisLanes& b) { return {a.xy - b.xy, a.zw - b.zw}; }
inline AxisLanes operator*(const AxisLanes& a, double s) { return {a.xy * s, a.zw * s}; }
inline AxisLanes operator+(const AxisLanes& a, double s) { return {a.xy + s, a.zw + s}; }
inline AxisLanes operator-(const AxisLanes& a, double s) { return {a.xy - s, a.zw - s}; }
// Lane by lane std::min(a, b) and std::max(0.0, a): the operand they choose, in every lane (a
// NaN one too).
inline Pair min_pair(const Pair& a, const Pair& b) { return b < a ? b : a; }
inline Pair max0_pair(const Pair& a) {
    const Pair zero{};
    return zero < a ? a : zero;
}
inline AxisLanes min_lanes(const AxisLanes& a, const AxisLanes& b) { return {min_pair(a.xy, b.xy), min_pair(a.zw, b.zw)}; }
// Lane by lane max(0, min(x, top)): x clamped to [0, top], NaN to 0; a truncation of it is its
// floor.
inline AxisLanes clamp_lanes(const AxisLanes& x, const AxisLanes& top) {
    return {max0_pair(min_pair(x.xy, top.xy)), max0_pair(min_pair(x.zw, top.zw))};
}
inline IntAxisLanes truncate(const AxisLanes& a) {
    return {__builtin_convertvector(a.xy, IntPair), __builtin_convertvector(a.zw, IntPair)};
}
inline AxisLanes to_double(const IntAxisLanes& a) {
    return {__builtin_convertvector(a.xy, Pair), __builtin_convertvector(a.zw, Pair)};
}
}  // namespace detail

namespace {
// std::max(0.0, x) (0 for a NaN x) without a branch: compilers branch on it, and where a branch
// predictor cannot learn the outcome a wrong guess costs more.
inline double max0(double x) {
#if defined(__SSE2__)
    return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(x), _mm_setzero_pd()));  // x > 0 ? x : 0
#else
    return std::max(0.0, x);
#endif
}
}  // namespace

inline detail::AxisLanes DistanceSampler::to_cells(const Vec3d& p) const {
    return (detail::AxisLanes{detail::Pair{p.x, p.y}, detail::Pair{p.z, 0.0}} - detail::lanes(origin_)) * inv_s_ - 0.5;
}

BallBound DistanceSampler::merge_block(const BlockBound& b, bool leaves) const {
    BallBound out;
    const double ld = b.lipschitz;
    out.interior_lipschitz = std::min(ld * (1 + 1e-9), lipschitz_);
    // sqrt(L_in^2 + 1) when the ball leaves the centre box, else L_in, without a branch (the
    // sphere test's, upper_bound): ld is a float, so ld * ld is exact and its root is ld again.
    out.lipschitz = std::min(std::sqrt(ld * ld + static_cast<double>(leaves)) * (1 + 1e-9), lipschitz_);
    // V at a point of the ball is a convex combination of the samples of the cell holding it (or,
    // outside the centre box, of the cell holding its projection, minus a distance): at most the
    // largest sample of the cells the clamped box meets, up to the rounding of the interpolation.
    const double top = b.max_value;
    out.max_value = top + std::abs(top) * 1e-12;
    return out;
}

inline void DistanceSampler::locate_cell_at(const detail::AxisLanes& u, CellRef& ref) const {
    using namespace detail;  // the lanes and their operations
    // u: continuous cell coordinates (voxel centres at integers). Clamped to the centre box
    // (NaN to 0), then to the last cell: the cell's lower corner b is the truncation (the floor
    // of a non-negative number), and clamping to an integer bound before truncating is the same
    // as after. A one-voxel axis has top 0: base 0, frac 0 (reads its only sample twice).
    const AxisLanes c = clamp_lanes(u, lanes(top_));
    const IntAxisLanes b = truncate(min_lanes(c, lanes(last_cell_)));
    const AxisLanes frac = c - to_double(b), out = u - c;
    for (int a = 0; a < 3; ++a) {
        ref.out[a] = out[a];
        ref.frac[a] = frac[a];
        // The brick offset is a sum of one term per axis, so the eight corners need two terms
        // per axis; the upper neighbour is clamped to the grid (axis_table_).
        const std::size_t* t = axis_table_[a].data() + b[a];
        ref.offset[a][0] = t[0];
        ref.offset[a][1] = t[1];
    }
}

inline void DistanceSampler::locate_cell(const Vec3d& p, CellRef& out) const { locate_cell_at(to_cells(p), out); }

inline const DistanceSampler::BlockBound& DistanceSampler::locate(const detail::AxisLanes& u, double rc, bool& leaves) const {
    using namespace detail;  // the lanes and their operations
    // The ball's box in cell coordinates (cell i spans centre coordinates i .. i + 1), clamped to
    // the cells first: floor then commutes with the clamp (integer bounds) and a truncation is
    // the floor of a non-negative number. The clamp also maps NaN to 0; an axis with a NaN bound
    // (a NaN centre or radius) takes all its cells.
    const AxisLanes lo = u - rc, hi = u + rc, top = lanes(top_), last = lanes(last_cell_);
    // The box leaves the centre box when a lower end is below 0 or an upper end above the top
    // (or is NaN).
    const auto inside_xy = (lo.xy >= 0.0) & (hi.xy - top.xy <= 0.0);
    const auto inside_z = (lo.zw >= 0.0) & (hi.zw - top.zw <= 0.0);
    leaves = !(inside_xy[0] & inside_xy[1] & inside_z[0]);
    IntAxisLanes l = truncate(clamp_lanes(lo, last)), h = truncate(clamp_lanes(hi, last));
    const auto ordered_xy = hi.xy >= lo.xy;
    const auto ordered_z = hi.zw >= lo.zw;
    if (!(ordered_xy[0] & ordered_xy[1] & ordered_z[0])) [[unlikely]] {
        for (int a = 0; a < 2; ++a)
            if (!ordered_xy[a]) l.xy[a] = 0, h.xy[a] = static_cast<int>(last_cell_[a]);
        if (!ordered_z[0]) l.zw[0] = 0, h.zw[0] = static_cast<int>(last_cell_[2]);
    }
    // The finest level m where the box spans at most two blocks (of 4 << m cells) per axis. A box
    // whose extent (hi - lo) reaches 8 << m never fits at level m, so start at the finest level
    // where every extent is below 8 << m; there an extent is below 4 << (m + 1), so the next
    // level always fits (two floors of numbers less than a block apart differ by at most one).
    const IntPair ext_xy = h.xy - l.xy, ext_z = h.zw - l.zw;
    const int extent = std::max(std::max(ext_xy[0], ext_xy[1]), ext_z[0]);
    int shift = std::max(base_shift_, extent < 8 ? 2 : static_cast<int>(std::bit_width(static_cast<unsigned>(extent))) - 1);
    // The blocks spanned per axis less one: 0 or 1 when the level fits (any is 2 or more when the
    // bitwise or of the three is). The step up is chosen without a branch: it is taken about as
    // often as not, and a branch predictor guesses wrong too often.
    const IntPair try_xy = (h.xy >> shift) - (l.xy >> shift), try_z = (h.zw >> shift) - (l.zw >> shift);
    shift += static_cast<int>((try_xy[0] | try_xy[1] | try_z[0]) > 1) & static_cast<int>(shift < top_shift_);
    const IntPair bxy = l.xy >> shift, bz = l.zw >> shift;
    const IntPair sxy = (h.xy >> shift) - bxy, sz = (h.zw >> shift) - bz;
    const int mask = sxy[0] | (sxy[1] << 1) | (sz[0] << 2);  // bit a: the box spans two blocks along axis a
    const PyramidLevel& lv = levels_[static_cast<std::size_t>(shift - base_shift_)];
    return pyramid_[lv.first + static_cast<std::size_t>(bz[0]) * lv.dxy + static_cast<std::size_t>(bxy[1]) * lv.dx +
                    static_cast<std::size_t>(bxy[0])]
        .by_mask[mask];
}

template <class F>
inline decltype(auto) DistanceSampler::with_samples(F&& f) const {
    if (sparse_) return float_samples() ? f(std::true_type{}, samples_f_.data()) : f(std::true_type{}, samples_d_.data());
    return float_samples() ? f(std::false_type{}, samples_f_.data()) : f(std::false_type{}, samples_d_.data());
}

template <bool Sparse, class T>
inline void DistanceSampler::prefetch_in(const T* base, const CellRef& c) const {
    // The eight samples lie on two z layers of a brick or of two bricks; per layer, one cache
    // line, or two or four when the cell crosses a line (a brick) along x or y. All eight are
    // asked for: a second request for a line already on its way costs one instruction, and
    // working out which lines are distinct cost more, with branches no predictor learns.
    // Sparse, each place goes through the block table first (a small table, mostly cached).
    const auto& o = c.offset;
    for (int dk = 0; dk < 2; ++dk)
        for (int dj = 0; dj < 2; ++dj) {
            const std::size_t row = o[2][dk] + o[1][dj];
            prefetch_line(base + resolve<Sparse>(row + o[0][0]));
            prefetch_line(base + resolve<Sparse>(row + o[0][1]));
        }
}

inline void DistanceSampler::prefetch(const CellRef& c) const {
    if (sparse_) {
        if (float_samples())
            prefetch_in<true>(samples_f_.data(), c);
        else
            prefetch_in<true>(samples_d_.data(), c);
    } else if (float_samples()) {
        prefetch_in<false>(samples_f_.data(), c);
    } else {
        prefetch_in<false>(samples_d_.data(), c);
    }
}

template <bool Sparse, class T>
inline double DistanceSampler::trilinear_in(const T* samples, const CellRef& ref) const {
    // The corners as named values read where they are used (an array of eight here made the
    // compiler pack the conversions into vectors and spill them to the stack).
    const auto& o = ref.offset;
    const double* f = ref.frac;
    auto lerp_x = [&](std::size_t yz) {
        const double a = samples[resolve<Sparse>(yz + o[0][0])], b = samples[resolve<Sparse>(yz + o[0][1])];
        return a * (1 - f[0]) + b * f[0];
    };
    const double c00 = lerp_x(o[1][0] + o[2][0]), c10 = lerp_x(o[1][1] + o[2][0]);
    const double c01 = lerp_x(o[1][0] + o[2][1]), c11 = lerp_x(o[1][1] + o[2][1]);
    const double c0 = c00 * (1 - f[1]) + c10 * f[1];
    const double c1 = c01 * (1 - f[1]) + c11 * f[1];
    return c0 * (1 - f[2]) + c1 * f[2];
}

inline double DistanceSampler::trilinear(const CellRef& ref) const {
    if (sparse_) return float_samples() ? trilinear_in<true>(samples_f_.data(), ref) : trilinear_in<true>(samples_d_.data(), ref);
    return float_samples() ? trilinear_in<false>(samples_f_.data(), ref) : trilinear_in<false>(samples_d_.data(), ref);
}

inline double DistanceSampler::outside_distance(const CellRef& ref) const {
    const double* d = ref.out;  // the point minus its projection, per axis (cell units)
    const double out2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    return max0(std::sqrt(out2) * grid_.voxel_size);  // 0 inside (and for a NaN point)
}

void DistanceSampler::probe_value(const Vec3d& p, CellRef& out) const {
    locate_cell(p, out);
    prefetch(out);
}

void DistanceSampler::locate_sphere(const Vec3d& center, double radius, SphereProbe& out) const {
    const detail::AxisLanes u = to_cells(center);
    locate_cell_at(u, out.cell);
    out.radius = radius;
    out.block = &locate(u, radius_in_cells(radius), out.leaves);
    if (sparse_) {
        // The sub-block of the centre cell (of c(X)) and the distance from c(X) to the
        // sub-block's centre, whose bound gap_ holds (read at the test: probe_sphere prefetches it).
        using namespace detail;
        const AxisLanes c = clamp_lanes(u, lanes(top_));
        const IntAxisLanes q = truncate(min_lanes(c, lanes(last_cell_)));
        const IntAxisLanes sub{q.xy >> 2, q.zw >> 2};
        const AxisLanes e = c - (to_double(sub) * 4.0 + 2.0);
        const double d2 = e.xy[0] * e.xy[0] + e.xy[1] * e.xy[1] + e.zw[0] * e.zw[0];
        out.gap_entry = gap_.data() + (static_cast<std::size_t>(sub.zw[0]) * static_cast<std::size_t>(gap_dims_[1]) +
                                       static_cast<std::size_t>(sub.xy[1])) * static_cast<std::size_t>(gap_dims_[0]) +
                        static_cast<std::size_t>(sub.xy[0]);
        out.centre_offset = std::sqrt(d2);
    }
}

void DistanceSampler::probe_sphere(const Vec3d& center, double radius, SphereProbe& out) const {
    locate_sphere(center, radius, out);
    prefetch_line(out.block);
    if (sparse_) prefetch_line(out.gap_entry);
    prefetch(out.cell);
}

template <bool Lazy>
inline double DistanceSampler::probe_bound(const SphereProbe& probe) const {
    const double radius = probe.radius;
    // For P in the ball, V(P) = V(c(P)) - |P - c(P)| (c: projection onto the centre box) and
    // |P - c(P)| is P's distance to the box, at least `away` = (X's distance to it) - r. So every
    // bound of V(c(P)) below is lowered by `away`: a ball far outside the grid is pruned even
    // where the grid's border cells are steep (an open mesh's hole, slope tens of voxels per
    // voxel, would otherwise let V(c(X)) + L_in r reach zero from a hundred voxels away). X's
    // distance to the box needs no read of the field; a NaN centre gives away = 0.
    const double outside = outside_distance(probe.cell);  // |X - c(X)|
    const double away = max0(outside - radius);
    const BallBound b = merge_block(*probe.block, probe.leaves);
    // The blocks' largest sample alone, when that is negative (no need of the cell). Sparse,
    // also the floor's bound: the segment from c(X) to c(P) stays at the floor until it meets a
    // cell above it, at least `gap` from c(X), and rises by at most L_in per unit from there.
    double alone = b.max_value - away;
    // No positive gap: c(X) may lie in a cell above the floor, no such bound.
    if (sparse_) {
        const double gap = (static_cast<double>(*probe.gap_entry) - probe.centre_offset) * grid_.voxel_size * (1 - 1e-9);
        if (gap > 0) alone = std::min(alone, floor_ + b.interior_lipschitz * max0(radius - gap) - away);
    }
    if constexpr (Lazy) {
        if (alone < 0) return alone;
    }
    // V(c(P)) <= V(c(X)) + L_in r: |c(P) - c(X)| <= |P - X| <= r (projections do not expand) and
    // the segment c(X)..c(P) lies in the clamped box whose cells gave L_in. No sqrt(L^2 + 1)
    // factor for balls that leave the grid.
    // When the centre lies far outside, V(X) + L r (with L = sqrt(L_in^2 + 1)) may be the tighter.
    const double inner = trilinear(probe.cell);
    const double full = std::min(std::min(alone, inner + b.interior_lipschitz * radius - away), inner - outside + b.lipschitz * radius);
    return alone < 0 ? alone : full;
}

double DistanceSampler::upper_bound(const SphereProbe& probe) const { return probe_bound<false>(probe); }

double DistanceSampler::upper_bound_lazy(const SphereProbe& probe) const { return probe_bound<true>(probe); }

double DistanceSampler::value(const CellRef& c) const {
    return trilinear(c) - outside_distance(c);  // less 0 inside the centre box: the same value
}

BallBound DistanceSampler::ball_bound(const Vec3d& center, double radius) const {
    bool leaves = false;
    const BlockBound& b = locate(to_cells(center), radius_in_cells(radius), leaves);
    return merge_block(b, leaves);  // after locate has set `leaves`
}

double DistanceSampler::upper_bound(const Vec3d& center, double radius) const {
    SphereProbe probe;
    locate_sphere(center, radius, probe);
    return upper_bound_lazy(probe);
}

double DistanceSampler::value(const Vec3d& p) const {
    CellRef cell;
    locate_cell(p, cell);
    return value(cell);
}

void DistanceSampler::read_corners(const CellRef& ref, double (&corner)[8]) const {
    const auto& o = ref.offset;
    with_samples([&](auto sparse, const auto* samples) {
        for (int n = 0; n < 8; ++n) corner[n] = samples[resolve<decltype(sparse)::value>(o[0][n & 1] + o[1][(n >> 1) & 1] + o[2][n >> 2])];
    });
}

void DistanceSampler::read_cell(const Vec3d& p, Cell& cell) const {
    locate_cell(p, cell.ref);
    read_corners(cell.ref, cell.corner);
}

double DistanceSampler::border_max_value() const {
    const auto& d = grid_.dims;
    double best = -std::numeric_limits<double>::infinity();
    for (int k = 0; k < d[2]; ++k)
        for (int j = 0; j < d[1]; ++j) {
            const bool face = k == 0 || k == d[2] - 1 || j == 0 || j == d[1] - 1;
            for (int i = 0; i < d[0]; i += face ? 1 : std::max(1, d[0] - 1)) best = std::max(best, at(i, j, k));
        }
    return best;
}

double DistanceSampler::gradient_value(const Vec3d& p) const {
    const double s = grid_.voxel_size;
    int idx[3];
    for (int a = 0; a < 3; ++a) {
        int i = static_cast<int>(std::floor((p[a] - grid_.origin[a]) / s));
        idx[a] = std::clamp(i, 0, grid_.dims[a] - 1);
    }
    Vec3d c = grid_.center(idx[0], idx[1], idx[2]);
    Vec3d grad;
    for (int a = 0; a < 3; ++a) {
        int lo[3] = {idx[0], idx[1], idx[2]}, hi[3] = {idx[0], idx[1], idx[2]};
        lo[a] = std::max(0, idx[a] - 1);
        hi[a] = std::min(grid_.dims[a] - 1, idx[a] + 1);
        int span = hi[a] - lo[a];
        grad[a] = span > 0 ? (at(hi[0], hi[1], hi[2]) - at(lo[0], lo[1], lo[2])) / (span * s) : 0.0;
    }
    return at(idx[0], idx[1], idx[2]) + dot(grad, p - c);
}

}  // namespace hp
