#!/usr/bin/env bash
# haptic-query --scene end to end: a plate with four instanced pegs prepared by haptic-pipeline
# --assembly, one peg as the tool against the others and the plate.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/scene_lib.sh"
query="$HP_BIN/haptic-query"

make_pegs_scene 4

# Contact poses against each static part in turn; every frame touches its target.
expect_exit 0 "$query" --scene "$scene" --tool peg --scenario contact --count 60 --seed 2 --threads 1 \
    --budget-us 1e6 --json --report "$TMP/r1.json" --csv "$TMP/c1.csv" --write-poses "$TMP/poses.json"
cp "$TMP/out" "$TMP/stdout.json"
expect_json "$TMP/stdout.json"
check "frames" "$(json_get "$TMP/r1.json" 'j["frames"]')" 60
check "static parts (plate and three pegs)" "$(json_get "$TMP/r1.json" 'j["static_parts"]')" 4
check "geometries loaded once" "$(json_get "$TMP/r1.json" 'j["geometries_loaded"]')" 2
check "every frame touches a part" "$(json_get "$TMP/r1.json" 'all(f["parts_touched"] >= 1 for f in j["per_frame"])')" True
check "percentiles of every figure" "$(json_get "$TMP/stdout.json" 'all("p99" in j[k] for k in ["broad_phase_parts","parts_touched","contacts","broad_phase_us","narrow_phase_us","frame_us"])')" True
expect_grep '^frame,part,contacts,' "$TMP/c1.csv"
expect_grep '^0,\*,' "$TMP/c1.csv"
expect_grep ',plate,' "$TMP/c1.csv"
expect_exit 0 "$query" --scene "$scene" --tool peg --scenario contact --count 60 --seed 2 --threads 1 --budget-us 1e6
expect_grep '^frame ' "$TMP/out"
expect_grep 'broad phase' "$TMP/out"

# Byte-identical results for any thread count (timing columns aside), in every mode.
for mode in full brute "segmented --level 2" "time-critical --budget-tests 30"; do
    # shellcheck disable=SC2086
    expect_exit 0 "$query" --scene "$scene" --tool peg --poses "$TMP/poses.json" --mode $mode --threads 1 \
        --budget-us 1e9 --csv "$TMP/m1.csv" --quiet
    # shellcheck disable=SC2086
    expect_exit 0 "$query" --scene "$scene" --tool peg --poses "$TMP/poses.json" --mode $mode --threads 2 \
        --budget-us 1e9 --csv "$TMP/m2.csv" --quiet
    if cmp -s <(cut -d, -f1-16 "$TMP/m1.csv") <(cut -d, -f1-16 "$TMP/m2.csv"); then
        pass "$mode: --threads 1 and 2 give the same CSV"
    else
        fail "$mode: --threads 1 and 2 differ"
    fi
done

# Each pair equals the pair query run alone (haptic-query --static/--moving) on the composed pose.
python3 - "$scene" "$TMP/poses.json" "$TMP/r1.json" "$TMP" <<'PY' >"$TMP/pairs.txt"
import json, sys, os
scene, poses, report, tmp = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["poses"], json.load(open(sys.argv[3])), sys.argv[4]
parts = {p["name"]: p for p in scene["parts"]}
geoms = {g["id"]: g for g in scene["geometries"]}
def qmul(a, b):
    return [a[0]*b[0]-a[1]*b[1]-a[2]*b[2]-a[3]*b[3], a[0]*b[1]+a[1]*b[0]+a[2]*b[3]-a[3]*b[2],
            a[0]*b[2]-a[1]*b[3]+a[2]*b[0]+a[3]*b[1], a[0]*b[3]+a[1]*b[2]-a[2]*b[1]+a[3]*b[0]]
by_part = {}
for i, f in enumerate(report["per_frame"][:20]):
    for pr in f["pairs"]:
        p = parts[pr["name"] if "name" in pr else pr["part"]]
        m, t = p["matrix"], p["position"]
        d = [poses[i]["position"][k] - t[k] for k in range(3)]
        pos = [m[0]*d[0]+m[4]*d[1]+m[8]*d[2], m[1]*d[0]+m[5]*d[1]+m[9]*d[2], m[2]*d[0]+m[6]*d[1]+m[10]*d[2]]
        q = p["quaternion"]
        by_part.setdefault(pr["part"], []).append(({"position": pos, "quaternion": qmul([q[0], -q[1], -q[2], -q[3]], poses[i]["quaternion"])}, pr))
tool = os.path.join(os.path.dirname(sys.argv[1]), geoms[parts["peg"]["geometry"]]["files"]["tree"]["file"])
for k, (name, items) in enumerate(sorted(by_part.items())):
    g = geoms[parts[name]["geometry"]]
    field = os.path.join(os.path.dirname(sys.argv[1]), g["files"]["distance"]["file"])
    json.dump({"poses": [p for p, _ in items]}, open(f"{tmp}/pair{k}.json", "w"))
    json.dump([{"contacts": pr["contacts"], "force": pr["force"], "matrix": parts[name]["matrix"]} for _, pr in items], open(f"{tmp}/pair{k}.want.json", "w"))
    print(k, field, tool)
