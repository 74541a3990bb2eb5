#include "cfm/sampling.hpp"

#include <cmath>
#include <numbers>
#include <random>

#include <gtest/gtest.h>

using hp::Vec3d;
using hp::cfm::Sampling;
using hp::cfm::SampleLayout;

namespace {

constexpr double kPi = std::numbers::pi;

// Brute force: the largest dot product over all samples.
double best_dot(const SampleLayout& l, const Vec3d& d) {
    double best = -2;
    for (const Vec3d& s : l.directions()) best = std::max(best, hp::dot(d, s));
    return best;
}

void expect_nearest(const SampleLayout& l, const Vec3d& d, const char* what) {
    const Vec3d u = hp::normalized(d);
    const std::size_t k = l.nearest(d);
    ASSERT_LT(k, l.size());
    EXPECT_NEAR(hp::dot(u, l.direction(k)), best_dot(l, u), 1e-12)
        << what << " N=" << l.stacks() << " dir " << u.x << " " << u.y << " " << u.z;
}

}  // namespace

// Counts by hand: ring i of N stacks holds floor((N+1) sin(i pi / N)) samples.
//   N = 2: ring 90 deg: floor(3) = 3.
//   N = 3: rings 60, 120 deg: floor(4 * 0.866) = 3 each: 6.
//   N = 4: 45, 90, 135 deg: floor(5 * 0.707) = 3, 5, 3: 11 (paper Table 1, leaf at 16 stacks).
//   N = 6: 30..150 deg: floor(3.5) = 3, floor(6.06) = 6, 7, 6, 3: 25.
//   N = 10: 18..162 deg: 11 sin = 3.40, 6.47, 8.90, 10.46, 11 -> 3+6+8+10+11+10+8+6+3 = 65 (Table 1).
//   N = 16: Table 1 gives 167.
TEST(CfmSampling, AdaptiveCountsByHand) {
    EXPECT_EQ(hp::cfm::sample_count(Sampling::adaptive, 2), 3u);
    EXPECT_EQ(hp::cfm::sample_count(Sampling::adaptive, 3), 6u);
    EXPECT_EQ(hp::cfm::sample_count(Sampling::adaptive, 4), 11u);
    EXPECT_EQ(hp::cfm::sample_count(Sampling::adaptive, 6), 25u);
    EXPECT_EQ(hp::cfm::sample_count(Sampling::adaptive, 10), 65u);
    EXPECT_EQ(hp::cfm::sample_count(Sampling::adaptive, 16), 167u);
    const int ring10[] = {0, 3, 6, 8, 10, 11, 10, 8, 6, 3, 0};
    for (int i = 0; i <= 10; ++i) EXPECT_EQ(hp::cfm::ring_size(Sampling::adaptive, 10, i), ring10[i]) << "ring " << i;
}

// Polar: N on each of the N - 1 rings plus the two poles.
TEST(CfmSampling, PolarCountsByHand) {
    EXPECT_EQ(hp::cfm::sample_count(Sampling::polar, 2), 4u);    // 1 * 2 + 2
    EXPECT_EQ(hp::cfm::sample_count(Sampling::polar, 4), 14u);   // 3 * 4 + 2
    EXPECT_EQ(hp::cfm::sample_count(Sampling::polar, 10), 92u);  // 9 * 10 + 2
    EXPECT_EQ(hp::cfm::sample_count(Sampling::polar, 16), 242u); // 15 * 16 + 2
    for (int i = 1; i < 10; ++i) EXPECT_EQ(hp::cfm::ring_size(Sampling::polar, 10, i), 10) << "ring " << i;
}

TEST(CfmSampling, DirectionsAreUnitAndOnTheirRings) {
    for (Sampling s : {Sampling::adaptive, Sampling::polar})
        for (int n : {2, 5, 16}) {
            SampleLayout l(s, n);
            ASSERT_EQ(l.size(), hp::cfm::sample_count(s, n));
            for (int i = 0; i <= n; ++i)
                for (int j = 0; j < l.ring_size(i); ++j) {
                    const Vec3d d = l.direction(l.ring_first(i) + static_cast<std::size_t>(j));
                    EXPECT_NEAR(hp::length(d), 1, 1e-15);
                    EXPECT_NEAR(std::acos(std::clamp(d.z, -1.0, 1.0)), kPi * i / n, 1e-7);
                    if (i > 0 && i < n) {
                        double theta = std::atan2(d.y, d.x);
                        if (theta < -1e-12) theta += 2 * kPi;
                        EXPECT_NEAR(theta, 2 * kPi * j / l.ring_size(i), 1e-12);
                    }
                }
        }
    SampleLayout polar(Sampling::polar, 6);
    EXPECT_EQ(polar.direction(0), (Vec3d{0, 0, 1}));
    EXPECT_EQ(polar.direction(polar.size() - 1), (Vec3d{0, 0, -1}));
}

// Root S at level 1, M at the deepest level, linear between, rounded (halves up).
TEST(CfmSampling, ProgressiveRefinementByHand) {
    const int five[] = {16, 13, 10, 7, 4};  // S=16, M=4, L=5: drop 3 per level
    for (int l = 1; l <= 5; ++l) EXPECT_EQ(hp::cfm::stacks_for_level(l, 5, 16, 4), five[l - 1]);
    // S=10, M=2, L=4: drops 8/3 = 2.67 -> 3, 16/3 = 5.33 -> 5, 8.
    const int four[] = {10, 7, 5, 2};
    for (int l = 1; l <= 4; ++l) EXPECT_EQ(hp::cfm::stacks_for_level(l, 4, 10, 2), four[l - 1]);
    // S=16, M=4, L=9: drops 1.5 -> 2 (halves up), 3, 4.5 -> 5, 6, ...
    EXPECT_EQ(hp::cfm::stacks_for_level(2, 9, 16, 4), 14);
    EXPECT_EQ(hp::cfm::stacks_for_level(4, 9, 16, 4), 11);
    EXPECT_EQ(hp::cfm::stacks_for_level(1, 1, 16, 4), 16);
    EXPECT_EQ(hp::cfm::stacks_for_level(2, 2, 16, 4), 4);
    EXPECT_EQ(hp::cfm::stacks_for_level(3, 6, 8, 8), 8);
}

