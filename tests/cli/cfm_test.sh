#!/usr/bin/env bash
# haptic-cfm and haptic-dump on closest feature maps: summary, JSON export, determinism, the
# mesh/tree check, damaged inputs (exit 3, one line), usage errors (2), unwritable output (4).
source "$(dirname "$0")/lib.sh"
cfm="$HP_BIN/haptic-cfm"
dump="$HP_BIN/haptic-dump"
mesh="$SAMPLES/sphere.obj"

# A point-sphere tree of the mesh (on its vertices; bench_cfm writes it through formats/shell).
"$HP_BIN/bench_cfm" "$mesh" --write-tree "$TMP/tree.hps" || { fail "cannot make the test tree"; finish; }

expect_exit 0 "$cfm" "$mesh" "$TMP/tree.hps" -o "$TMP/full.hcfm" --stacks 10 --min-stacks 2 --store full --json
cp "$TMP/out" "$TMP/run.json"
expect_json "$TMP/run.json"
check "root samples at 10 stacks" "$(json_get "$TMP/run.json" 'j["levels"][0]["samples_per_sphere"]')" 65
check "deepest level at 2 stacks" "$(json_get "$TMP/run.json" 'j["levels"][-1]["stacks"]')" 2
check "records add up" "$(json_get "$TMP/run.json" 'sum(l["records"] for l in j["levels"]) == j["records"]')" True
check "file size reported" "$(json_get "$TMP/run.json" 'j["file_bytes"]')" "$(stat -c %s "$TMP/full.hcfm")"

expect_exit 0 "$cfm" "$mesh" "$TMP/tree.hps" -o "$TMP/text.hcfm"
expect_grep "^level +stacks +samples" "$TMP/out"
expect_grep "^ +1 +16 +167 " "$TMP/out"
expect_grep "wrote +.*text.hcfm" "$TMP/out"

# Same bytes whatever the thread count.
expect_exit 0 "$cfm" "$mesh" "$TMP/tree.hps" -o "$TMP/t1.hcfm" --stacks 10 --min-stacks 2 --store full --threads 1 --quiet
cmp -s "$TMP/t1.hcfm" "$TMP/full.hcfm" && pass "deterministic across --threads" || fail "--threads 1 differs"

# haptic-dump: summary and --export json of exactly the documented shape.
expect_exit 0 "$dump" "$TMP/full.hcfm"
expect_grep "kind +closest feature map" "$TMP/out"
expect_grep "unique features" "$TMP/out"
expect_exit 0 "$dump" "$TMP/full.hcfm" --json
check "dump kind" "$(json_get "$TMP/out" 'j["kind"]')" "closest feature map"
check "dump per-level samples" "$(json_get "$TMP/out" '[l["samples_per_sphere"] for l in j["levels"]][0]')" 65
expect_exit 0 "$dump" "$TMP/full.hcfm" --export json -o "$TMP/full.json"
expect_json "$TMP/full.json"
python3 - "$TMP/full.json" "$TMP/run.json" <<'PY' && pass "export shape and values" || fail "export shape"
import json, math, sys
j = json.load(open(sys.argv[1])); run = json.load(open(sys.argv[2]))
def count(n):  # samples of n stacks, floor((n+1) sin(i pi/n)) per ring, counted here independently
    return sum(math.floor((n + 1) * math.sin(i * math.pi / n)) for i in range(1, n))
assert set(j) == {"spheres"}
assert len(j["spheres"]) == run["tree"]["spheres"]
for s in j["spheres"]:
    assert set(s) == {"cluster", "level", "center", "radius", "stacks", "single_feature", "samples"}, s.keys()
    assert len(s["center"]) == 3 and s["radius"] >= 0
    assert len(s["samples"]) == (1 if s["single_feature"] else count(s["stacks"])), (s["stacks"], len(s["samples"]))
    feats = set()
    for x in s["samples"]:
        assert set(x) == {"dir", "feature", "point", "normal"}
        assert abs(math.hypot(*x["dir"]) - 1) < 1e-12 and abs(math.hypot(*x["normal"]) - 1) < 1e-6
        assert x["feature"]["type"] in ("face", "edge", "vertex") and x["feature"]["index"] >= 0
        assert all(math.isfinite(v) for v in x["point"])
        feats.add((x["feature"]["type"], x["feature"]["index"]))
    if not s["single_feature"]:
        assert len(feats) > 1, "a sphere that sees one feature must be single_feature"
