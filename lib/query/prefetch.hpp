#pragma once
// lib/query/prefetch — ask the memory for a cache line without waiting for it.
//
// Not a plain __builtin_prefetch: GCC 12 (-O2) classifies a function whose only effect is
// __builtin_prefetch as free of side effects (ipa-pure-const) and deletes the calls to it, so a
// helper like DistanceSampler::prefetch_value (an earlier helper) compiled to a bare `ret` and the traversal's
// prefetches were silently gone. A volatile asm statement is never deleted.

namespace hp {

inline void prefetch_line(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
    __builtin_prefetch(p);
    asm volatile("" : : "r"(p));  // keeps the enclosing function from being classified as pure
#endif
}

}  // namespace hp
