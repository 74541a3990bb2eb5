#!/usr/bin/env bash
# --json reports every fact the text prints: haptic-voxelize's text and --json of the same run
# (the same mesh and options) agree on the mesh, the grid, the fill, the voxel counts and the mode
# (dense or band, and why).
source "$(dirname "$0")/lib.sh"
vox="$HP_BIN/haptic-voxelize"
for band in 0 4; do
    expect_exit 0 "$vox" "$SAMPLES/peg.stl" --voxel-size 1 --band "$band" -o "$TMP/t.vdb"
    cp "$TMP/out" "$TMP/text"
    expect_exit 0 "$vox" "$SAMPLES/peg.stl" --voxel-size 1 --band "$band" -o "$TMP/j.vdb" --json
    expect_json "$TMP/out"
    python3 - "$TMP/text" "$TMP/out" <<'EOF_PY' && pass "band $band: the text's facts are in --json" || fail "band $band: a fact of the text is not in --json"
import json, re, sys
text = {l[:13].strip(): l[13:].rstrip("\n") for l in open(sys.argv[1]) if l[:13].strip()}
j = json.load(open(sys.argv[2]))
def commas(n): return "{:,}".format(n)
want = {
    "mesh": "%s: %s vertices, %s triangles, %s" % (j["mesh"]["source_name"], commas(j["mesh"]["vertices"]),
                                                  commas(j["mesh"]["triangles"]),
                                                  "watertight" if j["mesh"]["watertight"] else "not watertight"),
    "mode": j["mode_reason"],
}
ok = True
for key, value in want.items():
    if text.get(key) != value:
        ok = False
        print("%s: text %r, json %r" % (key, text.get(key), value))
g = j["grid"]
if not text["grid"].startswith("%d x %d x %d voxels (%s)" % (*g["dims"], commas(g["voxels"]))):
    ok = False; print("grid:", text["grid"], g)
if not text["fill"].startswith(j["fill"]):
    ok = False; print("fill:", text["fill"], j["fill"])
v, l = j["voxels"], j["layers"]
if text["voxels"] != "%s inside, %s surface, %s outside; layers %d .. %d" % (commas(v["inside"]), commas(v["surface"]),
                                                                          commas(v["outside"]), l["min"], l["max"]):
    ok = False; print("voxels:", text["voxels"], v, l)
sys.exit(0 if ok else 1)
EOF_PY
done
finish
