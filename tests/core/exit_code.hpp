#pragma once
// The exit code an hp::Error thrown by `f` carries (ExitCode::ok when nothing is thrown).
#include "core/error.hpp"

namespace hp_test {

inline hp::ExitCode code_of(auto&& f) {
    try {
        f();
    } catch (const hp::Error& e) {
        return e.code();
    }
    return hp::ExitCode::ok;
}

}  // namespace hp_test
