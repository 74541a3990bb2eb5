#!/usr/bin/env bash
# haptic-octree end to end: summary and JSON (counts checked against the voxelmap by an
# independent Python count of haptic-dump's layer histogram), determinism, haptic-dump of the
# octree (summary, --check, --export obj), damaged files (exit 3), and haptic-query's modes ist and
# ist-brute: the same contact set on every pose, solid and surface-only.
source "$(dirname "$0")/lib.sh"
vox="$HP_BIN/haptic-voxelize"
dist="$HP_BIN/haptic-distance"
shell="$HP_BIN/haptic-pointshell"
tree="$HP_BIN/haptic-spheretree"
oct="$HP_BIN/haptic-octree"
dump="$HP_BIN/haptic-dump"
query="$HP_BIN/haptic-query"

"$vox" "$SAMPLES/sphere.obj" --voxel-size 0.1 -o "$TMP/s.vdb" --quiet
"$dist" "$SAMPLES/sphere.obj" "$TMP/s.vdb" -o "$TMP/s.d.vdb" --quiet
"$shell" "$SAMPLES/sphere.obj" "$TMP/s.d.vdb" -o "$TMP/s.hps" --quiet
"$tree" "$TMP/s.hps" -o "$TMP/s.tree.hps" --quiet

expect_exit 0 "$oct" "$TMP/s.vdb" -o "$TMP/s.hoct" --json
cp "$TMP/out" "$TMP/o.json"
expect_json "$TMP/o.json"
"$dump" "$TMP/s.vdb" --json > "$TMP/v.json"
# Solid and surface voxels from the voxelmap's layer histogram (haptic-dump), independently.
solid=$(json_get "$TMP/v.json" 'sum(n for l, n in j["layers"]["histogram"].items() if int(l) >= 0)')
surface=$(json_get "$TMP/v.json" 'j["layers"]["histogram"]["0"]')
check "solid voxels" "$(json_get "$TMP/o.json" 'j["voxels"]')" "$solid"
check "surface voxels" "$(json_get "$TMP/o.json" 'j["voxelmap"]["surface_voxels"]')" "$surface"
check "voxels = solid" "$(json_get "$TMP/o.json" 'j["voxels"] == j["voxelmap"]["solid_voxels"]')" True
check "one byte per node" "$(json_get "$TMP/o.json" 'j["mask_bytes"] == j["nodes"]')" True
check "nodes add up" "$(json_get "$TMP/o.json" 'sum(j["nodes_per_level"][:-1]) == j["nodes"] and j["nodes_per_level"][-1] == j["voxels"]')" True
check "bits per solid voxel" "$(json_get "$TMP/o.json" 'abs(j["bits_per_solid_voxel"] - 8 * j["nodes"] / j["voxelmap"]["solid_voxels"]) < 1e-9')" True
check "tight spheres counted" "$(json_get "$TMP/o.json" 'j["tight_spheres_smaller"]')" 78
expect_exit 0 "$oct" "$TMP/s.vdb" -o "$TMP/s2.hoct" --quiet
cmp -s "$TMP/s.hoct" "$TMP/s2.hoct" && pass "deterministic bytes" || fail "two runs differ"
expect_exit 0 "$oct" "$TMP/s.vdb" -o "$TMP/ss.hoct" --surface-only --json
check "surface only" "$(json_get "$TMP/out" 'j["surface_only"] and j["voxels"] == j["voxelmap"]["surface_voxels"]')" True
expect_exit 0 "$oct" "$TMP/s.vdb" -o "$TMP/s3.hoct"
expect_grep "of the 255 child masks" "$TMP/out"

# haptic-dump: summary, check, export.
expect_exit 0 "$dump" "$TMP/s.hoct" --json
check "dump kind" "$(json_get "$TMP/out" 'j["kind"]')" octree
check "dump voxels" "$(json_get "$TMP/out" 'j["voxels"]')" "$(json_get "$TMP/o.json" 'j["voxels"]')"
expect_exit 0 "$dump" --check "$TMP/ss.hoct"
expect_grep "tight sphere of each of its ancestors" "$TMP/out"
expect_exit 0 "$dump" "$TMP/s.hoct" --export obj --level 2 -o "$TMP/l2.obj"
nodes2=$(json_get "$TMP/o.json" 'j["nodes_per_level"][j["levels"] - 2]')
check "one object per level-2 node" "$(grep -c '^o ' "$TMP/l2.obj")" "$nodes2"
check "20 faces per sphere" "$(grep -c '^f ' "$TMP/l2.obj")" "$((nodes2 * 20))"

# Damage: truncations and bit flips exit 3 with one line.
size=$(stat -c %s "$TMP/s.hoct")
for n in 0 20 100 $((size / 2)) $((size - 1)); do
    head -c "$n" "$TMP/s.hoct" > "$TMP/bad.hoct"
    expect_exit 3 "$dump" "$TMP/bad.hoct" && expect_one_error_line
    expect_exit 3 "$query" --static "$TMP/s.d.vdb" --moving "$TMP/s.tree.hps" --mode ist --moving-octree "$TMP/bad.hoct" \
        --static-octree "$TMP/s.hoct" --scenario contact --count 2
