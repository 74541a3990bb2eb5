#pragma once
// lib/core/prefetch — ask the memory for a cache line without waiting for it.
//
// Not a plain __builtin_prefetch: GCC 12's mod/ref analysis summarizes a function whose only
// effect is __builtin_prefetch as having none, and dead-code elimination then deletes the calls
// to it (from -O1 on; -fno-ipa-modref keeps them): a helper that located a cell and prefetched it
// compiled to a bare `ret` at its call sites. A volatile asm statement is never deleted.

namespace hp {

inline void prefetch_line(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
    __builtin_prefetch(p);
    asm volatile("" : : "r"(p));  // an effect the mod/ref analysis cannot see through
#endif
}

}  // namespace hp
