#!/usr/bin/env bash
# Narrow-band fields end to end: --band on haptic-voxelize and haptic-distance gives the layers of
# a dense map clamped to the band, tiles beyond it, a file the dump checks and the later stages
# read; the automatic choice says which mode and why; a grid that would not fit in memory is
# refused with exit 2 and what would fit, before any work.
source "$(dirname "$0")/lib.sh"
vox="$HP_BIN/haptic-voxelize"
dist="$HP_BIN/haptic-distance"
dump="$HP_BIN/haptic-dump"
shell="$HP_BIN/haptic-pointshell"
M="$SAMPLES/torus.off"

expect_exit 0 "$vox" "$M" --resolution 96 --band 4 -o "$TMP/b.vdb" --json
cp "$TMP/out" "$TMP/b.json"
check "band recorded in the summary" "$(json_get "$TMP/b.json" 'j["band"]["voxels"]')" 4
expect_exit 0 "$vox" "$M" --resolution 96 --max-layers 4 --band 0 -o "$TMP/d.vdb" --quiet
# Same layers on every voxel as the dense map clamped to +-4 (the histograms of the two files).
expect_exit 0 "$dump" "$TMP/b.vdb" --json
cp "$TMP/out" "$TMP/bd.json"
expect_exit 0 "$dump" "$TMP/d.vdb" --json
cp "$TMP/out" "$TMP/dd.json"
check "band layers equal dense clamped layers" \
    "$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); print(a["layers"] == b["layers"])' "$TMP/bd.json" "$TMP/dd.json")" True
# Far blocks are tiles: the band file stores far fewer leaves than the dense unclamped map.
check "band file has tiles" "$(json_get "$TMP/bd.json" 'j["grids"][0]["tiles"] > 0')" True
expect_exit 0 "$dump" "$TMP/b.vdb" --check

expect_exit 0 "$dist" "$M" "$TMP/b.vdb" -o "$TMP/bf.vdb" --json
cp "$TMP/out" "$TMP/bf.json"
check "distance follows the voxelmap's band" "$(json_get "$TMP/bf.json" 'j["band"]')" 4
expect_exit 0 "$dump" "$TMP/bf.vdb" --check
expect_exit 0 "$dump" "$TMP/bf.vdb" --json
# The tube (radius 11 voxels) has voxels deeper than the band: they read 4 voxel sizes, the least
# the range can reach; exact band voxels may lie farther than 4 voxel sizes from the surface.
check "far distances reach +-4 voxel sizes" \
    "$(json_get "$TMP/bf.json" 'j["range"][1] >= 4 * j["grid"]["voxel_size"] * (1 - 1e-6) and j["range"][0] <= -4 * j["grid"]["voxel_size"] * (1 - 1e-6)')" True
expect_exit 2 "$dist" "$M" "$TMP/b.vdb" --band 0 -o "$TMP/x.vdb"
expect_one_error_line
expect_exit 2 "$dist" "$M" "$TMP/b.vdb" --band 6 -o "$TMP/x.vdb"
expect_one_error_line
expect_exit 0 "$shell" "$M" "$TMP/bf.vdb" -o "$TMP/b.hps" --quiet
expect_exit 0 "$dump" "$TMP/bf.vdb" --slice z=20 --png "$TMP/s.png"
expect_exit 0 "$dump" "$TMP/bf.vdb" --export levelset -o "$TMP/ls.vdb"
expect_exit 0 "$dump" "$TMP/b.vdb" --export levelset -o "$TMP/lsv.vdb"

# The same bytes for any thread count.
expect_exit 0 "$vox" "$SAMPLES/cup.obj" --resolution 48 --band 5 --threads 1 -o "$TMP/t1.vdb" --quiet
expect_exit 0 "$vox" "$SAMPLES/cup.obj" --resolution 48 --band 5 --threads 2 -o "$TMP/t2.vdb" --quiet
cmp -s "$TMP/t1.vdb" "$TMP/t2.vdb" && pass "band voxelmap independent of threads" || fail "band voxelmap differs with threads"
expect_exit 0 "$dist" "$SAMPLES/cup.obj" "$TMP/t1.vdb" --threads 1 -o "$TMP/e1.vdb" --quiet
expect_exit 0 "$dist" "$SAMPLES/cup.obj" "$TMP/t1.vdb" --threads 2 -o "$TMP/e2.vdb" --quiet
cmp -s "$TMP/e1.vdb" "$TMP/e2.vdb" && pass "band distance independent of threads" || fail "band distance differs with threads"

