#pragma once
// Signed solid angle of triangle (a, b, c) seen from p, in [-2 pi, 2 pi] (Van Oosterom &
// Strackee 1983): 2 atan2(det, den). Summed over a closed surface and divided by 4 pi it is the
// winding number. Two variants that differ only in the atan2:
// solid_angle(): std::atan2, for the exact sums (winding_number, BoundaryWinding, orientation),
// which stay an independent reference for the fast one;
// solid_angle_fast(): fast_atan2 (within 1 ulp of std::atan2, the same bits as the AVX walk's
// fast_atan2_avx lanes), for FastWinding's near triangles.
#include <cmath>

#include "math/fast_atan2.hpp"
#include "math/vec.hpp"

namespace hp {

// det = a . (b x c) and den = |a||b||c| + (a.b)|c| + (b.c)|a| + (c.a)|b|, a, b, c relative to p.
struct SolidAngleTerms {
    double det, den;
};

[[gnu::always_inline]] inline SolidAngleTerms solid_angle_terms(const Vec3d& p, const Vec3d& a0, const Vec3d& b0, const Vec3d& c0) {
    const Vec3d a = a0 - p, b = b0 - p, c = c0 - p;
    const double la = length(a), lb = length(b), lc = length(c);
    const double det = dot(a, cross(b, c));
    const double den = la * lb * lc + dot(a, b) * lc + dot(b, c) * la + dot(c, a) * lb;
    return {det, den};
}

inline double solid_angle(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const SolidAngleTerms t = solid_angle_terms(p, a, b, c);
    return 2 * std::atan2(t.det, t.den);
}

inline double solid_angle_fast(const Vec3d& p, const Vec3d& a, const Vec3d& b, const Vec3d& c) {
    const SolidAngleTerms t = solid_angle_terms(p, a, b, c);
    return 2 * fast_atan2(t.det, t.den);
}

}  // namespace hp
