#!/usr/bin/env bash
# haptic-spheretree end to end on a real pointshell: summary and JSON, determinism, provenance,
# haptic-dump of the tree (summary, JSON export checked against docs/spheretree.md's shape and the tree's
# invariants by an independent Python check, PLY of the points and of one level), bad inputs.
source "$(dirname "$0")/lib.sh"
vox="$HP_BIN/haptic-voxelize"
dist="$HP_BIN/haptic-distance"
shell="$HP_BIN/haptic-pointshell"
tree="$HP_BIN/haptic-spheretree"
dump="$HP_BIN/haptic-dump"

"$vox" "$SAMPLES/sphere.obj" --voxel-size 0.05 -o "$TMP/sphere.vdb" --quiet
"$dist" "$SAMPLES/sphere.obj" "$TMP/sphere.vdb" -o "$TMP/sphere.d.vdb" --quiet
"$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.d.vdb" -o "$TMP/sphere.hps" --quiet
"$dump" "$TMP/sphere.hps" --json > "$TMP/shell.json"
npoints=$(json_get "$TMP/shell.json" 'j["points"]')

expect_exit 0 "$tree" "$TMP/sphere.hps" -o "$TMP/t.hps" --json
cp "$TMP/out" "$TMP/t.json"
expect_json "$TMP/t.json"
check "points" "$(json_get "$TMP/t.json" 'j["points"]')" "$npoints"
check "one root" "$(json_get "$TMP/t.json" 'j["tree"]["per_level"][0]["clusters"]')" 1
check "levels listed" "$(json_get "$TMP/t.json" 'len(j["tree"]["per_level"]) == j["tree"]["levels"]')" True
check "leaves hold every point" "$(json_get "$TMP/t.json" 'j["tree"]["per_level"][-1]["points"]')" "$npoints"
check "cluster counts add up" "$(json_get "$TMP/t.json" 'sum(l["clusters"] for l in j["tree"]["per_level"]) == j["tree"]["clusters"]')" True
# Each level's points are the next level's clusters (parent points).
check "points of a level = clusters below" \
    "$(json_get "$TMP/t.json" 'all(a["points"] == b["clusters"] for a, b in zip(j["tree"]["per_level"], j["tree"]["per_level"][1:]))')" True
check "about log_K(N) levels" "$(json_get "$TMP/t.json" 'int(j["log_k_points"]) <= j["tree"]["levels"] <= int(j["log_k_points"]) + 3')" True
check "radii grow toward the root" \
    "$(json_get "$TMP/t.json" 'all(a["radius"]["max"] >= b["radius"]["max"] for a, b in zip(j["tree"]["per_level"], j["tree"]["per_level"][1:]))')" True
check "time reported" "$(json_get "$TMP/t.json" 'j["seconds"]["build"] >= 0 and j["seconds"]["total"] > 0')" True

# Deterministic: the same bytes with one thread; another seed gives another tree.
expect_exit 0 "$tree" "$TMP/sphere.hps" -o "$TMP/t1.hps" --threads 1 --quiet
cmp -s "$TMP/t.hps" "$TMP/t1.hps" && pass "byte-identical with --threads 1" || fail "output differs with --threads 1"
[ ! -s "$TMP/out" ] && pass "--quiet prints nothing" || fail "--quiet printed something"
expect_exit 0 "$tree" "$TMP/sphere.hps" -o "$TMP/t7.hps" --seed 7 --quiet
cmp -s "$TMP/t.hps" "$TMP/t7.hps" && fail "--seed 7 gave the same file" || pass "--seed changes the tree"

# Text summary and K = 8.
expect_exit 0 "$tree" "$TMP/sphere.hps" -o "$TMP/t8.hps" --k 8 --threshold 0
expect_grep "^tree +K = 8, [0-9]+ levels" "$TMP/out"
for key in points level depth time wrote; do expect_grep "^$key " "$TMP/out"; done

# haptic-dump: kind, provenance carried forward, per-level facts equal to the tool's.
expect_exit 0 "$dump" "$TMP/t.hps"
expect_grep "^kind +point-sphere tree" "$TMP/out"
expect_grep "^tree +K = 4" "$TMP/out"
expect_exit 0 "$dump" "$TMP/t8.hps" --json
cp "$TMP/out" "$TMP/d8.json"
check "provenance: source mesh" "$(json_get "$TMP/d8.json" 'j["metadata"]["source_name"]')" sphere.obj
check "provenance: pointshell parameters kept" "$(json_get "$TMP/d8.json" '"alpha" in j["metadata"]["parameters"]')" True
check "provenance: tree parameters" "$(json_get "$TMP/d8.json" '[j["metadata"]["tree_parameters"][k] for k in ("k", "seed", "threshold")]')" "[8, 1, 0.0]"
check "provenance: tool" "$(json_get "$TMP/d8.json" 'j["metadata"]["tool"]')" haptic-spheretree
expect_exit 0 "$dump" "$TMP/t.hps" --json
check "dump levels = tool levels" "$(json_get "$TMP/out" 'j["tree"]')" "$(json_get "$TMP/t.json" 'j["tree"]')"

