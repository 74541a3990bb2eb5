#pragma once
// hp::Error — the one exception type of the library.
//
// Every module reports failures by throwing hp::Error with the exit code the executables use
// (ExitCode below) and a message that the app prints as is, after its own name:
//   "<file>: <what is wrong> (<what to do>)".
// Modules never print and never exit.
#include <stdexcept>
#include <string>

namespace hp {

enum class ExitCode : int {
    ok = 0,
    check_failed = 1,  // a check failed: budget exceeded, validation failed, batch had failures
    usage = 2,         // bad flag or value
    bad_input = 3,     // unreadable, corrupt, wrong kind of file, mesh with no triangles...
    cannot_write = 4,  // output cannot be written
};

class Error : public std::runtime_error {
public:
    Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
    ExitCode code() const noexcept { return code_; }
    int exit_code() const noexcept { return static_cast<int>(code_); }

private:
    ExitCode code_;
};

// Shorthands for the common kinds. `where` is usually a file name; it prefixes the message.
[[noreturn]] inline void fail_input(const std::string& where, const std::string& what) {
    throw Error(ExitCode::bad_input, where.empty() ? what : where + ": " + what);
}
[[noreturn]] inline void fail_usage(const std::string& what) { throw Error(ExitCode::usage, what); }
[[noreturn]] inline void fail_write(const std::string& where, const std::string& what) {
    throw Error(ExitCode::cannot_write, where.empty() ? what : where + ": " + what);
}

}  // namespace hp
