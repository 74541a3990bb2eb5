#!/usr/bin/env bash
# haptic-pipeline --junit and --plot: a suite per mesh and a case per stage, read back with a real
# JUnit consumer (Debian's python3-junitparser) and compared with the manifest: stage times, the
# query stage's failure with its measured p99 and the budget, an unreadable mesh's error and the
# stages skipped after it; a planned batch is all skipped. The batch's chart is a valid PNG with a
# colour per stage.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/junit_lib.sh"
pipeline="$HP_BIN/haptic-pipeline"
cat >"$TMP/p.json" <<'JSON'
{"name": "junit-check", "stages": [
  {"stage": "voxelize", "resolution": 24, "fill": "auto"},
  {"stage": "distance", "encoding": "float"},
  {"stage": "pointshell"},
  {"stage": "spheretree"},
  {"stage": "query", "scenario": "contact", "count": 50, "seed": 1, "budget_us": 0.001}
]}
JSON
echo "not a mesh" >"$TMP/broken.stl"

expect_exit 1 "$pipeline" "$TMP/p.json" "$SAMPLES/peg.stl" "$TMP/broken.stl" -o "$TMP/batch" \
    --junit "$TMP/junit.xml" --plot "$TMP/times.png" --quiet
"$JUNIT_PY" - "$TMP/junit.xml" "$TMP/batch/manifest.json" <<'PY' >"$TMP/facts" || fail "junitparser cannot read $TMP/junit.xml"
import json, sys
from junitparser import JUnitXml, Failure, Error, Skipped
xml = JUnitXml.fromfile(sys.argv[1]); manifest = json.load(open(sys.argv[2]))
def kind(c):
    return type(c.result[0]).__name__.lower() if c.result else "passed"
for s in xml:
    print("suite", s.name, " ".join("%s:%s" % (c.name, kind(c)) for c in s))
    entry = [m for m in manifest["meshes"] if s.name.endswith(" " + m["name"])][0]
    times = {r["stage"]: r["seconds"] for r in entry["stages"]}
    print("stage times = manifest", all(abs(c.time - times[c.name]) < 1e-6 for c in s if c.name in times))
    for c in s:
        for r in c.result:
            print(kind(c), c.classname, c.name, "|", r.type, "|", r.message)
print("totals", xml.tests, xml.failures, xml.errors, xml.skipped)
report = json.load(open(sys.argv[2].replace("manifest.json", "peg/query.json")))
print("expected p99 text", "%.1f" % report["latency_us"]["p99"])
PY
expect_grep "^suite junit-check broken voxelize:error distance:skipped pointshell:skipped spheretree:skipped query:skipped$" "$TMP/facts"
expect_grep "^suite junit-check peg voxelize:passed distance:passed pointshell:passed spheretree:passed query:failure$" "$TMP/facts"
expect_grep "^totals 10 1 1 4$" "$TMP/facts"
check "stage times equal the manifest's" "$(grep -c '^stage times = manifest True$' "$TMP/facts")" 2
p99=$(sed -n 's/^expected p99 text //p' "$TMP/facts")
expect_grep "^failure haptic-pipeline.junit-check.peg query \| check failed \(exit 1\) \| stage 'query': .*peg/query.json: over budget: p99 $p99 us, 50 of 50 queries over 0.001 us$" "$TMP/facts"
expect_grep "^error haptic-pipeline.junit-check.broken voxelize \| bad input \(exit 3\) \| stage 'voxelize': .*broken.stl" "$TMP/facts"
expect_grep "^skipped .* distance \| None \| not run: stage 'voxelize' failed$" "$TMP/facts"

png_colours "$TMP/times.png" >"$TMP/times.txt" || fail "$TMP/times.png is not a valid 8-bit RGB PNG"
check "chart size" "$(head -1 "$TMP/times.txt")" "1000 560"
# The palette's first five colours: one per stage (bars and legend).
for c in 31,119,180 255,127,14 44,160,44 214,39,40 148,103,189; do
    grep -q "^$c " "$TMP/times.txt" && pass "stage colour $c drawn" || fail "stage colour $c missing"
done

grep -q "^200,30,30 " "$TMP/times.txt" && pass "failed meshes' names in red" || fail "no red label for the failed meshes"

# Planned only: every case skipped.
expect_exit 0 "$pipeline" "$TMP/p.json" "$SAMPLES/peg.stl" -o "$TMP/plan" --emit-manifest-only --junit "$TMP/plan.xml" --quiet
check "planned batch: all skipped" "$("$JUNIT_PY" -c 'import sys; from junitparser import JUnitXml; x = JUnitXml.fromfile(sys.argv[1]); print(x.tests, x.skipped)' "$TMP/plan.xml")" "5 5"
expect_exit 4 "$pipeline" "$TMP/p.json" "$SAMPLES/peg.stl" -o "$TMP/plan" --emit-manifest-only --junit "$TMP/missing/x.xml" --quiet
expect_one_error_line
finish
