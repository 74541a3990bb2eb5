#!/usr/bin/env bash
# haptic-query --scene --cfm end to end: a plate with three instanced pegs prepared by
# haptic-pipeline --assembly with the cfm stage; one peg as the tool in the time-critical mode with
# its closest feature map from scene.json, and an outside tool with its map given.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/scene_lib.sh"
query="$HP_BIN/haptic-query"

make_pegs_scene 3 ', {"stage": "cfm", "stacks": 8, "min_stacks": 4}'
check "scene.json lists the geometries' maps" \
    "$(json_get "$scene" 'all("cfm" in g["files"] for g in j["geometries"])')" True
cfm=$(peg_file cfm)

# The tool part's map: --cfm alone. Budgets that interrupt; contacts from the map.
expect_exit 0 "$query" --scene "$scene" --tool peg --scenario contact --count 40 --seed 3 --mode time-critical \
    --budget-tests 12 --budget-us 1e9 --cfm --threads 1 --json --report "$TMP/r1.json" --csv "$TMP/c1.csv" \
    --write-poses "$TMP/poses.json"
cp "$TMP/out" "$TMP/stdout.json"
check "report: mode" "$(json_get "$TMP/stdout.json" 'j["mode"]')" time-critical
check "report: maps used" "$(json_get "$TMP/stdout.json" 'j["cfm"]')" True
check "report: the tool's map is the scene's" "$(json_get "$TMP/stdout.json" 'j["tool"]["cfm"] == "'"$cfm"'"')" True
check "contacts from the map" "$(json_get "$TMP/r1.json" 'j["cfm_contacts"] > 0 and j["cfm_contacts"] == sum(f["cfm_contacts"] for f in j["per_frame"])')" True
expect_grep '^frame,part,.*,mode$' "$TMP/c1.csv"
expect_grep ',time-critical\+cfm$' "$TMP/c1.csv"
expect_exit 0 "$query" --scene "$scene" --tool peg --poses "$TMP/poses.json" --mode time-critical --budget-tests 12 \
    --budget-us 1e9 --cfm --threads 1
expect_grep '^frames .*mode time-critical with closest feature maps' "$TMP/out"
expect_grep '^tool .*closest feature map .*\.hcfm' "$TMP/out"
expect_grep '^cfm +[0-9]+ contacts' "$TMP/out"

# Byte-identical for any thread count (timing columns aside); with and without the map differ.
expect_exit 0 "$query" --scene "$scene" --tool peg --poses "$TMP/poses.json" --mode time-critical --budget-tests 12 \
    --budget-us 1e9 --cfm --threads 2 --csv "$TMP/c2.csv" --quiet
expect_exit 0 "$query" --scene "$scene" --tool peg --poses "$TMP/poses.json" --mode time-critical --budget-tests 12 \
    --budget-us 1e9 --threads 1 --csv "$TMP/c0.csv" --quiet
cmp -s <(cut -d, -f1-16 "$TMP/c1.csv") <(cut -d, -f1-16 "$TMP/c2.csv") && pass "--threads 1 and 2: the same CSV" \
    || fail "--threads 1 and 2 differ"
cmp -s <(cut -d, -f1-16 "$TMP/c1.csv") <(cut -d, -f1-16 "$TMP/c0.csv") && fail "the map changed no contact" \
    || pass "the map adds contacts"

# An outside tool (the peg's tree, every part static) with its map given.
expect_exit 0 "$query" --scene "$scene" --tool-files "$tree" --cfm "$cfm" --scenario contact --count 20 --mode time-critical \
    --budget-tests 12 --budget-us 1e9 --json
check "outside tool: its map" "$(json_get "$TMP/out" 'j["tool"]["cfm"] == "'"$cfm"'" and j["cfm_contacts"] > 0')" True

# Usage: another mode, an outside tool without its map's file, a map file for a part, --cfm alone for a pair.
expect_exit 2 "$query" --scene "$scene" --tool peg --scenario contact --count 5 --cfm
expect_exit 2 "$query" --scene "$scene" --tool-files "$tree" --scenario contact --count 5 --mode time-critical --cfm
expect_one_error_line
expect_grep 'outside tool .* no closest feature map' "$TMP/err"
expect_exit 2 "$query" --scene "$scene" --tool peg --cfm "$cfm" --scenario contact --count 5 --mode time-critical
expect_exit 2 "$query" --static "$TMP/x.vdb" --moving "$tree" --scenario contact --count 5 --mode time-critical --cfm
expect_grep 'needs the closest feature map' "$TMP/err"

# Bad input: the map changed or missing, a scene without maps: exit 3, one line naming the scene, the part and the file.
cp -r "$(dirname "$scene")" "$TMP/changed"
rel=${cfm#"$(dirname "$scene")/"}
printf x >>"$TMP/changed/$rel"
expect_exit 3 "$query" --scene "$TMP/changed/scene.json" --tool peg --scenario contact --count 5 --mode time-critical --cfm
expect_one_error_line
expect_grep "changed/scene.json: part 'peg.*$rel: changed" "$TMP/err"
rm "$TMP/changed/$rel"
expect_exit 3 "$query" --scene "$TMP/changed/scene.json" --tool peg --scenario contact --count 5 --mode time-critical --cfm
expect_one_error_line
expect_grep "part 'peg.*$rel: missing" "$TMP/err"
python3 - "$scene" "$TMP/nomaps.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for g in s["geometries"]:
    g["files"].pop("cfm", None)
json.dump(s, open(sys.argv[2], "w"))
PY
cp "$TMP/nomaps.json" "$(dirname "$scene")/nomaps.json"
expect_exit 3 "$query" --scene "$(dirname "$scene")/nomaps.json" --tool peg --scenario contact --count 5 --mode time-critical --cfm
expect_one_error_line
expect_grep "nomaps.json: part 'peg'.*no cfm file.*cfm stage" "$TMP/err"
finish
