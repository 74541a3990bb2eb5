#!/usr/bin/env bash
# make fuzz-coverage: the line coverage of the parsers behind the gate, per fuzz target, from the
# kept seeds, corpus and regression inputs (docs/fuzzing.md, "Coverage behind the gate").
# Builds hp_fuzz_replay in a release build with the VDB readers linked in (BUILD, default
# build-fuzz-light, configured with -DHP_VDB_MODULE=OFF), then hp_fuzz_coverage next to it (scripts/fuzz_light.py coverage: the reader files compiled by clang with source-based
# coverage, the rest the release build's libraries), then scripts/fuzz_coverage.py runs one replay
# per target and prints the table (llvm-profdata-14, llvm-cov-14).
#   scripts/fuzz_coverage.sh [TARGET...]     all targets of scripts/fuzz_coverage.py when none is given
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build-fuzz-light}
jobs=${JOBS:-2}
command -v clang++ >/dev/null || { echo "fuzz-coverage: clang++ not found (scripts/install-deps.sh installs it)" >&2; exit 2; }
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DHP_VDB_MODULE=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target hp_fuzz_replay >/dev/null
binary=$(python3 scripts/fuzz_light.py coverage "$build" "$build/fuzz-light")
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
exec python3 scripts/fuzz_coverage.py "$binary" "$@"
