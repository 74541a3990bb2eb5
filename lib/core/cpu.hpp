#pragma once
// What the CPU running the program can do, for code with vector variants chosen at run time.

namespace hp {

// The CPU and the operating system support AVX (AVX2): libgcc checks both the instruction set and
// that the system saves the wide registers. False on other architectures.
bool cpu_has_avx();
bool cpu_has_avx2();

// The threads a parallel phase may use: the tools' --threads (TBB's max_allowed_parallelism, which
// this_task_arena::max_concurrency does not see), else the current arena's. At least 1.
int worker_threads();

// Pins the calling thread to the core it runs on now, so that a timing on one thread stays on one
// core (the scheduler does not move it mid-run). Best effort: a refusal is ignored.
void pin_to_current_core();

}  // namespace hp
