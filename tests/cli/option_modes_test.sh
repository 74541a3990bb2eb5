#!/usr/bin/env bash
# No option is accepted and then ignored: an option that serves only some modes of its tool says
# which, and outside them the tool refuses it (exit 2, one line naming the option).
#  1. The stages' declared modes (ParamSpec::applies, from haptic-pipeline --list-stages --json):
#     for every conditional option of every stage's executable, each condition broken in turn
#     (the others kept) is a usage error.
#  2. The executables' own modes (Tool::set_modes, from --help-json): every option with "modes"
#     given in each mode it does not serve is a usage error.
#  3. Inside their modes the options have an effect: a table of runs on small files, two runs
#     per option whose reports differ (or the file it names is written); the table must name
#     every option of 1 and 2, or the test that covers it.
source "$(dirname "$0")/lib.sh"
"$HP_BIN/haptic-pipeline" --list-stages --json > "$TMP/stages.json"
for tool in $(cd "$HP_BIN" && ls haptic-*); do
    "$HP_BIN/$tool" --help-json > "$TMP/$tool.help.json" 2>/dev/null || rm -f "$TMP/$tool.help.json"
done

python3 - "$HP_BIN" "$TMP" <<'EOF_PY' || fail "an option is accepted outside its modes"
import glob, json, os, subprocess, sys
bin_dir, tmp = sys.argv[1], sys.argv[2]
stages = json.load(open(os.path.join(tmp, "stages.json")))["stages"]
bad = 0

