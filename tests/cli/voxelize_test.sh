#!/usr/bin/env bash
# haptic-voxelize end to end: outputs, JSON summary, determinism, bad input and usage errors.
source "$(dirname "$0")/lib.sh"
vox="$HP_BIN/haptic-voxelize"
dump="$HP_BIN/haptic-dump"

expect_exit 0 "$vox" "$SAMPLES/block-with-hole.stl" --units mm --voxel-size 0.001 -o "$TMP/block.vdb" --json
cp "$TMP/out" "$TMP/block.json"
expect_json "$TMP/block.json"
check "fill auto -> scanline on a watertight part" "$(json_get "$TMP/block.json" 'j["fill"]')" scanline
check "grid dims" "$(json_get "$TMP/block.json" 'j["grid"]["dims"]')" "[44, 44, 24]"
check "counts add up" "$(json_get "$TMP/block.json" 'sum(j["voxels"].values()) == j["grid"]["voxels"]')" True
check "mesh diagnostics in the summary" "$(json_get "$TMP/block.json" 'j["mesh"]["watertight"]')" True

expect_exit 0 "$dump" "$TMP/block.vdb" --json
cp "$TMP/out" "$TMP/dump.json"
check "dump kind" "$(json_get "$TMP/dump.json" 'j["kind"]')" voxelmap
check "dump agrees with the voxelizer" "$(json_get "$TMP/dump.json" 'j["layers"]["surface"]')" \
    "$(json_get "$TMP/block.json" 'j["voxels"]["surface"]')"
check "metadata source hash" "$(json_get "$TMP/dump.json" 'j["metadata"]["source_hash"]')" \
    "$("$dump" "$SAMPLES/block-with-hole.stl" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["source_hash"])')"

# Deterministic whatever the thread count.
expect_exit 0 "$vox" "$SAMPLES/block-with-hole.stl" --units mm --voxel-size 0.001 -o "$TMP/block1.vdb" --threads 1 --quiet
cmp -s "$TMP/block.vdb" "$TMP/block1.vdb" && pass "byte-identical with --threads 1" || fail "output differs with --threads 1"
[ ! -s "$TMP/out" ] && pass "--quiet prints nothing" || fail "--quiet printed something"

# A mesh wound inward is turned outward at import, and says so.
expect_exit 0 "$vox" "$SAMPLES/inverted-box.obj" --resolution 12 -o "$TMP/inv.vdb" --json
expect_grep "12 faces were wound against their neighbours; import flipped them" "$TMP/err"
check "orientation repaired" "$(json_get "$TMP/out" 'j["mesh"]["orientation"]')" repaired
check "flipped faces" "$(json_get "$TMP/out" 'j["mesh"]["flipped_faces"]')" 12
expect_exit 0 "$dump" "$SAMPLES/inverted-box.obj"
expect_grep "^orientation  repaired \(12 faces flipped at import\)" "$TMP/out"

# Open mesh: a warning, hybrid fill, still a solid inside.
expect_exit 0 "$vox" "$SAMPLES/open-box.obj" --resolution 20 -o "$TMP/open.vdb" --json
expect_grep "not watertight" "$TMP/err"
check "open box fill" "$(json_get "$TMP/out" 'j["fill"]')" hybrid
check "open box has an inside" "$(json_get "$TMP/out" 'j["voxels"]["inside"] > 0')" True

# Usage errors (exit 2) and bad input (exit 3), never an output file.
expect_exit 2 "$vox" "$SAMPLES/peg.stl" --voxel-size 0 -o "$TMP/x.vdb"
expect_exit 2 "$vox" "$SAMPLES/peg.stl" --voxel-size -1 -o "$TMP/x.vdb"
expect_exit 2 "$vox" "$SAMPLES/peg.stl" --resolution 0 -o "$TMP/x.vdb"
expect_exit 2 "$vox" "$SAMPLES/peg.stl" --resolution 10 --voxel-size 0.1 -o "$TMP/x.vdb"
expect_exit 2 "$vox" "$SAMPLES/peg.stl" --voxel-size 2e-5 -o "$TMP/x.vdb"
expect_grep "smallest voxel size that fits" "$TMP/err"
expect_one_error_line
# A voxel whose volume a VDB transform refuses (OpenVDB: s^3 < 3e-15, s < 1.4423e-5), on a part small
# enough to fit in memory at that size (0.4 mm): a usage error naming the least size, not an internal one.
expect_exit 2 "$vox" "$SAMPLES/bracket.obj" --scale 0.0001 --voxel-size 1.44e-5 -o "$TMP/x.vdb"
expect_grep "the voxel size 1.44e-05 is below 1.443e-05, the least a VDB file holds" "$TMP/err"
expect_one_error_line
expect_exit 0 "$vox" "$SAMPLES/bracket.obj" --scale 0.0001 --voxel-size 1.443e-5 -o "$TMP/x.vdb" -q
rm -f "$TMP/x.vdb"
expect_exit 2 "$vox" "$SAMPLES/peg.stl" --fill magic -o "$TMP/x.vdb"
expect_exit 2 "$vox" "$SAMPLES/peg.stl"
printf 'not a mesh\n' > "$TMP/notes.txt"
expect_exit 3 "$vox" "$TMP/notes.txt" -o "$TMP/x.vdb"
expect_one_error_line
expect_exit 3 "$vox" "$TMP/missing.stl" -o "$TMP/x.vdb"
[ ! -e "$TMP/x.vdb" ] && pass "no output after errors" || fail "an output file was left behind"
expect_exit 4 "$vox" "$SAMPLES/peg.stl" -o "$TMP/no/such/folder/x.vdb"
ls "$TMP"/.*.tmp-* >/dev/null 2>&1 && fail "temporary files left behind" || pass "no temporary files left"
expect_exit 0 "$vox" --help
expect_grep "Examples" "$TMP/out"
finish
