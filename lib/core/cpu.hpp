#pragma once
// What the CPU running the program can do, for code with vector variants chosen at run time.

namespace hp {

// The CPU and the operating system support AVX (AVX2): libgcc checks both the instruction set and
// that the system saves the wide registers. False on other architectures.
bool cpu_has_avx();
bool cpu_has_avx2();

}  // namespace hp
