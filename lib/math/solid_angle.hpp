#pragma once
// Signed solid angle of triangle (a, b, c) seen from p, in [-2 pi, 2 pi] (Van Oosterom &
// Strackee 1983). Summed over a closed surface and divided by 4 pi it is the winding number.
#include <cmath>

#include "math/vec.hpp"

namespace hp {

inline double solid_angle(const Vec3d& p, const Vec3d& a0, const Vec3d& b0, const Vec3d& c0) {
    const Vec3d a = a0 - p, b = b0 - p, c = c0 - p;
    const double la = length(a), lb = length(b), lc = length(c);
    const double det = dot(a, cross(b, c));
    const double den = la * lb * lc + dot(a, b) * lc + dot(b, c) * la + dot(c, a) * lb;
    return 2 * std::atan2(det, den);
}

}  // namespace hp
