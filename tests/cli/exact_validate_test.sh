#!/usr/bin/env bash
# haptic-query --validate exact: a peg (moving tree and mesh) on an approach-and-slide trajectory
# against a block with a hole (static field and mesh), both in the files' own units.
source "$(dirname "$0")/lib.sh"
vox="$HP_BIN/haptic-voxelize"
query="$HP_BIN/haptic-query"

expect_exit 0 "$vox" "$SAMPLES/block-with-hole.stl" --voxel-size 1 -o "$TMP/block.vdb" --quiet
expect_exit 0 "$HP_BIN/haptic-distance" "$SAMPLES/block-with-hole.stl" "$TMP/block.vdb" -o "$TMP/block.dist.vdb" --quiet
expect_exit 0 "$vox" "$SAMPLES/peg.stl" --voxel-size 1 -o "$TMP/peg.vdb" --quiet
expect_exit 0 "$HP_BIN/haptic-pointshell" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/peg.ps.hps" --quiet
expect_exit 0 "$HP_BIN/haptic-spheretree" "$TMP/peg.ps.hps" -o "$TMP/peg.hps" --quiet
common=(--static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --validate exact
        --static-mesh "$SAMPLES/block-with-hole.stl" --moving-mesh "$SAMPLES/peg.stl")

# A hand-made trajectory: the peg (z 0..30, radius 5) straight down onto the block's top (z = 20)
# beside the hole (x = 12), its bottom at 51 - 2k at pose k: it reaches z = 20 at k = 15.5, half
# way through the step from pose 15 to pose 16.
python3 - "$TMP/traj.json" <<'PY'
import json, sys
poses = [{"position": [12.0, 0.0, 51.0 - 2.0 * k], "quaternion": [1, 0, 0, 0]} for k in range(20)]
json.dump({"poses": poses}, open(sys.argv[1], "w"))
PY
expect_exit 0 "$query" "${common[@]}" --poses "$TMP/traj.json" --json --report "$TMP/r.json"
expect_json "$TMP/r.json"
check "steps" "$(json_get "$TMP/r.json" 'j["steps"]')" 19
# Bottom at 51 - 2k reaches the top face z = 20 at k = 15.5: the step 15 -> 16, fraction 1/2.
check "first exact contact: step 16" "$(json_get "$TMP/r.json" 'j["first_contact"]["step"]')" 16
check "first exact contact: fraction 1/2" "$(json_get "$TMP/r.json" 'abs(j["first_contact"]["fraction"] - 0.5) < 1e-12')" True
check "late/early/tunnel keys" "$(json_get "$TMP/r.json" 'sorted(k for k in j if k in ("early", "late", "tunnelling"))')" "['early', 'late', 'tunnelling']"

# A fast pass through a thin part of the block between two samples is tunnelling: the peg jumps
# from above the block (bottom at z = 21) to below it (top at z = -1) in one step, sideways of the
# hole, so that neither sample overlaps.
python3 - "$TMP/tunnel.json" <<'PY'
import json, sys
poses = [{"position": [12.0, 0.0, 21.0], "quaternion": [1, 0, 0, 0]},
         {"position": [12.0, 0.0, -31.0], "quaternion": [1, 0, 0, 0]}]
json.dump({"poses": poses}, open(sys.argv[1], "w"))
PY
expect_exit 0 "$query" "${common[@]}" --poses "$TMP/tunnel.json" --json --report "$TMP/t.json"
check "tunnelling counted" "$(json_get "$TMP/t.json" 'j["tunnelling"]["count"]')" 1
check "tunnelling fraction (bottom 21 -> top face 20 over 52)" "$(json_get "$TMP/t.json" 'abs(j["tunnelling"]["steps"][0]["fraction"] - 1/52) < 1e-9')" True
expect_exit 1 "$query" "${common[@]}" --poses "$TMP/tunnel.json" --fail-on-tunnel --quiet
# Generated approach-and-slide paths.
expect_exit 0 "$query" "${common[@]}" --scenario trajectory --count 100 --seed 3 --json --report "$TMP/s.json"
check "trajectory steps" "$(json_get "$TMP/s.json" 'j["steps"]')" 99
# Late entries (seed 3 has some: VPS misses shallow contact while the peg slides along the hole):
# each carries the vertex penetration depth, which never exceeds the path-length bound kept under
# its own key (these paths translate only), and says where the depth comes from.
check "late entries exist" "$(json_get "$TMP/s.json" 'j["late"]["count"] > 0')" True
check "late: keys" "$(json_get "$TMP/s.json" 'all({"step", "penetration_depth", "depth_from", "vertices_inside", "travel_since_touch"} <= set(e) for e in j["late"]["steps"])')" True
check "late: 0 <= depth <= path since touch" "$(json_get "$TMP/s.json" 'all(0 <= e["penetration_depth"] <= e["travel_since_touch"] + 1e-9 for e in j["late"]["steps"])')" True
check "late: depth_from matches vertices_inside" "$(json_get "$TMP/s.json" 'all((e["depth_from"] == "vertex") == (e["vertices_inside"] > 0) and (e["vertices_inside"] > 0 or e["penetration_depth"] == 0) for e in j["late"]["steps"])')" True
check "late: some depth from a vertex inside" "$(json_get "$TMP/s.json" 'any(e["penetration_depth"] > 0 for e in j["late"]["steps"])')" True
expect_exit 0 "$query" "${common[@]}" --scenario trajectory --count 100 --seed 3
grep -q "^late .*penetration depth [0-9.e+-]* (path since touch" "$TMP/out" && pass "table: late rows show the depth" || fail "table: no depth in the late rows"
# A mesh that is not the one the tree was made from: a warning naming it.
expect_exit 0 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --validate exact \
    --static-mesh "$SAMPLES/block-with-hole.stl" --moving-mesh "$SAMPLES/lastbit-cylinder.stl" --poses "$TMP/traj.json"
grep -q "lastbit-cylinder.stl: not the mesh" "$TMP/err" && pass "warns about a mesh of another source" || fail "no warning for a mesh of another source"
# Usage errors.
expect_exit 2 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --validate exact --poses "$TMP/traj.json" --quiet
expect_exit 2 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/traj.json" --fail-on-tunnel --quiet
expect_exit 2 "$query" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --poses "$TMP/traj.json" --static-mesh "$SAMPLES/peg.stl" --quiet
expect_exit 3 "$query" "${common[@]/peg.stl/missing.stl}" --poses "$TMP/traj.json" --quiet
finish
