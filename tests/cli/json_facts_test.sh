#!/usr/bin/env bash
# --json reports every fact the text prints. haptic-voxelize's text and --json of the same run
# (the same mesh and options) agree on the mesh, the grid, the fill, the voxel counts and the mode
# (dense or band, and why), field by field; then for every executable (haptic-query in each of its
# modes, on a pair and on a scene) and every kind of file haptic-dump describes, each number of the
# text, and each name of a declared choice it prints, is in the --json of the same run
# (text_in_json.py; times and latencies, which change between runs, are left out).
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

# The names of every choice the stages declare (fill methods, encodings, modes...; those of 4
# letters or more: "in" and "mm" are words of the text too), and the field modes: printed in the
# text, each must be in --json as well.
words=$("$HP_BIN/haptic-pipeline" --list-stages --json | python3 -c '
import json, sys
names = {c for s in json.load(sys.stdin)["stages"] for p in s["params"] for c in (p.get("choices") or []) if isinstance(c, str)}
print(",".join(sorted(n for n in names | {"dense", "band"} if len(n) >= 4)))')
[ -n "$words" ] && pass "the choices' names: $words" || fail "no choices listed by haptic-pipeline --list-stages --json"

# numbers_in_json NAME [KEY...] -- CMD...: CMD's text, then CMD --json; every number and every
# choice's name of the first in the second.
numbers_in_json() {
    local name=$1 keys=(); shift
    while [ "$1" != "--" ]; do keys+=("$1"); shift; done; shift
    expect_exit 0 "$@" || return
    cp "$TMP/out" "$TMP/text"
    expect_exit 0 "$@" --json || return
    if python3 "$HP_SOURCE_DIR/tests/cli/text_in_json.py" "$TMP/text" "$TMP/out" --words "$words" "${keys[@]}" >"$TMP/missing"; then
        pass "$name: every number of the text is in --json"
    else
        fail "$name: numbers of the text missing from --json:"; sed 's/^/    /' "$TMP/missing" >&2
    fi
}
peg="$SAMPLES/peg.stl"
numbers_in_json voxelize -- "$HP_BIN/haptic-voxelize" "$peg" --voxel-size 1 -o "$TMP/m.vdb"
numbers_in_json "voxelize --band" -- "$HP_BIN/haptic-voxelize" "$peg" --voxel-size 1 --band 2 -o "$TMP/b.vdb"
numbers_in_json distance -- "$HP_BIN/haptic-distance" "$peg" "$TMP/m.vdb" -o "$TMP/d.vdb"
numbers_in_json pointshell -- "$HP_BIN/haptic-pointshell" "$peg" "$TMP/d.vdb" -o "$TMP/s.hps"
numbers_in_json spheretree -- "$HP_BIN/haptic-spheretree" "$TMP/s.hps" -o "$TMP/t.hps"
numbers_in_json cfm -- "$HP_BIN/haptic-cfm" "$peg" "$TMP/t.hps" -o "$TMP/c.hcfm"
numbers_in_json octree -- "$HP_BIN/haptic-octree" "$TMP/m.vdb" -o "$TMP/o.hoct"
for f in "$peg" "$TMP/m.vdb" "$TMP/b.vdb" "$TMP/d.vdb" "$TMP/s.hps" "$TMP/t.hps" "$TMP/c.hcfm" "$TMP/o.hoct"; do
    numbers_in_json "dump $(basename "$f")" -- "$HP_BIN/haptic-dump" "$f"
    numbers_in_json "dump --check $(basename "$f")" -- "$HP_BIN/haptic-dump" "$f" --check
done
numbers_in_json "dump --parts" -- "$HP_BIN/haptic-dump" "$peg" --parts
numbers_in_json "dump --slice" -- "$HP_BIN/haptic-dump" "$TMP/d.vdb" --slice z=10
# The query's latencies and throughput differ between the two runs; its counts and forces do not.
query=("$HP_BIN/haptic-query" --static "$TMP/d.vdb" --moving "$TMP/t.hps" --threads 1 --seed 3)
numbers_in_json "query contact" "latency us" budget -- "${query[@]}" --scenario contact --count 40 --budget-us 1000000  # a budget no loaded machine misses
numbers_in_json "query time-critical" "latency us" budget -- "${query[@]}" --scenario contact --count 40 --mode time-critical --budget-tests 30 --budget-us 1000000
numbers_in_json "query --validate exact" -- "${query[@]}" --scenario random --count 20 --validate exact --static-mesh "$peg" --moving-mesh "$peg"
contact=(--scenario contact --count 40 --budget-us 1000000)
numbers_in_json "query segmented" "latency us" budget -- "${query[@]}" "${contact[@]}" --mode segmented --level 2
numbers_in_json "query --cfm" "latency us" budget -- "${query[@]}" "${contact[@]}" --mode time-critical --budget-tests 30 --cfm "$TMP/c.hcfm"
for mode in ist ist-brute; do
    numbers_in_json "query $mode" "latency us" budget -- "${query[@]}" "${contact[@]}" --mode "$mode" \
        --moving-octree "$TMP/o.hoct" --static-octree "$TMP/o.hoct"
done
# A scene's text: its frame latencies differ between the runs; its counts, parts and tools do not.
source "$HP_SOURCE_DIR/tests/cli/scene_lib.sh"
make_pegs_scene 2
on_scene=("$HP_BIN/haptic-query" --scene "$scene" --threads 1 --scenario contact --count 30 --budget-us 1000000)
latencies=("broad phase" "narrow phase" frame)
numbers_in_json "query --scene" "${latencies[@]}" -- "${on_scene[@]}" --tool peg
numbers_in_json "query --scene, two tools" "${latencies[@]}" -- "${on_scene[@]}" --tool peg --tool-files "$tree"
numbers_in_json "query --scene time-critical" "${latencies[@]}" -- "${on_scene[@]}" --tool peg --mode time-critical --budget-tests 40
# The pipeline's table holds per-stage times: its text is compared with the manifest of the same run.
expect_exit 0 "$HP_BIN/haptic-pipeline" "$HP_SOURCE_DIR/pipelines/voxelmap-only.json" "$peg" "$SAMPLES/cup.obj" -o "$TMP/pl"
if python3 "$HP_SOURCE_DIR/tests/cli/text_in_json.py" "$TMP/out" "$TMP/pl/manifest.json" >"$TMP/missing"; then
    pass "pipeline: every number of the text is in its manifest"
else
    fail "pipeline: numbers of the text missing from the manifest:"; sed 's/^/    /' "$TMP/missing" >&2
fi
# A warning printed on stderr is in --json's "warnings" too: an open mesh (the fill's warning),
# then another mesh than the one the voxelmap, field or tree was made from, with --force.
cup="$SAMPLES/cup.obj"
for step in "voxelize|$HP_BIN/haptic-voxelize $cup --resolution 16 -o $TMP/c.vdb" \
            "distance|$HP_BIN/haptic-distance $peg $TMP/c.vdb -o $TMP/cd.vdb --force" \
            "pointshell|$HP_BIN/haptic-pointshell $peg $TMP/cd.vdb -o $TMP/cs.hps --force" \
            "cfm|$HP_BIN/haptic-cfm $cup $TMP/t.hps -o $TMP/cc.hcfm --force"; do
    name=${step%%|*}
    read -r -a cmd <<<"${step#*|}"
    expect_exit 0 "${cmd[@]}" || continue
    grep ': warning: ' "$TMP/err" | sed 's/^[^:]*: warning: //' >"$TMP/warned"
    expect_exit 0 "${cmd[@]}" --json || continue
    python3 - "$TMP/warned" "$TMP/out" <<'EOF_PY' && pass "$name: its warnings are in --json" || fail "$name: a warning is missing from --json"
import json, sys
warned = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
listed = json.load(open(sys.argv[2])).get("warnings", [])
sys.exit(0 if warned and all(w in listed for w in warned) else 1)
EOF_PY
done
# The checker itself: a number the JSON does not hold is reported.
printf 'grid         14 x 14 x 35 voxels\n' >"$TMP/text"
printf '{"dims": [14, 14, 34]}\n' >"$TMP/j.json"
python3 "$HP_SOURCE_DIR/tests/cli/text_in_json.py" "$TMP/text" "$TMP/j.json" >/dev/null && fail "the checker misses a number" ||
    pass "the checker reports a number missing from the JSON"
# ... and a choice's name that the JSON does not hold, but not one it holds.
printf 'fill         scanline\nmode         dense: fits\n' >"$TMP/text"
printf '{"fill": "winding", "mode": "dense"}\n' >"$TMP/j.json"
python3 "$HP_SOURCE_DIR/tests/cli/text_in_json.py" "$TMP/text" "$TMP/j.json" --words "$words" >"$TMP/missing" && fail "the checker misses a name" ||
    { grep -q scanline "$TMP/missing" && ! grep -q dense "$TMP/missing" && pass "the checker reports a name missing from the JSON" ||
        fail "the checker reports other names than the missing one: $(cat "$TMP/missing")"; }
finish
