#include "math/fast_atan2.hpp"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/cpu.hpp"

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Distance in representable doubles (ulps where both lie in one binade; -0 and +0 count as one).
std::uint64_t ulps(double a, double b) {
    auto ordered = [](double v) {  // monotonic in v
        const auto i = std::bit_cast<std::uint64_t>(v);
        return (i >> 63) != 0 ? (std::uint64_t{1} << 63) - (i & ~(std::uint64_t{1} << 63)) : (std::uint64_t{1} << 63) + i;
    };
    const std::uint64_t oa = ordered(a), ob = ordered(b);
    return oa > ob ? oa - ob : ob - oa;
}

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

// Pairs (y, x) over the whole double range: random signs, magnitudes spread over 1e-300..1e300
// and over all doubles (subnormals, up to the largest), near the axes, near |y| = |x|, one tiny
// relative to the other, and by angle.
void random_pairs(std::size_t count, std::vector<double>& ys, std::vector<double>& xs) {
    std::mt19937_64 rng(20260127);
    std::uniform_real_distribution<double> u(0, 1);
    auto sign = [&] { return (rng() & 1) != 0 ? -1.0 : 1.0; };
    auto magnitude = [&] { return std::pow(10.0, -300 + 600 * u(rng)); };
    auto any_double = [&] { return std::ldexp(1 + u(rng), static_cast<int>(rng() % 2098) - 1074); };  // 2^-1074 .. 2^1024
    ys.resize(count), xs.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        double y = 0, x = 0;
        switch (i % 7) {
            case 0: y = sign() * magnitude(), x = sign() * magnitude(); break;
            case 1: y = sign() * any_double(), x = sign() * any_double(); break;
            case 2: y = sign() * 2 * u(rng), x = sign() * 2 * u(rng); break;
            case 3:  // |y| = |x| (1 + tiny)
                y = sign() * magnitude();
                x = sign() * std::abs(y) * (1 + (u(rng) - 0.5) * std::pow(10.0, -16 * u(rng)));
                break;
            case 4:  // near an axis: ratio down to 1e-20
                x = sign() * magnitude(), y = sign() * std::abs(x) * std::pow(10.0, -20 * u(rng));
                if ((rng() & 1) != 0) std::swap(x, y);
                break;
            case 5:  // one tiny relative to the other, the quotient down to underflow
                x = sign() * magnitude(), y = sign() * std::abs(x) * std::pow(10.0, -330 * u(rng));
                if ((rng() & 1) != 0) std::swap(x, y);
                break;
            default:  // by angle over (-pi, pi]
                const double angle = std::numbers::pi * (2 * u(rng) - 1), r = magnitude();
                y = r * std::sin(angle), x = r * std::cos(angle);
                break;
        }
        ys[i] = y, xs[i] = x;
    }
}

#if defined(__x86_64__)
[[gnu::target("avx")]] void fast_atan2_by_four(const double* y, const double* x, double* out, std::size_t n) {
    for (std::size_t i = 0; i + 4 <= n; i += 4) {
        hp::Vec4d vy, vx;
        std::memcpy(&vy, y + i, sizeof vy), std::memcpy(&vx, x + i, sizeof vx);
        const hp::Vec4d r = hp::fast_atan2_avx(vy, vx);
        std::memcpy(out + i, &r, sizeof r);
    }
}
#endif

}  // namespace

TEST(FastAtan2, SpecialCasesAsStdAtan2) {
    const double pi = std::numbers::pi, half = pi / 2, quarter = pi / 4;
    struct Case {
        double y, x, want;
    };
    const double tiny = std::numeric_limits<double>::denorm_min(), huge = std::numeric_limits<double>::max();
    const Case cases[] = {
        {0.0, 2.5, 0.0},        {-0.0, 2.5, -0.0},      {0.0, tiny, 0.0},     {-0.0, huge, -0.0},   // (+-0, +x) -> +-0
        {0.0, -2.5, pi},        {-0.0, -2.5, -pi},      {0.0, -tiny, pi},     {-0.0, -huge, -pi},   // (+-0, -x) -> +-pi
        {0.0, 0.0, 0.0},        {-0.0, 0.0, -0.0},      {0.0, -0.0, pi},      {-0.0, -0.0, -pi},    // (+-0, +-0)
        {3.0, 0.0, half},       {3.0, -0.0, half},      {-3.0, 0.0, -half},   {-tiny, -0.0, -half}, // (y, +-0) -> +-pi/2
        {huge, 0.0, half},      {tiny, -0.0, half},
        {kInf, kInf, quarter},  {-kInf, kInf, -quarter}, {kInf, -kInf, 3 * quarter}, {-kInf, -kInf, -3 * quarter},
        {kInf, 1.0, half},      {-kInf, -1.0, -half},   {kInf, 0.0, half},    {-kInf, -0.0, -half},
        {1.0, kInf, 0.0},       {-1.0, kInf, -0.0},     {1.0, -kInf, pi},     {-1.0, -kInf, -pi},
        {0.0, kInf, 0.0},       {-0.0, -kInf, -pi},
        {1.0, 1.0, quarter},    {-1.0, -1.0, -3 * quarter}, {huge, huge, quarter}, {tiny, -tiny, 3 * quarter},
    };
    for (const Case& c : cases) {
        const double got = hp::fast_atan2(c.y, c.x);
        EXPECT_TRUE(same_bits(got, std::atan2(c.y, c.x))) << c.y << " " << c.x << ": " << got;
        EXPECT_TRUE(same_bits(got, c.want)) << c.y << " " << c.x << ": " << got << " want " << c.want;
    }
    for (const double v : {0.0, -0.0, 1.0, -1e300, kInf, -kInf, kNaN}) {
        EXPECT_TRUE(std::isnan(hp::fast_atan2(kNaN, v))) << v;
        EXPECT_TRUE(std::isnan(hp::fast_atan2(v, kNaN))) << v;
        EXPECT_TRUE(std::isnan(hp::fast_atan2(-kNaN, v))) << v;
    }
}

