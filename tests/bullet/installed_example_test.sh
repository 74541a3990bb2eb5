#!/usr/bin/env bash
# examples/bullet as a user builds it: `cmake --install` into a prefix, examples/bullet configured
# with find_package(hapticprep) against that prefix only (warnings are errors), built, and run on
# the sphere of tests/bullet/prepare.sh: it must come to rest on the ground (exit 0).
# Env (set by CMake): HP_BUILD_DIR, HP_SOURCE_DIR, HP_BULLET_DATA, HP_GENERATOR, HP_CXX_COMPILER,
# HP_CXX_LAUNCHER, HP_BUILD_TYPE. Works in $HP_BUILD_DIR/bullet-install-test.
: "${HP_BUILD_DIR:?HP_BUILD_DIR must point to the build directory}"
: "${HP_SOURCE_DIR:?HP_SOURCE_DIR must point to the repository}"
: "${HP_BULLET_DATA:?HP_BULLET_DATA must point to the objects of tests/bullet/prepare.sh}"
WORK="$HP_BUILD_DIR/bullet-install-test"
PREFIX="$WORK/prefix"
rm -rf "$WORK" && mkdir -p "$WORK"
HP_BIN="$PREFIX/bin"
source "$HP_SOURCE_DIR/tests/cli/lib.sh"

expect_exit 0 cmake --install "$HP_BUILD_DIR" --prefix "$PREFIX" || { cat "$TMP/out" "$TMP/err" >&2; finish; }
[ -f "$PREFIX/include/hapticprep/bullet/vps.hpp" ] && pass "include/hapticprep/bullet/vps.hpp" || fail "bullet/vps.hpp not installed"
if grep -rlE '#[[:space:]]*include[[:space:]]*[<"](bt|Bullet|LinearMath)' "$PREFIX/include" >"$TMP/bt"; then
    fail "installed headers include Bullet: $(tr '\n' ' ' <"$TMP/bt")"
else
    pass "no installed header includes Bullet"
fi

args=(-S "$HP_SOURCE_DIR/examples/bullet" -B "$WORK/example" -DCMAKE_PREFIX_PATH="$PREFIX"
      -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror")
[ -n "${HP_GENERATOR:-}" ] && args+=(-G "$HP_GENERATOR")
[ -n "${HP_CXX_COMPILER:-}" ] && args+=(-DCMAKE_CXX_COMPILER="$HP_CXX_COMPILER")
[ -n "${HP_CXX_LAUNCHER:-}" ] && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$HP_CXX_LAUNCHER")
[ -n "${HP_BUILD_TYPE:-}" ] && args+=(-DCMAKE_BUILD_TYPE="$HP_BUILD_TYPE")
expect_exit 0 cmake "${args[@]}" || { sed 's/^/    /' "$TMP/out" "$TMP/err" | tail -30 >&2; finish; }
found=$(sed -n 's/^hapticprep_DIR:PATH=//p' "$WORK/example/CMakeCache.txt")
case "$found" in
    "$PREFIX"/*) pass "find_package found the installed package" ;;
    *) fail "find_package(hapticprep) found '$found', not the install prefix" ;;
esac
expect_exit 0 cmake --build "$WORK/example" || { sed 's/^/    /' "$TMP/out" "$TMP/err" | tail -30 >&2; finish; }
expect_exit 0 "$WORK/example/vps_in_bullet" "$HP_BULLET_DATA/sphere.dist.vdb" "$HP_BULLET_DATA/sphere.hps" \
    "$HP_SOURCE_DIR/sample_meshes/sphere.obj"
grep -q "at rest on the ground" "$TMP/out" && pass "the sphere comes to rest on the ground" || fail "the example's sphere is not at rest: $(tail -1 "$TMP/out")"
expect_exit 3 "$WORK/example/vps_in_bullet" "$HP_BULLET_DATA/missing.dist.vdb" "$HP_BULLET_DATA/sphere.hps"
grep -q "missing.dist.vdb" "$TMP/err" && pass "a missing file is named" || fail "the error does not name the missing file: $(cat "$TMP/err")"
finish
