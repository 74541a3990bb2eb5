#pragma once
// lib/mesh/cad_guard — OpenCASCADE's work guarded against the signals it dies of (internal to the
// CAD module, hapticprep_cad.so: cad_occt.cpp, and its tests; docs/cad.md "Bad files"). The second
// and last unit that includes OpenCASCADE's headers, in cad_guard.cpp; this header includes none.
//
// OpenCASCADE dies of a signal inside its readers and mesher on some damaged files (an entity that
// refers to one cut away or of another type: a null pointer followed; a curve that is its own basis
// curve: a recursion until the stack overflows). Its own mechanism turns the signal into a C++
// exception: with its handlers set (CadSignals), SIGSEGV, SIGBUS, SIGFPE... jump to the nearest
// OCC_CATCH_SIGNALS of the faulting thread, which throws Standard_Failure from there, its error
// handlers unwound in order. That works only in a thread that has such a guarded block and, for a
// stack overflow, a signal stack of its own: so OpenCASCADE's work runs on the reading thread and on
// the threads of run_cad_tasks, never on threads of OpenCASCADE's (its mesher runs sequentially).
#include <csignal>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hp {

// An alternate signal stack for the calling thread while alive (sigaltstack), so that a handler of
// SIGSEGV can run after the thread's own stack overflowed; the thread's previous one is put back.
class CadSignalStack {
public:
    CadSignalStack();
    ~CadSignalStack();
    CadSignalStack(const CadSignalStack&) = delete;
    CadSignalStack& operator=(const CadSignalStack&) = delete;
    static constexpr std::size_t kBytes = std::size_t{256} << 10;

private:
    std::vector<char> stack_;
    stack_t previous_{};
    bool set_ = false;
};

// While alive: OpenCASCADE's handlers of the fault signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL) are
// set, process-wide (floating-point traps stay off), SIGSEGV's to run on the faulting thread's
// alternate signal stack; the constructing thread has one (CadSignalStack). Every other signal
// keeps the process's handler (SIGINT, SIGTERM: the pipeline's stop). The destructor puts back
// every handler and the thread's alternate stack as they were. One at a time per process.
class CadSignals {
public:
    CadSignals();
    ~CadSignals();
    CadSignals(const CadSignals&) = delete;
    CadSignals& operator=(const CadSignals&) = delete;

private:
    struct sigaction previous_[NSIG] {};
    bool saved_[NSIG] = {};
    CadSignalStack stack_;
};

// A task of run_cad_tasks that ended in OpenCASCADE's Standard_Failure (a signal turned into one
// among them): its index and "TYPE: message" (the message cut at 160 characters).
struct CadTaskFailure {
    std::size_t task = 0;
    std::string what;
};

// Runs task(0) .. task(count - 1) on min(threads, count) threads, the calling one among them (no
// other thread when that is 1), tasks taken in increasing order. Each thread has its own alternate
// signal stack and each task an OCC_CATCH_SIGNALS block, so that a fault in a task, a stack
// overflow too, ends that task with Standard_Failure; the other threads go on. Needs a CadSignals
// alive (the handlers). Once a task fails, the tasks after it that have not started are skipped.
// Returns the failure of the lowest-numbered task that failed, the same for any thread count; an
// exception of another type (hp::Error...) from the lowest-numbered failing task is rethrown.
std::optional<CadTaskFailure> run_cad_tasks(std::size_t count, unsigned threads,
                                            const std::function<void(std::size_t)>& task);

}  // namespace hp
