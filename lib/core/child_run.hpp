#pragma once
// lib/core/child_run — a piece of work run once in a forked child process, for a library call whose
// failures cost the calling process something it cannot take back: memory a library leaks when it
// refuses a file (Assimp's COLLADA parser), or a crash. The child runs `work`, sends its text back
// through a pipe and ends with _exit (no destructors, no exit handlers: what it leaked or broke ends
// with it). Linux (fork); the child has only the calling thread, so `work` must not wait on other
// threads of the parent (locks held by them, a thread pool).
#include <functional>
#include <string>

namespace hp {

struct ChildOutcome {
    enum class Kind {
        done,        // `work` returned: `text` is what it returned
        threw,       // `work` threw: `text` is the exception's what()
        died,        // the child ended by a signal (`signal`) or an unexpected exit status (`status`)
        not_started  // fork or pipe failed (errno in `status`): run the work in the process instead
    };
    Kind kind = Kind::not_started;
    std::string text;  // at most kMaxText bytes
    int signal = 0;
    int status = 0;
    static constexpr std::size_t kMaxText = 4000;  // within a pipe's buffer: the child never blocks
};

ChildOutcome run_in_child(const std::function<std::string()>& work);

}  // namespace hp
