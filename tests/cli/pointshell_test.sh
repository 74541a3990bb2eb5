#!/usr/bin/env bash
# haptic-pointshell end to end: summary and JSON, determinism, inward normals on an inverted mesh,
# provenance check against the field, bad inputs.
source "$(dirname "$0")/lib.sh"
vox="$HP_BIN/haptic-voxelize"
dist="$HP_BIN/haptic-distance"
shell="$HP_BIN/haptic-pointshell"
dump="$HP_BIN/haptic-dump"

expect_exit 0 "$vox" "$SAMPLES/sphere.obj" --voxel-size 0.05 -o "$TMP/sphere.vdb" --quiet
expect_exit 0 "$dist" "$SAMPLES/sphere.obj" "$TMP/sphere.vdb" -o "$TMP/sphere.d.vdb" --quiet
expect_exit 0 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.d.vdb" -o "$TMP/sphere.hps" --json
cp "$TMP/out" "$TMP/s.json"
expect_json "$TMP/s.json"
# Unit sphere, s = 0.05, alpha*s = 0.0707: spacing at least alpha*s within a neighbourhood, and
# the surface (area 4 pi) holds between one point per (2 alpha s)^2 and one per (alpha s)^2 / 2.
check "spacing min >= 0.3 alpha*s" "$(json_get "$TMP/s.json" 'j["spacing"]["min"] >= 0.3 * 0.05 * 2**0.5')" True
check "median spacing near alpha*s" "$(json_get "$TMP/s.json" '0.0707 <= j["spacing"]["median"] <= 2 * 0.0707')" True
check "count plausible for the area" "$(json_get "$TMP/s.json" '4 * 3.1416 / (2 * 0.0707)**2 < j["points"] < 4 * 3.1416 / (0.0707**2 / 2)')" True
check "coverage within 1.5 alpha*s" "$(json_get "$TMP/s.json" 'j["coverage"]["max"] <= 1.5 * 0.0707')" True
check "normals from the distance gradient" "$(json_get "$TMP/s.json" 'j["normals"]["source"]')" "distance gradient"
expect_exit 0 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.d.vdb" -o "$TMP/sphere1.hps" --threads 1 --quiet
cmp -s "$TMP/sphere.hps" "$TMP/sphere1.hps" && pass "byte-identical with --threads 1" || fail "output differs with --threads 1"
[ ! -s "$TMP/out" ] && pass "--quiet prints nothing" || fail "--quiet printed something"

# Text summary names the facts.
expect_exit 0 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.vdb" -o "$TMP/sphere.l.hps" --normals surface
for key in points spacing coverage normals wrote; do expect_grep "^$key " "$TMP/out"; done

# An inverted box (wound inward) gets the voxelmap's inside, so the same inward normals.
expect_exit 0 "$vox" "$SAMPLES/inverted-box.obj" --voxel-size 0.05 -o "$TMP/inv.vdb" --quiet
expect_exit 0 "$shell" "$SAMPLES/inverted-box.obj" "$TMP/inv.vdb" -o "$TMP/inv.hps" --normals surface --json
check "inverted component detected" "$(json_get "$TMP/out" 'j["normals"]["inverted_components"]')" 1

# The mesh must be the field's source: exit 3 unless --force.
expect_exit 3 "$shell" "$SAMPLES/gear.obj" "$TMP/sphere.d.vdb" -o "$TMP/x.hps"
expect_grep "not the mesh" "$TMP/err"
expect_one_error_line
# Bad fields: a pointshell instead of a field, a truncated field, a text file; a voxelmap without
# surface voxels cannot be made by the tools, so a mesh far away from the field stands in for
# "nothing to sample" (forced past the hash check).
expect_exit 3 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.hps" -o "$TMP/x.hps"
expect_one_error_line
head -c 3000 "$TMP/sphere.vdb" > "$TMP/cut.vdb"
expect_exit 3 "$shell" "$SAMPLES/sphere.obj" "$TMP/cut.vdb" -o "$TMP/x.hps"
expect_one_error_line
printf 'hello\n' > "$TMP/text.vdb"
expect_exit 3 "$shell" "$SAMPLES/sphere.obj" "$TMP/text.vdb" -o "$TMP/x.hps"
printf 'v 10 10 10\nv 11 10 10\nv 10 11 10\nf 1 2 3\n' > "$TMP/far.obj"
expect_exit 3 "$shell" "$TMP/far.obj" "$TMP/sphere.vdb" -o "$TMP/x.hps" --force
expect_grep "no surface voxel" "$TMP/err"
[ ! -e "$TMP/x.hps" ] && pass "no output after errors" || fail "an output file was left behind"
expect_exit 2 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.vdb" -o "$TMP/x.hps" --alpha 0
expect_exit 2 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.vdb" -o "$TMP/x.hps" --normals wrong
expect_exit 0 "$shell" --help
expect_grep "Examples" "$TMP/out"
finish
