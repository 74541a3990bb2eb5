#!/usr/bin/env bash
# The installed package as a user sees it: `cmake --install` into a prefix, then examples/ is
# configured and built against that prefix with find_package(hapticprep), run on a tool-made pair
# (block with a hole: distance field; peg: point-sphere tree) and compared with haptic-query on
# the same poses. Also checks the install layout and that the README shows examples/query_loop.cpp.
# Env (set by CMake): HP_BUILD_DIR, HP_SOURCE_DIR, HP_GENERATOR, HP_CXX_COMPILER, HP_CXX_LAUNCHER,
# HP_BUILD_TYPE. The prefix and the example's build live in $HP_BUILD_DIR/install-test (a fixed
# place, so a compiler cache sees the same paths on every run).
: "${HP_BUILD_DIR:?HP_BUILD_DIR must point to the build directory}"
: "${HP_SOURCE_DIR:?HP_SOURCE_DIR must point to the repository}"
WORK="$HP_BUILD_DIR/install-test"
PREFIX="$WORK/prefix"
rm -rf "$WORK" && mkdir -p "$WORK"
HP_BIN="$PREFIX/bin"
source "$HP_SOURCE_DIR/tests/cli/lib.sh"

# 1. Install: executables, library, headers, CMake package.
expect_exit 0 cmake --install "$HP_BUILD_DIR" --prefix "$PREFIX" || { cat "$TMP/out" "$TMP/err" >&2; finish; }
for tool in "$HP_BUILD_DIR"/bin/haptic-*; do
    [ -x "$PREFIX/bin/$(basename "$tool")" ] && pass "installed bin/$(basename "$tool")" || fail "bin/$(basename "$tool") not installed"
done
config=$(find "$PREFIX" -name hapticprepConfig.cmake | head -1)
[ -n "$config" ] && pass "package config at ${config#"$PREFIX"/}" || fail "no hapticprepConfig.cmake below the prefix"
# STEP and IGES: the OpenCASCADE module is installed where the tools look for it, and an installed
# tool reads a STEP file through it (OpenCASCADE's own sample, when Debian's occt-misc is there).
if [ -f "$HP_BUILD_DIR/lib/hapticprep/hapticprep_cad.so" ]; then
    cad_module=$(find "$PREFIX" -name hapticprep_cad.so -path "*/hapticprep/*" | head -1)
    case "$cad_module" in
        "$PREFIX"/lib*/hapticprep/hapticprep_cad.so) pass "OpenCASCADE module at ${cad_module#"$PREFIX"/}" ;;
        *) fail "hapticprep_cad.so not installed below $PREFIX/lib*/hapticprep" ;;
    esac
    screw=/usr/share/opencascade/data/step/screw.step
    if [ -f "$screw" ]; then
        HP_CAD_MODULE= expect_exit 0 "$PREFIX/bin/haptic-dump" "$screw" --json
        expect_grep '"format": *"step"' "$TMP/out"
        expect_grep "\"module\": *\"$cad_module\"" "$TMP/out"
    fi
fi
# OpenVDB files: the module is installed where the tools look for it, and an installed tool that
# writes a VDB file loads that one (not the build's).
vdb_module=$(find "$PREFIX" -name hapticprep_vdb.so -path "*/hapticprep/*" | head -1)
case "$vdb_module" in
    "$PREFIX"/lib*/hapticprep/hapticprep_vdb.so) pass "OpenVDB module at ${vdb_module#"$PREFIX"/}" ;;
    *) fail "hapticprep_vdb.so not installed below $PREFIX/lib*/hapticprep" ;;
esac
HP_VDB_MODULE= LD_DEBUG=files "$HP_BIN/haptic-voxelize" "$SAMPLES/sphere.obj" --resolution 16 -o "$TMP/module.vdb" -q \
    >"$TMP/out" 2>"$TMP/ld"
grep -q "file=$vdb_module " "$TMP/ld" && pass "the installed voxelize loads the installed module" ||
    fail "the installed voxelize did not load $vdb_module: $(grep -o 'file=[^ ]*hapticprep_vdb.so' "$TMP/ld" | head -1)"
[ -f "$PREFIX/include/hapticprep/query/session.hpp" ] && pass "include/hapticprep/query/session.hpp" || fail "session.hpp not installed"
# Only the query API's headers, and none of them brings in OpenVDB.
if grep -rlE '#[[:space:]]*include[[:space:]]*[<"]openvdb' "$PREFIX/include" >"$TMP/vdb"; then
    fail "installed headers include OpenVDB: $(tr '\n' ' ' <"$TMP/vdb")"
else
    pass "no installed header includes OpenVDB"
fi
[ -e "$PREFIX/include/hapticprep/formats/vdb.hpp" ] && fail "formats/vdb.hpp installed" || pass "formats/vdb.hpp not installed"

# 2. The README shows the example program as it is in examples/.
python3 - "$HP_SOURCE_DIR/README.md" "$HP_SOURCE_DIR/examples/query_loop.cpp" <<'PY' && pass "README shows examples/query_loop.cpp" || fail "README's example differs from examples/query_loop.cpp"
import re, sys
readme, example = open(sys.argv[1]).read(), open(sys.argv[2]).read()
blocks = re.findall(r"```cpp\n(.*?)```", readme, re.S)
sys.exit(0 if example in blocks else 1)
PY

