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

// Move-to-front Welzl recursion over a linked list of point indices (Gärtner 1999, mtf_mb).
class MtfSolver {
public:
    explicit MtfSolver(std::span<const Vec3d> points) : points_(points) {
        for (std::size_t i = 0; i < points.size(); ++i) order_.push_back(i);
    }

    Ball solve() {
        if (points_.empty()) return {};
        // Pivoting: repeat mtf on the whole list, each time starting from the support of the
        // farthest point, until no point lies outside (usually one or two rounds).
        support_.clear();
        mtf(order_.end());
        for (int round = 0; round < 64; ++round) {
            auto far = farthest();
            if (far == order_.end() || !outside(points_[*far])) break;
            // Move the violator to the front and rebuild with it as the first support point.
            order_.splice(order_.begin(), order_, far);
            support_.clear();
            push(points_[order_.front()]);
            mtf(order_.end());
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

    std::list<std::size_t>::iterator farthest() {
        auto best = order_.end();
        double best_d = -1;
        for (auto it = order_.begin(); it != order_.end(); ++it) {
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

    // mtf_mb(end): the smallest ball of the points before `end` with the current support on
    // its boundary; on return ball_ holds it and the points that defined it are moved to the
    // front of the list (which is what makes later calls fast).
    void mtf(std::list<std::size_t>::iterator end) {
        if (support_.empty()) ball_ = {};
        if (support_.size() == 4) return;
        for (auto it = order_.begin(); it != end;) {
            auto next = std::next(it);
            const Vec3d& p = points_[*it];
            if (outside(p)) {
                if (push(p)) {
                    mtf(it);
                    support_.pop_back();
                    order_.splice(order_.begin(), order_, it);
                }
            }
            it = next;
        }
    }

    std::span<const Vec3d> points_;
    std::list<std::size_t> order_;
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