assert j["spheres"][0]["level"] == 1 and j["spheres"][0]["stacks"] == 10
PY

expect_exit 0 "$cfm" "$mesh" "$TMP/tree.hps" -o "$TMP/normal.hcfm" --store normal --sampling polar --quiet
expect_exit 0 "$dump" "$TMP/normal.hcfm" --export json -o "$TMP/normal.json"
check "normal store exports null features" "$(json_get "$TMP/normal.json" 'all(x["feature"] is None and x["point"] is None for s in j["spheres"] for x in s["samples"])')" True
check "polar root samples" "$(json_get "$TMP/normal.json" 'len(j["spheres"][0]["samples"])')" 242

# The tree's recorded mesh: another mesh is refused (3) unless --force (a warning).
expect_exit 3 "$cfm" "$SAMPLES/seam-cube.obj" "$TMP/tree.hps" -o "$TMP/other.hcfm" && expect_one_error_line
expect_grep "not the mesh" "$TMP/err"
[ ! -e "$TMP/other.hcfm" ] && pass "no output on refusal" || fail "output left behind"
expect_exit 0 "$cfm" "$SAMPLES/seam-cube.obj" "$TMP/tree.hps" -o "$TMP/other.hcfm" --force
expect_grep "warning: .*not the mesh" "$TMP/err"

# Damaged files: exit 3 with one line naming the file, for haptic-dump, --export and haptic-cfm.
python3 - "$TMP" <<'PY'
import sys
d = sys.argv[1]
b = bytearray(open(d + "/full.hcfm", "rb").read())
flip = bytearray(b); flip[len(b) // 2] ^= 0x04
open(d + "/flipped.hcfm", "wb").write(flip)
open(d + "/cut.hcfm", "wb").write(b[: len(b) - 100])
t = bytearray(open(d + "/tree.hps", "rb").read())
t[len(t) // 3] ^= 0x01
open(d + "/tree-flipped.hps", "wb").write(t)
PY
for bad in flipped cut; do
    expect_exit_within 3 5 "$dump" "$TMP/$bad.hcfm" && expect_one_error_line && expect_grep "$bad.hcfm" "$TMP/err"
    expect_exit 3 "$dump" "$TMP/$bad.hcfm" --export json -o "$TMP/bad.json" && expect_one_error_line
done
[ ! -e "$TMP/bad.json" ] && pass "no export of a damaged file" || fail "export of a damaged file written"
expect_exit 3 "$cfm" "$mesh" "$TMP/tree-flipped.hps" -o "$TMP/x.hcfm" && expect_one_error_line
expect_exit 3 "$cfm" "$mesh" "$TMP/full.hcfm" -o "$TMP/x.hcfm" && expect_one_error_line
expect_grep "expected a point-sphere tree|is a closest feature map" "$TMP/err"
# (a tree exports its own JSON since haptic-dump learned trees; a mesh has no JSON export)
expect_exit 3 "$dump" "$mesh" --export json -o "$TMP/x.json" && expect_one_error_line
expect_exit 3 "$cfm" "$TMP/missing.obj" "$TMP/tree.hps" -o "$TMP/x.hcfm" && expect_one_error_line

# Usage errors (2) and an unwritable output (4).
expect_exit 2 "$cfm" "$mesh" "$TMP/tree.hps" -o "$TMP/x.hcfm" --stacks 8 --min-stacks 9
expect_exit 2 "$cfm" "$mesh" "$TMP/tree.hps" -o "$TMP/x.hcfm" --stacks 1
expect_exit 2 "$cfm" "$mesh" "$TMP/tree.hps" -o "$TMP/x.hcfm" --sampling geodesic
expect_exit 2 "$cfm" "$mesh" "$TMP/tree.hps"
expect_exit 2 "$dump" "$TMP/full.hcfm" --export json
expect_exit 4 "$cfm" "$mesh" "$TMP/tree.hps" -o "$TMP/no/such/folder/x.hcfm" && expect_one_error_line

finish