TEST(FastAtan2, WithinOneUlpOfStdAtan2AndOfTheLongDoubleValue) {
    std::vector<double> ys, xs;
    random_pairs(2'401'000, ys, xs);
    std::uint64_t worst = 0;
    std::size_t off_by_one = 0;
    double worst_true = 0;  // against atan2l, 11 bits more precise than double
    for (std::size_t i = 0; i < ys.size(); ++i) {
        const double got = hp::fast_atan2(ys[i], xs[i]), want = std::atan2(ys[i], xs[i]);
        const std::uint64_t d = ulps(got, want);
        ASSERT_LE(d, 1u) << std::hexfloat << ys[i] << " " << xs[i] << ": " << got << " std " << want;
        worst = std::max(worst, d);
        off_by_one += d == 1;
        const long double exact = std::atan2(static_cast<long double>(ys[i]), static_cast<long double>(xs[i]));
        const double rounded = static_cast<double>(exact);
        if (rounded == 0) continue;
        const double ulp = std::nextafter(std::abs(rounded), kInf) - std::abs(rounded);
        const double err = static_cast<double>(std::abs(static_cast<long double>(got) - exact)) / ulp;
        ASSERT_LT(err, 1.0) << std::hexfloat << ys[i] << " " << xs[i] << ": " << got;
        worst_true = std::max(worst_true, err);
    }
    std::printf("  fast_atan2 on %zu pairs: %zu one ulp from std::atan2 (max %llu ulp), max %.3f ulp from atan2l\n", ys.size(),
                off_by_one, static_cast<unsigned long long>(worst), worst_true);
}

TEST(FastAtan2, AvxLanesGiveTheScalarBits) {
#if defined(__x86_64__)
    if (!hp::cpu_has_avx()) GTEST_SKIP() << "no AVX on this CPU";
    std::vector<double> ys, xs;
    random_pairs(2'401'000, ys, xs);
    // And the special values in every combination, so that each lane meets each case.
    const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, -2.0, std::numeric_limits<double>::denorm_min(),
                               std::numeric_limits<double>::max(), -std::numeric_limits<double>::min(), kInf, -kInf, kNaN};
    for (const double a : specials)
        for (const double b : specials) ys.push_back(a), xs.push_back(b);
    while (ys.size() % 4 != 0) ys.push_back(1.0), xs.push_back(3.0);
    std::vector<double> four(ys.size());
    fast_atan2_by_four(ys.data(), xs.data(), four.data(), ys.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < ys.size(); ++i) {
        const double one = hp::fast_atan2(ys[i], xs[i]);
        const bool same = std::isnan(one) ? std::isnan(four[i]) : same_bits(one, four[i]);
        if (!same && differ++ < 5) ADD_FAILURE() << std::hexfloat << ys[i] << " " << xs[i] << ": " << one << " vs " << four[i];
    }
    EXPECT_EQ(differ, 0u);
#else
    GTEST_SKIP() << "the AVX form exists on x86-64 only";
#endif
}

TEST(FastAtan2, CoefficientsAreTheRemezFit) {
    // The polynomial in the header is what tests/math/fast_atan2_remez.py derives (60-digit Remez
    // exchange), rounded to double: no coefficient edited by hand.
    if (std::system("python3 -c pass >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
    const auto script = std::filesystem::path(HP_SOURCE_DIR) / "tests" / "math" / "fast_atan2_remez.py";
    FILE* pipe = popen(("python3 '" + script.string() + "'").c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string text;
    char buffer[4096];
    for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, got);
    ASSERT_EQ(pclose(pipe), 0) << text;
    const std::size_t open = text.find('{'), close = text.find('}');
    ASSERT_NE(open, std::string::npos) << text;
    ASSERT_NE(close, std::string::npos) << text;
    std::istringstream list(text.substr(open + 1, close - open - 1));
    std::vector<double> fit;
    for (std::string item; std::getline(list, item, ',');) fit.push_back(std::stod(item));
    const auto& header = hp::fast_atan2_detail::kQ;
    ASSERT_EQ(fit.size(), std::size(header));
    for (std::size_t k = 0; k < fit.size(); ++k) EXPECT_TRUE(same_bits(fit[k], header[k])) << k << ": " << fit[k] << " vs " << header[k];
}
