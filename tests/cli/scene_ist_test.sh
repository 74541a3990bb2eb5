#!/usr/bin/env bash
# haptic-query --scene --mode ist|ist-brute end to end: a plate with three instanced pegs prepared
# by haptic-pipeline --assembly with the octree stage; one peg's octree against the others' and
# the plate's, as scene.json lists them.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/scene_lib.sh"
query="$HP_BIN/haptic-query"

make_pegs_scene 3 ', {"stage": "octree"}'
check "scene.json lists the geometries' octrees" \
    "$(json_get "$scene" 'all("octree" in g["files"] for g in j["geometries"])')" True
octree=$(peg_file octree)

expect_exit 0 "$query" --scene "$scene" --tool peg --scenario contact --count 40 --seed 3 --mode ist --budget-us 1e9 \
    --threads 1 --json --csv "$TMP/i1.csv" --write-poses "$TMP/poses.json"
check "report: mode" "$(json_get "$TMP/out" 'j["mode"]')" ist
check "report: the tool's octree is the scene's" "$(json_get "$TMP/out" 'j["ist"]["tool_octrees"][0]["file"] == "'"$octree"'"')" True
check "contacts found" "$(json_get "$TMP/out" 'j["contacts"]["max"] > 0 and j["frames_with_contact"] > 0')" True
expect_grep '^frame,part,.*,mode$' "$TMP/i1.csv"
expect_grep ',ist$' "$TMP/i1.csv"
expect_exit 0 "$query" --scene "$scene" --tool peg --poses "$TMP/poses.json" --mode ist --budget-us 1e9
expect_grep '^frames .*mode ist,' "$TMP/out"
expect_grep "^ist +the tools' octrees" "$TMP/out"

# Any thread count: the same CSV (timing columns aside). ist-brute: the same contacts per pair as ist.
expect_exit 0 "$query" --scene "$scene" --tool peg --poses "$TMP/poses.json" --mode ist --budget-us 1e9 --threads 2 \
    --csv "$TMP/i2.csv" --quiet
cmp -s <(cut -d, -f1-16 "$TMP/i1.csv") <(cut -d, -f1-16 "$TMP/i2.csv") && pass "--threads 1 and 2: the same CSV" \
    || fail "--threads 1 and 2 differ"
expect_exit 0 "$query" --scene "$scene" --tool peg --poses "$TMP/poses.json" --mode ist-brute --budget-us 1e9 \
    --csv "$TMP/b.csv" --quiet
cmp -s <(cut -d, -f1-3 "$TMP/i1.csv" | tail -n +2) <(cut -d, -f1-3 "$TMP/b.csv" | tail -n +2) \
    && pass "ist-brute: the contacts of ist, pair by pair" || fail "ist-brute and ist differ"
expect_grep ',ist-brute$' "$TMP/b.csv"
# An early stop: coarse contacts, interrupted pairs.
expect_exit 0 "$query" --scene "$scene" --tool peg --poses "$TMP/poses.json" --mode ist --ist-max-contacts 4 --budget-us 1e9 --json
check "early stop: pairs interrupted" "$(json_get "$TMP/out" 'j["interrupted_pairs"] > 0 and j["ist"]["max_contacts"] == 4')" True

# An outside tool (the peg's tree; every part static) with its octree given.
expect_exit 0 "$query" --scene "$scene" --tool-files "$tree" --moving-octree "$octree" --scenario contact --count 10 --mode ist \
    --budget-us 1e9 --json
check "outside tool: all parts static" "$(json_get "$TMP/out" 'j["static_parts"]')" 4

# Usage: the static octrees are the scene's; an outside tool without its octree; the descent's options in other modes.
expect_exit 2 "$query" --scene "$scene" --tool peg --scenario contact --count 5 --mode ist --static-octree "$octree"
expect_one_error_line
expect_grep 'static parts. octrees are the octree files of scene.json' "$TMP/err"
expect_exit 2 "$query" --scene "$scene" --tool-files "$tree" --scenario contact --count 5 --mode ist
expect_grep 'outside tool .* has no octree' "$TMP/err"
expect_exit 2 "$query" --scene "$scene" --tool peg --scenario contact --count 5 --mode ist-brute --ist-level 2
expect_exit 2 "$query" --scene "$scene" --tool peg --scenario contact --count 5 --ist-level 2

# Bad input: an octree changed, a scene without octrees: exit 3, one line naming the scene, the part and the file.
cp -r "$(dirname "$scene")" "$TMP/changed"
rel=${octree#"$(dirname "$scene")/"}
printf x >>"$TMP/changed/$rel"
expect_exit 3 "$query" --scene "$TMP/changed/scene.json" --tool peg --scenario contact --count 5 --mode ist
expect_one_error_line
expect_grep "changed/scene.json: part 'peg.*$rel: changed" "$TMP/err"
python3 - "$scene" "$(dirname "$scene")/nooctrees.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for g in s["geometries"]:
    g["files"].pop("octree", None)
json.dump(s, open(sys.argv[2], "w"))
PY
expect_exit 3 "$query" --scene "$(dirname "$scene")/nooctrees.json" --tool peg --scenario contact --count 5 --mode ist
expect_one_error_line
expect_grep "nooctrees.json: part '.*'.*no octree file.*octree stage" "$TMP/err"
finish
