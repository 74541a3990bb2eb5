#!/usr/bin/env bash
# The option tables of docs/pipeline.md are the declaration's: scripts/options_table.py on
# haptic-pipeline --list-stages --json gives the same text as the page.
source "$(dirname "$0")/lib.sh"
"$HP_BIN/haptic-pipeline" --list-stages --json > "$TMP/stages.json"
expect_json "$TMP/stages.json"
expect_exit 0 python3 "$HP_SOURCE_DIR/scripts/options_table.py" --check "$HP_SOURCE_DIR/docs/pipeline.md" < "$TMP/stages.json"
# The tables name every available stage and every key of it.
python3 "$HP_SOURCE_DIR/scripts/options_table.py" < "$TMP/stages.json" > "$TMP/tables.md"
python3 - "$TMP/stages.json" "$TMP/tables.md" <<'EOF_PY' && pass "every key has a row" || fail "a key has no row"
import json, sys
tables = open(sys.argv[2]).read()
missing = [(s["stage"], p["key"]) for s in json.load(open(sys.argv[1]))["stages"] if s["available"]
           for p in s["params"] if "| `%s` | `%s` |" % (p["key"], p["option"]) not in tables]
print("missing:", missing) if missing else None
sys.exit(1 if missing else 0)
EOF_PY
finish
