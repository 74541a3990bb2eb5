#!/usr/bin/env bash
# haptic-sim on a scene.json of haptic-pipeline --assembly (a plate and three instanced pegs, prepared
# at resolution 24): one peg dynamic, the other parts static; bad scenes. Multibody scenes: copies of
# an object, one run per count, and the pile's exact penetration between two moving cubes. Skipped
# in builds without lib/bullet (no haptic-sim).
source "$(dirname "$0")/lib.sh"
if [ ! -x "$HP_BIN/haptic-sim" ]; then echo "haptic-sim not built (no Bullet): skipped"; exit 0; fi
python3 "$HP_SOURCE_DIR/tests/cli/make_assembly.py" pegs "$TMP/pegs.gltf" 3
expect_exit 0 "$HP_BIN/haptic-pipeline" "$HP_SOURCE_DIR/pipelines/vps-default.json" "$TMP/pegs.gltf" --assembly \
    -o "$TMP/pegs" --set voxelize.resolution=24 --quiet
scene="$TMP/pegs/scene.json"

# peg#2 moves (10 g), the plate and the other pegs stay put. It starts sunk 5 mm into the plate, so
# the exact penetration (its mesh in the plate's, from the glTF found where it was given) is about
# 5 mm at the first step, and VPS pushes it out.
expect_exit 0 "$HP_BIN/haptic-sim" "$scene" --dynamic 'peg#2=0.01' --steps 60 --report "$TMP/r.json" --quiet
expect_json "$TMP/r.json"
python3 - "$TMP/r.json" <<'PY' && pass "one dynamic peg pushed out of the plate, static parts in place" || fail "scene.json run"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["scene"]["kind"] == "assembly", j["scene"]
r = j["runs"][0]
assert r["objects"] == ["peg#2"], r["objects"]
assert r["kind"] == "vps", r["kind"]
assert r["static_moved"] == 0, r["static_moved"]
steps = [s["objects"][0] for s in r["steps"]]
assert 0.003 < steps[0]["penetration"] <= 0.005 + 1e-9, steps[0]["penetration"]
assert steps[-1]["penetration"] < steps[0]["penetration"] / 2, (steps[0]["penetration"], steps[-1]["penetration"])
moved = sum((a - b) ** 2 for a, b in zip(steps[-1]["position"], steps[0]["position"])) ** 0.5
assert moved > 0.001, moved
PY
# Two dynamic parts by name and by index, the default mass.
expect_exit 0 "$HP_BIN/haptic-sim" "$scene" --dynamic peg --dynamic 3 --mass 0.02 --steps 5 --report "$TMP/r2.json" --quiet
check "two dynamic parts" "$(json_get "$TMP/r2.json" 'j["runs"][0]["objects"]')" "['peg', 'peg#3']"

# Without the glTF the penetration is not measured, and a note says so.
mv "$TMP/pegs.gltf" "$TMP/pegs-moved.gltf"
expect_exit 0 "$HP_BIN/haptic-sim" "$scene" --dynamic 'peg#2' --steps 5 --report "$TMP/r3.json"
expect_grep "pegs.gltf is not found unchanged.*exact penetration is not measured" "$TMP/err"
check "no penetration without the meshes" "$(json_get "$TMP/r3.json" 'j["runs"][0]["max_penetration"] == 0')" "True"
mv "$TMP/pegs-moved.gltf" "$TMP/pegs.gltf"

# Bad scenes: exit 3, one line naming the scene file and the part; nothing written.
expect_exit 3 "$HP_BIN/haptic-sim" "$scene" --dynamic nope --steps 5 --report "$TMP/bad.json"
expect_one_error_line
expect_grep "scene.json: no part 'nope'" "$TMP/err"
expect_exit 3 "$HP_BIN/haptic-sim" "$scene" --steps 5
expect_one_error_line
expect_grep "scene.json: no dynamic part" "$TMP/err"
mv "$TMP/pegs/g1/spheretree.hps" "$TMP/tree.hps"
expect_exit 3 "$HP_BIN/haptic-sim" "$scene" --dynamic plate --steps 5 --report "$TMP/bad.json"
expect_one_error_line
expect_grep "scene.json: part 'peg': .*g1/spheretree.hps: missing" "$TMP/err"
mv "$TMP/tree.hps" "$TMP/pegs/g1/spheretree.hps"
printf 'x' >>"$TMP/pegs/g0/distance.vdb"
expect_exit 3 "$HP_BIN/haptic-sim" "$scene" --dynamic 'peg#2' --steps 5 --report "$TMP/bad.json"
expect_one_error_line
expect_grep "scene.json: part 'plate': .*g0/distance.vdb: changed" "$TMP/err"
[ ! -e "$TMP/bad.json" ] && pass "no report from a bad scene" || fail "a report was written for a bad scene"
expect_exit 2 "$HP_BIN/haptic-sim" "$scene" --dynamic 'peg#2=-1'
# --mass gives the --dynamic parts' mass: alone it would change nothing, so it is refused.
expect_exit 2 "$HP_BIN/haptic-sim" "$scene" --mass 0.5 --steps 5
expect_one_error_line
expect_grep "mass requires --dynamic" "$TMP/err"
# The two formats are never mistaken for each other: --dynamic is for scene.json only, and a file
# with another format key is not a haptic-sim scene.
cat >"$TMP/sim.json" <<'JSON'
{"objects": [{"name": "ground", "plane": {"normal": [0, 0, 1], "offset": 0}},
             {"name": "ball", "sphere": 0.5, "position": [0, 0, 1], "mass": 1}]}
