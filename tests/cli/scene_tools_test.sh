#!/usr/bin/env bash
# haptic-query --scene with several tools (--tool and --tool-files repeated), and --junit and
# --plot with --scene: a plate with four instanced pegs prepared by haptic-pipeline --assembly,
# two pegs and the peg's tree as an outside tool moving at once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/junit_lib.sh"
source "$(dirname "$0")/scene_lib.sh"
query="$HP_BIN/haptic-query"

make_pegs_scene 4

# Three tools from a scenario: each tool's poses touch a static part; the report per tool.
tools=(--tool peg --tool-files "$tree" --tool 'peg#2')
expect_exit 0 "$query" --scene "$scene" "${tools[@]}" --scenario contact --count 30 --seed 3 --threads 1 --budget-us 1e6 \
    --json --report "$TMP/r.json" --csv "$TMP/c.csv" --write-poses "$TMP/poses.json"
cp "$TMP/out" "$TMP/stdout.json"
check "tools in the order given" "$(json_get "$TMP/stdout.json" '[t["part"] or "file" for t in j["tools"]]')" "['peg', 'file', 'peg#2']"
check "static parts: the plate and two pegs" "$(json_get "$TMP/r.json" 'j["static_parts"]')" 3
check "every tool touches a part in every frame" \
    "$(json_get "$TMP/r.json" 'all(t["parts_touched"] >= 1 for f in j["per_frame"] for t in f["tools"])')" True
check "parts with a field collide with the other tools" "$(json_get "$TMP/r.json" '[t["collides_with_tools"] for t in j["tools"]]')" \
    "[True, False, True]"
check "poses file: one list per tool" "$(json_get "$TMP/poses.json" '[len(t["poses"]) for t in j["tools"]]')" "[30, 30, 30]"
expect_grep '^frame,part,contacts,.*,frame_us,tool,mode$' "$TMP/c.csv"
expect_grep '^0,\*,.*,\*,full$' "$TMP/c.csv"
expect_grep '^0,\*,.*,peg#2,full$' "$TMP/c.csv"
expect_exit 0 "$query" --scene "$scene" "${tools[@]}" --scenario contact --count 30 --seed 3 --budget-us 1e6
expect_grep "^tool +part 'peg#2'.*the other tools collide with it" "$TMP/out"
expect_grep "^tool +$tree.*only the moving side" "$TMP/out"

# Frames where peg#2 sits 2 mm beside peg: peg against peg#2 and peg#2 against peg in every frame.
python3 - "$TMP/poses.json" "$TMP/close.json" <<'PY'
import json, sys
tools = json.load(open(sys.argv[1]))["tools"]
peg = tools[0]["poses"]
beside = [{"position": [p["position"][0] + 0.002, p["position"][1], p["position"][2]], "quaternion": p["quaternion"]} for p in peg]
json.dump({"tools": [{"tool": "peg", "poses": peg}, {"tool": "hand", "poses": tools[1]["poses"]},
                     {"tool": "peg#2", "poses": beside}]}, open(sys.argv[2], "w"))
PY
for mode in full "time-critical --budget-tests 40"; do
    # shellcheck disable=SC2086
    expect_exit 0 "$query" --scene "$scene" "${tools[@]}" --poses "$TMP/close.json" --mode $mode --threads 1 --budget-us 1e9 \
        --csv "$TMP/t1.csv" --quiet
    # shellcheck disable=SC2086
    expect_exit 0 "$query" --scene "$scene" "${tools[@]}" --poses "$TMP/close.json" --mode $mode --threads 2 --budget-us 1e9 \
        --csv "$TMP/t2.csv" --quiet
    if cmp -s <(cut -d, -f1-16,20 "$TMP/t1.csv") <(cut -d, -f1-16,20 "$TMP/t2.csv"); then
        pass "$mode: --threads 1 and 2 give the same CSV with three tools"
    else
        fail "$mode: --threads 1 and 2 differ with three tools"
    fi
done

# peg against peg#2 equals the pair query run alone with the relative pose pose(peg#2)^-1 pose(peg).
expect_exit 0 "$query" --scene "$scene" "${tools[@]}" --poses "$TMP/close.json" --threads 1 --budget-us 1e9 --report "$TMP/full.r.json" --quiet
check "peg and peg#2 touch each other in every frame" \
    "$(json_get "$TMP/full.r.json" 'all(any(p["tool"] == "peg" and p["part"] == "peg#2" and p["contacts"] > 0 for p in f["pairs"]) and any(p["tool"] == "peg#2" and p["part"] == "peg" and p["contacts"] > 0 for p in f["pairs"]) for f in j["per_frame"])')" True
python3 - "$scene" "$TMP/close.json" "$TMP/full.r.json" "$TMP" <<'PY'
import json, math, sys
scene, tools, report, tmp = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["tools"], json.load(open(sys.argv[3])), sys.argv[4]
def unit(q):
    n = math.sqrt(sum(c * c for c in q)); q = [c / n for c in q]
    return [-c for c in q] if q[0] < 0 else q
