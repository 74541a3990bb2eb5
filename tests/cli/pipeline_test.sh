#!/usr/bin/env bash
# haptic-pipeline end to end: validation before work, a batch with a broken mesh, the manifest,
# --resume, -j 1 vs -j 2 byte equality, shards + merge, and equality with the executables.
source "$(dirname "$0")/lib.sh"
pipe="$HP_BIN/haptic-pipeline"
P="$HP_SOURCE_DIR/pipelines"
# Keeps the batch quick (the stages are tested elsewhere); the timing check gets a budget no
# loaded test machine misses: its pass/fail is not what this test is about.
small=(--set voxelize.resolution=24)
has_stage() { "$pipe" --list-stages --json | python3 -c 'import json,sys; sys.exit(0 if any(s["stage"]==sys.argv[1] and s["available"] for s in json.load(sys.stdin)["stages"]) else 1)' "$1"; }
if has_stage query && grep -q '"query"' "$P/vps-default.json"; then small+=(--set query.count=50 --set query.budget_us=1000000); fi

# FNV-1a 64 of a file, written here independently of lib/core/hash.
fnv() { python3 -c '
import sys
h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
print("%016x" % h)' "$1"; }
# XXH3-64 of a file as the manifest writes it, by xxhsum (scripts/install-deps.sh).
xxh3() { echo "xxh3:$(xxhsum -H3 "$1" | awk '{print $NF}')"; }

# --- validation: exit 2 naming stage and key, before any work --------------------------------
printf '{"name": "t", "stages": [{"stage": "voxelize", "pad": "two"}]}\n' > "$TMP/badtype.json"
expect_exit 2 "$pipe" "$TMP/badtype.json" "$SAMPLES/peg.stl" -o "$TMP/never"
expect_grep "stage 'voxelize'.*key 'pad'" "$TMP/err"
expect_one_error_line
expect_exit 2 "$pipe" "$P/vps-default.json" "$SAMPLES/peg.stl" -o "$TMP/never" --set distance.precison=3
expect_grep "stage 'distance'.*key 'precison'" "$TMP/err"
printf '{"name": "t", "stages": [{"stage": "distance"}]}\n' > "$TMP/noinput.json"
expect_exit 2 "$pipe" "$TMP/noinput.json" "$SAMPLES/peg.stl" -o "$TMP/never"
expect_grep "stage 'distance'.*'voxelmap'" "$TMP/err"
printf '{"name": "t", "stages": [{"stage": "voxelize"}, {"stage": "cfm"}]}\n' > "$TMP/later.json"
if ! has_stage cfm; then
    expect_exit 2 "$pipe" "$TMP/later.json" "$SAMPLES/peg.stl" -o "$TMP/never"
    expect_grep "stage 'cfm' is not available in this build" "$TMP/err"
fi
printf '{"name": "t", "stages": [' > "$TMP/syntax.json"
expect_exit 2 "$pipe" "$TMP/syntax.json" "$SAMPLES/peg.stl" -o "$TMP/never"
expect_exit 2 "$pipe" "$P/vps-default.json" "$SAMPLES/peg.stl" -o "$TMP/never" --shard 3/2
[ ! -e "$TMP/never" ] && pass "no output folder after validation errors" || fail "validation errors left $TMP/never"

# (That every key is an option of its executable, and the reverse: options_test.sh.)

# --- a batch over the sample meshes with one broken mesh ---------------------------------------
printf 'v 0 0 0\nthis is not an obj file\n\x00\x01\x02' > "$TMP/broken.obj"
meshes=("$SAMPLES"/*.obj "$SAMPLES"/*.stl "$SAMPLES"/*.off "$TMP/broken.obj")
n=${#meshes[@]}
expect_exit 1 "$pipe" "$P/vps-default.json" "${meshes[@]}" -o "$TMP/j1" -j 1 "${small[@]}"
expect_grep "broken .*failed" "$TMP/out"
M1="$TMP/j1/manifest.json"
expect_json "$M1"
check "manifest has every mesh" "$(json_get "$M1" 'len(j["meshes"])')" "$n"
check "one failed" "$(json_get "$M1" 'j["summary"]["failed"]')" 1
check "the rest ok" "$(json_get "$M1" 'j["summary"]["ok"]')" $((n - 1))
check "broken entry" "$(json_get "$M1" '[(e["status"], "broken.obj" in e["error"], e["exit_code"]) for e in j["meshes"] if e["name"]=="broken"]')" "[('failed', True, 3)]"
check "ok entries have diagnostics, one output per stage, per-stage time and memory" \
    "$(json_get "$M1" 'all(e["diagnostics"]["triangles"] > 0 and len(e["outputs"]) == len(j["pipeline"]["stages"]) and all(s["seconds"] >= 0 and s["peak_rss_bytes"] > 0 for s in e["stages"]) for e in j["meshes"] if e["status"] == "ok")')" True
check "tool version and pipeline recorded" "$(json_get "$M1" 'bool(j["tool_version"]) and j["pipeline"]["name"]')" vps-default
# Recorded sizes and hashes are those of the files (hash recomputed here).
bad=0
while read -r file bytes hash; do
    [ "$(stat -c %s "$TMP/j1/$file")" = "$bytes" ] && [ "$(xxh3 "$TMP/j1/$file")" = "$hash" ] || { bad=1; echo "mismatch: $file" >&2; }
done < <(json_get "$M1" '"\n".join("%s %d %s" % (o["file"], o["bytes"], o["hash"]) for e in j["meshes"] for o in e["outputs"])')
check "output sizes and hashes match the files" "$bad" 0

# --- -j 2: byte-identical artifacts ------------------------------------------------------------
expect_exit 1 "$pipe" "$P/vps-default.json" "${meshes[@]}" -o "$TMP/j2" -j 2 --threads 2 "${small[@]}" --quiet
# query.json holds measured latencies (its outputs say "deterministic": false); every other file
# must be identical.
diff -r -x manifest.json -x query.json "$TMP/j1" "$TMP/j2" >/dev/null && pass "-j 1 and -j 2 artifacts are byte-identical" || fail "-j 1 and -j 2 differ"
check "same hashes in both manifests" \
    "$(python3 -c 'import json,sys; h=lambda f: sorted((o["file"],o["hash"]) for e in json.load(open(f))["meshes"] for o in e["outputs"] if o.get("deterministic", True)); print(h(sys.argv[1]) == h(sys.argv[2]))' "$M1" "$TMP/j2/manifest.json")" True
check "only the query report is marked non-deterministic" \
    "$(json_get "$M1" 'sorted(set(o["stage"] for e in j["meshes"] for o in e["outputs"] if not o.get("deterministic", True)))')" \
    "$(json_get "$M1" '["query"] if "query" in [s["stage"] for s in j["pipeline"]["stages"]] else []')"

# --- the stages write what the executables write ----------------------------------------------
mkdir -p "$TMP/apps"
"$HP_BIN/haptic-voxelize" "$SAMPLES/peg.stl" --resolution 24 --fill auto -o "$TMP/apps/voxelize.vdb" --quiet
"$HP_BIN/haptic-distance" "$SAMPLES/peg.stl" "$TMP/apps/voxelize.vdb" --gradient -o "$TMP/apps/distance.vdb" --quiet
for stage in voxelize distance; do
    cmp -s "$TMP/apps/$stage.vdb" "$TMP/j1/peg/$stage.vdb" && pass "$stage: pipeline output = haptic-$stage output" || fail "$stage: pipeline output differs from haptic-$stage's"
done
if json_get "$M1" '"pointshell" in [s["stage"] for s in j["pipeline"]["stages"]]' | grep -q True; then
    "$HP_BIN/haptic-pointshell" "$SAMPLES/peg.stl" "$TMP/apps/distance.vdb" --normals gradient -o "$TMP/apps/pointshell.hps" --quiet
    cmp -s "$TMP/apps/pointshell.hps" "$TMP/j1/peg/pointshell.hps" && pass "pointshell: pipeline output = haptic-pointshell output" \
        || fail "pointshell: pipeline output differs from haptic-pointshell's"
fi
if json_get "$M1" '"cfm" in [s["stage"] for s in j["pipeline"]["stages"]]' | grep -q True; then
    "$HP_BIN/haptic-spheretree" "$TMP/apps/pointshell.hps" --k 4 --seed 1 -o "$TMP/apps/spheretree.hps" --quiet
    "$HP_BIN/haptic-cfm" "$SAMPLES/peg.stl" "$TMP/apps/spheretree.hps" --stacks 16 --min-stacks 4 -o "$TMP/apps/cfm.hcfm" --quiet
    for f in spheretree.hps cfm.hcfm; do
        cmp -s "$TMP/apps/$f" "$TMP/j1/peg/$f" && pass "$f: pipeline output = the executable's" || fail "$f: pipeline output differs from the executable's"
    done
fi
if json_get "$M1" '"query" in [s["stage"] for s in j["pipeline"]["stages"]]' | grep -q True; then
    check "query report: 50 contact poses of the tree against its own field, passed" \
        "$(json_get "$TMP/j1/peg/query.json" '(j["queries"], j["poses"]["scenario"], j["static"]["file"], j["moving"]["file"], j["pass"])')" \
        "(50, 'contact', 'distance.vdb', 'spheretree.hps', True)"
    # Over budget: the report is written, the mesh fails with exit code 1 and the batch goes on.
    expect_exit 1 "$pipe" "$P/vps-default.json" "$SAMPLES/peg.stl" "$SAMPLES/gear.obj" -o "$TMP/slow" "${small[@]}" \
        --set query.budget_us=0.001 --quiet
    check "over budget: both meshes failed with exit code 1, reports kept" \
        "$(json_get "$TMP/slow/manifest.json" '[(e["status"], e["exit_code"], "over budget" in e["error"], e["outputs"][-1]["file"].endswith("query.json")) for e in j["meshes"]]')" \
        "[('failed', 1, True, True), ('failed', 1, True, True)]"
fi

# --- --resume ----------------------------------------------------------------------------------
stamp() { find "$TMP/j1" -name '*.*' ! -name 'manifest*' -printf '%p %T@\n' | sort; }
stamp > "$TMP/before"
expect_exit 1 "$pipe" "$P/vps-default.json" "${meshes[@]}" -o "$TMP/j1" --resume "${small[@]}" --quiet
check "resume skips the converted meshes" "$(json_get "$M1" 'j["summary"]["resumed"]')" $((n - 1))
check "resume retries the broken one" "$(json_get "$M1" '[e["status"] for e in j["meshes"] if e["name"]=="broken"]')" "['failed']"
stamp > "$TMP/after"
cmp -s "$TMP/before" "$TMP/after" && pass "resume rewrote no artifact" || fail "resume rewrote artifacts"
# A manifest of an earlier release (outputs hashed with FNV-1a) resumes too, each hash checked as
# FNV; one of them wrong (as if its file had changed since): that mesh runs again.
while read -r file; do echo "$file $(fnv "$TMP/j1/$file")"; done \
    < <(json_get "$M1" '"\n".join(o["file"] for e in j["meshes"] if e["status"] == "ok" for o in e["outputs"])') > "$TMP/fnv.txt"
python3 - "$M1" "$TMP/fnv.txt" <<'PY'
import json, sys
fnv = dict(line.split() for line in open(sys.argv[2]) if line.strip())
m = json.load(open(sys.argv[1]))
for e in m["meshes"]:
    for o in e["outputs"]:
        if o["file"] in fnv:
            o["hash"] = fnv[o["file"]]
        if e["name"] == "peg" and o["file"].endswith("voxelize.vdb"):
            o["hash"] = "%016x" % (int(o["hash"], 16) ^ 1)
json.dump(m, open(sys.argv[1], "w"))
PY
expect_exit 1 "$pipe" "$P/vps-default.json" "${meshes[@]}" -o "$TMP/j1" --resume "${small[@]}" --quiet
check "an earlier manifest's FNV hashes resume" "$(json_get "$M1" 'j["summary"]["resumed"]')" $((n - 2))
check "a wrong FNV hash runs its mesh again" "$(json_get "$M1" '[e["resumed"] for e in j["meshes"] if e["name"]=="peg"]')" "[False]"
check "the mesh run again is recorded with XXH3, the resumed ones as they were" \
    "$(json_get "$M1" 'sorted(set((e["resumed"], o["hash"].startswith("xxh3:")) for e in j["meshes"] if e["status"] == "ok" for o in e["outputs"]))')" \
    "[(False, True), (True, False)]"
rm "$TMP/j1/peg/distance.vdb"
expect_exit 1 "$pipe" "$P/vps-default.json" "${meshes[@]}" -o "$TMP/j1" --resume "${small[@]}" --quiet
check "a mesh with a missing output runs again" "$(json_get "$M1" '[e["resumed"] for e in j["meshes"] if e["name"]=="peg"]')" "[False]"
check "the others stay resumed" "$(json_get "$M1" 'j["summary"]["resumed"]')" $((n - 2))
cmp -s "$TMP/j1/peg/distance.vdb" "$TMP/j2/peg/distance.vdb" && pass "rerun output identical" || fail "rerun output differs"
expect_exit 1 "$pipe" "$P/vps-default.json" "${meshes[@]}" -o "$TMP/j1" --resume "${small[@]}" --set distance.gradient=false --quiet
check "other parameters: nothing resumed" "$(json_get "$M1" 'j["summary"]["resumed"]')" 0

# --- shards and merge --------------------------------------------------------------------------
expect_exit 0 "$pipe" "$P/vps-default.json" "${meshes[@]}" -o "$TMP/sh" --shard 1/2 --emit-manifest-only "${small[@]}" --quiet
check "plan: every mesh of shard 1 planned" "$(json_get "$TMP/sh/manifest.shard-1-of-2.json" 'set(e["status"] for e in j["meshes"])')" "{'planned'}"
[ -z "$(find "$TMP/sh" -mindepth 2 -type f)" ] && pass "the plan ran nothing" || fail "--emit-manifest-only wrote artifacts"
"$pipe" "$P/vps-default.json" "${meshes[@]}" -o "$TMP/sh" --shard 1/2 "${small[@]}" --quiet
"$pipe" "$P/vps-default.json" "${meshes[@]}" -o "$TMP/sh" --shard 2/2 "${small[@]}" --quiet
check "shards split the batch" \
    "$(python3 -c 'import json,sys; a,b=[len(json.load(open(f))["meshes"]) for f in sys.argv[1:]]; print(a+b, abs(a-b) <= 1)' "$TMP/sh/manifest.shard-1-of-2.json" "$TMP/sh/manifest.shard-2-of-2.json")" "$n True"
expect_exit 1 "$pipe" --merge "$TMP/sh/manifest.shard-2-of-2.json" "$TMP/sh/manifest.shard-1-of-2.json" -o "$TMP/sh"
expect_grep "failed" "$TMP/out"
check "merged manifest = unsharded manifest (meshes, statuses, output hashes)" \
    "$(python3 -c 'import json,sys; k=lambda f: sorted((e["name"], e["status"], tuple((o["file"], o["hash"]) for o in e["outputs"] if o.get("deterministic", True))) for e in json.load(open(f))["meshes"]); print(k(sys.argv[1]) == k(sys.argv[2]))' "$TMP/sh/manifest.json" "$TMP/j2/manifest.json")" True
expect_exit 2 "$pipe" --merge "$TMP/sh/manifest.shard-1-of-2.json" -o "$TMP/sh2"
expect_grep "shard 2/2 is missing" "$TMP/err"

# --- text and JSON output ----------------------------------------------------------------------
expect_exit 0 "$pipe" "$P/voxelmap-only.json" "$SAMPLES/peg.stl" "$SAMPLES/gear.obj" -o "$TMP/vo" --json --set voxelize.resolution=24
expect_json "$TMP/out"
check "--json prints the manifest" "$(json_get "$TMP/out" 'j["summary"]["ok"]')" 2
# --- every mode of haptic-query runs in a pipeline: time-critical with a test budget and the CFM
# the pipeline made gives the very results of haptic-query on the pipeline's files.
if has_stage query && has_stage cfm; then
    printf '{"name": "tc", "stages": [{"stage": "voxelize", "resolution": 24}, {"stage": "distance"}, {"stage": "pointshell"},
      {"stage": "spheretree"}, {"stage": "cfm"}, {"stage": "query", "scenario": "contact", "count": 60, "seed": 2,
      "mode": "time-critical", "budget_us": 1e9, "budget_tests": 12, "cfm": true}]}\n' > "$TMP/tc.json"
    expect_exit 0 "$pipe" "$TMP/tc.json" "$SAMPLES/peg.stl" -o "$TMP/tc" --quiet
    R="$TMP/tc/peg/query.json"
    check "pipeline query: time-critical, the test budget, the pipeline's CFM" \
        "$(json_get "$R" '(j["mode"], j["budget_tests"], j["validation"]["cfm_file"].startswith("ok"), j["interrupted"] > 0, j["cfm_contacts"] > 0)')" \
        "('time-critical', 12, True, True, True)"
    expect_exit 0 "$HP_BIN/haptic-query" --static "$TMP/tc/peg/distance.vdb" --moving "$TMP/tc/peg/spheretree.hps" \
        --cfm "$TMP/tc/peg/cfm.hcfm" --scenario contact --count 60 --seed 2 --mode time-critical --budget-us 1e9 \
        --budget-tests 12 --report "$TMP/tc-exe.json" --quiet
    check "pipeline query = haptic-query with the same options" "$(python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
keys = ["contacts", "force", "torque", "spheres_tested", "points_tested", "interrupted", "cfm_contacts", "queued_untested"]
print(len(a["per_query"]) == 60 and all(x[k] == y[k] for x, y in zip(a["per_query"], b["per_query"]) for k in keys))' "$R" "$TMP/tc-exe.json")" True
    # cfm needs a cfm stage before; budget_tests and cfm need mode time-critical (named as keys).
    printf '{"name": "t", "stages": [{"stage": "voxelize"}, {"stage": "pointshell"}, {"stage": "spheretree"}, {"stage": "query", "scenario": "contact", "mode": "time-critical", "cfm": true}]}\n' > "$TMP/nocfm.json"
    expect_exit 2 "$pipe" "$TMP/nocfm.json" "$SAMPLES/peg.stl" -o "$TMP/never"
    expect_grep "stage 'query'.*key 'cfm'.*put a 'cfm' stage before" "$TMP/err"
    expect_exit 2 "$pipe" "$TMP/tc.json" "$SAMPLES/peg.stl" -o "$TMP/never" --set query.mode=full
    # (tc.json gives both; the first key in declaration order is named)
    expect_grep "key 'budget_tests': budget_tests applies only to mode time-critical" "$TMP/err"
fi

expect_exit 0 "$pipe" --help
expect_grep "Examples" "$TMP/out"
finish
