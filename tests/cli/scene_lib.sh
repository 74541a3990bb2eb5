# Shared by the CLI tests of haptic-query --scene (sourced after lib.sh).
# make_pegs_scene N [STAGES]: a plate with N instanced pegs (make_assembly.py) prepared by
# haptic-pipeline --assembly into $TMP/prep, STAGES (JSON objects, each after a comma) after the
# spheretree stage; sets $scene (its scene.json) and $tree (the peg geometry's tree file).
make_pegs_scene() {
    local more="${2:-}"
    python3 "$HP_SOURCE_DIR/tests/cli/make_assembly.py" pegs "$TMP/pegs.gltf" "$1"
    cat >"$TMP/pipe.json" <<'JSON'
{"name": "scene-test", "stages": [
  {"stage": "voxelize", "resolution": 64},
  {"stage": "distance", "encoding": "float"},
  {"stage": "pointshell"},
  {"stage": "spheretree", "k": 4, "seed": 1}MORE]}
JSON
    python3 -c 'import sys; p = sys.argv[1]; s = open(p).read().replace("MORE", sys.argv[2]); open(p, "w").write(s)' "$TMP/pipe.json" "$more"
    expect_exit 0 "$HP_BIN/haptic-pipeline" "$TMP/pipe.json" "$TMP/pegs.gltf" --assembly -o "$TMP/prep" --quiet
    scene="$TMP/prep/scene.json"
    [ -s "$scene" ] && pass "scene.json written" || fail "no scene.json"
    tree=$(peg_file tree)
}
# peg_file KIND: the peg geometry's file of KIND (tree, cfm, octree) as $scene lists it.
peg_file() {
    python3 -c 'import json,sys,os; s=json.load(open(sys.argv[1])); print(os.path.join(os.path.dirname(sys.argv[1]), s["geometries"][1]["files"][sys.argv[2]]["file"]))' "$scene" "$1"
}