PY
[ -s "$TMP/pairs.txt" ] && pass "pairs to compare" || fail "no pairs to compare"
while read -r k field tool; do
    expect_exit 0 "$query" --static "$field" --moving "$tool" --poses "$TMP/pair$k.json" --budget-us 1e9 --warmup 0 \
        --report "$TMP/pair$k.r.json" --quiet
    check "pair $k: contacts and forces equal the scene's" "$(python3 - "$TMP/pair$k.r.json" "$TMP/pair$k.want.json" <<'PY'
import json, sys
got, want = json.load(open(sys.argv[1]))["per_query"], json.load(open(sys.argv[2]))
ok = len(got) == len(want)
for g, w in zip(got, want):
    m = w["matrix"]
    f = [sum(m[4*r+c]*g["force"][c] for c in range(3)) for r in range(3)]
    ok = ok and g["contacts"] == w["contacts"] and all(abs(a - b) <= 1e-9 * (1 + abs(b)) for a, b in zip(f, w["force"]))
print(ok)
PY
)" True
done <"$TMP/pairs.txt"

# An outside tool: the peg's tree file; every peg and the plate are static.
expect_exit 0 "$query" --scene "$scene" --tool-files "$tree" --scenario random --count 20 --budget-us 1e9 --json
check "outside tool: all parts static" "$(json_get "$TMP/out" 'j["static_parts"]')" 5

# Bad input: exit 3, one line naming the file and the part.
cp -r "$(dirname "$scene")" "$TMP/missing"
rm "$TMP/missing/g0/distance.vdb"
expect_exit 3 "$query" --scene "$TMP/missing/scene.json" --tool peg --scenario contact --count 5
expect_one_error_line
expect_grep "part 'plate'.*g0/distance.vdb: missing" "$TMP/err"
cp -r "$(dirname "$scene")" "$TMP/changed"
printf x >>"$TMP/changed/g1/distance.vdb"
expect_exit 3 "$query" --scene "$TMP/changed/scene.json" --tool-files "$tree" --scenario contact --count 5
expect_one_error_line
expect_grep "part 'peg.*g1/distance.vdb: changed" "$TMP/err"
expect_exit 3 "$query" --scene "$scene" --tool no/such/peg --scenario contact --count 5
expect_one_error_line
expect_grep "scene.json.*no part 'no/such/peg'" "$TMP/err"
# Prepared samplers: one per geometry beside its field, mapped at load; the scene without them
# (its fields read and laid out) gives the same contacts, frame by frame.
check "a prepared sampler per geometry" "$(json_get "$scene" 'all(g["files"]["sampler"]["file"] == g["id"] + "/distance.hsmp" for g in j["geometries"])')" True
python3 - "$scene" "$TMP/prep/scene-fields.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for g in s["geometries"]:
    del g["files"]["sampler"]
json.dump(s, open(sys.argv[2], "w"), indent=2)
PY
expect_exit 0 "$query" --scene "$TMP/prep/scene-fields.json" --tool peg --poses "$TMP/poses.json" --threads 1 --budget-us 1e9 \
    --csv "$TMP/fields.csv" --quiet
expect_exit 0 "$query" --scene "$scene" --tool peg --poses "$TMP/poses.json" --threads 1 --budget-us 1e9 --csv "$TMP/mapped.csv" --quiet
if cmp -s <(cut -d, -f1-16 "$TMP/fields.csv") <(cut -d, -f1-16 "$TMP/mapped.csv"); then
    pass "mapped samplers and decoded fields give the same CSV"
else
    fail "mapped samplers and decoded fields differ"
fi
# A damaged sampler (truncated, one bit flipped, another kind of file): exit 3, one line naming
# the part and the file.
for damage in truncate flip kind; do
    rm -rf "$TMP/damaged" && cp -r "$(dirname "$scene")" "$TMP/damaged"
    python3 - "$TMP/damaged" "$damage" <<'PY'
import json, os, sys
d, damage = sys.argv[1], sys.argv[2]
path = os.path.join(d, "g0", "distance.hsmp")
b = bytearray(open(path, "rb").read())
if damage == "truncate":
    b = b[: len(b) // 2]
elif damage == "flip":
    b[len(b) // 3] ^= 0x04
else:
    tree = json.load(open(os.path.join(d, "scene.json")))["geometries"][1]["files"]["tree"]["file"]
    b = bytearray(open(os.path.join(d, tree), "rb").read())
open(path, "wb").write(b)
PY
    expect_exit 3 "$query" --scene "$TMP/damaged/scene.json" --tool peg --scenario contact --count 5
    expect_one_error_line
    expect_grep "part 'plate'.*g0/distance.hsmp: changed" "$TMP/err"
done
# Usage: --scene with --static, --tool without --scene.
expect_exit 2 "$query" --scene "$scene" --static "$TMP/x.vdb" --tool peg --scenario contact
expect_exit 2 "$query" --static "$TMP/x.vdb" --moving "$TMP/y.hps" --tool peg --scenario contact
# An ist mode on a scene prepared without the octree stage: exit 3, saying to add it.
expect_exit 3 "$query" --scene "$scene" --tool peg --scenario contact --mode ist
expect_grep "no octree file.*octree stage" "$TMP/err"
expect_exit 2 "$query" --scenario contact
finish
