#!/usr/bin/env bash
# The module graph is enforced by the build: each probe of tests/layers/probes.cmake compiles
# tests/layers/probe.cpp as a part of one module with one header. A header of a module that is not
# below must fail with "<header>: No such file or directory" (the message is checked, so a probe
# broken for another reason does not pass); the paired legal header must compile.
# Also: the sources of lib/ and formats/ include project headers as "<module dir>/<file>" only, never
# through "..", which would reach a header past the include roots.
# Env (set by CMake): HP_BUILD_DIR, HP_SOURCE_DIR.
: "${HP_BUILD_DIR:?HP_BUILD_DIR must point to the build directory}"
: "${HP_SOURCE_DIR:?HP_SOURCE_DIR must point to the repository}"
HP_BIN="$HP_BUILD_DIR/bin"
source "$HP_SOURCE_DIR/tests/cli/lib.sh"

probes="$HP_BUILD_DIR/layer_probes.txt"
[ -s "$probes" ] || { fail "no probe list at $probes (configure with HP_BUILD_TESTS=ON)"; finish; }
legal=0 illegal=0
while read -r target module header expect; do
    cmake --build "$HP_BUILD_DIR" --target "$target" >"$TMP/out" 2>&1 </dev/null
    rc=$?
    case "$expect" in
    compiles)
        legal=$((legal + 1))
        if [ "$rc" -eq 0 ]; then
            pass "$module may include $header"
        else
            fail "$module: the legal include $header does not compile"; tail -20 "$TMP/out" >&2
        fi ;;
    fails)
        illegal=$((illegal + 1))
        if [ "$rc" -ne 0 ] && grep -qF "$header: No such file or directory" "$TMP/out"; then
            pass "$module cannot include $header"
        elif [ "$rc" -eq 0 ]; then
            fail "$module includes $header, a module that is not below it, and it compiles"
        else
            fail "$module with $header failed without reporting the header as not found"; tail -20 "$TMP/out" >&2
        fi ;;
    *) fail "probe $target: unknown expectation '$expect'" ;;
    esac
done <"$probes"
[ "$legal" -gt 0 ] && [ "$illegal" -gt 0 ] || fail "the probe list needs legal and illegal includes ($legal, $illegal)"

python3 - "$HP_SOURCE_DIR" >"$TMP/style" <<'PY'
import pathlib, re, sys
root = pathlib.Path(sys.argv[1])
for path in sorted([*root.glob("lib/*/*.[ch]pp"), *root.glob("formats/*.[ch]pp")]):
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = re.match(r'\s*#\s*include\s*"([^"]*)"', line)
        if m and not re.fullmatch(r"[A-Za-z0-9_]+/[A-Za-z0-9_.]+", m.group(1)):
            print(f"{path.relative_to(root)}:{n}: {m.group(1)}")
PY
if [ -s "$TMP/style" ]; then
    fail "includes not of the form \"<module dir>/<file>\":"; sed 's/^/    /' "$TMP/style" >&2
else
    pass "every include of lib/ and formats/ names <module dir>/<file>"
fi
finish
