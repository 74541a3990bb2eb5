# Shared helpers of the CLI tests (sourced). Env: HP_BIN (executables), HP_SOURCE_DIR (repo).
set -u
: "${HP_BIN:?HP_BIN must point to the folder of the executables}"
: "${HP_SOURCE_DIR:?HP_SOURCE_DIR must point to the repository}"
SAMPLES="$HP_SOURCE_DIR/sample_meshes"
MESHES="${HP_MESHES:-$HP_SOURCE_DIR/../shared/meshes}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# expect_exit CODE CMD...: runs CMD, checks its exit code; stdout/stderr land in $TMP/out, $TMP/err.
expect_exit() {
    local want=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        fail "exit $got, expected $want: $*"; sed 's/^/    stderr: /' "$TMP/err" | head -5 >&2
        return 1
    fi
    pass "exit $want: $*"
}

# expect_exit_within CODE SECONDS CMD...: as expect_exit, and the command took less than SECONDS.
# A guard against hangs, not a speed test (those live in make bench): the limit is generous and
# four times larger under the sanitizers.
expect_exit_within() {
    local want=$1 limit=$2; shift 2
    [ "${HP_SANITIZED:-0}" = 1 ] && limit=$((limit * 4))
    local t0 t1
    t0=$(date +%s.%N)
    expect_exit "$want" "$@" || return 1
    t1=$(date +%s.%N)
    if awk -v a="$t0" -v b="$t1" -v l="$limit" 'BEGIN{exit !(b - a < l)}'; then
        pass "under $limit s"
    else
        fail "took $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b - a}') s, limit $limit s: $*"; return 1
    fi
}

# expect_one_error_line: stderr of the last command is exactly one line.
expect_one_error_line() {
    local n
    n=$(wc -l <"$TMP/err")
    [ "$n" -eq 1 ] && pass "one line on stderr" || { fail "stderr has $n lines"; cat "$TMP/err" >&2; }
}

# expect_grep PATTERN FILE: FILE contains PATTERN (extended regex).
expect_grep() { grep -Eq -- "$1" "$2" && pass "found '$1'" || { fail "'$1' not in $2"; head -20 "$2" >&2; }; }

# expect_json FILE: FILE is valid JSON.
expect_json() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" && pass "valid JSON" || fail "invalid JSON in $1"; }

# json_get FILE EXPR: evaluates a Python expression on the parsed JSON `j`.
json_get() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# check NAME VALUE EXPECTED: compares two strings.
check() { [ "$2" = "$3" ] && pass "$1" || fail "$1: got '$2', expected '$3'"; }

finish() {
    if [ "$failures" -gt 0 ]; then echo "$failures failure(s)"; exit 1; fi
    echo "all passed"
}
