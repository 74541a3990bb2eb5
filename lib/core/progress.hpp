#pragma once
// Progress reporting from long library operations (the OpenVDB "interrupter" idea).
//
// A long operation calls `report(phase, fraction)` now and then; the app decides whether and how
// to draw it (a bar on a terminal, nothing when piped or --quiet). The library never prints.
// Thread-safety: operations call the callback from the calling thread only.
#include <functional>
#include <string_view>

namespace hp {

struct Progress {
    // phase: short name of the current phase ("surface", "fill", "layers"...); fraction in [0, 1].
    std::function<void(std::string_view phase, double fraction)> callback;

    void report(std::string_view phase, double fraction) const {
        if (callback) callback(phase, fraction);
    }
};

}  // namespace hp
