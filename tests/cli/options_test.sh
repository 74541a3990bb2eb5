#!/usr/bin/env bash
# Each executable's options are its stage's declaration: the same names (an option of the
# executable is a pipeline key, or in the stage's executable_only list, and every key is an
# option), defaults, ranges or choices, value types and exclusions. The executable's side is read
# from its CLI11 App (--help-json), the declaration's from haptic-pipeline --list-stages --json.
source "$(dirname "$0")/lib.sh"
"$HP_BIN/haptic-pipeline" --list-stages --json > "$TMP/stages.json"
expect_json "$TMP/stages.json"
for tool in $(json_get "$TMP/stages.json" '" ".join(s["tool"] for s in j["stages"] if s["available"])'); do
    expect_exit 0 "$HP_BIN/$tool" --help-json
    cp "$TMP/out" "$TMP/$tool.json"
    expect_json "$TMP/$tool.json"
done

python3 - "$TMP/stages.json" "$TMP" <<'EOF_PY' && pass "every executable's options match its stage's declaration" || fail "an executable's options differ from its stage's declaration"
import json, sys

def number(v):  # as the declaration prints a bound: integers bare, the rest to 17 digits
    return "%.0f" % v if v == int(v) and abs(v) < 1e17 else "%.17g" % v

def value(v):
    return v if isinstance(v, str) else json.dumps(v)

def range_words(p):
    if "choices" in p: return "one of " + ", ".join(value(c) for c in p["choices"])
    if p.get("positive"): return "> 0"
    if "min" in p and "max" in p: return "in [%s, %s]" % (number(p["min"]), number(p["max"]))
    if "min" in p: return ">= " + number(p["min"])
    if "max" in p: return "<= " + number(p["max"])
    return ""

kinds = {"an integer": "INT", "a number": "NUM", "a string": "TEXT"}
ok = True
def differ(*what):
    global ok
    ok = False
    print("DIFFERS:", *what)

for s in json.load(open(sys.argv[1]))["stages"]:
    if not s["available"]:
        continue
    tool = s["tool"]
    app = {o["name"]: o for o in json.load(open("%s/%s.json" % (sys.argv[2], tool)))["options"]}
    declared = {p["option"]: p for p in s["params"]}
    for name in app:
        if name not in declared and name not in s["executable_only"]:
            differ(tool, name, "is an option of the executable but no key of stage", s["stage"], "nor executable-only")
    for name in s["executable_only"]:
        if name not in app:
            differ(tool, name, "is listed as executable-only but the executable has no such option")
    for name, p in declared.items():
        if name not in app:
            differ(tool, "stage", s["stage"], "key", p["key"], "has no option", name)
            continue
        o = app[name]
        if p["key"] != name.lstrip("-").replace("-", "_"):
            differ(tool, name, "key", p["key"], "is not the option's name")
        is_flag = p["type"] == "true or false" and "input" not in p
        if o["flag"] != is_flag:
            differ(tool, name, "flag" if o["flag"] else "takes a value", "but declared", p["type"])
            continue
        if is_flag:
            continue  # a flag's default is off
        want_type = "FILE" if "input" in p else kinds[p["type"]]
        if o["type"].split(":", 1)[0] != want_type:  # CLI11 appends the checks' descriptions
            differ(tool, name, "value type", o["type"], "declared", want_type)
        want_default = "" if p["default"] is None or "input" in p else value(p["default"])  # a file shows none
        if o["default"] != want_default:
            differ(tool, name, "default", repr(o["default"]), "declared", repr(want_default))
        want_check = "" if "input" in p else range_words(p)
        if o["check"] != want_check:
            differ(tool, name, "range/choices", repr(o["check"]), "declared", repr(want_check))
        want_excludes = sorted("--" + x.replace("_", "-") for x in p.get("excludes", []))
        if sorted(o["excludes"]) != want_excludes:
            differ(tool, name, "excludes", sorted(o["excludes"]), "declared", want_excludes)
sys.exit(0 if ok else 1)
EOF_PY

# One declaration serves both callers: the same check between options, named as each spells it.
expect_exit 2 "$HP_BIN/haptic-cfm" "$SAMPLES/peg.stl" "$TMP/none.hps" -o "$TMP/x.hcfm" --stacks 4 --min-stacks 8
expect_grep "^haptic-cfm: --min-stacks 8 exceeds --stacks 4" "$TMP/err"
expect_one_error_line
printf '{"name": "t", "stages": [{"stage": "voxelize"}, {"stage": "pointshell"}, {"stage": "spheretree"}, {"stage": "cfm", "stacks": 4, "min_stacks": 8}]}\n' > "$TMP/p.json"
expect_exit 2 "$HP_BIN/haptic-pipeline" "$TMP/p.json" "$SAMPLES/peg.stl" -o "$TMP/never"
expect_grep "key 'min_stacks': min_stacks 8 exceeds stacks 4" "$TMP/err"
# The same range for both: --level of haptic-query and the query stage's level.
expect_exit 2 "$HP_BIN/haptic-query" --static "$TMP/none.vdb" --moving "$TMP/none.hps" --scenario contact --mode segmented --level 0
expect_grep "level.*must be an integer in \[1, 1000\]" "$TMP/err"
finish
