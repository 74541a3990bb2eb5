#pragma once
// Wall-clock timing of the stages: a steady clock and the seconds since a point of it.
#include <chrono>

namespace hp {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace hp
