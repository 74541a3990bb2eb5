#!/usr/bin/env bash
# haptic-sim: a unit cube dropped onto a plane and onto a box with VPS (prepared by the scene's
# pipeline at voxel 0.05) and with Bullet's methods; bad scene files. Skipped in builds without
# lib/bullet (no haptic-sim).
source "$(dirname "$0")/lib.sh"
if [ ! -x "$HP_BIN/haptic-sim" ]; then echo "haptic-sim not built (no Bullet): skipped"; exit 0; fi
cp "$SAMPLES/seam-cube.obj" "$TMP/cube.obj"
cp "$HP_SOURCE_DIR/scenes/vps-sim.pipeline.json" "$TMP/vps.json"
cache="$TMP/cache"

# The unit cube [0,1]^3 (centre of mass at its centre), 0.2 m above a plane, restitution 0.
cat >"$TMP/drop.json" <<'JSON'
{"name": "cube-drop", "gravity": [0, 0, -10], "rate": 200, "steps": 160,
 "objects": [
   {"name": "ground", "plane": {"normal": [0, 0, 1], "offset": 0}},
   {"name": "cube", "mesh": "cube.obj", "position": [0, 0, 0.7], "origin": "center_of_mass", "mass": 1,
    "restitution": 0, "friction": 0.5}],
 "methods": [
   {"name": "vps", "object": "cube", "method": "vps",
    "prepare": {"pipeline": "vps.json", "set": ["voxelize.voxel_size=0.05"]}},
   {"name": "gimpact", "object": "cube", "method": "gimpact"},
   {"name": "hull", "object": "cube", "method": "hull"},
   {"name": "hacd", "object": "cube", "method": "hacd", "clusters": 1}]}
JSON
expect_exit 0 "$HP_BIN/haptic-sim" "$TMP/drop.json" --cache "$cache" --report "$TMP/r.json" --csv "$TMP/r.csv" \
    --plots "$TMP/plots" --quiet
for f in cube-drop-time.png cube-drop-energy.png; do
    [ "$(head -c 8 "$TMP/plots/$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] && pass "plot $f is a PNG" || fail "no PNG $f"
done
expect_json "$TMP/r.json"
check "one run per method" "$(json_get "$TMP/r.json" 'len(j["runs"])')" 4
check "one CSV row per step and run" "$(($(wc -l <"$TMP/r.csv") - 1))" 640
# VPS: at rest at half height within one voxel; kinetic energy after the first contact never above
# the energy just before it; the exact penetration is the closed form 0.5 - z of the axis-aligned cube.
python3 - "$TMP/r.json" <<'PY' && pass "VPS cube rests at half height, energy never grows after contact, penetration = 0.5 - z" || fail "VPS cube drop"
import json, sys
r = next(x for x in json.load(open(sys.argv[1]))["runs"] if x["method"] == "vps")
steps = [s["objects"][0] for s in r["steps"]]
first = r["first_contact_step"]
assert 1 < first < 160, first
assert abs(steps[-1]["position"][2] - 0.5) <= 0.05, steps[-1]["position"]
before = steps[first - 2]["kinetic"]
assert max(s["kinetic"] for s in steps[first - 1:]) <= before, (before, max(s["kinetic"] for s in steps[first - 1:]))
for s in steps:
    assert abs(s["penetration"] - max(0.0, 0.5 - s["position"][2])) < 5e-5, s  # the cube turns a little
assert r["max_penetration"] < 0.05 + 0.05, r["max_penetration"]
PY
# Bullet's methods run in the same scene and hold the cube up (GImpact, hull and HACD within 2 cm).
python3 - "$TMP/r.json" <<'PY' && pass "GImpact, hull, HACD cubes rest on the plane" || fail "Bullet's methods"
import json, sys
for r in json.load(open(sys.argv[1]))["runs"]:
    z = r["steps"][-1]["objects"][0]["position"][2]
    assert abs(z - 0.5) < 0.02, (r["method"], z)
    assert r["first_contact_step"] > 0, r["method"]
