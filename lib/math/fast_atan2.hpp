#pragma once
// atan2(y, x) in double precision without a call into libm, in two forms that give the same bits:
// fast_atan2() for one pair, fast_atan2_avx() for four pairs in the lanes of one AVX register.
// Both are one template over the lane type (GCC vector extensions: two lanes of SSE2 for the one
// pair, four of AVX), so each lane does the very additions, multiplications and divisions in the
// same order, and IEEE rounds them alike. That holds as long as the compiler contracts neither form
// to fused multiply-adds: the build targets baseline x86-64 (SSE2) and the AVX form enables AVX
// only, not FMA. Lanes choose by masks, never by branches.
//
// Method. n = min(|y|, |x|), d = max(|y|, |x|), t = n/d in [0, 1]. Below t = 1/2, v = t; from
// there on atan t = pi/4 + atan v with v = (n - d)/(n + d) in [-1/3, 0] (n - d exact by Sterbenz's
// lemma, the rounding of n + d kept by Fast2Sum). So |v| <= 1/2 and
//   atan v = v + v s Q(s), s = v^2,
// Q of degree 11, the minimax fit of that error relative to atan v over s in [0, 1/4] (the Remez
// exchange, tests/math/fast_atan2_remez.py: 2^-57.8), evaluated by Estrin's scheme. The quotient's
// rounding error is put back: its remainder num - v den exactly (v and den cut into high and low
// bits, Dekker's products), divided by den (1 + v^2). The octant gives
//   atan2(|y|, |x|) = b + atan v or b - atan v,  b in {0, pi/4, pi/2, 3pi/4, pi},
// summed as b_hi +- v (exact by Fast2Sum) plus b_lo, the corrections and v s Q(s), rounded once at
// the end; the result takes y's sign. Pairs below 2^-900 and above 2^1020 are scaled by a power
// of 2 first (no underflow in the remainder, no overflow in n + d).
// Accuracy: max 1 ulp from std::atan2 (glibc) and under 0.76 ulp from the exact value (atan2l)
// over 2.4 million pairs spread over the whole double range (tests/math/fast_atan2_test.cpp).
// Special values as std::atan2: (+-0, +x) -> +-0, (+-0, -x) -> +-pi for x > 0, +0 or -0;
// (y != 0, +-0) -> +-pi/2; (+-inf, +inf) -> +-pi/4, (+-inf, -inf) -> +-3pi/4, (+-inf, x) -> +-pi/2,
// (y, +-inf) -> +-0 or +-pi; a NaN in gives a NaN out.
// Cost: two divisions and about 110 other operations per register, for two lanes or four.
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace hp {

// Four doubles in one vector (GCC vector extension, the layout of __m256d).
using Vec4d = double __attribute__((vector_size(32)));

namespace fast_atan2_detail {

// Two doubles (SSE2, baseline x86-64), the lanes in which fast_atan2 computes, and the masks and
// bits of both vector types.
using Vec2d = double __attribute__((vector_size(16)));
using Mask2 = std::int64_t __attribute__((vector_size(16)));
using Mask4 = std::int64_t __attribute__((vector_size(32)));

// Minimax Q(s) ~ (atan(sqrt s) / sqrt s - 1) / s on [0, 1/4], constant term first.
inline constexpr double kQ[12] = {
    -0.3333333333333298,  0.19999999999903162,   -0.14285714276390096, 0.11111110659799853,
    -0.09090896248411445, 0.07692073964587956,   -0.066638111012595,   0.05858301924144045,
    -0.05122018146999895, 0.041865365467942915,  -0.027435433352736304, 0.010117165761211215};
// Multiples of pi/4 as the double nearest and the rest.
inline constexpr double kPiHi = 3.141592653589793, kPiLo = 1.2246467991473532e-16;
inline constexpr double kHalfPiHi = 1.5707963267948966, kHalfPiLo = 6.123233995736766e-17;
inline constexpr double kQuarterPiHi = 0.7853981633974483, kQuarterPiLo = 3.061616997868383e-17;
inline constexpr double kThreeQuarterPiHi = 2.356194490192345, kThreeQuarterPiLo = 9.184850993605148e-17;

// out = atan2(y, x) lane by lane, V = Vec2d or Vec4d. Only operators, the vector ternary and
// __builtin_bit_cast, so that the same text compiles to either. No function here takes or returns
// a Vec4d by value: this template is compiled without AVX and inlined into an AVX function
// (fast_atan2_avx), so no call ever passes a 32-byte vector the pre-AVX way (-Wpsabi).
template <class V>
[[gnu::always_inline]] inline void atan2_lanes(const V& y, const V& x, V& out) {
    using Bits = std::conditional_t<sizeof(V) == sizeof(Vec2d), Mask2, Mask4>;
    constexpr std::int64_t kSign = std::numeric_limits<std::int64_t>::min(), kMagnitude = ~kSign;
    constexpr std::int64_t kHigh26 = ~((std::int64_t{1} << 27) - 1);  // a double's sign, exponent, 26 high bits
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const V zero = V{}, one = zero + 1.0;
    const V ax = __builtin_bit_cast(V, __builtin_bit_cast(Bits, x) & kMagnitude);
    const V ay = __builtin_bit_cast(V, __builtin_bit_cast(Bits, y) & kMagnitude);
    const auto swap = ay > ax;  // atan(|y|/|x|) = pi/2 - atan(|x|/|y|)
    const V n = swap ? ax : ay, d = swap ? ay : ax;
    // t = n/d in [0, 1]; from t >= 1/2 on, atan t = pi/4 + atan v, v = (n - d)/(n + d) in [-1/3, 0]
    // (n - d exact, Sterbenz). So v = num/den, |v| <= 1/2, and atan t = [pi/4] + atan v.
    const auto reduce = (n + n >= d) & (n > 0.0);
    // Very small and very large pairs are scaled by a power of 2 first: the remainder below stays
    // a normal number and n + d finite. (Where d > 2^1020 the scaling rounds n only if
    // n/d < 2^-2038, which rounds to 0 either way.) 0/0 and inf/inf become 0/1.
    const V scale = (ax < 0x1p-900) & (ay < 0x1p-900) ? zero + 0x1p+1000 : (ax > 0x1p+1020) | (ay > 0x1p+1020) ? zero + 0x1p-4 : one;
    const auto special = ((ax == 0.0) & (ay == 0.0)) | ((ax == kInf) & (ay == kInf));
    const V ns = n * scale, ds = d * scale;
    const V num = special ? zero : reduce ? ns - ds : ns;
    const V den = special ? one : reduce ? ns + ds : ds;
    const V den_lo = reduce ? ns - (den - ds) : zero;  // ns + ds = den + den_lo exactly (Fast2Sum)
    const V v = num / den;
    const V s = v * v;
    // The quotient's rounding error, as atan's change: v + r/(den + den_lo) is num/(den + den_lo)
    // to about twice the precision, r = num - v (den + den_lo), with v and den each cut into 26
    // high bits and the rest, so that the partial products are exact but the smallest; and
    // atan(v + e) = atan(v) + e/(1 + v^2) + O(e^2). Left out where |num| < 2^-960, where the
    // partial products would lose bits to underflow (num is 0, or v < 2^-60 and atan v rounds as
    // v, or v is a rounding of a difference far below pi/4's ulp), and where den is infinite.
    const V v_hi = __builtin_bit_cast(V, __builtin_bit_cast(Bits, v) & kHigh26), v_lo = v - v_hi;
    const V den_hi = __builtin_bit_cast(V, __builtin_bit_cast(Bits, den) & kHigh26), den_rest = den - den_hi;
    const V r = ((((num - v_hi * den_hi) - v_hi * den_rest) - v_lo * den_hi) - v_lo * den_rest) - v * den_lo;
    const V anum = __builtin_bit_cast(V, __builtin_bit_cast(Bits, num) & kMagnitude);
    const V e = (anum >= 0x1p-960) & (den < kInf) ? r / (den + den * s) : zero;
    // Q(s) by Estrin's scheme (pairs, then quadruples, then eights): a short chain of dependent
    // operations. Its roundings count little: v s Q(s) is at most 8% of atan v here.
    const V s2 = s * s, s4 = s2 * s2;
    const V q_a = (s * kQ[1] + kQ[0]) + s2 * (s * kQ[3] + kQ[2]);
    const V q_b = (s * kQ[5] + kQ[4]) + s2 * (s * kQ[7] + kQ[6]);
    const V q_c = (s * kQ[9] + kQ[8]) + s2 * (s * kQ[11] + kQ[10]);
    const V c = (v * s) * (q_a + s4 * (q_b + s4 * q_c));  // atan(v) - v
    // atan2(|y|, |x|) = b + a or b - a, a = atan t, b in {0, pi/2, pi}: + where x >= 0 and
    // |y| <= |x| or x < 0 and |y| > |x|. x < 0 by its sign bit (1 with that sign < 0), so that -0
    // counts as negative. With the pi/4 of the reduction, b +- pi/4 in {pi/4, 3pi/4}.
    const Bits x_sign = __builtin_bit_cast(Bits, x) & kSign;
    const auto xneg = __builtin_bit_cast(V, __builtin_bit_cast(Bits, one) | x_sign) < 0.0;
    const Bits flip = (swap & kSign) ^ x_sign;  // the sign bit where b - a: swap xor x < 0
    const V b_hi = reduce ? (xneg ? zero + kThreeQuarterPiHi : zero + kQuarterPiHi)
                          : (swap ? zero + kHalfPiHi : xneg ? zero + kPiHi : zero);
    const V b_lo = reduce ? (xneg ? zero + kThreeQuarterPiLo : zero + kQuarterPiLo)
                          : (swap ? zero + kHalfPiLo : xneg ? zero + kPiLo : zero);
    const V sv = __builtin_bit_cast(V, __builtin_bit_cast(Bits, v) ^ flip);
    const V se = __builtin_bit_cast(V, __builtin_bit_cast(Bits, e) ^ flip);
    const V sc = __builtin_bit_cast(V, __builtin_bit_cast(Bits, c) ^ flip);
    // b_hi + sv exactly as hi + its error (Fast2Sum: |b_hi| >= pi/4 > |v| or b_hi = 0); the small
    // parts added to that error (c last, as it is ready last), one rounding of the whole at the end.
    const V hi = b_hi + sv;
    const V lo = (((sv - (hi - b_hi)) + b_lo) + se) + sc;
    out = __builtin_bit_cast(V, __builtin_bit_cast(Bits, hi + lo) | (__builtin_bit_cast(Bits, y) & kSign));
}

}  // namespace fast_atan2_detail

// atan2(y, x) within 1 ulp of std::atan2 (see above); the same bits as fast_atan2_avx's lanes.
// Computed in both lanes of an SSE2 register (selects without branches).
[[gnu::always_inline]] inline double fast_atan2(double y, double x) {
    fast_atan2_detail::Vec2d r;
    fast_atan2_detail::atan2_lanes(fast_atan2_detail::Vec2d{y, y}, fast_atan2_detail::Vec2d{x, x}, r);
    return r[0];
}

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx")
// Lane by lane fast_atan2(y[i], x[i]). Only for CPUs with AVX (core/cpu.hpp cpu_has_avx()).
[[gnu::always_inline]] inline Vec4d fast_atan2_avx(Vec4d y, Vec4d x) {
    Vec4d r;
    fast_atan2_detail::atan2_lanes(y, x, r);
    return r;
}
#pragma GCC pop_options
#endif

}  // namespace hp