# The query on band and dense fields of the same mesh: the same contacts, penetrations, forces
# and torques on every pose of the contact scenario (whose points lie within the band).
S="$SAMPLES/block-with-hole.stl"
expect_exit 0 "$vox" "$S" --units mm --voxel-size 0.001 --band 0 -o "$TMP/bl.vdb" --quiet
expect_exit 0 "$dist" "$S" "$TMP/bl.vdb" -o "$TMP/bld.vdb" --quiet
expect_exit 0 "$vox" "$S" --units mm --voxel-size 0.001 --band 8 -o "$TMP/bl8.vdb" --quiet
expect_exit 0 "$dist" "$S" "$TMP/bl8.vdb" -o "$TMP/bl8d.vdb" --quiet
expect_exit 0 "$vox" "$SAMPLES/peg.stl" --units mm --voxel-size 0.001 -o "$TMP/peg.vdb" --quiet
expect_exit 0 "$shell" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/peg.ps.hps" --quiet
expect_exit 0 "$HP_BIN/haptic-spheretree" "$TMP/peg.ps.hps" -o "$TMP/peg.hps" --quiet
expect_exit 0 "$HP_BIN/haptic-query" --static "$TMP/bld.vdb" --moving "$TMP/peg.hps" --scenario contact --count 200 --seed 4 \
    --threads 1 --budget-us 1e9 --csv "$TMP/rd.csv" --write-poses "$TMP/poses.json" --quiet
expect_exit 0 "$HP_BIN/haptic-query" --static "$TMP/bl8d.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" \
    --threads 1 --budget-us 1e9 --csv "$TMP/r8.csv" --quiet
check "same contacts on band and dense fields" "$(python3 -c '
import csv, sys
a = list(csv.DictReader(open(sys.argv[1]))); b = list(csv.DictReader(open(sys.argv[2])))
keys = ["contacts", "max_penetration", "fx", "fy", "fz", "tx", "ty", "tz"]
print(len(a) == len(b) == 200 and sum(int(r["contacts"]) for r in a) > 0 and all(x[k] == y[k] for x, y in zip(a, b) for k in keys))
' "$TMP/rd.csv" "$TMP/r8.csv")" True

# --gradient on a band field: a Vec3f grid with tiles beyond the band, the same bytes for any
# thread count, a file every reader takes as the band field without it (the same pointshell, the
# same query results); damaged, it exits 3.
expect_exit 0 "$dist" "$M" "$TMP/b.vdb" --gradient -o "$TMP/bg.vdb" --quiet
expect_exit 0 "$dump" "$TMP/bg.vdb" --check
expect_grep "^ok +the gradient is zero beyond the band" "$TMP/out"
expect_exit 0 "$dump" "$TMP/bg.vdb" --json
cp "$TMP/out" "$TMP/bg.json"
check "band gradient grid stored as Vec3f with tiles" \
    "$(json_get "$TMP/bg.json" '[(g["type"], g["tiles"] > 0) for g in j["grids"] if g["name"] == "gradient"]')" "[('vec3s', True)]"
check "band gradient recorded in the parameters" \
    "$(json_get "$TMP/bg.json" 'json.loads(j["metadata"]["distance_parameters"])["gradient"]')" True
check "band gradient grid covers the distance grid's voxels" \
    "$(json_get "$TMP/bg.json" 'len({g["active_voxels"] for g in j["grids"]}) == 1 and len(j["grids"]) == 3')" True
expect_exit 0 "$dist" "$SAMPLES/cup.obj" "$TMP/t1.vdb" --gradient --threads 1 -o "$TMP/g1.vdb" --quiet
expect_exit 0 "$dist" "$SAMPLES/cup.obj" "$TMP/t1.vdb" --gradient --threads 2 -o "$TMP/g2.vdb" --quiet
cmp -s "$TMP/g1.vdb" "$TMP/g2.vdb" && pass "band gradient independent of threads" || fail "band gradient differs with threads"
expect_exit 0 "$shell" "$M" "$TMP/bg.vdb" --normals gradient -o "$TMP/bg.hps" --quiet
expect_exit 0 "$shell" "$M" "$TMP/bf.vdb" --normals gradient -o "$TMP/bn.hps" --quiet
expect_exit 0 "$dump" "$TMP/bg.hps" --export ply --ascii -o "$TMP/bg.ply" --quiet
expect_exit 0 "$dump" "$TMP/bn.hps" --export ply --ascii -o "$TMP/bn.ply" --quiet
# (the PLY header's comment names the file)
cmp -s <(grep -v '^comment' "$TMP/bg.ply") <(grep -v '^comment' "$TMP/bn.ply") && pass "same pointshell with and without the gradient grid" || fail "pointshell differs with the gradient grid"
expect_exit 0 "$dist" "$S" "$TMP/bl8.vdb" --gradient -o "$TMP/bl8g.vdb" --quiet
expect_exit 0 "$HP_BIN/haptic-query" --static "$TMP/bl8g.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" \
    --threads 1 --budget-us 1e9 --csv "$TMP/r8g.csv" --quiet