# 3. Configure and build examples/ against the prefix only (warnings are errors: the installed
# headers must compile cleanly in a consumer).
args=(-S "$HP_SOURCE_DIR/examples" -B "$WORK/example" -DCMAKE_PREFIX_PATH="$PREFIX"
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
example="$WORK/example/query_loop"
[ -x "$example" ] || { fail "no query_loop built"; finish; }

# 4. Data from the installed tools.
expect_exit 0 "$HP_BIN/haptic-voxelize" "$SAMPLES/block-with-hole.stl" --units mm --voxel-size 0.001 -o "$TMP/block.vdb" --quiet
expect_exit 0 "$HP_BIN/haptic-distance" "$SAMPLES/block-with-hole.stl" "$TMP/block.vdb" -o "$TMP/block.dist.vdb" --quiet
expect_exit 0 "$HP_BIN/haptic-voxelize" "$SAMPLES/peg.stl" --units mm --voxel-size 0.001 -o "$TMP/peg.vdb" --quiet
expect_exit 0 "$HP_BIN/haptic-pointshell" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/peg.ps.hps" --quiet
expect_exit 0 "$HP_BIN/haptic-spheretree" "$TMP/peg.ps.hps" -o "$TMP/peg.hps" --quiet
# Poses: contact poses, random ones in the field's box, and contact poses moved 1 m away (nothing
# touches there), in one file.
expect_exit 0 "$HP_BIN/haptic-query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --scenario contact --count 30 \
    --seed 11 --write-poses "$TMP/contact.json" --budget-us 1e9 --quiet
expect_exit 0 "$HP_BIN/haptic-query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --scenario random --count 30 \
    --seed 12 --write-poses "$TMP/random.json" --budget-us 1e9 --quiet
python3 - "$TMP/contact.json" "$TMP/random.json" "$TMP/poses.json" "$TMP/poses.txt" <<'PY'
import json, sys
contact = json.load(open(sys.argv[1]))["poses"]
away = [{"position": [v + 1.0 for v in p["position"]], "quaternion": p["quaternion"]} for p in contact[:10]]
poses = contact + json.load(open(sys.argv[2]))["poses"] + away
json.dump({"poses": poses}, open(sys.argv[3], "w"))
with open(sys.argv[4], "w") as f:
    for p in poses:  # repr: the shortest text that reads back as the same double
        f.write(" ".join(repr(float(v)) for v in p["position"] + p["quaternion"]) + "\n")
PY
expect_exit 0 "$HP_BIN/haptic-query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" \
    --report "$TMP/ref.json" --budget-us 1e9 --quiet

# 5. The example against the reference, pose by pose, exactly (same library, same doubles).
expect_exit 0 "$example" "$TMP/block.dist.vdb" "$TMP/peg.hps" <"$TMP/poses.txt"
cp "$TMP/out" "$TMP/example.txt"
check "example == haptic-query per pose" "$(python3 - "$TMP/ref.json" "$TMP/example.txt" "$TMP/poses.json" <<'PY'
import json, sys
ref = json.load(open(sys.argv[1]))["per_query"]
count = len(json.load(open(sys.argv[3]))["poses"])
rows = [line.split() for line in open(sys.argv[2])]
bad = [i for i, (q, r) in enumerate(zip(ref, rows))
       if [q["contacts"], q["max_penetration"]] + q["force"] + q["torque"] != [int(r[0])] + [float(v) for v in r[1:]]]
touching = sum(q["contacts"] > 0 for q in ref)
print("ok" if len(rows) == len(ref) == count and not bad and 0 < touching < count
      else f"{len(rows)} rows for {len(ref)} poses, {touching} touching, differing poses {bad[:5]}")
PY
)" ok
# Errors keep the tools' exit codes: a damaged moving file is bad input (3), one line.
head -c 3000 "$TMP/peg.hps" >"$TMP/cut.hps"
expect_exit 3 "$example" "$TMP/block.dist.vdb" "$TMP/cut.hps" </dev/null
expect_one_error_line

# 6. The Python package, when this build has it: installed below the prefix, imported by Debian's
# python3 with PYTHONPATH set to that directory (docs/python.md), and its query equals haptic-query's.
if compgen -G "$HP_BUILD_DIR/python/hapticprep/_hapticprep*.so" >/dev/null; then
    ext=$(find "$PREFIX" -name '_hapticprep*.so' | head -1)
    if [ -z "$ext" ]; then
        fail "the Python package is built but not installed"
    else
        site=$(dirname "$(dirname "$ext")")
        pass "Python package installed to ${site#"$PREFIX"/}"
        preload=""
        # Sanitizer build: the ASan runtime and libstdc++ first, as for tests/python (python/hapticprep.cmake).
        [ "${HP_SANITIZED:-0}" = 1 ] && preload="$("${HP_CXX_COMPILER:-g++}" -print-file-name=libasan.so) $("${HP_CXX_COMPILER:-g++}" -print-file-name=libstdc++.so)"
        check "installed package: Query == haptic-query" "$(cd "$TMP" && LD_PRELOAD="$preload" PYTHONPATH="$site" \
            "${HP_PYTHON:-/usr/bin/python3}" - "$TMP/block.dist.vdb" "$TMP/peg.hps" "$TMP/poses.json" "$TMP/ref.json" "$site" <<'PY'
import json, sys
import hapticprep as hp
assert hp.__file__.startswith(sys.argv[5]), hp.__file__
q = hp.Query(sys.argv[1], hp.load_tree(sys.argv[2]))
poses = json.load(open(sys.argv[3]))["poses"]
ref = json.load(open(sys.argv[4]))["per_query"]
bad = [i for i, (p, r) in enumerate(zip(poses, ref)) if q.run(p["position"], p["quaternion"]).summary != r]
print("ok" if not bad and len(poses) == len(ref) else f"differing poses {bad[:5]}")
PY
)" ok
    fi
fi
finish
