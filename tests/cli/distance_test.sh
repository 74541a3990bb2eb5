#!/usr/bin/env bash
# haptic-distance end to end: encodings, gradient, provenance checks, bad inputs.
source "$(dirname "$0")/lib.sh"
vox="$HP_BIN/haptic-voxelize"
dist="$HP_BIN/haptic-distance"
dump="$HP_BIN/haptic-dump"

expect_exit 0 "$vox" "$SAMPLES/peg.stl" --units mm --voxel-size 0.0005 -o "$TMP/peg.vdb" --quiet
cp "$TMP/peg.vdb" "$TMP/peg.before.vdb"
expect_exit 0 "$dist" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/peg.f.vdb" --json --gradient
cp "$TMP/out" "$TMP/f.json"
expect_json "$TMP/f.json"
# The peg is a cylinder r = 5 mm: the deepest inside distance is about 5 mm (voxel centres).
check "max inside distance ~ radius" "$(json_get "$TMP/f.json" 'abs(j["range"][1] - 0.005) < 0.0005')" True
cmp -s "$TMP/peg.vdb" "$TMP/peg.before.vdb" && pass "voxelmap unchanged" || fail "voxelmap was modified"

expect_exit 0 "$dist" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/peg.s.vdb" --encoding scaled --precision 6 --quiet
expect_exit 0 "$dump" "$TMP/peg.f.vdb" --json
cp "$TMP/out" "$TMP/df.json"
expect_exit 0 "$dump" "$TMP/peg.s.vdb" --json
cp "$TMP/out" "$TMP/ds.json"
check "dump kind" "$(json_get "$TMP/df.json" 'j["kind"]')" "distance field"
check "gradient grid present" "$(json_get "$TMP/df.json" 'sorted(g["name"] for g in j["grids"])')" "['distance', 'gradient', 'layers']"
# The field's layers grid is the voxelmap's (its stored bytes copied): the same voxels, leaves,
# tiles and background (a value below the smallest layer).
expect_exit 0 "$dump" "$TMP/peg.vdb" --json
cp "$TMP/out" "$TMP/dm.json"
layers_grid='[(g["active_voxels"], g["leaf_nodes"], g["tiles"], g["background"]) for g in j["grids"] if g["name"] == "layers"]'
check "field's layers grid is the voxelmap's" "$(json_get "$TMP/df.json" "$layers_grid")" "$(json_get "$TMP/dm.json" "$layers_grid")"
check "layers background below the smallest layer" \
    "$(json_get "$TMP/dm.json" '[g["background"] for g in j["grids"] if g["name"] == "layers"][0] < j["layers"]["min"]')" True
expect_exit 0 "$dump" "$TMP/peg.f.vdb" --check
expect_grep "^ok +the gradient has unit length on every voxel" "$TMP/out"
check "scaled encoding recorded" "$(json_get "$TMP/ds.json" 'j["distance"]["encoding"]')" scaled
# Scaled round trip: the same range as the float field to 10^-6 (float rounding included).
check "scaled range equals float range" \
    "$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["distance"]; b=json.load(open(sys.argv[2]))["distance"]; print(abs(a["min"]-b["min"]) < 1e-6 and abs(a["max"]-b["max"]) < 1e-6)' "$TMP/df.json" "$TMP/ds.json")" True

# A mesh that is not the voxelmap's source: exit 3 unless --force.
expect_exit 3 "$dist" "$SAMPLES/gear.obj" "$TMP/peg.vdb" -o "$TMP/x.vdb"
expect_grep "not the mesh" "$TMP/err"
expect_one_error_line
expect_exit 0 "$dist" "$SAMPLES/gear.obj" "$TMP/peg.vdb" -o "$TMP/x.vdb" --force --quiet
rm -f "$TMP/x.vdb"
# Not a voxelmap, a damaged one, a text file: exit 3, no output.
expect_exit 3 "$dist" "$SAMPLES/peg.stl" "$TMP/peg.f.vdb" -o "$TMP/x.vdb"
head -c 3000 "$TMP/peg.vdb" > "$TMP/cut.vdb"
expect_exit 3 "$dist" "$SAMPLES/peg.stl" "$TMP/cut.vdb" -o "$TMP/x.vdb"
expect_one_error_line
printf 'hello\n' > "$TMP/text.vdb"
expect_exit 3 "$dist" "$SAMPLES/peg.stl" "$TMP/text.vdb" -o "$TMP/x.vdb"
[ ! -e "$TMP/x.vdb" ] && pass "no output after errors" || fail "an output file was left behind"
expect_exit 2 "$dist" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/x.vdb" --encoding half
expect_exit 2 "$dist" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/x.vdb" --encoding scaled --precision 12
# --exact-layers: the default recorded (3 layers); wider gives more exact voxels and says so; below
# the default, with a band, or at the voxelmap's clamp: exit 2 naming the option, no output.
check "default exact layers" "$(json_get "$TMP/f.json" 'j["exact_layers"]')" 3
expect_exit 0 "$dist" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/peg.w.vdb" --exact-layers 6 --json
check "wider exact band" "$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); print(b["exact_layers"] == 6 and b["exact_voxels"] > a["exact_voxels"])' "$TMP/f.json" "$TMP/out")" True
expect_exit 2 "$dist" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/x.vdb" --exact-layers 2
expect_grep "exact-layers" "$TMP/err"
expect_one_error_line
expect_exit 0 "$vox" "$SAMPLES/peg.stl" --units mm --voxel-size 0.0005 --max-layers 5 -o "$TMP/peg5.vdb" --quiet
expect_exit 2 "$dist" "$SAMPLES/peg.stl" "$TMP/peg5.vdb" -o "$TMP/x.vdb" --exact-layers 5
expect_grep "use at most 4" "$TMP/err"
expect_exit 2 "$dist" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/x.vdb" --exact-layers 4 --band 4
[ ! -e "$TMP/x.vdb" ] && pass "no output after --exact-layers errors" || fail "an output file was left behind"
expect_exit 0 "$dist" --help
expect_grep "Examples" "$TMP/out"
finish
