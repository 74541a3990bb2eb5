#include "core/cpu.hpp"

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

}  // namespace hp
