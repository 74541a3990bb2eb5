#include "cfm/sampling.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numbers>

#include "core/error.hpp"

namespace hp::cfm {

namespace {
constexpr double kPi = std::numbers::pi;
constexpr double kTwoPi = 2 * std::numbers::pi;
}  // namespace

const std::vector<SamplingName>& sampling_names() {
    static const std::vector<SamplingName> all = {{"adaptive", Sampling::adaptive}, {"polar", Sampling::polar}};
    return all;
}

const char* sampling_name(Sampling s) {
    for (const SamplingName& n : sampling_names())
        if (n.sampling == s) return n.name;
    return "?";
}

Sampling parse_sampling(const std::string& name) {
    for (const SamplingName& n : sampling_names())
        if (name == n.name) return n.sampling;
    fail_usage("unknown sampling '" + name + "'");
}

int ring_size(Sampling s, int stacks, int ring) {
    assert(stacks >= kMinStacks && stacks <= kMaxStacks && ring >= 0 && ring <= stacks);
    if (s == Sampling::polar) return ring == 0 || ring == stacks ? 1 : stacks;
    if (ring == 0 || ring == stacks) return 0;
    // (N+1) sin(i pi / N) is never an integer except at the equator, where sin is exactly 1 in
    // floating point too (Niven: sin of a rational multiple of pi is rational only for 0, 1/2, 1;
    // 1/2 at i/N = 1/6 needs N + 1 even with 6 | N, impossible), so floor() has no rounding trap.
    return static_cast<int>(std::floor((stacks + 1) * std::sin(kPi * ring / stacks)));
}

std::size_t sample_count(Sampling s, int stacks) {
    std::size_t n = 0;
    for (int i = 0; i <= stacks; ++i) n += static_cast<std::size_t>(ring_size(s, stacks, i));
    return n;
}

int stacks_for_level(int level, int levels, int root_stacks, int min_stacks) {
    assert(level >= 1 && level <= levels && min_stacks <= root_stacks);
    if (levels <= 1) return root_stacks;
    const long span = root_stacks - min_stacks, steps = levels - 1;
    // round(span * (level - 1) / steps), halves up, in integers.
    const long drop = (2 * span * (level - 1) + steps) / (2 * steps);
    return root_stacks - static_cast<int>(drop);
}

void direction_angles(const Vec3d& d, double& phi, double& theta) {
    phi = std::atan2(std::hypot(d.x, d.y), d.z);
    theta = std::atan2(d.y, d.x);
    if (theta < 0) theta += kTwoPi;
    if (theta >= kTwoPi) theta = 0;
}

SampleLayout::SampleLayout(Sampling s, int stacks) : sampling_(s), stacks_(stacks) {
    assert(stacks >= kMinStacks && stacks <= kMaxStacks);
    count_.resize(static_cast<std::size_t>(stacks) + 1);
    first_.resize(static_cast<std::size_t>(stacks) + 1);
    for (int i = 0; i <= stacks; ++i) {
        const int n = cfm::ring_size(s, stacks, i);
        count_[static_cast<std::size_t>(i)] = n;
        first_[static_cast<std::size_t>(i)] = dirs_.size();
        const double phi = kPi * i / stacks;
        for (int j = 0; j < n; ++j) {
            if (i == 0) dirs_.push_back({0, 0, 1});
            else if (i == stacks) dirs_.push_back({0, 0, -1});
            else {
                const double theta = kTwoPi * j / n;
                dirs_.push_back({std::sin(phi) * std::cos(theta), std::sin(phi) * std::sin(theta), std::cos(phi)});
            }
        }
    }
}

std::size_t SampleLayout::nearest(double phi, double theta) const {
    if (!(phi >= 0)) phi = 0;  // also NaN
    if (phi > kPi) phi = kPi;
    if (!std::isfinite(theta)) theta = 0;
    theta = std::fmod(theta, kTwoPi);
    if (theta < 0) theta += kTwoPi;
    return nearest_unit({std::sin(phi) * std::cos(theta), std::sin(phi) * std::sin(theta), std::cos(phi)}, phi, theta);
}

std::size_t SampleLayout::nearest_unit(const Vec3d& d, double phi, double theta) const {
    const int n_stacks = stacks_;
    const double dphi = kPi / n_stacks;
    // Eq. 4: the ring just north of phi; phi lies between rings lo and lo + 1.
    const int lo = std::clamp(static_cast<int>(std::floor(phi / dphi)), 0, n_stacks - 1);
    std::size_t best = 0;
    double best_dot = -std::numeric_limits<double>::infinity();
    auto visit = [&](int ring) {
        const int n = count_[static_cast<std::size_t>(ring)];
        if (n == 0) return;
        // Eq. 5: position in the ring; the two samples either side of theta are the only
        // candidates (in one ring the angle grows with the wrapped theta difference).
        const double u = theta * n / kTwoPi;
        const int j0 = static_cast<int>(std::floor(u)) % n;
        for (int j : {j0, (j0 + 1) % n}) {
            const std::size_t k = first_[static_cast<std::size_t>(ring)] + static_cast<std::size_t>(j);
            const double v = dot(d, dirs_[k]);
            if (v > best_dot || (v == best_dot && k < best)) best_dot = v, best = k;
        }
    };
    visit(lo);
    visit(lo + 1);
    // A ring at phi distance a holds no sample nearer than a (dot <= cos a). The 1e-12 slack
    // covers rounding in cos() and in the stored directions; it can only add a visit.
    for (int r = lo - 1; r >= 0 && std::cos(phi - r * dphi) + 1e-12 >= best_dot; --r) visit(r);
    for (int r = lo + 2; r <= n_stacks && std::cos(r * dphi - phi) + 1e-12 >= best_dot; ++r) visit(r);
    return best;
}

std::size_t SampleLayout::nearest(const Vec3d& direction) const {
    const double len = length(direction);
    if (!(len > 0) || !std::isfinite(len)) return nearest(0.0, 0.0);
    double phi = 0, theta = 0;
    direction_angles(direction, phi, theta);
    return nearest_unit(direction / len, phi, theta);
}

}  // namespace hp::cfm
