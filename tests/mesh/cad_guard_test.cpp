// The guarded tasks the CAD module meshes on (mesh/cad_guard.hpp): a fault in a task on another
// thread than the caller's (a stack overflow, a write to an unmapped address) ends that task with
// OpenCASCADE's Standard_Failure, the process goes on, and the next STEP file reads as usual.
// The faults are the test's own (no STEP file is known that faults inside OpenCASCADE's mesher):
// they run in the same guarded tasks that mesh the shapes of every file.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include <Standard_ErrorHandler.hxx>
#include <Standard_Failure.hxx>

#include "cad_test_files.hpp"
#include "core/error.hpp"
#include "mesh/cad_guard.hpp"
#include "mesh/mesh.hpp"

using namespace cad_test;

namespace {

volatile std::size_t g_depth_limit = SIZE_MAX;  // never reached: the recursion ends in a stack overflow
volatile std::uintptr_t g_unmapped = 16;        // an address in the first page, never mapped

__attribute__((noinline)) std::size_t recurse(std::size_t depth) {
    volatile char frame[512];
    frame[0] = static_cast<char>(depth);
    if (depth == g_depth_limit) return 0;
    return recurse(depth + 1) + static_cast<std::size_t>(frame[0]);  // not a tail call
}

void write_unmapped() { *reinterpret_cast<volatile int*>(g_unmapped) = 1; }

// Two tasks, 0 and 1, on two threads: each waits (at most 20 s) until the other has started, so
// that one of them runs on the second thread; that one calls `fault`, the caller's returns. The
// failure run_cad_tasks reports, and which task ran on the second thread.
std::pair<std::optional<hp::CadTaskFailure>, std::size_t> fault_on_second_thread(void (*fault)()) {
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> started{0};
    std::atomic<std::size_t> on_second{SIZE_MAX};
    std::atomic<int> caller_done{0};
    const auto failure = hp::run_cad_tasks(2, 2, [&](std::size_t i) {
        ++started;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (started.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        if (std::this_thread::get_id() == caller) {
            ++caller_done;
            return;
        }
        on_second = i;
        fault();
    });
    EXPECT_EQ(caller_done.load(), 1);
    return {failure, on_second.load()};
}

// A box written as STEP reads as 12 triangles.
void expect_box_reads() {
    const hp::LoadedMesh m = hp::load_mesh(write_step(BRepPrimAPI_MakeBox(1, 2, 3).Shape(), "guard-box.step"));
    EXPECT_EQ(m.diagnostics.triangles, 12u);
    EXPECT_TRUE(m.diagnostics.watertight);
}

}  // namespace

TEST(CadGuard, StackOverflowOnASecondThreadEndsItsTask) {
    {
        const hp::CadSignals signals;
        const auto [failure, second] = fault_on_second_thread([] { recurse(0); });
        ASSERT_LT(second, 2u) << "no task ran on the second thread";
        ASSERT_TRUE(failure.has_value());
        EXPECT_EQ(failure->task, second);
        EXPECT_NE(failure->what.find("SIGSEGV"), std::string::npos) << failure->what;
        EXPECT_EQ(failure->what.find('\n'), std::string::npos);
        // OpenCASCADE's list of guarded blocks and its lock are free: a new run and a file read.
        EXPECT_FALSE(Standard_ErrorHandler::IsInTryBlock());
        std::atomic<int> ran{0};
        EXPECT_FALSE(hp::run_cad_tasks(5, 2, [&](std::size_t) { ++ran; }).has_value());
        EXPECT_EQ(ran.load(), 5);
    }
    expect_box_reads();
}

TEST(CadGuard, FaultOnASecondThreadEndsItsTask) {
    {
        const hp::CadSignals signals;
        const auto [failure, second] = fault_on_second_thread(write_unmapped);
        ASSERT_LT(second, 2u) << "no task ran on the second thread";
        ASSERT_TRUE(failure.has_value());
        EXPECT_EQ(failure->task, second);
        EXPECT_NE(failure->what.find("SIGSEGV"), std::string::npos) << failure->what;
    }
    expect_box_reads();
}

// The failure reported is the lowest-numbered one, for any thread count; later tasks are skipped
// once one failed, earlier ones all run; an exception other than Standard_Failure is rethrown.
TEST(CadGuard, ReportsTheLowestFailingTaskForAnyThreadCount) {
    const hp::CadSignals signals;
    for (unsigned threads : {1u, 2u, 3u}) {
        std::atomic<int> ran_before{0};
        const auto failure = hp::run_cad_tasks(8, threads, [&](std::size_t i) {
            if (i == 3 || i == 5) throw Standard_Failure(("task " + std::to_string(i)).c_str());
            if (i < 3) ++ran_before;
        });
        ASSERT_TRUE(failure.has_value()) << threads;
        EXPECT_EQ(failure->task, 3u) << threads;
        EXPECT_EQ(failure->what, "Standard_Failure: task 3") << threads;
        EXPECT_EQ(ran_before.load(), 3) << threads;
        EXPECT_THROW(hp::run_cad_tasks(4, threads,
                                       [](std::size_t i) {
                                           if (i >= 1) throw std::runtime_error("task " + std::to_string(i));
                                       }),
                     std::runtime_error);
    }
    // A task list of none runs nothing.
    EXPECT_FALSE(hp::run_cad_tasks(0, 2, [](std::size_t) { FAIL(); }).has_value());
}

// The handlers and the alternate stack in place before are put back.
TEST(CadGuard, PutsBackTheHandlersAndStack) {
    struct sigaction before {};
    ASSERT_EQ(::sigaction(SIGSEGV, nullptr, &before), 0);
    stack_t stack_before{};
    ASSERT_EQ(::sigaltstack(nullptr, &stack_before), 0);
    {
        const hp::CadSignals signals;
        struct sigaction during {};
        ASSERT_EQ(::sigaction(SIGSEGV, nullptr, &during), 0);
        EXPECT_NE(during.sa_flags & SA_ONSTACK, 0);
        stack_t stack_during{};
        ASSERT_EQ(::sigaltstack(nullptr, &stack_during), 0);
        EXPECT_EQ(stack_during.ss_size, hp::CadSignalStack::kBytes);
    }
    struct sigaction after {};
    ASSERT_EQ(::sigaction(SIGSEGV, nullptr, &after), 0);
    EXPECT_EQ(after.sa_handler, before.sa_handler);
    EXPECT_EQ(after.sa_flags & (SA_ONSTACK | SA_SIGINFO), before.sa_flags & (SA_ONSTACK | SA_SIGINFO));
    stack_t stack_after{};
    ASSERT_EQ(::sigaltstack(nullptr, &stack_after), 0);
    EXPECT_EQ(stack_after.ss_sp, stack_before.ss_sp);
    EXPECT_EQ(stack_after.ss_flags & SS_DISABLE, stack_before.ss_flags & SS_DISABLE);
}