TEST(CfmSampling, LookupMatchesBruteForceOnRandomDirections) {
    std::mt19937_64 rng(11);
    std::normal_distribution<double> g;
    for (Sampling s : {Sampling::adaptive, Sampling::polar})
        for (int n : {2, 3, 4, 5, 7, 10, 16, 33, 64}) {
            SampleLayout l(s, n);
            for (int t = 0; t < 4000; ++t) expect_nearest(l, {g(rng), g(rng), g(rng)}, "random");
            // Directions near the samples themselves and halfway between ring neighbours.
            for (std::size_t k = 0; k < l.size(); ++k) {
                expect_nearest(l, l.direction(k), "on a sample");
                expect_nearest(l, l.direction(k) + Vec3d{1e-9, -1e-9, 1e-9}, "next to a sample");
                expect_nearest(l, l.direction(k) + l.direction((k + 1) % l.size()), "between samples");
            }
        }
}

TEST(CfmSampling, LookupAtPolesAndSeam) {
    for (Sampling s : {Sampling::adaptive, Sampling::polar})
        for (int n : {2, 4, 10, 16}) {
            SampleLayout l(s, n);
            expect_nearest(l, {0, 0, 1}, "north pole");
            expect_nearest(l, {0, 0, -1}, "south pole");
            expect_nearest(l, {1e-12, 0, 1}, "next to the north pole");
            expect_nearest(l, {-1e-12, -1e-13, -1}, "next to the south pole");
            for (double phi : {0.1, 0.7, kPi / 2, 2.0, 3.0}) {
                for (double theta : {0.0, 1e-12, -1e-12, 2 * kPi - 1e-12, 2 * kPi, -kPi / 7}) {
                    const Vec3d d{std::sin(phi) * std::cos(theta), std::sin(phi) * std::sin(theta), std::cos(phi)};
                    expect_nearest(l, d, "seam");
                    // The (phi, theta) form agrees with the vector form.
                    EXPECT_NEAR(hp::dot(d, l.direction(l.nearest(phi, theta))), best_dot(l, d), 1e-12);
                }
            }
            // Angles out of range: phi clamped, theta taken modulo 2 pi.
            EXPECT_EQ(l.nearest(-0.5, 0.0), l.nearest(0.0, 0.0));
            EXPECT_EQ(l.nearest(4.0, 1.0), l.nearest(kPi, 1.0));
            EXPECT_NEAR(hp::dot(l.direction(l.nearest(1.0, 0.3 + 4 * kPi)), l.direction(l.nearest(1.0, 0.3))), 1.0, 1e-15);
            EXPECT_LT(l.nearest(std::nan(""), std::nan("")), l.size());
            EXPECT_LT(l.nearest(Vec3d{}), l.size());
        }
}

// Giang & O'Sullivan 2006 (docs/references.md), Table 2, adaptive column: the standard deviation
// of distances between neighbouring samples (consecutive samples of a ring, cyclically, and each
// sample to the nearest sample of the next ring). The paper's figures are the golden values; our
// layout must reproduce them. (Its "5 stacks" row is matched by 4 stacks.) The adaptive spread must
// also be below the plain polar layout's at 10 and 20 stacks, as the paper claims.
namespace {
double ring_neighbour_stddev(const SampleLayout& l) {
    std::vector<std::vector<Vec3d>> rings;
    for (int i = 0; i <= l.stacks(); ++i) {
        std::vector<Vec3d> ring;
        for (int j = 0; j < l.ring_size(i); ++j) ring.push_back(l.direction(l.ring_first(i) + static_cast<std::size_t>(j)));
        if (!ring.empty()) rings.push_back(ring);
    }
    std::vector<double> d;
    for (std::size_t a = 0; a < rings.size(); ++a) {
        const auto& r = rings[a];
        if (r.size() > 1)
            for (std::size_t j = 0; j < r.size(); ++j) d.push_back(hp::length(r[j] - r[(j + 1) % r.size()]));
        if (a + 1 < rings.size())
            for (const Vec3d& p : r) {
                double best = 1e9;
                for (const Vec3d& q : rings[a + 1]) best = std::min(best, hp::length(p - q));
                d.push_back(best);
            }
    }
    double mean = 0, var = 0;
    for (double v : d) mean += v;
    mean /= static_cast<double>(d.size());
    for (double v : d) var += (v - mean) * (v - mean);
    return std::sqrt(var / static_cast<double>(d.size()));
}
}  // namespace

TEST(CfmSampling, AdaptiveSpreadReproducesPaperTable2) {
    EXPECT_NEAR(ring_neighbour_stddev(SampleLayout(Sampling::adaptive, 4)), 0.17718, 5e-6);
    EXPECT_NEAR(ring_neighbour_stddev(SampleLayout(Sampling::adaptive, 10)), 0.119856, 5e-7);
    EXPECT_NEAR(ring_neighbour_stddev(SampleLayout(Sampling::adaptive, 20)), 0.0661784, 5e-8);
    for (int n : {10, 20})
        EXPECT_LT(ring_neighbour_stddev(SampleLayout(Sampling::adaptive, n)), ring_neighbour_stddev(SampleLayout(Sampling::polar, n)))
            << n << " stacks";
}
