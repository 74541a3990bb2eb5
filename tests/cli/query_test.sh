#!/usr/bin/env bash
# haptic-query end to end: a peg (moving tree) against a block with a hole (static distance field).
source "$(dirname "$0")/lib.sh"
vox="$HP_BIN/haptic-voxelize"
dist="$HP_BIN/haptic-distance"
query="$HP_BIN/haptic-query"

expect_exit 0 "$vox" "$SAMPLES/block-with-hole.stl" --units mm --voxel-size 0.001 -o "$TMP/block.vdb" --quiet
expect_exit 0 "$dist" "$SAMPLES/block-with-hole.stl" "$TMP/block.vdb" -o "$TMP/block.dist.vdb" --quiet
# The moving peg: its pointshell and tree from the real stages when this build has them, else the
# mesh's vertices as points (the make_vertex_tree helper).
if [ -x "$HP_BIN/haptic-pointshell" ] && [ -x "$HP_BIN/haptic-spheretree" ]; then
    expect_exit 0 "$vox" "$SAMPLES/peg.stl" --units mm --voxel-size 0.001 -o "$TMP/peg.vdb" --quiet
    expect_exit 0 "$HP_BIN/haptic-pointshell" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/peg.ps.hps" --quiet
    expect_exit 0 "$HP_BIN/haptic-spheretree" "$TMP/peg.ps.hps" -o "$TMP/peg.hps" --quiet
else
    expect_exit 0 "$HP_BIN/make_vertex_tree" "$SAMPLES/peg.stl" "$TMP/peg.hps" --units mm --quiet
fi

# The 1 kHz check a user's CI runs: p99 within 1000 us (under the sanitizers: most queries).
budget=(--budget-us 1000)
[ "${HP_SANITIZED:-0}" = 1 ] && budget+=(--max-over-budget 0.5)
expect_exit 0 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --scenario contact --count 200 --seed 4 \
    --threads 1 "${budget[@]}" --json --report "$TMP/r.json" --csv "$TMP/r.csv" --write-poses "$TMP/poses.json"
cp "$TMP/out" "$TMP/stdout.json"
expect_json "$TMP/stdout.json"
expect_json "$TMP/r.json"
check "report file = --json output" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_query"] == json.load(open(sys.argv[2]))["per_query"])' "$TMP/r.json" "$TMP/stdout.json")" True
check "queries" "$(json_get "$TMP/r.json" 'j["queries"]')" 200
check "pass" "$(json_get "$TMP/r.json" 'j["pass"]')" True
check "latency keys" "$(json_get "$TMP/r.json" 'sorted(j["latency_us"])')" "['max', 'mean', 'min', 'p50', 'p90', 'p99', 'p999']"
check "percentiles ordered" "$(json_get "$TMP/r.json" 'all(a <= b for a, b in zip(*[[j["latency_us"][k] for k in ks] for ks in [["min","p50","p90","p99","p999"], ["p50","p90","p99","p999","max"]]]))')" True
# Contact poses: every query touches, at most 5 voxels (0.005 m) deep; the force is a sum of
# inward normals x depth, so it is no larger than contacts x max penetration.
check "every contact pose touches" "$(json_get "$TMP/r.json" 'all(q["contacts"] > 0 for q in j["per_query"])')" True
check "depth within 5 voxels" "$(json_get "$TMP/r.json" 'all(0 < q["max_penetration"] <= 0.005 + 1e-12 for q in j["per_query"])')" True
check "force bounded" "$(json_get "$TMP/r.json" 'all(sum(f*f for f in q["force"]) ** 0.5 <= q["contacts"] * q["max_penetration"] * (1 + 1e-9) for q in j["per_query"])')" True
check "csv rows" "$(wc -l <"$TMP/r.csv")" 201
check "generation time reported" "$(json_get "$TMP/r.json" 'j["poses"]["generation_seconds"] > 0')" True

