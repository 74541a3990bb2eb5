#pragma once
// A double rounded to a float that bounds it: for bounds stored in floats that must never fall on
// the wrong side of the doubles they bound (the distance pyramid, the scene's hierarchy).
#include <cmath>
#include <limits>

namespace hp {

// The float nearest above or at v.
inline float float_above(double v) {
    const auto f = static_cast<float>(v);
    return static_cast<double>(f) >= v ? f : std::nextafter(f, std::numeric_limits<float>::infinity());
}

// The float nearest below or at v.
inline float float_below(double v) {
    const auto f = static_cast<float>(v);
    return static_cast<double>(f) <= v ? f : std::nextafter(f, -std::numeric_limits<float>::infinity());
}

}  // namespace hp
