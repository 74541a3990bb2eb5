#include "core/cpu.hpp"

#include <algorithm>

#include <sched.h>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

namespace hp {

#if defined(__x86_64__) || defined(__i386__)
bool cpu_has_avx() {
    static const bool yes = (__builtin_cpu_init(), __builtin_cpu_supports("avx") != 0);
    return yes;
}
bool cpu_has_avx2() {
    static const bool yes = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") != 0);
    return yes;
}
#else
bool cpu_has_avx() { return false; }
bool cpu_has_avx2() { return false; }
#endif

int worker_threads() {
    const std::size_t limit = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
    const std::size_t arena = static_cast<std::size_t>(std::max(1, tbb::this_task_arena::max_concurrency()));
    return static_cast<int>(std::max<std::size_t>(1, std::min(limit, arena)));
}

void pin_to_current_core() {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(sched_getcpu(), &set);
    (void)sched_setaffinity(0, sizeof set, &set);
}

}  // namespace hp
