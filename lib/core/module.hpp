#pragma once
// lib/core/module — the toolchain's own modules: shared objects of hapticprep that hold the code
// behind heavy libraries (OpenVDB: hapticprep_vdb.so; OpenCASCADE: hapticprep_cad.so), loaded
// with dlopen on first use, so that a tool that never needs them does not pay for loading them at
// every start (docs/architecture.md, "Modules loaded on first use").
//
// Where a module is looked for, in order: the file the environment variable `env` names; next to
// the binary that holds this code (an executable, or the Python extension); that binary's
// ../<libdir>/hapticprep/ (the install layout: bin/ and lib/hapticprep/); the install directory
// and the build directory this library was built for.
#include <filesystem>
#include <string>

namespace hp {

struct ModuleHandle {
    std::filesystem::path path;  // the file loaded; empty when none could be
    void* handle = nullptr;      // dlopen's handle, never closed
    std::string error;           // why none could be loaded (the places looked in, or dlerror)
};

// Loads module `file_name` (e.g. "hapticprep_vdb.so") and checks that it was built with this
// binary: its function `abi_symbol` (extern "C" const char* ()) must return `abi_key`. Never
// throws: the caller says what the module was needed for.
ModuleHandle load_module(const char* file_name, const char* env, const char* abi_symbol, const std::string& abi_key);

// The symbol `name` of a loaded module, or nullptr.
void* module_symbol(const ModuleHandle& module, const char* name);

// What a module shares with its program. A module holds its own copy of the library parts it
// uses; the state of atomic writes (core/atomic_file.cpp: the temporaries an interrupted program
// removes, the descriptor `-o -` writes into, the temporaries' numbering) must be the program's:
// its entry point takes atomic_file_state() of the program and adopts it.
struct AtomicFileState;
AtomicFileState* atomic_file_state() noexcept;
void share_atomic_file_state(AtomicFileState* program) noexcept;

}  // namespace hp
