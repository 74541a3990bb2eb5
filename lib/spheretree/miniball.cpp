#include "spheretree/miniball.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <list>
#include <vector>

namespace hp {

namespace {

// Solves the k x k symmetric system A x = b (k <= 3) by Gaussian elimination with partial
// pivoting. Returns false when a pivot is tiny relative to the matrix scale (dependent points).
bool solve_small(int k, std::array<std::array<double, 3>, 3> a, std::array<double, 3> b,
                 std::array<double, 3>& x) {
    double scale = 0;
    for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j) scale = std::max(scale, std::abs(a[i][j]));
    if (scale == 0) return false;
    // Relative pivot bound: below it the support points are affinely dependent up to rounding
    // of coordinates (about 1e-12 of the squared extent of the support set).
    const double tiny = scale * 1e-12;
    for (int col = 0; col < k; ++col) {
        int pivot = col;
        for (int r = col + 1; r < k; ++r)
            if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
        if (std::abs(a[pivot][col]) <= tiny) return false;
        std::swap(a[pivot], a[col]);
        std::swap(b[pivot], b[col]);
        for (int r = col + 1; r < k; ++r) {
            double f = a[r][col] / a[col][col];
            for (int c = col; c < k; ++c) a[r][c] -= f * a[col][c];
            b[r] -= f * b[col];
        }
    }
    for (int r = k - 1; r >= 0; --r) {
        double s = b[r];
        for (int c = r + 1; c < k; ++c) s -= a[r][c] * x[c];
        x[r] = s / a[r][r];
    }
    return true;
}

double max_distance(const Vec3d& c, std::span<const Vec3d> points) {
    double r2 = 0;
    for (const Vec3d& p : points) r2 = std::max(r2, length2(p - c));
    return std::sqrt(r2);
}

// Gärtner's move-to-front Welzl recursion with pivoting (1999, mtf_mb and pivot_mb) over a
// linked list of point indices.
class MtfSolver {
public:
    using It = std::list<std::size_t>::iterator;

    explicit MtfSolver(std::span<const Vec3d> points) : points_(points) {
        for (std::size_t i = 0; i < points.size(); ++i) order_.push_back(i);
    }

    // pivot_mb: the ball of the first point, then repeatedly the point farthest outside the
    // current ball (the pivot) is put on the boundary of the ball of the support prefix and moved
    // to the front; this stops when no point is outside or the radius stops growing (rounding).
    Ball solve() {
        if (points_.empty()) return {};
        support_.clear();
        ball_ = {};
        mtf(std::next(order_.begin()));
        // Each round strictly grows the radius, so the loop ends; the cap only guards rounding.
        for (int round = 0; round < 10000; ++round) {
            It pivot = farthest();
            if (!outside(points_[*pivot])) break;
            const double old_radius = ball_.radius;
            if (!push(points_[*pivot])) break;  // cannot fail on an empty support
            mtf(support_end_);
            support_.pop_back();
            move_to_front(pivot);
            if (!(ball_.radius > old_radius)) break;
        }
        return ball_;
    }

private:
    bool outside(const Vec3d& p) const {
        // Tolerance: relative 1e-12 of r^2 plus an absolute term for r = 0, so points on the
        // sphere up to rounding are not pushed again (they would be dependent supports).
        if (ball_.radius < 0) return true;  // the empty ball
        double r2 = ball_.radius * ball_.radius;
        return length2(p - ball_.center) > r2 * (1 + 1e-12) + 1e-300;
    }

    It farthest() {
        It best = order_.begin();
        double best_d = -1;
        for (It it = order_.begin(); it != order_.end(); ++it) {
            double d = length2(points_[*it] - ball_.center);
            if (d > best_d) {
                best_d = d;
                best = it;
            }
        }
        return best;
    }

    // Tries to make `p` a support point: the ball through the current support and p.
    bool push(const Vec3d& p) {
        support_.push_back(p);
        Ball b = circumsphere(support_);
        if (b.radius < 0) {
            support_.pop_back();
            return false;
        }
        ball_ = b;
        return true;
    }

    void move_to_front(It it) {
        if (it == support_end_) ++support_end_;
        order_.splice(order_.begin(), order_, it);
    }

    // mtf_mb(end): the smallest ball of the points before `end` with the current support on its
    // boundary; on return ball_ holds it, and the points that defined it have been moved to the
    // front of the list, before support_end_ (which is what makes later calls fast).
    void mtf(It end) {
        support_end_ = order_.begin();
        if (support_.size() == 4) return;
        for (It it = order_.begin(); it != end;) {
            It current = it++;
            if (outside(points_[*current]) && push(points_[*current])) {
                mtf(current);
                support_.pop_back();
                move_to_front(current);
            }
        }
    }

    std::span<const Vec3d> points_;
    std::list<std::size_t> order_;
    It support_end_;
    std::vector<Vec3d> support_;
    Ball ball_;
};

}  // namespace

Ball circumsphere(std::span<const Vec3d> pts) {
    assert(!pts.empty() && pts.size() <= 4);
    if (pts.empty()) return {};
    const Vec3d p0 = pts[0];
    const int k = static_cast<int>(pts.size()) - 1;
    if (k == 0) return {p0, 0};
    // centre = p0 + sum_i x_i (p_i - p0) with |c - p_i| = |c - p0|:
    //   2 (p_i - p0) . (c - p0) = |p_i - p0|^2.
    std::array<Vec3d, 3> d{};
    for (int i = 0; i < k; ++i) d[i] = pts[i + 1] - p0;
    std::array<std::array<double, 3>, 3> a{};
    std::array<double, 3> b{}, x{};
    for (int i = 0; i < k; ++i) {
        for (int j = 0; j < k; ++j) a[i][j] = 2 * dot(d[i], d[j]);
        b[i] = length2(d[i]);
    }
    if (!solve_small(k, a, b, x)) return {};
    Vec3d c = p0;
    for (int i = 0; i < k; ++i) c += d[i] * x[i];
    return {c, max_distance(c, pts)};
}

Ball minimal_enclosing_ball(std::span<const Vec3d> points) {
    if (points.empty()) return {};
    MtfSolver solver(points);
    Ball b = solver.solve();
    b.radius = max_distance(b.center, points);
    return b;
}

}  // namespace hp