JSON
expect_exit 2 "$HP_BIN/haptic-sim" "$TMP/sim.json" --dynamic ball
expect_grep "only for a scene.json" "$TMP/err"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["format"]="hapticprep-scene-x"; json.dump(j, open(sys.argv[2], "w"))' \
    "$scene" "$TMP/other.json"
expect_exit 3 "$HP_BIN/haptic-sim" "$TMP/other.json"
expect_one_error_line
expect_grep "other.json: format: .* is not a haptic-sim scene file" "$TMP/err"

# Copies: one run per count, the copies named <object>#i.
cp "$SAMPLES/seam-cube.obj" "$TMP/cube.obj"
cat >"$TMP/pile.json" <<'JSON'
{"name": "cube-pile", "gravity": [0, 0, -10], "rate": 200, "steps": 20,
 "objects": [
   {"name": "ground", "plane": {"normal": [0, 0, 1], "offset": 0}},
   {"name": "cube", "mesh": "cube.obj", "position": [0, 0, 1], "origin": "center_of_mass", "mass": 1,
    "copies": {"count": [1, 3], "spacing": 2}}],
 "methods": [{"name": "hull", "object": "cube", "method": "hull"},
             {"name": "gimpact", "object": "cube", "method": "gimpact", "max_count": 1}]}
JSON
expect_exit 0 "$HP_BIN/haptic-sim" "$TMP/pile.json" --report "$TMP/pile.out.json" --plots "$TMP/plots" --quiet
check "runs: hull at 1 and 3, gimpact at 1 (its max_count)" \
    "$(json_get "$TMP/pile.out.json" '[(r["method"], r["count"], len(r["objects"])) for r in j["runs"]]')" \
    "[('hull', 1, 1), ('gimpact', 1, 1), ('hull', 3, 3)]"
check "copies named by their object" "$(json_get "$TMP/pile.out.json" 'j["runs"][2]["objects"]')" \
    "['cube#1', 'cube#2', 'cube#3']"
[ -s "$TMP/plots/cube-pile-count.png" ] && pass "plot against the count" || fail "no cube-pile-count.png"
expect_exit 0 "$HP_BIN/haptic-sim" "$TMP/pile.json" --count 2 --only hull --report "$TMP/pile2.out.json" --quiet
check "--count replaces the counts" "$(json_get "$TMP/pile2.out.json" '[r["count"] for r in j["runs"]]')" "[2]"

# The pile's exact penetration between two moving cubes (no gravity): the first overlaps the second
# by 0.1 m, offset by 0.25 m across; each step's depth of each cube's corners in the other, computed
# here from the reported poses, equals the reported pile penetration.
cat >"$TMP/two.json" <<'JSON'
{"name": "two-cubes", "gravity": [0, 0, 0], "rate": 200, "steps": 10,
 "objects": [
   {"name": "a", "mesh": "cube.obj", "position": [0, 0, 0.5], "origin": "center_of_mass", "mass": 1, "method": "hull"},
   {"name": "b", "mesh": "cube.obj", "position": [0.25, 0.25, 1.4], "origin": "center_of_mass", "mass": 1,
    "method": "hull"}]}
JSON
expect_exit 0 "$HP_BIN/haptic-sim" "$TMP/two.json" --report "$TMP/two.out.json" --quiet
expect_exit 2 "$HP_BIN/haptic-sim" "$TMP/two.json" --count 2
python3 - "$TMP/two.out.json" <<'PY' && pass "pile penetration = the corners' depth in the other cube" || fail "pile penetration"
import itertools, json, sys
def rot(q):
    w, x, y, z = q
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
def world(o, p):  # the unit cube's point p (its centre of mass at 0.5, 0.5, 0.5) placed
    R = rot(o["quaternion"])
    d = [p[i] - 0.5 for i in range(3)]
    return [o["position"][i] + sum(R[i][k] * d[k] for k in range(3)) for i in range(3)]
def depth(o, w):  # a world point's depth in the placed unit cube (> 0 inside)
    R = rot(o["quaternion"])
    d = [w[i] - o["position"][i] for i in range(3)]
    local = [sum(R[k][i] * d[k] for k in range(3)) for i in range(3)]
    return min(0.5 - abs(c) for c in local)
r = json.load(open(sys.argv[1]))["runs"][0]
assert r["objects"] == ["a", "b"]
corners = list(itertools.product([0, 1], repeat=3))
for step in r["steps"]:
    a, b = step["objects"]
    for me, other in ((a, b), (b, a)):
        want = max(0.0, max(depth(other, world(me, c)) for c in corners))
        assert abs(me["pile_penetration"] - want) < 1e-6, (me["pile_penetration"], want)
        assert me["penetration"] == 0  # no static object
assert r["steps"][0]["objects"][0]["pile_penetration"] > 0.05, r["steps"][0]
PY
finish
