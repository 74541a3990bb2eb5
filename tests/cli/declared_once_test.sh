#!/usr/bin/env bash
# One declaration per option and per enum, in the sources under lib/ and apps/:
#  - no executable adds by hand an option that a stage declares (or the mesh options it shares);
#  - a stage's source declares each of its keys once (d(&Params::key, "key", ...));
#  - the names of the fill methods, of the CFM samplings and of the distance encodings are listed
#    once (fill_methods(), sampling_names(), vdb::kDistanceEncodingNames; "float" and "double" are
#    also OpenVDB's type names, so only "scaled" is looked for).
source "$(dirname "$0")/lib.sh"
src="$HP_SOURCE_DIR"
"$HP_BIN/haptic-pipeline" --list-stages --json > "$TMP/stages.json"
"$HP_BIN/haptic-dump" --help-json > "$TMP/dump.json"
python3 - "$TMP/stages.json" "$TMP/dump.json" "$src" <<'EOF_PY' && pass "every option is declared once" || fail "an option is declared twice"
import glob, json, os, re, sys
stages = [s for s in json.load(open(sys.argv[1]))["stages"] if s["available"]]
src = sys.argv[3]
bad = 0
def read(path): return open(path, encoding="utf-8").read()
mesh = ["--scale", "--units", "--part", "--linear-deflection", "--angular-deflection"]
dump_options = {o["name"] for o in json.load(open(sys.argv[2]))["options"]}
for o in mesh:
    if o not in dump_options:
        bad += 1; print("haptic-dump has no", o)
# An executable's hand-made options: none is one of its stage's keys, nor a mesh option.
tools = {s["tool"]: [p["option"] for p in s["params"]] for s in stages}
tools["haptic-dump"] = mesh
for tool, options in tools.items():
    files = [os.path.join(src, "apps", tool + ".cpp")] + glob.glob(os.path.join(src, "apps/common/*.cpp"))
    for f in files:
        for m in re.finditer(r'add_(?:option|flag)\(\s*"([^"]*)"', read(f)):
            names = m.group(1).split(",")
            for o in options:
                if o in names:
                    bad += 1; print("%s: %s is added by hand and declared by its stage" % (os.path.relpath(f, src), o))
# Each key of a stage: one d(...) in its stage file and the shared declarations.
for s in stages:
    text = read(os.path.join(src, "lib/pipeline/stage_%s.cpp" % s["stage"])) + read(os.path.join(src, "lib/pipeline/stage_common.hpp"))
    for p in s["params"]:
        n = len(re.findall(r'd\(&\w+::%s,\s*"%s"' % (p["key"], p["key"]), text))
        if n != 1:
            bad += 1; print("stage %s key %s: %d declarations" % (s["stage"], p["key"], n))
# The enums' names, each listed in one file: the fill methods (the JSON keys of the hybrid fill's
# counts aside), the closest feature maps' samplings and the distance encodings.
lists = {"lib/voxel/voxelize.cpp": ["scanline", "vote", "winding", "flood", "hybrid"],
         "lib/cfm/sampling.cpp": ["adaptive", "polar"], "formats/vdb.hpp": ["scaled"]}
for f in glob.glob(os.path.join(src, "lib/**/*.[ch]pp"), recursive=True) + glob.glob(os.path.join(src, "apps/**/*.[ch]pp"), recursive=True):
    rel = os.path.relpath(f, src)
    for i, line in enumerate(read(f).splitlines(), 1):
        if line.lstrip().startswith("//") or "fill_rules" in line: continue
        for home, names in lists.items():
            for name in names:
                if rel != home and '"%s"' % name in line:
                    bad += 1; print("%s:%d: \"%s\" is spelled again (its list is in %s)" % (rel, i, name, home))
sys.exit(1 if bad else 0)
EOF_PY
finish
