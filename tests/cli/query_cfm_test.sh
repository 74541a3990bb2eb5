#!/usr/bin/env bash
# haptic-query --cfm: time-critical queries of a peg (tree + closest feature map) against a block
# with a hole, interrupted by a tiny budget; a CFM of another tree or mesh is refused (exit 3).
source "$(dirname "$0")/lib.sh"
for t in haptic-voxelize haptic-distance haptic-pointshell haptic-spheretree haptic-cfm haptic-query; do
    [ -x "$HP_BIN/$t" ] || { echo "skipped: $t is not built"; exit 0; }
done
query="$HP_BIN/haptic-query"
q=(--static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps")

expect_exit 0 "$HP_BIN/haptic-voxelize" "$SAMPLES/block-with-hole.stl" --units mm --voxel-size 0.001 -o "$TMP/block.vdb" --quiet
expect_exit 0 "$HP_BIN/haptic-distance" "$SAMPLES/block-with-hole.stl" "$TMP/block.vdb" -o "$TMP/block.dist.vdb" --quiet
for m in peg block-with-hole; do
    expect_exit 0 "$HP_BIN/haptic-voxelize" "$SAMPLES/$m.stl" --units mm --voxel-size 0.001 -o "$TMP/$m.vdb" --quiet
    expect_exit 0 "$HP_BIN/haptic-pointshell" "$SAMPLES/$m.stl" "$TMP/$m.vdb" -o "$TMP/$m.ps.hps" --quiet
done
expect_exit 0 "$HP_BIN/haptic-spheretree" "$TMP/peg.ps.hps" -o "$TMP/peg.hps" --quiet
expect_exit 0 "$HP_BIN/haptic-spheretree" "$TMP/peg.ps.hps" -o "$TMP/peg.seed2.hps" --seed 2 --quiet
expect_exit 0 "$HP_BIN/haptic-spheretree" "$TMP/block-with-hole.ps.hps" -o "$TMP/block.hps" --quiet
expect_exit 0 "$HP_BIN/haptic-cfm" "$SAMPLES/peg.stl" "$TMP/peg.hps" -o "$TMP/peg.hcfm" --quiet
expect_exit 0 "$HP_BIN/haptic-cfm" "$SAMPLES/peg.stl" "$TMP/peg.hps" -o "$TMP/peg.full.hcfm" --store full --quiet
expect_exit 0 "$HP_BIN/haptic-cfm" "$SAMPLES/peg.stl" "$TMP/peg.seed2.hps" -o "$TMP/peg.seed2.hcfm" --quiet
expect_exit 0 "$HP_BIN/haptic-cfm" "$SAMPLES/block-with-hole.stl" "$TMP/block.hps" -o "$TMP/block.hcfm" --quiet
expect_exit 0 "$query" "${q[@]}" --scenario contact --count 100 --seed 4 --write-poses "$TMP/poses.json" --quiet --budget-us 1e9

# A budget of a nanosecond stops every query before its root (every query is then over budget:
# --max-over-budget 1 lets the run pass). Without a CFM nothing is found; with it, the root's
# sphere collides in every contact pose and gives the one contact.
tiny=(--poses "$TMP/poses.json" --mode time-critical --budget-us 0.001 --max-over-budget 1 --threads 1)
expect_exit 0 "$query" "${q[@]}" "${tiny[@]}" --report "$TMP/none.json" --quiet
expect_exit 0 "$query" "${q[@]}" "${tiny[@]}" --cfm "$TMP/peg.hcfm" --report "$TMP/cfm.json" --json
expect_json "$TMP/out"
check "every query interrupted" "$(json_get "$TMP/cfm.json" 'j["interrupted"] == j["queries"] == 100')" True
check "no contact without the CFM" "$(json_get "$TMP/none.json" 'sum(q["contacts"] for q in j["per_query"])')" 0
check "no CFM contact without the CFM" "$(json_get "$TMP/none.json" 'j["cfm_contacts"]')" 0
check "cfm in the report" "$(json_get "$TMP/cfm.json" '(j["cfm"]["store"], j["cfm"]["spheres"] == j["moving"]["clusters"])')" "('normal', True)"
check "validation names the cfm" "$(json_get "$TMP/cfm.json" 'j["validation"]["cfm_file"]')" "ok (matches the tree)"
# At most one contact per query (the root's), all of them from the CFM, and most poses get one.
check "contacts are the root's CFM contact" "$(json_get "$TMP/cfm.json" 'all(q["contacts"] == q["cfm_contacts"] <= 1 for q in j["per_query"])')" True
check "CFM contacts counted" "$(json_get "$TMP/cfm.json" 'j["cfm_contacts"] == sum(q["cfm_contacts"] for q in j["per_query"]) == j["queries_with_cfm_contacts"]')" True
check "most contact poses get a CFM contact" "$(json_get "$TMP/cfm.json" 'j["cfm_contacts"] >= 50')" True
# One contact: |force| = its depth (unit normal), and the depth is within the pose's 5 voxels plus the root's radius.
check "force = depth x unit normal" "$(json_get "$TMP/cfm.json" 'all(abs(sum(f*f for f in q["force"]) ** 0.5 - q["max_penetration"]) <= 1e-12 for q in j["per_query"])')" True
expect_exit 0 "$query" "${q[@]}" "${tiny[@]}" --cfm "$TMP/peg.full.hcfm" --report "$TMP/full.json" --quiet
check "store full" "$(json_get "$TMP/full.json" '(j["cfm"]["store"], all(q["contacts"] == q["cfm_contacts"] <= 1 for q in j["per_query"]))')" "('full', True)"
expect_exit 0 "$query" "${q[@]}" "${tiny[@]}" --cfm "$TMP/peg.hcfm" --csv "$TMP/cfm.csv" --quiet
expect_grep "interrupted,cfm_contacts,queued,queued_untested$" "$TMP/cfm.csv"
# An ample budget: never interrupted, so the CFM changes nothing (same contacts as full).
expect_exit 0 "$query" "${q[@]}" --poses "$TMP/poses.json" --mode time-critical --budget-us 1e9 --cfm "$TMP/peg.hcfm" \
    --report "$TMP/ample.json" --quiet
expect_exit 0 "$query" "${q[@]}" --poses "$TMP/poses.json" --report "$TMP/fullmode.json" --quiet --budget-us 1e9
check "ample budget = full" "$(python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
print(a["interrupted"] == 0 and a["cfm_contacts"] == 0 and
      all(x[k] == y[k] for x, y in zip(a["per_query"], b["per_query"]) for k in ["contacts", "force", "torque"]))' \
    "$TMP/ample.json" "$TMP/fullmode.json")" True
expect_exit 0 "$query" --help
expect_grep "\-\-cfm tool.hcfm --mode time-critical" "$TMP/out"

# --budget-tests: a budget in sphere tests (with an ample time budget) interrupts the same queries
# at the same place on every run: two runs give identical per-query results. Without a CFM a
# query stops at the budget exactly; with one, the CFM phase may finish its batch of 4.
bt=(--poses "$TMP/poses.json" --mode time-critical --budget-us 1e9 --budget-tests 20 --threads 1 --quiet)
for run in 1 2; do
    expect_exit 0 "$query" "${q[@]}" "${bt[@]}" --report "$TMP/bt$run.json"
    expect_exit 0 "$query" "${q[@]}" "${bt[@]}" --cfm "$TMP/peg.hcfm" --report "$TMP/btcfm$run.json"
done
same_results='
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
keys = ["contacts", "force", "torque", "spheres_tested", "points_tested", "interrupted", "cfm_contacts", "queued_untested"]
print(all(x[k] == y[k] for x, y in zip(a["per_query"], b["per_query"]) for k in keys) and len(a["per_query"]) == 100)'
check "budget-tests: the same results twice" "$(python3 -c "$same_results" "$TMP/bt1.json" "$TMP/bt2.json")" True
check "budget-tests with a CFM: the same results twice" "$(python3 -c "$same_results" "$TMP/btcfm1.json" "$TMP/btcfm2.json")" True
check "budget-tests in the report" "$(json_get "$TMP/bt1.json" 'j["budget_tests"]')" 20
check "budget-tests interrupts" "$(json_get "$TMP/bt1.json" 'j["interrupted"] > 50')" True
check "stops at the test budget" "$(json_get "$TMP/bt1.json" 'max(q["spheres_tested"] for q in j["per_query"])')" 20
check "with a CFM, within a batch of it" "$(json_get "$TMP/btcfm1.json" '20 <= max(q["spheres_tested"] for q in j["per_query"]) <= 23 and j["cfm_contacts"] > 0')" True
expect_exit 2 "$query" "${q[@]}" --poses "$TMP/poses.json" --budget-tests 20
expect_grep "--budget-tests applies only to --mode time-critical" "$TMP/err"

# Usage: --cfm with another mode (exit 2, before anything is loaded).
expect_exit 2 "$query" "${q[@]}" --poses "$TMP/poses.json" --cfm "$TMP/peg.hcfm"
expect_grep "--cfm applies only to --mode time-critical" "$TMP/err"
expect_exit 2 "$query" "${q[@]}" --poses "$TMP/poses.json" --mode brute --cfm "$TMP/missing.hcfm"

# Not this tree's CFM: exit 3, one line naming both files and what differs.
expect_exit 3 "$query" "${q[@]}" "${tiny[@]}" --cfm "$TMP/peg.seed2.hcfm" --report "$TMP/x.json"
expect_one_error_line
expect_grep "peg.seed2.hcfm: does not match the tree .*peg.hps: sphere [0-9]+ has (centre|radius|level)" "$TMP/err"
expect_exit 3 "$query" "${q[@]}" "${tiny[@]}" --cfm "$TMP/block.hcfm" --report "$TMP/x.json"
expect_one_error_line
expect_grep "block.hcfm: does not match the tree .*peg.hps: the CFM was built for a tree of source hash" "$TMP/err"
# Damaged or wrong kind: exit 3 from the reader.
head -c 300 "$TMP/peg.hcfm" >"$TMP/cut.hcfm"
expect_exit 3 "$query" "${q[@]}" "${tiny[@]}" --cfm "$TMP/cut.hcfm" --report "$TMP/x.json"
expect_one_error_line
expect_exit 3 "$query" "${q[@]}" "${tiny[@]}" --cfm "$TMP/peg.hps" --report "$TMP/x.json"
[ ! -e "$TMP/x.json" ] && pass "no report after errors" || fail "a report was left behind"
finish
