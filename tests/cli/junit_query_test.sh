#!/usr/bin/env bash
# haptic-query --junit: the check as a JUnit XML report, read back with a real JUnit consumer
# (Debian's python3-junitparser): a passing check, a failing one whose failure message carries the
# measured p99 and the budget (the same figures as the JSON report), the over-budget-fraction
# criterion, and an unwritable report (exit 4).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/junit_lib.sh"
query="$HP_BIN/haptic-query"
make_query_objects
objects=(--static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --scenario contact --count 200 --seed 4 --threads 1)

# junit_check FILE REPORT.json: prints what the consumer read, one fact a line.
junit_check() {
    "$JUNIT_PY" - "$1" "$2" <<'PY'
import json, sys
from junitparser import JUnitXml, Failure, Error, Skipped
xml = JUnitXml.fromfile(sys.argv[1]); report = json.load(open(sys.argv[2]))
suites = list(xml)
cases = [c for s in suites for c in s]
failed = [c for c in cases if any(isinstance(r, Failure) for r in c.result)]
print("suites", len(suites), "cases", len(cases), "failed", len(failed))
# The counts in the attributes agree with the cases.
print("counts agree", xml.tests == len(cases) and xml.failures == len(failed) and suites[0].tests == len(cases))
print("names", "|".join(c.name for c in cases))
props = {p.name: p.value for p in suites[0].properties()}
print("p99 property = report", float(props["latency_us.p99"]) == report["latency_us"]["p99"])
# The timing case's time is the queries' measured time.
print("time = mean x queries", abs(cases[0].time - report["latency_us"]["mean"] * report["queries"] * 1e-6) < 2e-6)
for c in failed:
    r = [r for r in c.result if isinstance(r, Failure)][0]
    print("failure", c.name, "|", r.type, "|", r.message)
p99 = report["latency_us"]["p99"]
print("expected p99 text", "%.3g" % p99 if p99 < 1000 else "%.0f" % p99)
PY
}

# Passes: a budget no query reaches.
expect_exit 0 "$query" "${objects[@]}" --budget-us 1e9 --junit "$TMP/pass.xml" --report "$TMP/pass.json" --quiet
junit_check "$TMP/pass.xml" "$TMP/pass.json" >"$TMP/facts" || fail "junitparser cannot read $TMP/pass.xml"
expect_grep "^suites 1 cases 2 failed 0$" "$TMP/facts"
expect_grep "^counts agree True$" "$TMP/facts"
expect_grep "^names latency: p99 <= budget\|tree covers its points$" "$TMP/facts"
expect_grep "^p99 property = report True$" "$TMP/facts"
expect_grep "^time = mean x queries True$" "$TMP/facts"

# Fails: a budget of 1 ns, which every query exceeds (exit 1, and the report is still written).
expect_exit 1 "$query" "${objects[@]}" --budget-us 0.001 --junit "$TMP/fail.xml" --report "$TMP/fail.json" --quiet
junit_check "$TMP/fail.xml" "$TMP/fail.json" >"$TMP/facts" || fail "junitparser cannot read $TMP/fail.xml"
expect_grep "^suites 1 cases 2 failed 1$" "$TMP/facts"
expect_grep "^counts agree True$" "$TMP/facts"
p99=$(sed -n 's/^expected p99 text //p' "$TMP/facts")
check "failing case, its measured p99 and the budget" "$(grep '^failure' "$TMP/facts")" \
    "failure latency: p99 <= budget | over budget | p99 $p99 us > budget 0.001 us (200 of 200 queries over budget)"

# The fraction criterion: every query over budget, at most half allowed.
expect_exit 1 "$query" "${objects[@]}" --budget-us 0.001 --max-over-budget 0.5 --junit "$TMP/frac.xml" --report "$TMP/frac.json" --quiet
junit_check "$TMP/frac.xml" "$TMP/frac.json" >"$TMP/facts" || fail "junitparser cannot read $TMP/frac.xml"
p99=$(sed -n 's/^expected p99 text //p' "$TMP/facts")
expect_grep "^failure latency: over-budget fraction <= 0.5 \| over budget \| 200 of 200 queries over the budget of 0.001 us: fraction 1 > allowed 0.5 \(p99 $p99 us\)$" "$TMP/facts"

# A report that cannot be written: exit 4, one line naming the file.
expect_exit 4 "$query" "${objects[@]}" --budget-us 1e9 --junit "$TMP/missing/q.xml" --quiet
expect_one_error_line
expect_grep "missing/q.xml" "$TMP/err"
finish
