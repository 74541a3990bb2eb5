#!/usr/bin/env bash
# examples/ci as a CI server runs them: `cmake --install` into a prefix (the jobs' own install
# steps are left to the CI servers), then the command lines of the GitHub Actions workflow (its
# steps with an id, in order, each as GitHub runs a `run:` step: bash -eo pipefail) and of the
# GitLab job (its `script:` lines in order, stopping at the first failure) are taken from the YAML
# files and run in a fresh folder with the installed tools first on the PATH and the jobs'
# variables set. Each must pass, and the JUnit report it publishes must be read by a real JUnit
# consumer (Debian's python3-junitparser) as a passing timing check.
# Env (set by CMake): HP_BUILD_DIR, HP_SOURCE_DIR. Works in $HP_BUILD_DIR/ci-example-test.
: "${HP_BUILD_DIR:?HP_BUILD_DIR must point to the build directory}"
: "${HP_SOURCE_DIR:?HP_SOURCE_DIR must point to the repository}"
WORK="$HP_BUILD_DIR/ci-example-test"
PREFIX="$WORK/prefix"
rm -rf "$WORK" && mkdir -p "$WORK"
HP_BIN="$PREFIX/bin"
source "$HP_SOURCE_DIR/tests/cli/lib.sh"
PY=/usr/bin/python3  # Debian's, with python3-yaml and python3-junitparser
"$PY" -c 'import yaml, junitparser' 2>/dev/null || { fail "python3-yaml or python3-junitparser missing (scripts/install-deps.sh)"; finish; }

expect_exit 0 cmake --install "$HP_BUILD_DIR" --prefix "$PREFIX" || { cat "$TMP/out" "$TMP/err" >&2; finish; }

# extract KIND FILE OUT: writes the job's variables (export lines) to OUT.env and its commands to OUT.sh.
extract() {
    "$PY" - "$1" "$2" "$3" <<'PY'
import shlex, sys, yaml
kind, path, out = sys.argv[1:]
doc = yaml.safe_load(open(path))
if kind == "github":
    env = doc["env"]
    steps = [s for s in doc["jobs"]["timing-check"]["steps"] if "id" in s]
    if [s["id"] for s in steps] != ["prepare", "check"]: sys.exit("unexpected steps %r" % [s["id"] for s in steps])
    # Each run: block in a bash of its own with -e and pipefail, as GitHub Actions does.
    script = "".join("bash --noprofile --norc -eo pipefail -c %s || exit $?\n" % shlex.quote(s["run"]) for s in steps)
else:
    job = doc["timing-check"]
    env = job["variables"]
    # GitLab runs the lines in one shell and stops at the first that fails.
    script = "set -e\n" + "".join(line + "\n" for line in job["script"])
open(out + ".env", "w").write("".join("export %s=%s\n" % (k, shlex.quote(str(v))) for k, v in env.items()))
open(out + ".sh", "w").write(script)
print(sum(1 for line in script.splitlines() if "haptic-" in line))
PY
}

for kind in github gitlab; do
    file="$HP_SOURCE_DIR/examples/ci/$([ $kind = github ] && echo github-actions.yml || echo gitlab-ci.yml)"
    n=$(extract $kind "$file" "$WORK/$kind") || { fail "cannot read the jobs of $file"; continue; }
    [ "$n" -ge 2 ] && pass "$kind: $n command lines with the tools" || fail "$kind: only $n command lines run the tools"
    job="$WORK/$kind-job"
    mkdir -p "$job" && ln -s "$HP_SOURCE_DIR/sample_meshes" "$job/sample_meshes"
    # shellcheck disable=SC2016
    expect_exit 0 bash -c 'cd "$1" && source "$2.env" && PATH="$3:$PATH" && source "$2.sh"' _ "$job" "$WORK/$kind" "$PREFIX/bin" \
        || sed 's/^/    /' "$TMP/err" | tail -20 >&2
    "$PY" - "$job/reports/query-junit.xml" <<'PY' >"$TMP/facts" || fail "$kind: the JUnit report cannot be read"
import sys
from junitparser import JUnitXml
x = JUnitXml.fromfile(sys.argv[1])
print(x.tests, x.failures, x.errors, "|".join(c.name for s in x for c in s))
PY
    check "$kind: JUnit report read back" "$(cat "$TMP/facts")" "2 0 0 latency: p99 <= budget|tree covers its points"
    [ -s "$job/reports/query.png" ] && pass "$kind: latency plot written" || fail "$kind: no latency plot"
done

# The same GitLab job with a budget no query meets: the job fails (exit 1) and its report shows
# the failing case with the measured p99 and the budget.
job="$WORK/gitlab-over-job"
mkdir -p "$job" && ln -s "$HP_SOURCE_DIR/sample_meshes" "$job/sample_meshes"
# shellcheck disable=SC2016
expect_exit 1 bash -c 'cd "$1" && source "$2.env" && BUDGET_US=0.001 && PATH="$3:$PATH" && source "$2.sh"' _ "$job" "$WORK/gitlab" "$PREFIX/bin"
"$PY" - "$job/reports/query-junit.xml" <<'PY' >"$TMP/facts" || fail "the failing job's JUnit report cannot be read"
import sys
from junitparser import JUnitXml, Failure
x = JUnitXml.fromfile(sys.argv[1])
for s in x:
    for c in s:
        for r in c.result:
            if isinstance(r, Failure): print(c.name, "|", r.message)
PY
expect_grep "^latency: p99 <= budget \| p99 [0-9.]+ us > budget 0.001 us \(2000 of 2000 queries over budget\)$" "$TMP/facts"
finish