PY
hacd=$(ls "$cache"/hacd-*.json 2>/dev/null | head -1)
if [ -n "$hacd" ]; then
    pass "the HACD decomposition is cached"
    # A second run reads the cache (the file stays untouched); a damaged cache file is recomputed.
    cp "$hacd" "$TMP/hacd-first.json"
    touch -d '2001-01-01 00:00:00' "$hacd"
    expect_exit 0 "$HP_BIN/haptic-sim" "$TMP/drop.json" --cache "$cache" --only hacd --steps 5 --quiet
    check "the cached decomposition is read, not rewritten" "$(stat -c %Y "$hacd")" "$(date -d '2001-01-01 00:00:00' +%s)"
    echo '{"key": "damaged"' >"$hacd"
    expect_exit 0 "$HP_BIN/haptic-sim" "$TMP/drop.json" --cache "$cache" --only hacd --steps 5 --quiet
    cmp -s "$hacd" "$TMP/hacd-first.json" && pass "a damaged cache file is recomputed" || fail "the damaged cache file was not recomputed"
else
    fail "no HACD cache file"
fi

# A box ground (native btBoxShape, top at z = 0) and --json.
sed -e 's/"plane": {"normal": \[0, 0, 1\], "offset": 0}/"box": [2, 2, 0.1], "position": [0, 0, -0.1]/' \
    "$TMP/drop.json" >"$TMP/box.json"
expect_exit 0 "$HP_BIN/haptic-sim" "$TMP/box.json" --cache "$cache" --only vps --json
cp "$TMP/out" "$TMP/box-out.json"
expect_json "$TMP/box-out.json"
python3 - "$TMP/box-out.json" <<'PY' && pass "VPS cube rests on the box at half height" || fail "cube on box"
import json, sys
j = json.load(open(sys.argv[1]))
r = j["runs"][0]
assert "steps" not in r
assert r["fell_through"] is False and r["max_penetration"] < 0.1, r
assert j["summary"][0]["method"] == "vps" and j["summary"][0]["points"] > 0
PY

# A static mesh ground (VPS-VPS): the cube falls onto a second unit cube, offset by 0.25 in x and y.
# The reported penetration (the deepest vertex of the moving mesh inside the static mesh) equals the
# closed form of a box: the cube's corners placed by the reported centre and rotation, each corner's
# depth in [0,1]^3 the smallest distance to its faces.
cat >"$TMP/mesh.json" <<'JSON'
{"name": "cube-on-cube", "gravity": [0, 0, -10], "rate": 200, "steps": 120,
 "objects": [
   {"name": "base", "mesh": "cube.obj", "mass": 0,
    "prepare": {"pipeline": "vps.json", "set": ["voxelize.voxel_size=0.05"]}},
   {"name": "cube", "mesh": "cube.obj", "position": [0.25, 0.25, 1.6], "mass": 1, "restitution": 0,
    "prepare": {"pipeline": "vps.json", "set": ["voxelize.voxel_size=0.05"]}}]}
JSON
expect_exit 0 "$HP_BIN/haptic-sim" "$TMP/mesh.json" --cache "$cache" --report "$TMP/mesh-r.json" --quiet
python3 - "$TMP/mesh-r.json" <<'PY' && pass "penetration into a static mesh = 1.5 - z; the cube rests on the base" || fail "cube on a static mesh"
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
steps = [s["objects"][0] for s in r["steps"]]
assert r["first_contact_step"] > 0 and r["max_penetration"] > 0, r
def rotate(q, v):
    w, x, y, z = q
    r = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
    return [sum(r[i][k] * v[k] for k in range(3)) for i in range(3)]
for s in steps:
    deepest = 0.0
    for k in range(8):
        corner = [float(k & 1) - 0.5, float((k >> 1) & 1) - 0.5, float((k >> 2) & 1) - 0.5]  # about the centre
        p = [c + d for c, d in zip(s["position"], rotate(s["quaternion"], corner))]
        deepest = max(deepest, min(min(c, 1 - c) for c in p))
    assert abs(s["penetration"] - deepest) < 1e-5, (s, deepest)
