#pragma once
// Test-only reference for smallest enclosing balls, independent of lib/spheretree: closed-form
// circumspheres of 1-4 points and a brute force over all supports.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "spheretree/miniball.hpp"

namespace hp_test {

using hp::Vec3d;

// Independent reference: the circumsphere of 1-4 points by closed formulas (not the solver under
// test), and the minimal ball as the smallest such sphere that contains every point. Degeneracy
// tests are relative, so the reference works at any scale and offset.
inline std::optional<hp::Ball> reference_circumsphere(const std::vector<Vec3d>& s) {
    if (s.size() == 1) return hp::Ball{s[0], 0};
    if (s.size() == 2) return hp::Ball{(s[0] + s[1]) * 0.5, hp::length(s[1] - s[0]) * 0.5};
    if (s.size() == 3) {
        // Circumcentre of a triangle: a + [ |ac|^2 (ab x ac) x ab + |ab|^2 ac x (ab x ac) ] / (2 |ab x ac|^2).
        Vec3d ab = s[1] - s[0], ac = s[2] - s[0], n = hp::cross(ab, ac);
        double n2 = hp::length2(n);
        if (n2 <= 1e-20 * hp::length2(ab) * hp::length2(ac)) return std::nullopt;
        Vec3d off = (hp::cross(n, ab) * hp::length2(ac) + hp::cross(ac, n) * hp::length2(ab)) / (2 * n2);
        return hp::Ball{s[0] + off, hp::length(off)};
    }
    // Tetrahedron, relative to s[0]: 2 d_i . x = |d_i|^2 solved by Cramer's rule.
    Vec3d a = s[1] - s[0], b = s[2] - s[0], c = s[3] - s[0];
    double det = 2 * hp::dot(a, hp::cross(b, c));
    if (std::abs(det) <= 1e-10 * hp::length(a) * hp::length(b) * hp::length(c)) return std::nullopt;
    Vec3d x = (hp::cross(b, c) * hp::length2(a) + hp::cross(c, a) * hp::length2(b) + hp::cross(a, b) * hp::length2(c)) / det;
    return hp::Ball{s[0] + x, hp::length(x)};
}

// Brute force over all 1-4 point subsets (n <= 16).
inline double brute_force_radius(const std::vector<Vec3d>& pts) {
    double best = INFINITY;
    std::size_t n = pts.size();
    std::vector<Vec3d> subset;
    for (unsigned mask = 1; mask < (1u << n); ++mask) {
        if (__builtin_popcount(mask) > 4) continue;
        subset.clear();
        for (std::size_t i = 0; i < n; ++i)
            if (mask & (1u << i)) subset.push_back(pts[i]);
        auto ball = reference_circumsphere(subset);
        if (!ball || ball->radius >= best) continue;
        bool contains = true;
        for (const Vec3d& p : pts)
            if (hp::length(p - ball->center) > ball->radius * (1 + 1e-9)) contains = false;
        if (contains) best = ball->radius;
    }
    return best;
}

// A lower bound of the minimal radius of `pts`: the brute-force minimum of its `m` distinct points
// farthest from `center` (a subset's minimal ball is never larger than the set's). With the
// centre of a ball that is minimal, the support points are the farthest ones and the bound is
// tight; (r - bound) / r then bounds the relative excess of r from above.
inline double lower_bound_radius(const std::vector<Vec3d>& pts, Vec3d center, std::size_t m = 10) {
    std::vector<std::pair<double, std::size_t>> by_distance;
    for (std::size_t i = 0; i < pts.size(); ++i) by_distance.push_back({hp::length2(pts[i] - center), i});
    std::sort(by_distance.begin(), by_distance.end(), std::greater<>());
    std::vector<Vec3d> farthest;
    for (std::size_t i = 0; i < by_distance.size() && farthest.size() < m; ++i) {
        const Vec3d p = pts[by_distance[i].second];  // distinct points only: copies add no support
        if (std::find(farthest.begin(), farthest.end(), p) == farthest.end()) farthest.push_back(p);
    }
    return brute_force_radius(farthest);
}

}  // namespace hp_test
