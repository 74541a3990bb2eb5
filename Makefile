# Thin wrapper around CMake. `make demo` and `make test` do all set-up on a fresh Debian 12.
MAKEFLAGS  += --no-print-directory
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
# A release build with the VDB readers linked in (not the module), for make fuzz-coverage.
FUZZ_LIGHT_BUILD ?= build-fuzz-light
FUZZ_SECONDS ?= 60
JOBS       ?= 2
WERROR     ?= OFF
CMAKE_ARGS ?=
# ccache (scripts/install-deps.sh; CMakeLists.txt uses it when found) keeps object files between
# builds and clones: paths below the checkout are hashed relative to it.
export CCACHE_BASEDIR ?= $(CURDIR)

.PHONY: all deps build test test-fast test-asan demo bench clean samples fuzz fuzz-coverage

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DHP_WERROR=$(WERROR) $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake -S . -B $(BUILD) -DHP_WERROR=$(WERROR) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# All tests: the release build, then the same tests under ASan+UBSan.
test: test-fast test-asan

test-fast: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHP_SANITIZE=ON -DHP_WERROR=$(WERROR) $(CMAKE_ARGS) >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 HP_SANITIZED=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)/bin

bench: deps $(BUILD)/CMakeCache.txt
	cmake -S . -B $(BUILD) -DHP_BUILD_BENCH=ON -DHP_WERROR=$(WERROR) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)
	@bench/run.sh $(BUILD)/bin

# The libFuzzer targets of tests/fuzz, built with clang, each run for FUZZ_SECONDS (not part of
# make test, which replays their kept corpus and regression inputs). docs/fuzzing.md.
fuzz: deps
	@FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) JOBS=$(JOBS) scripts/fuzz.sh $(FUZZ_TARGETS)

# Line coverage of the parsers behind the gate, per target, from the kept corpus and regressions
# (the replay with the reader files compiled by clang with source-based coverage). docs/fuzzing.md.
fuzz-coverage: deps
	@BUILD=$(FUZZ_LIGHT_BUILD) JOBS=$(JOBS) scripts/fuzz_coverage.sh $(FUZZ_TARGETS)

samples:
	python3 scripts/make_sample_meshes.py sample_meshes

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(FUZZ_LIGHT_BUILD)