assert steps[-1]["position"][2] > 1.4, steps[-1]
PY

# Bullet's native sphere (r 0.5) bounces off a native plane: dropped with its centre at 1 m it falls
# h0 = 0.5 m to the contact; one impulse with restitution e sends it back up e^2 h0 (0.405 m at e 0.9,
# 0.1 m at e 1/3). Bullet's speculative contacts (points up to 1.7 cm apart handed to the solver)
# used to stop it short of the plane with no rebound. Generous bounds: more than half the ideal
# rebound, and below the drop height; with e 1/3 the rebound is also lower than with e 0.9.
cat >"$TMP/ball.json" <<'JSON'
{"name": "ball", "gravity": [0, 0, -10], "rate": 200, "steps": 200, "restitution": [0.9, 0.3333333333333333],
 "objects": [
   {"name": "ground", "plane": {"normal": [0, 0, 1], "offset": 0}, "restitution": 1},
   {"name": "ball", "sphere": 0.5, "position": [0, 0, 1], "mass": 1}]}
JSON
expect_exit 0 "$HP_BIN/haptic-sim" "$TMP/ball.json" --report "$TMP/ball-r.json" --quiet
python3 - "$TMP/ball-r.json" <<'PY' && pass "the native ball rises again after its first contact, about e^2 h0" || fail "native ball bounce"
import json, sys
h0, r = 0.5, 0.5
rises = {}
for run in json.load(open(sys.argv[1]))["runs"]:
    e = run["restitution"]
    z = [s["objects"][0]["position"][2] for s in run["steps"]]
    first = run["first_contact_step"]
    assert 1 < first < 100, first
    after = max(z[first - 1:]) - r  # the highest centre after the first contact, above the contact height
    ideal = e * e * h0
    assert 0.5 * ideal < after < h0, (e, after, ideal)
    rises[round(e, 2)] = after
assert rises[0.33] < rises[0.9], rises
PY

# Bad scenes: exit 3, one line naming the file and the key, no output written.
bad() {  # NAME SED-EXPRESSION KEY-PATTERN
    sed -e "$2" "$TMP/drop.json" >"$TMP/$1.json"
    expect_exit 3 "$HP_BIN/haptic-sim" "$TMP/$1.json" --cache "$cache" --report "$TMP/$1.out.json" --csv "$TMP/$1.csv"
    expect_one_error_line
    expect_grep "$1\.json: $3" "$TMP/err"
    [ ! -e "$TMP/$1.out.json" ] && [ ! -e "$TMP/$1.csv" ] && pass "$1: nothing written" || fail "$1: an output was written"
}
bad unknown-method 's/"method": "gimpact"/"method": "bogus"/' 'methods\[1\]\.method: unknown method'
bad missing-mesh 's/"cube.obj"/"nowhere.obj"/' 'objects\[1\]\.mesh: no such file'
bad nan-pose 's/\[0, 0, 0.7\]/[0, NaN, 0.7]/' 'line 4, column 57: not a JSON file'
bad negative-mass 's/"mass": 1/"mass": -1/' 'objects\[1\]\.mass: must be >= 0'
bad string-pose 's/\[0, 0, 0.7\]/[0, "NaN", 0.7]/' 'objects\[1\]\.position\[1\]: must be a number'
bad not-json 's/{"name": "cube-drop"/{"name": "cube-drop" ]/' 'line 1, column 22: not a JSON file'
bad coherent-not-bool 's/"object": "cube", "method": "vps",/"object": "cube", "method": "vps", "coherent": 1,/' 'methods\[0\]\.coherent: must be true or false'
expect_exit 2 "$HP_BIN/haptic-sim" "$TMP/drop.json" --only nothing --cache "$cache"
expect_exit 2 "$HP_BIN/haptic-sim"
finish
