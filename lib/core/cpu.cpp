#include "core/cpu.hpp"

#include <sched.h>

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

void pin_to_current_core() {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(sched_getcpu(), &set);
    (void)sched_setaffinity(0, sizeof set, &set);
}

}  // namespace hp