# Same seed, same poses; full and brute give the same contacts, depths and forces for them.
expect_exit 0 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --scenario contact --count 200 --seed 4 \
    --write-poses "$TMP/poses2.json" --quiet --budget-us 1e9
cmp -s "$TMP/poses.json" "$TMP/poses2.json" && pass "poses reproducible from the seed" || fail "poses differ for the same seed"
expect_exit 0 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" --mode brute \
    --report "$TMP/brute.json" --quiet --budget-us 1e9
check "full == brute per query" "$(python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["per_query"]; b = json.load(open(sys.argv[2]))["per_query"]
keys = ["contacts", "max_penetration", "force", "torque"]
print(all(x[k] == y[k] for x, y in zip(a, b) for k in keys) and len(a) == len(b))' "$TMP/r.json" "$TMP/brute.json")" True
check "brute tests every point" "$(json_get "$TMP/brute.json" 'all(q["points_tested"] == j["moving"]["points"] for q in j["per_query"])')" True
for extra in "--mode segmented --level 2" "--mode time-critical" "--scenario approach --count 60" "--scenario random --count 60"; do
    # shellcheck disable=SC2086
    if [[ $extra == --scenario* ]]; then src=(); else src=(--poses "$TMP/poses.json"); fi
    expect_exit 0 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" "${src[@]}" $extra --json --budget-us 1e9
    expect_json "$TMP/out"
done
# A voxelmap works as the static object too (layer x voxel size).
expect_exit 0 "$query" --static "$TMP/block.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" --quiet --budget-us 1e9

# Over budget: exit 1 and pass false (an impossible budget of a nanosecond).
expect_exit 1 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" --budget-us 0.001 --json
check "fail reported" "$(json_get "$TMP/out" 'j["pass"]')" False
expect_exit 0 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" --budget-us 0.001 \
    --max-over-budget 1 --quiet

# Usage errors: exit 2.
expect_exit 2 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps"
expect_exit 2 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" --mode segmented
expect_exit 2 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" --mode segmented --level 99
expect_exit 2 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --scenario walk --count 3
expect_exit 2 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" --cfm "$TMP/peg.hps"
expect_grep "--cfm applies only to --mode time-critical" "$TMP/err"
expect_exit 2 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" --scenario contact

# Damaged or wrong inputs: exit 3, one line on stderr, no report left behind.
head -c 2000 "$TMP/block.dist.vdb" >"$TMP/cut.vdb"
expect_exit_within 3 5 "$query" --static "$TMP/cut.vdb" --moving "$TMP/peg.hps" --poses "$TMP/poses.json" --report "$TMP/x.json"
expect_one_error_line
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 0x10; open(sys.argv[2], "wb").write(b)' \
    "$TMP/peg.hps" "$TMP/flip.hps"
expect_exit_within 3 5 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/flip.hps" --poses "$TMP/poses.json" --report "$TMP/x.json"
expect_one_error_line
expect_exit 3 "$query" --static "$TMP/peg.hps" --moving "$TMP/peg.hps" --poses "$TMP/poses.json"
expect_exit 3 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/block.vdb" --poses "$TMP/poses.json"
if [ -f "$TMP/peg.ps.hps" ]; then  # a pointshell without its tree
    expect_exit 3 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.ps.hps" --poses "$TMP/poses.json"
    expect_grep "without a tree" "$TMP/err"
fi
printf '{"poses": [{"position": [0, 0], "quaternion": [1, 0, 0, 0]}]}' >"$TMP/bad.json"
expect_exit 3 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/bad.json"
expect_grep "pose 0" "$TMP/err"
printf '{"poses": [' >"$TMP/cut.json"
expect_exit 3 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/cut.json"
expect_one_error_line
[ ! -e "$TMP/x.json" ] && pass "no report after errors" || fail "a report was left behind"
expect_exit 0 "$query" --help
expect_grep "Examples" "$TMP/out"
finish
