#!/usr/bin/env bash
# OpenVDB is loaded on first use (formats/vdb_module.hpp): no executable links it, a tool that
# touches no VDB file never loads it, a tool that writes one loads the module hapticprep_vdb.so
# (and OpenVDB with it), and a module of another build is refused with one line, nothing written.
source "$(dirname "$0")/lib.sh"

for exe in "$HP_BIN"/haptic-*; do
    name=$(basename "$exe")
    if ldd "$exe" | grep -q 'libopenvdb'; then fail "$name links OpenVDB"; else pass "$name does not link OpenVDB"; fi
done

# --version and a mesh-only dump: OpenVDB is not loaded.
LD_DEBUG=files "$HP_BIN/haptic-voxelize" --version >"$TMP/out" 2>"$TMP/ld"
grep -q 'libopenvdb' "$TMP/ld" && fail "haptic-voxelize --version loads OpenVDB" || pass "haptic-voxelize --version does not load OpenVDB"
LD_DEBUG=files "$HP_BIN/haptic-dump" "$SAMPLES/sphere.obj" >"$TMP/out" 2>"$TMP/ld"
grep -q 'libopenvdb' "$TMP/ld" && fail "haptic-dump of a mesh loads OpenVDB" || pass "haptic-dump of a mesh does not load OpenVDB"

# A voxelmap written and read back: the module is loaded, from this build.
LD_DEBUG=files "$HP_BIN/haptic-voxelize" "$SAMPLES/sphere.obj" --resolution 16 -o "$TMP/s.vdb" >"$TMP/out" 2>"$TMP/ld"
check "voxelize exits 0" "$?" 0
grep -q 'file=.*hapticprep_vdb.so' "$TMP/ld" && pass "the write loads hapticprep_vdb.so" || fail "the write did not load hapticprep_vdb.so"
grep -q 'file=.*libopenvdb' "$TMP/ld" && pass "the module brings OpenVDB" || fail "OpenVDB was not loaded for the write"
expect_exit 0 "$HP_BIN/haptic-dump" "$TMP/s.vdb" --check

# HP_VDB_MODULE naming another module (the wrong entry points): exit 3, one line naming the output,
# the module and what to do; no output and no temporary file left.
other=$(find "$(dirname "$HP_BIN")/lib/hapticprep" -name 'hapticprep_cad.so' 2>/dev/null | head -1)
if [ -z "$other" ]; then other="$TMP/empty.so"; : >"$other"; fi
mkdir -p "$TMP/w"
HP_VDB_MODULE="$other" expect_exit 3 "$HP_BIN/haptic-voxelize" "$SAMPLES/sphere.obj" --resolution 16 -o "$TMP/w/s.vdb"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && pass "one line: $(cat "$TMP/err")" || fail "not one line: $(cat "$TMP/err")"
expect_grep "w/s.vdb" "$TMP/err"
expect_grep "$(basename "$other")" "$TMP/err"
[ -z "$(ls -A "$TMP/w")" ] && pass "nothing written" || fail "left behind: $(ls -A "$TMP/w")"
# The same for a read.
HP_VDB_MODULE="$other" expect_exit 3 "$HP_BIN/haptic-dump" "$TMP/s.vdb"
expect_grep "s.vdb" "$TMP/err"

finish