done
for at in 5 30 60 $((size - 3)); do
    cp "$TMP/s.hoct" "$TMP/bad.hoct"
    printf '\x5a' | dd of="$TMP/bad.hoct" bs=1 seek="$at" conv=notrunc status=none
    expect_exit 3 "$dump" --check "$TMP/bad.hoct"
done
expect_exit 3 "$oct" "$TMP/s.hps" -o "$TMP/x.hoct"
expect_exit 3 "$query" --static "$TMP/s.d.vdb" --moving "$TMP/s.tree.hps" --mode ist --moving-octree "$TMP/s.hps" \
    --static-octree "$TMP/s.hoct" --scenario contact --count 2

# Usage: ist needs both octrees; the octree options belong to the ist modes.
expect_exit 2 "$query" --static "$TMP/s.d.vdb" --moving "$TMP/s.tree.hps" --mode ist --moving-octree "$TMP/s.hoct" --scenario contact
expect_one_error_line
expect_exit 2 "$query" --static "$TMP/s.d.vdb" --moving "$TMP/s.tree.hps" --mode full --moving-octree "$TMP/s.hoct" --scenario contact
expect_exit 2 "$query" --static "$TMP/s.d.vdb" --moving "$TMP/s.tree.hps" --mode ist-brute --moving-octree "$TMP/s.hoct" \
    --static-octree "$TMP/s.hoct" --ist-level 2 --scenario contact

# ist and ist-brute: the same contact set on every pose (solid, surface-only, optimizations off).
for o in s ss; do
    for flags in "" "--ist-no-one-child --ist-no-side"; do
        expect_exit_within 0 120 "$query" --static "$TMP/s.d.vdb" --moving "$TMP/s.tree.hps" --moving-octree "$TMP/$o.hoct" \
            --static-octree "$TMP/$o.hoct" --mode ist $flags --scenario random --count 60 --seed 5 --budget-us 1e9 --report "$TMP/ist.json" --quiet
        expect_exit 0 "$query" --static "$TMP/s.d.vdb" --moving "$TMP/s.tree.hps" --moving-octree "$TMP/$o.hoct" \
            --static-octree "$TMP/$o.hoct" --mode ist-brute --scenario random --count 60 --seed 5 --budget-us 1e9 --report "$TMP/brute.json" --quiet
        python3 - "$TMP/ist.json" "$TMP/brute.json" <<'PY' && pass "ist = ist-brute on 60 poses ($o $flags)" || fail "ist and ist-brute differ ($o $flags)"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
qa, qb = a["per_query"], b["per_query"]
assert len(qa) == len(qb) == 60
assert all(x["contact_set"] == y["contact_set"] and x["contacts"] == y["contacts"] for x, y in zip(qa, qb))
assert sum(x["contacts"] > 0 for x in qa) >= 5, "too few poses in contact to compare"
assert a["mode"] == "ist" and "ist" in a
PY
    done
done
# Early stop: a stop level interrupts queries with contact and reports node pairs (with the
# one-child optimization off: on, a chain of single children may reach below the stop level).
expect_exit 0 "$query" --static "$TMP/s.d.vdb" --moving "$TMP/s.tree.hps" --moving-octree "$TMP/s.hoct" --static-octree "$TMP/s.hoct" \
    --mode ist --ist-level 2 --ist-no-one-child --scenario contact --count 20 --budget-us 1e9 --json
check "interrupted at level 2" "$(json_get "$TMP/out" 'j["interrupted"] == j["queries_with_contact"] > 0 and j["min_level_reached"] == 2')" True

# The pipeline's octree stage writes haptic-octree's bytes, and its query stage runs mode ist on it.
pipe="$HP_BIN/haptic-pipeline"
printf '{"name": "ist", "stages": [{"stage": "voxelize", "voxel_size": 0.1}, {"stage": "distance"}, {"stage": "pointshell"}, {"stage": "spheretree"}, {"stage": "octree", "surface_only": true}, {"stage": "query", "scenario": "contact", "count": 20, "mode": "ist", "moving_octree": true, "static_octree": true, "budget_us": 1e9}]}\n' > "$TMP/p.json"
expect_exit 0 "$pipe" "$TMP/p.json" "$SAMPLES/sphere.obj" -o "$TMP/pipe"
expect_exit 0 "$oct" "$TMP/pipe/sphere/voxelize.vdb" --surface-only -o "$TMP/pipe-exe.hoct" --quiet
cmp -s "$TMP/pipe/sphere/octree.hoct" "$TMP/pipe-exe.hoct" && pass "pipeline octree = haptic-octree's bytes" || fail "pipeline octree differs from haptic-octree's"
check "pipeline query ran ist" "$(json_get "$TMP/pipe/sphere/query.json" 'j["mode"] == "ist" and j["ist"]["static_octree"]["file"] == "octree.hoct" and j["queries_with_contact"] > 0')" True
printf '{"name": "bad", "stages": [{"stage": "voxelize"}, {"stage": "distance"}, {"stage": "pointshell"}, {"stage": "spheretree"}, {"stage": "query", "scenario": "contact", "mode": "ist"}]}\n' > "$TMP/bad.json"
expect_exit 2 "$pipe" "$TMP/bad.json" "$SAMPLES/sphere.obj" -o "$TMP/pipe2"
expect_grep "mode ist needs moving_octree and static_octree" "$TMP/err"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
