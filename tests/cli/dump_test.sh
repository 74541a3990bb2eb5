#!/usr/bin/env bash
# haptic-dump on meshes: diagnostics as text and JSON; bad inputs exit 3 with one line.
source "$(dirname "$0")/lib.sh"
dump="$HP_BIN/haptic-dump"

expect_exit 0 "$dump" "$SAMPLES/seam-cube.obj"
expect_grep "vertices +8 " "$TMP/out"
expect_grep "watertight +yes" "$TMP/out"

expect_exit 0 "$dump" "$SAMPLES/seam-cube.obj" --json
cp "$TMP/out" "$TMP/cube.json"
expect_json "$TMP/cube.json"
check "json vertices" "$(json_get "$TMP/cube.json" 'j["mesh"]["vertices"]')" 8
check "json watertight" "$(json_get "$TMP/cube.json" 'j["mesh"]["watertight"]')" True
check "json orientation" "$(json_get "$TMP/cube.json" 'j["mesh"]["orientation"]')" outward

expect_exit 0 "$dump" "$SAMPLES/open-box.obj" --json
check "open box boundary edges" "$(json_get "$TMP/out" 'j["mesh"]["boundary_edges"]')" 4

expect_exit 0 "$dump" "$SAMPLES/peg.stl" --units mm --json
check "units mm" "$(json_get "$TMP/out" 'round(j["mesh"]["bbox"]["max"][2] - j["mesh"]["bbox"]["min"][2], 9)')" 0.03

if [ -f "$MESHES/stanford-bunny.obj" ]; then
    expect_exit 0 "$dump" "$MESHES/stanford-bunny.obj" --json
    check "bunny open bottom" "$(json_get "$TMP/out" 'j["mesh"]["boundary_edges"] > 0 and not j["mesh"]["watertight"]')" True
fi

# Bad inputs: exit 3, exactly one line on stderr naming the file.
printf 'just text\n' > "$TMP/notes.txt"
: > "$TMP/empty.stl"
printf 'v 0 0 0\nv 1 0 0\nl 1 2\n' > "$TMP/lines.obj"
printf 'v nan 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n' > "$TMP/nan.obj"
for bad in "$TMP/missing.stl" "$TMP/empty.stl" "$TMP/notes.txt" "$TMP/lines.obj" "$TMP/nan.obj"; do
    expect_exit 3 "$dump" "$bad" && expect_one_error_line && expect_grep "$(basename "$bad")" "$TMP/err"
done
expect_exit 3 "$dump" "$TMP/lines.obj"
expect_grep "no triangles" "$TMP/err"

# Usage errors: exit 2.
expect_exit 2 "$dump"
expect_exit 2 "$dump" "$SAMPLES/peg.stl" --units furlong
expect_exit 2 "$dump" "$SAMPLES/peg.stl" --no-such-flag
expect_exit 0 "$dump" --help
expect_grep "Examples" "$TMP/out"
expect_exit 0 "$dump" --version
expect_grep "hapticprep" "$TMP/out"
finish
