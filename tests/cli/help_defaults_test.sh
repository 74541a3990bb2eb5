#!/usr/bin/env bash
# --help shows a default only where it means something: a flag (on when given) shows none, nor
# does an option naming a file (FILE) or an output path unless the tool has one. Checked over
# every executable's --help, and over the options as the App holds them (--help-json).
source "$(dirname "$0")/lib.sh"
for tool in $(cd "$HP_BIN" && ls haptic-*); do
    expect_exit 0 "$HP_BIN/$tool" --help || continue
    # CLI11 prints "--name TYPE=DEFAULT": no true/false defaults, no default after FILE.
    if grep -En -- '^ +(-[a-z],)?--[a-z-]+( [A-Z:|]+)?=(true|false)( |$)|FILE=' "$TMP/out" >"$TMP/bad"; then
        fail "$tool --help shows a meaningless default:"; cat "$TMP/bad" >&2
    else
        pass "$tool --help: no flag or file shows a default"
    fi
    expect_exit 0 "$HP_BIN/$tool" --help-json || continue
    python3 - "$TMP/out" <<'EOF_PY' && pass "$tool --help-json: flags and files have no default" || fail "$tool: a flag or a file has a default"
import json, sys
h = json.load(open(sys.argv[1]))
bad = [o["name"] for o in h["options"]
       if o["default"] and (o["flag"] or o["type"].split(":")[0] == "FILE")]
for name in bad:
    print("default on", h["tool"], name, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF_PY
done
# The defect as reported: --cfm FILE=false.
expect_exit 0 "$HP_BIN/haptic-query" --help
expect_grep '^ +--cfm FILE ' "$TMP/out"
finish