def run(tool, args):
    p = subprocess.run([os.path.join(bin_dir, tool)] + args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stderr

def refused(tool, option, args, what, by=None):
    global bad
    code, err = run(tool, args)
    lines = err.strip().splitlines()
    said = lines[0] if lines else ""
    named = said.startswith("%s: %s " % (tool, by or option)) if by != "any" else True
    if code != 2 or len(lines) != 1 or not named or not ("applies only to" in said or "does not apply to" in said):
        bad += 1
        print("FAIL: %s %s: exit %d, expected 2 with one line naming %s: %r" % (tool, " ".join(args), code, option, err[:300]))
    else:
        print("ok: %s refuses %s %s: %s" % (tool, option, what, lines[0]))

def framing(tool):  # the tool's required files, all missing: the mode checks come first
    help_json = os.path.join(tmp, tool + ".help.json")
    args = []
    for o in json.load(open(help_json))["options"]:
        if o["required"]:
            args += [os.path.join(tmp, "none")] if not o["name"].startswith("-") else [o["name"], os.path.join(tmp, "none.out")]
    return args

def value_args(p):  # the option with a valid value of its declaration
    if "input" in p: return [p["option"], os.path.join(tmp, "none.file")]
    if p["type"] == "true or false": return [p["option"]]
    if "choices" in p: v = p["choices"][0]
    elif "min" in p: v = p["min"]
    elif p.get("positive"): v = 1
    elif p["default"] is not None: v = p["default"]
    else: v = "x"
    if isinstance(v, float) and v == int(v): v = int(v)
    return [p["option"], str(v)]

def set_key(params, key, value):
    return [] if value is None else value_args(dict(params[key], choices=[value]))

checked = 0
for s in stages:
    if not s["available"]: continue
    params = {p["key"]: p for p in s["params"]}
    for p in s["params"]:
        conds = p.get("applies", [])
        for i, c in enumerate(conds):
            key = params[c["key"]]
            inside = [v for v in c["values"]]
            outside = [v for v in key.get("choices", []) if v not in inside]
            if None not in inside: outside.append(None)
            args = framing(s["tool"]) + value_args(p)
            for j, other in enumerate(conds):
                # The other conditions kept, unless their key itself serves only some values of
                # this one's (--mode is not for --validate exact): then it stays unset.
                own = [a["key"] for a in params[other["key"]].get("applies", [])]
                if j != i and c["key"] not in own: args += set_key(params, other["key"], other["values"][0])
            refused(s["tool"], p["option"], args + set_key(params, c["key"], outside[0]),
                    "outside %s %s" % (key["option"], outside[0]))
            checked += 1
print("declared conditions checked:", checked)

checked = 0
for help_json in sorted(glob.glob(os.path.join(tmp, "*.help.json"))):
    h = json.load(open(help_json))
    tool, modes = h["tool"], {m["name"]: m["args"] for m in h.get("modes", [])}
    for o in h["options"]:
        for m, selector in modes.items():
            if "modes" not in o or m in o["modes"]: continue
            if not selector and any(o["name"] in a for a in modes.values()): continue  # it selects its own mode
            # A valid value as the App checks it: the first choice, the lower bound, or a file.
            check = o["check"]
            value = [] if o["flag"] else [os.path.join(tmp, "none.file")]
            if check.startswith("one of "): value = [check[len("one of "):].split(", ")[0]]
            elif check.startswith("in ["): value = [check[4:].split(",")[0]]
            elif check.startswith(">= "): value = [check[3:]]
            elif o["type"].split(":")[0] in ("INT", "NUM", "FLOAT"): value = ["1"]
            sel = [os.path.join(tmp, "none.json") if a == "SCENE" else a for a in selector]
            # Two modes' selectors together: the one of lower rank is refused, whichever it is.
            selects = any(o["name"] in a for a in modes.values())
            refused(tool, o["name"], framing(tool) + sel + [o["name"]] + value, "in mode " + m, "any" if selects else None)
            checked += 1
print("executable modes checked:", checked)
sys.exit(1 if bad else 0)
EOF_PY

# 3. Effects inside the modes, on a peg against a block with a hole (files' own units).
q="$HP_BIN/haptic-query"
expect_exit 0 "$HP_BIN/haptic-voxelize" "$SAMPLES/block-with-hole.stl" --voxel-size 1 -o "$TMP/block.vdb" --quiet
expect_exit 0 "$HP_BIN/haptic-distance" "$SAMPLES/block-with-hole.stl" "$TMP/block.vdb" -o "$TMP/block.dist.vdb" --quiet
expect_exit 0 "$HP_BIN/haptic-voxelize" "$SAMPLES/peg.stl" --voxel-size 1 -o "$TMP/peg.vdb" --quiet
expect_exit 0 "$HP_BIN/haptic-pointshell" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/peg.ps.hps" --quiet
expect_exit 0 "$HP_BIN/haptic-spheretree" "$TMP/peg.ps.hps" -o "$TMP/peg.hps" --quiet
expect_exit 0 "$HP_BIN/haptic-cfm" "$SAMPLES/peg.stl" "$TMP/peg.hps" -o "$TMP/peg.hcfm" --quiet

python3 - "$HP_BIN" "$TMP" "$SAMPLES" <<'EOF_PY' || fail "an option has no effect inside its modes"
import json, os, subprocess, sys
bin_dir, tmp, samples = sys.argv[1], sys.argv[2], sys.argv[3]
stages = {s["tool"]: s for s in json.load(open(os.path.join(tmp, "stages.json")))["stages"]}
files = ["--static", tmp + "/block.dist.vdb", "--moving", tmp + "/peg.hps", "--threads", "1"]
pair = files + ["--budget-us", "1e9"]
contact = pair + ["--scenario", "contact", "--count", "20"]
exact = ["--static", tmp + "/block.dist.vdb", "--moving", tmp + "/peg.hps", "--validate", "exact",
         "--static-mesh", samples + "/block-with-hole.stl", "--moving-mesh", samples + "/peg.stl", "--scenario", "trajectory", "--count", "4"]
poses = lambda r: r["poses"]
# option: (tool, run A, run B, what differs between their --json / files), or the test that covers it.
T = {
 "--count": ("haptic-query", contact, pair + ["--scenario", "contact", "--count", "7"], lambda r: r["queries"]),
 "--seed": ("haptic-query", contact + ["--write-poses", tmp + "/p.json"], contact + ["--seed", "2", "--write-poses", tmp + "/p.json"], "p.json"),
 "--depth": ("haptic-query", contact + ["--write-poses", tmp + "/p.json"], contact + ["--depth", "0.1", "--write-poses", tmp + "/p.json"], "p.json"),
 "--mode": ("haptic-query", contact, contact + ["--mode", "segmented", "--level", "1"], lambda r: r["mode"]),
 "--level": ("haptic-query", contact + ["--mode", "segmented", "--level", "1"], contact + ["--mode", "segmented", "--level", "2"], lambda r: r["mean_spheres_tested"]),
 "--budget-us": ("haptic-query", files + ["--scenario", "contact", "--count", "20"], contact, lambda r: r["budget_us"]),
 "--budget-tests": ("haptic-query", contact + ["--mode", "time-critical"], contact + ["--mode", "time-critical", "--budget-tests", "1"], lambda r: r["interrupted"]),
 "--max-over-budget": ("haptic-query", contact, contact + ["--max-over-budget", "0.5"], lambda r: r["criterion"]),
 "--warmup": ("haptic-query", contact, contact + ["--warmup", "3"], lambda r: r["warmup"]),
 "--cfm": ("haptic-query", contact + ["--mode", "time-critical", "--budget-tests", "1"],
           contact + ["--mode", "time-critical", "--budget-tests", "1", "--cfm", tmp + "/peg.hcfm"], lambda r: r.get("cfm_contacts")),
 "--precision": ("haptic-distance", [samples + "/block-with-hole.stl", tmp + "/block.vdb", "-o", tmp + "/d.vdb", "--encoding", "scaled"],
                 [samples + "/block-with-hole.stl", tmp + "/block.vdb", "-o", tmp + "/d.vdb", "--encoding", "scaled", "--precision", "3"],
                 lambda r: r["precision"]),
 "--csv": ("haptic-query", contact, contact + ["--csv", tmp + "/f.csv"], "f.csv"),
 "--report": ("haptic-query", exact, exact + ["--report", tmp + "/f.json"], "f.json"),
 "--write-poses": ("haptic-query", exact, exact + ["--write-poses", tmp + "/f.json"], "f.json"),
 "--junit": ("haptic-query", contact, contact + ["--junit", tmp + "/f.xml"], "f.xml"),
 "--plot": ("haptic-query", contact, contact + ["--plot", tmp + "/f.png"], "f.png"),
 "--static-mesh": ("haptic-query", exact, None, "required: without it --validate exact is a usage error"),
 "--moving-mesh": ("haptic-query", exact, None, "required: without it --validate exact is a usage error"),
 "--moving-octree": "octree_test.sh", "--static-octree": "octree_test.sh", "--ist-level": "octree_test.sh",
 "--ist-max-contacts": "octree_test.sh", "--ist-no-one-child": "octree_test.sh", "--ist-no-side": "octree_test.sh",
 "--fail-on-tunnel": "exact_validate_test.sh", "--validate": "exact_validate_test.sh",
 "--scene": "scene_query_test.sh", "--tool": "scene_query_test.sh", "--tool-files": "scene_query_test.sh",
 "--target": "scene_query_test.sh", "--static": "query_test.sh", "--moving": "query_test.sh",
}
bad = 0
def run(tool, args):
    for f in ("p.json", "f.csv", "f.json", "f.xml", "f.png"):
        if os.path.exists(os.path.join(tmp, f)): os.remove(os.path.join(tmp, f))
    p = subprocess.run([os.path.join(bin_dir, tool)] + args + ["--json"], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr

# Every option with modes is in the table.
wanted = set()
for s in stages.values():
    if s["available"]:
        wanted |= {p["option"] for p in s["params"] if p.get("applies")}
for tool in ("haptic-query",):
    h = json.load(open(os.path.join(tmp, tool + ".help.json")))
    wanted |= {o["name"] for o in h["options"] if "modes" in o}
for o in sorted(wanted - set(T)):
    bad += 1
    print("FAIL: %s serves only some modes but no effect is checked" % o)

for option, case in T.items():
    if isinstance(case, str):
        print("ok: %s: its effect is checked in %s" % (option, case))
        continue
    tool, a, b, what = case
    if b is None:  # required inside its mode: the mode without it is refused
        without = [x for i, x in enumerate(a) if x != option and (i == 0 or a[i - 1] != option)]
        code, _, err = run(tool, without)
        ok = code == 2 and option in err
        print(("ok" if ok else "FAIL") + ": %s %s" % (option, what))
        bad += not ok
        continue
    code_a, out_a, err_a = run(tool, a)
    fa = open(os.path.join(tmp, what), "rb").read() if isinstance(what, str) and os.path.exists(os.path.join(tmp, what)) else None
    code_b, out_b, err_b = run(tool, b)
    fb = open(os.path.join(tmp, what), "rb").read() if isinstance(what, str) and os.path.exists(os.path.join(tmp, what)) else None
    if code_a not in (0, 1) or code_b not in (0, 1):
        bad += 1
        print("FAIL: %s: exit %d / %d: %s %s" % (option, code_a, code_b, err_a[:200], err_b[:200]))
        continue
    if isinstance(what, str):
        differs = fb is not None and fb != fa
        shown = "%s: %s" % (what, "not written" if fb is None else "written" if fa is None else
                            "differs" if differs else "the same")
    else:
        va, vb = what(json.loads(out_a)), what(json.loads(out_b))
        differs = va != vb
        shown = "%r -> %r" % (va, vb)
    print(("ok" if differs else "FAIL") + ": %s %s has an effect (%s)" % (tool, option, shown))
    bad += not differs
sys.exit(1 if bad else 0)
EOF_PY

# The defect as reported: --csv with --validate exact wrote nothing and exited 0.
expect_exit 2 "$q" --static "$TMP/block.dist.vdb" --moving "$TMP/peg.hps" --validate exact --static-mesh "$SAMPLES/block-with-hole.stl" \
    --moving-mesh "$SAMPLES/peg.stl" --scenario trajectory --count 4 --csv "$TMP/exact.csv"
expect_one_error_line
expect_grep "^haptic-query: --csv applies only to timing checks and --scene, not --validate exact$" "$TMP/err"
[ ! -e "$TMP/exact.csv" ] && pass "no CSV written" || fail "a CSV was written"
finish