check "same query results with the gradient grid" "$(python3 -c '
import csv, sys
a = list(csv.DictReader(open(sys.argv[1]))); b = list(csv.DictReader(open(sys.argv[2])))
keys = ["contacts", "max_penetration", "fx", "fy", "fz", "tx", "ty", "tz"]
print(len(a) == len(b) == 200 and all(x[k] == y[k] for x, y in zip(a, b) for k in keys))
' "$TMP/r8.csv" "$TMP/r8g.csv")" True
size=$(stat -c %s "$TMP/bg.vdb")
head -c $((size * 2 / 3)) "$TMP/bg.vdb" > "$TMP/bg-cut.vdb"
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) * 3 // 4] ^= 1; open(sys.argv[2], "wb").write(b)' \
    "$TMP/bg.vdb" "$TMP/bg-flip.vdb"
for bad in "$TMP/bg-cut.vdb" "$TMP/bg-flip.vdb"; do
    expect_exit 3 "$dump" "$bad" --check && expect_one_error_line
    expect_exit 3 "$shell" "$M" "$bad" -o "$TMP/x.hps" && expect_one_error_line
    expect_exit 3 "$HP_BIN/haptic-query" --static "$bad" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" --quiet \
        && expect_one_error_line
done

# The pipeline carries the band from voxelize to distance and runs every later stage on it.
cat > "$TMP/band.json" <<'JSON'
{"name": "band", "description": "narrow band", "stages": [
  {"stage": "voxelize", "resolution": 64, "band": 5}, {"stage": "distance"}, {"stage": "pointshell"},
  {"stage": "spheretree"}, {"stage": "cfm"}, {"stage": "query", "scenario": "contact", "count": 50, "budget_us": 1e9}]}
JSON
expect_exit 0 "$HP_BIN/haptic-pipeline" "$TMP/band.json" "$M" -o "$TMP/pipe" --quiet
expect_exit 0 "$dump" "$TMP/pipe/torus/distance.vdb" --json
check "pipeline distance is a band field" "$(json_get "$TMP/out" 'j["metadata"]["band"]')" 5

# ... and the gradient, when the distance stage asks for it.
cat > "$TMP/bandg.json" <<'JSON'
{"name": "bandg", "description": "narrow band with gradients", "stages": [
  {"stage": "voxelize", "resolution": 48, "band": 4}, {"stage": "distance", "gradient": true},
  {"stage": "pointshell", "normals": "gradient"}, {"stage": "spheretree"},
  {"stage": "query", "scenario": "contact", "count": 20, "budget_us": 1e9}]}
JSON
expect_exit 0 "$HP_BIN/haptic-pipeline" "$TMP/bandg.json" "$M" -o "$TMP/pipeg" --quiet
expect_exit 0 "$dump" "$TMP/pipeg/torus/distance.vdb" --check
expect_exit 0 "$dump" "$TMP/pipeg/torus/distance.vdb" --json
check "pipeline band field has a gradient grid" \
    "$(json_get "$TMP/out" '[j["metadata"]["band"], [g["type"] for g in j["grids"] if g["name"] == "gradient"]]')" "[4, ['vec3s']]"

# The automatic choice says which mode and why.
expect_exit 0 "$vox" "$M" --resolution 32 -o "$TMP/a.vdb"
expect_grep '^mode +dense: .*within half of the' "$TMP/out"

# Too large: refused at once (no allocation: it returns within seconds), with what would fit.
expect_exit_within 2 10 "$vox" "$M" --voxel-size 0.0003 --band 0 -o "$TMP/x.vdb"
expect_one_error_line
expect_grep 'use (--band 8 .* or )?a voxel size of at least' "$TMP/err"
expect_exit_within 2 10 "$vox" "$M" --voxel-size 0.0002 --band 4000 -o "$TMP/x.vdb"
expect_one_error_line
expect_grep 'use (--band [0-9]+ or )?a voxel size of at least' "$TMP/err"
[ -e "$TMP/x.vdb" ] && fail "a refused run wrote its output" || pass "no output after a refusal"

[ "$failures" -eq 0 ] || exit 1
