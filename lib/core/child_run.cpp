// lib/core/child_run: fork, a pipe, waitpid (child_run.hpp).
#include "core/child_run.hpp"

#include <algorithm>
#include <cerrno>
#include <exception>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace hp {

namespace {

// The child's exit statuses: anything else (a sanitizer's report, an abort) is "died".
constexpr int kReturned = 0;
constexpr int kThrew = 3;

[[noreturn]] void finish_child(int write_end, const std::string& text, int status) {
    const std::size_t n = std::min(text.size(), ChildOutcome::kMaxText);
    std::size_t sent = 0;
    while (sent < n) {
        const ssize_t w = ::write(write_end, text.data() + sent, n - sent);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        sent += static_cast<std::size_t>(w);
    }
    ::_exit(status);
}

}  // namespace

ChildOutcome run_in_child(const std::function<std::string()>& work) {
    ChildOutcome out;
    int ends[2];
    // Close-on-exec: a program another thread starts meanwhile does not hold the write end. A child
    // another thread forks meanwhile may, until it ends; the parent therefore reads after waitpid,
    // without blocking, what its own child wrote (never more than a pipe holds).
    if (::pipe2(ends, O_CLOEXEC) != 0) {
        out.status = errno;
        return out;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        out.status = errno;
        ::close(ends[0]);
        ::close(ends[1]);
        return out;
    }
    if (pid == 0) {
        ::close(ends[0]);
        try {
            finish_child(ends[1], work(), kReturned);
        } catch (const std::exception& e) {
            finish_child(ends[1], e.what(), kThrew);
        } catch (...) {
            finish_child(ends[1], "an exception of unknown type", kThrew);
        }
    }
    ::close(ends[1]);
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    ::fcntl(ends[0], F_SETFL, ::fcntl(ends[0], F_GETFL) | O_NONBLOCK);
    char buffer[1024];
    while (out.text.size() < ChildOutcome::kMaxText) {
        const ssize_t r = ::read(ends[0], buffer, sizeof buffer);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        out.text.append(buffer, static_cast<std::size_t>(r));
    }
    ::close(ends[0]);
    if (WIFSIGNALED(wstatus)) {
        out.kind = ChildOutcome::Kind::died;
        out.signal = WTERMSIG(wstatus);
    } else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == kReturned) {
        out.kind = ChildOutcome::Kind::done;
    } else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == kThrew) {
        out.kind = ChildOutcome::Kind::threw;
    } else {
        out.kind = ChildOutcome::Kind::died;
        out.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
    }
    return out;
}

}  // namespace hp
