#pragma once
// The usage error (exit code 2) a call throws, for tests that check the words of its message.

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace hp::test {

// The message of the usage error `call` throws; fails the test when it throws none, or another code.
inline std::string usage_error(const std::function<void()>& call) {
    try {
        call();
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::usage) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return {};
}

}  // namespace hp::test