# JSON export: the shape docs/spheretree.md gives, and the tree's invariants checked from the export alone.
expect_exit 0 "$dump" "$TMP/t.hps" --export json -o "$TMP/export.json"
cat > "$TMP/check_tree.py" <<'PY'
import json, math, sys
j = json.load(open(sys.argv[1]))
k, n_expected = int(sys.argv[2]), int(sys.argv[3])
assert j["k"] == k, j["k"]
pts, cl = j["points"], j["clusters"]
assert len(pts) == n_expected and all(len(p) == 6 and all(isinstance(v, (int, float)) for v in p) for p in pts)
for i, c in enumerate(cl):
    assert set(c) >= {"id", "level", "center", "radius", "points", "children", "parent"}, set(c)
    assert c["id"] == i and len(c["center"]) == 3 and c["radius"] >= 0 and c["points"]
roots = [c for c in cl if c["parent"] == -1]
assert len(roots) == 1 and roots[0]["level"] == 1, "one root at level 1"
leaf_of = [0] * len(pts)
def below(i):  # leaf points under cluster i, from the links alone
    c = cl[i]
    if not c["children"]:
        return list(c["points"])
    return [p for ch in c["children"] for p in below(ch)]
deepest = max(c["level"] for c in cl)
for c in cl:
    for ch in c["children"]:
        assert cl[ch]["parent"] == c["id"] and cl[ch]["level"] == c["level"] + 1
    if c["children"]:
        # a cluster's points are its children's parent points (parent first)
        assert sorted(c["points"]) == sorted(cl[ch]["points"][0] for ch in c["children"])
    else:
        assert c["level"] == deepest, "leaves on the deepest level"
        for p in c["points"]:
            leaf_of[p] += 1
    for p in below(c["id"]):
        d = math.dist(pts[p][:3], c["center"])
        assert d <= c["radius"] * (1 + 1e-12) + 1e-15, ("point outside its sphere", c["id"], p, d, c["radius"])
assert all(v == 1 for v in leaf_of), "every point in exactly one leaf"
print("ok", len(cl), deepest)
PY
check "export shape and invariants" "$(python3 "$TMP/check_tree.py" "$TMP/export.json" 4 "$npoints")" \
    "ok $(json_get "$TMP/t.json" 'j["tree"]["clusters"]') $(json_get "$TMP/t.json" 'j["tree"]["levels"]')"

# PLY: a tree's points, and one level's parent points (read back by a small independent parser).
cat > "$TMP/ply.py" <<'PY'
import json, struct, sys
data = open(sys.argv[1], "rb").read()
end = data.index(b"end_header\n") + len(b"end_header\n")
header = data[:end].decode().split("\n")
n = int([l for l in header if l.startswith("element vertex")][0].split()[2])
rows = [struct.unpack_from("<6f", data, end + 24 * i) for i in range(n)]
assert len(data) == end + 24 * n
if len(sys.argv) > 2:  # compare with the parent points of a level in the JSON export
    j, level = json.load(open(sys.argv[2])), int(sys.argv[3])
    want = [j["points"][c["points"][0]] for c in j["clusters"] if c["level"] == level]
    f = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
    assert [tuple(f(v) for v in w) for w in want] == rows, "level points differ"
print(n)
PY
expect_exit 0 "$dump" "$TMP/t.hps" --export ply -o "$TMP/all.ply"
check "PLY of a tree: all points" "$(python3 "$TMP/ply.py" "$TMP/all.ply")" "$npoints"
level=$(json_get "$TMP/t.json" 'j["tree"]["levels"] - 1')
expect_exit 0 "$dump" "$TMP/t.hps" --level "$level" --export ply -o "$TMP/level.ply"
check "PLY of level $level: its parent points" "$(python3 "$TMP/ply.py" "$TMP/level.ply" "$TMP/export.json" "$level")" \
    "$(json_get "$TMP/t.json" "j['tree']['per_level'][$level - 1]['clusters']")"
expect_exit 2 "$dump" "$TMP/t.hps" --level 99 --export ply -o "$TMP/x.ply"
expect_one_error_line
expect_exit 2 "$dump" "$TMP/t.hps" --level 2
expect_exit 3 "$dump" "$TMP/sphere.hps" --export json -o "$TMP/x.json"
expect_grep "without a tree" "$TMP/err"

# Damaged or wrong inputs: exit 3 with one line, no output left behind.
head -c 3000 "$TMP/sphere.hps" > "$TMP/cut.hps"
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 0x10; open(sys.argv[2], "wb").write(b)' \
    "$TMP/sphere.hps" "$TMP/flip.hps"
printf 'not a pointshell\n' > "$TMP/text.hps"
for bad in "$TMP/cut.hps" "$TMP/flip.hps" "$TMP/text.hps" "$TMP/missing.hps" "$TMP/sphere.vdb"; do
    expect_exit_within 3 5 "$tree" "$bad" -o "$TMP/x.hps" && expect_one_error_line
done
head -c 5000 "$TMP/t.hps" > "$TMP/cut-tree.hps"
expect_exit 3 "$dump" "$TMP/cut-tree.hps" --export json -o "$TMP/x.json"
expect_one_error_line
[ ! -e "$TMP/x.hps" ] && [ ! -e "$TMP/x.json" ] && [ ! -e "$TMP/x.ply" ] && pass "no output after errors" ||
    fail "an output file was left behind"
expect_exit 2 "$tree" "$TMP/sphere.hps" -o "$TMP/x.hps" --k 1
expect_exit 2 "$tree" "$TMP/sphere.hps" -o "$TMP/x.hps" --threshold -1
expect_exit 2 "$tree" "$TMP/sphere.hps"
expect_exit 0 "$tree" --help
expect_grep "Examples" "$TMP/out"
expect_grep "median distance" "$TMP/out"
finish
