// OpenCASCADE's work guarded against the signals it dies of (mesh/cad_guard.hpp).
// As Debian's OpenCASCADE is built: OCC_CATCH_SIGNALS turns a signal into an exception.
#define OCC_CONVERT_SIGNALS 1

#include "mesh/cad_guard.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>

#include <OSD.hxx>
#include <Standard_ErrorHandler.hxx>
#include <Standard_Failure.hxx>

namespace hp {

CadSignalStack::CadSignalStack() : stack_(kBytes) {
    stack_t alternate{};
    alternate.ss_sp = stack_.data();
    alternate.ss_size = stack_.size();
    set_ = ::sigaltstack(&alternate, &previous_) == 0;
}

CadSignalStack::~CadSignalStack() {
    if (!set_) return;
    // A previous stack of "none" is put back as disabled (its SS_DISABLE flag).
    ::sigaltstack(&previous_, nullptr);
}

// A jump of our own out of OpenCASCADE would skip its error handlers and leave their list and lock
// to the next file, which could then crash or wait forever: OpenCASCADE's handlers do the jump.
CadSignals::CadSignals() {
    for (int sig = 1; sig < NSIG; ++sig) saved_[sig] = ::sigaction(sig, nullptr, &previous_[sig]) == 0;
    OSD::SetSignal(OSD_SignalMode_Set, false);  // false: floating-point traps stay off
    for (int sig = 1; sig < NSIG; ++sig)
        if (saved_[sig] && sig != SIGSEGV && sig != SIGBUS && sig != SIGFPE && sig != SIGILL)
            ::sigaction(sig, &previous_[sig], nullptr);
    struct sigaction segv {};
    if (::sigaction(SIGSEGV, nullptr, &segv) == 0) {
        segv.sa_flags |= SA_ONSTACK;
        ::sigaction(SIGSEGV, &segv, nullptr);
    }
}

CadSignals::~CadSignals() {
    for (int sig = 1; sig < NSIG; ++sig)
        if (saved_[sig]) ::sigaction(sig, &previous_[sig], nullptr);
}

namespace {

struct TaskRun {
    const std::function<void(std::size_t)>& task;
    std::size_t count;
    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> first_failed;  // count while none failed
    std::vector<std::string> what;          // per task: its Standard_Failure, or ""
    std::vector<std::exception_ptr> error;  // per task: another exception

    TaskRun(const std::function<void(std::size_t)>& t, std::size_t n) : task(t), count(n), first_failed(n), what(n), error(n) {}

    void failed(std::size_t i) {
        std::size_t seen = first_failed.load();
        while (i < seen && !first_failed.compare_exchange_weak(seen, i)) {
        }
    }

    // One task in a guarded block: a signal in it jumps back here as Standard_Failure.
    void run(std::size_t i) {
        try {
            OCC_CATCH_SIGNALS
            task(i);
        } catch (const Standard_Failure& e) {
            std::string message = e.GetMessageString() ? e.GetMessageString() : "";
            std::replace(message.begin(), message.end(), '\n', ' ');
            if (message.size() > 160) message = message.substr(0, 160) + "...";
            what[i] = std::string(e.DynamicType()->Name()) + (message.empty() ? "" : ": " + message);
            failed(i);
        } catch (...) {
            error[i] = std::current_exception();
            failed(i);
        }
    }

    // Tasks are taken in increasing order, so once one is past a failed task, all later ones are.
    void work() {
        const CadSignalStack stack;
        for (std::size_t i = next++; i < count && i < first_failed.load(); i = next++) run(i);
    }
};

}  // namespace

std::optional<CadTaskFailure> run_cad_tasks(std::size_t count, unsigned threads,
                                            const std::function<void(std::size_t)>& task) {
    TaskRun run(task, count);
    std::vector<std::thread> pool;
    const std::size_t others = std::min<std::size_t>(threads, count) > 1 ? std::min<std::size_t>(threads, count) - 1 : 0;
    pool.reserve(others);
    try {
        for (std::size_t t = 0; t < others; ++t) pool.emplace_back([&run] { run.work(); });
    } catch (const std::system_error&) {  // no more threads to be had: those started and this one do the work
    }
    run.work();
    for (std::thread& t : pool) t.join();
    const std::size_t i = run.first_failed.load();
    if (i >= count) return std::nullopt;
    if (run.error[i]) std::rethrow_exception(run.error[i]);
    return CadTaskFailure{i, run.what[i]};
}

}  // namespace hp