def rot(q):
    w, x, y, z = q
    return [[1-2*(y*y+z*z), 2*(x*y-w*z), 2*(x*z+w*y)], [2*(x*y+w*z), 1-2*(x*x+z*z), 2*(y*z-w*x)], [2*(x*z-w*y), 2*(y*z+w*x), 1-2*(x*x+y*y)]]
def qmul(a, b):
    return [a[0]*b[0]-a[1]*b[1]-a[2]*b[2]-a[3]*b[3], a[0]*b[1]+a[1]*b[0]+a[2]*b[3]-a[3]*b[2],
            a[0]*b[2]-a[1]*b[3]+a[2]*b[0]+a[3]*b[1], a[0]*b[3]+a[1]*b[2]-a[2]*b[1]+a[3]*b[0]]
poses, want = [], []
for i, f in enumerate(report["per_frame"]):
    moving, other = tools[0]["poses"][i], tools[2]["poses"][i]
    q = unit(other["quaternion"]); r = rot(q)
    d = [moving["position"][k] - other["position"][k] for k in range(3)]
    pos = [sum(r[k][c] * d[k] for k in range(3)) for c in range(3)]
    poses.append({"position": pos, "quaternion": qmul([q[0], -q[1], -q[2], -q[3]], moving["quaternion"])})
    pr = [p for p in f["pairs"] if p["tool"] == "peg" and p["part"] == "peg#2"][0]
    want.append({"contacts": pr["contacts"], "force": pr["force"], "rotation": r})
json.dump({"poses": poses}, open(tmp + "/rel.json", "w"))
json.dump(want, open(tmp + "/rel.want.json", "w"))
PY
field="$TMP/prep/g1/distance.vdb"
expect_exit 0 "$query" --static "$field" --moving "$tree" --poses "$TMP/rel.json" --budget-us 1e9 --warmup 0 --report "$TMP/rel.r.json" --quiet
check "peg against peg#2: contacts and forces equal the pair query alone" "$(python3 - "$TMP/rel.r.json" "$TMP/rel.want.json" <<'PY'
import json, sys
got, want = json.load(open(sys.argv[1]))["per_query"], json.load(open(sys.argv[2]))
ok = len(got) == len(want) and all(w["contacts"] > 0 for w in want)
for g, w in zip(got, want):
    f = [sum(w["rotation"][r][c] * g["force"][c] for c in range(3)) for r in range(3)]
    ok = ok and g["contacts"] == w["contacts"] and all(abs(a - b) <= 1e-9 * (1 + abs(b)) for a, b in zip(f, w["force"]))
print(ok)
PY
)" True

# --junit and --plot with --scene: a case for the frame latency, one per tool and part.
expect_exit 1 "$query" --scene "$scene" "${tools[@]}" --poses "$TMP/close.json" --budget-us 0.001 \
    --junit "$TMP/junit.xml" --plot "$TMP/frames.png" --quiet
"$JUNIT_PY" - "$TMP/junit.xml" <<'PY' >"$TMP/junit.txt" || fail "junit.xml does not parse"
import sys
from junitparser import JUnitXml, Failure
for suite in JUnitXml.fromfile(sys.argv[1]):
    for case in suite:
        print(case.name, "|", case.classname, "|", "failed" if any(isinstance(r, Failure) for r in case.result) else "passed")
PY
expect_grep '^frame latency: p99 <= budget \| haptic-query\.prep \| failed$' "$TMP/junit.txt"
expect_grep '^tool peg, part plate \| haptic-query\.prep\.peg \| passed$' "$TMP/junit.txt"
expect_grep '^tool peg#2, part peg \| ' "$TMP/junit.txt"
png_colours "$TMP/frames.png" >"$TMP/frames.txt" || fail "frames.png is not a valid 8-bit RGB PNG"
check "plot: two panels of 1000 x 480" "$(head -1 "$TMP/frames.txt")" "1000 960"
red=$(awk '$1 == "200,30,30" {print $2}' "$TMP/frames.txt")
[ "${red:-0}" -gt 100 ] && pass "plot: the budget and the frames over it in red" || fail "plot: no budget red (${red:-0} pixels)"
# One tool: the cases are named by part alone.
expect_exit 0 "$query" --scene "$scene" --tool peg --scenario contact --count 12 --budget-us 1e9 --junit "$TMP/one.xml" --quiet
expect_grep '<testcase name="part plate" classname="haptic-query.prep"' "$TMP/one.xml"

# Bad input and usage: one line each.
expect_exit 3 "$query" --scene "$scene" --tool peg --tool 'peg#2' --poses "$TMP/rel.json" --budget-us 1e9
expect_one_error_line
expect_grep 'rel.json.*one pose per tool and frame' "$TMP/err"
expect_exit 2 "$query" --scene "$scene" --tool peg --tool peg --scenario contact --count 5
expect_one_error_line
expect_grep "given twice as a tool" "$TMP/err"
# A pair's static octree: refused, naming what the scene has instead.
expect_exit 2 "$query" --scene "$scene" --tool peg --scenario contact --count 5 --mode ist --static-octree "$tree"
expect_one_error_line
expect_grep "^haptic-query: --static-octree applies only to timing checks, not --scene: .*octree files of scene.json" "$TMP/err"
finish
