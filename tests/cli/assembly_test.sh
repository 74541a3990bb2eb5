#!/usr/bin/env bash
# Assemblies end to end (docs/scene.md): haptic-dump --parts, --part on the executables,
# haptic-pipeline --assembly and its scene.json (byte-identical to the executables run with --part,
# --resume, shards + merge), haptic-dump of scene.json and --check, and bad input (exit 3, one line).
source "$(dirname "$0")/lib.sh"
pipe="$HP_BIN/haptic-pipeline"
dump="$HP_BIN/haptic-dump"
P="$HP_SOURCE_DIR/pipelines"
make_assembly() { python3 "$HP_SOURCE_DIR/tests/cli/make_assembly.py" "$@"; }
make_assembly pegs "$TMP/pegs.gltf" 5
make_assembly nan "$TMP/nan.gltf"
make_assembly broken "$TMP/broken.gltf"
make_assembly allbroken "$TMP/allbroken.gltf"
make_assembly groups "$TMP/groups.obj"
# Small grids: the stages are tested elsewhere; the timing check gets a budget no loaded machine misses.
small=(--set voxelize.resolution=24 --set query.count=20 --set query.budget_us=1000000)

# --- haptic-dump --parts ------------------------------------------------------------------------
expect_exit 0 "$dump" "$TMP/pegs.gltf" --parts --json
cp "$TMP/out" "$TMP/parts.json"
check "parts" "$(json_get "$TMP/parts.json" 'len(j["parts"])')" 6
check "geometries" "$(json_get "$TMP/parts.json" 'len(j["geometries"])')" 2
check "peg instances" "$(json_get "$TMP/parts.json" 'j["geometries"][1]["instances"]')" 5
check "peg#2 geometry" "$(json_get "$TMP/parts.json" '[p["geometry"] for p in j["parts"] if p["name"]=="peg#2"][0]')" g1
# make_assembly.py puts peg i at x = -0.02 + 0.04 (i % 3) / 2, rotated 0.3 i rad about z.
check "peg#2 position x" "$(json_get "$TMP/parts.json" 'round(j["parts"][2]["position"][0], 6)')" 0.0
check "peg#2 quaternion z" "$(json_get "$TMP/parts.json" 'round(j["parts"][2]["quaternion"][3], 6)')" \
      "$(python3 -c 'import math; print(round(math.sin(0.15), 6))')"
# The matrix is the quaternion's rotation and the position (row-major, independent of the tool's own code).
python3 - "$TMP/parts.json" <<'PY' && pass "matrix agrees with position and quaternion" || fail "matrix"
import json, sys
for p in json.load(open(sys.argv[1]))["parts"]:
    w, x, y, z = p["quaternion"]; t = p["position"]; m = p["matrix"]
    r = [[1-2*(y*y+z*z), 2*(x*y-w*z), 2*(x*z+w*y)], [2*(x*y+w*z), 1-2*(x*x+z*z), 2*(y*z-w*x)], [2*(x*z-w*y), 2*(y*z+w*x), 1-2*(x*x+y*y)]]
    for i in range(3):
        for k in range(3): assert abs(m[4*i+k] - r[i][k]) < 1e-12
        assert abs(m[4*i+3] - t[i]) < 1e-12
    assert m[12:] == [0, 0, 0, 1]
PY
expect_exit 0 "$dump" "$TMP/pegs.gltf" --parts
expect_grep "parts +6 \(2 distinct geometries\)" "$TMP/out"
expect_grep "peg#5" "$TMP/out"
expect_exit 0 "$dump" "$TMP/groups.obj" --parts --json
check "OBJ groups are parts" "$(json_get "$TMP/out" '" ".join(sorted(p["name"].split("/")[-1] for p in j["parts"]))')" "left middle right"
expect_exit 0 "$dump" "$TMP/pegs.gltf" --part 'peg#3'
expect_grep "^part +peg \(geometry @1\)" "$TMP/out"

# --- bad input: exit 3, one line naming the file and the part --------------------------------
expect_exit 3 "$dump" "$TMP/pegs.gltf" --part nope
expect_one_error_line
expect_grep "pegs.gltf: no part 'nope' \(6 parts: plate, peg, peg#2" "$TMP/err"
expect_exit 3 "$HP_BIN/haptic-voxelize" "$TMP/pegs.gltf" --part 9 -o "$TMP/never.vdb"
expect_one_error_line
[ ! -e "$TMP/never.vdb" ] && pass "nothing written" || fail "a file was written"
expect_exit 3 "$dump" "$TMP/nan.gltf" --parts
expect_one_error_line
expect_grep "nan.gltf: part 'lost': its node transform has a NaN or infinite entry" "$TMP/err"
expect_exit 3 "$pipe" "$P/vps-default.json" "$TMP/nan.gltf" --assembly -o "$TMP/nanout"
expect_grep "part 'lost'" "$TMP/err"
head -c 700 "$TMP/pegs.gltf" > "$TMP/truncated.gltf"
expect_exit 3 "$dump" "$TMP/truncated.gltf" --parts
expect_one_error_line
expect_exit 2 "$pipe" "$P/vps-default.json" "$TMP/pegs.gltf" "$TMP/groups.obj" --assembly -o "$TMP/two"

# --- haptic-pipeline --assembly ----------------------------------------------------------------
expect_exit 0 "$pipe" "$P/vps-default.json" "$TMP/pegs.gltf" --assembly -o "$TMP/asm" "${small[@]}" --json
check "--json names the scene" "$(json_get "$TMP/out" 'j["scene"]')" "$TMP/asm/scene.json"
S="$TMP/asm/scene.json"
expect_json "$S"
check "format" "$(json_get "$S" 'j["format"]')" hapticprep-scene
check "two geometries prepared" "$(json_get "$S" '" ".join(g["id"] + ":" + g["status"] for g in j["geometries"])')" "g0:ok g1:ok"
check "six parts" "$(json_get "$S" 'len(j["parts"])')" 6
check "no report among the files" "$(json_get "$S" '" ".join(sorted(j["geometries"][1]["files"]))')" "cfm distance pointshell sampler tree voxelmap"
# The prepared sampler beside the field: the same bytes on one thread.
expect_exit 0 "$pipe" "$P/vps-default.json" "$TMP/pegs.gltf" --assembly -o "$TMP/asm1" "${small[@]}" --threads 1 --quiet
for g in g0 g1; do
    cmp -s "$TMP/asm/$g/distance.hsmp" "$TMP/asm1/$g/distance.hsmp" && pass "$g/distance.hsmp: the same bytes on one thread" ||
        fail "$g/distance.hsmp differs on one thread"
done
rm -rf "$TMP/asm1"
# The distance stage writes each sampler from the field in memory; the one --resume makes again from
# the field file (read back, as the query would read it) is the same, bytes compared, float and double.
for enc in float double; do
    expect_exit 0 "$pipe" "$P/vps-default.json" "$TMP/pegs.gltf" --assembly -o "$TMP/asm2" "${small[@]}" \
        --set distance.encoding=$enc --quiet
    check "$enc: the distance stage timed the sampler" \
        "$(json_get "$TMP/asm2/manifest.json" '[s["report"]["seconds"]["sampler"] > 0 for m in j["meshes"] for s in m["stages"] if s["stage"] == "distance"]')" \
        "[True, True]"
    for g in g0 g1; do mv "$TMP/asm2/$g/distance.hsmp" "$TMP/asm2/$g/from-memory.hsmp"; done
    expect_exit 0 "$pipe" "$P/vps-default.json" "$TMP/pegs.gltf" --assembly -o "$TMP/asm2" "${small[@]}" \
        --set distance.encoding=$enc --quiet --resume
    for g in g0 g1; do
        cmp -s "$TMP/asm2/$g/distance.hsmp" "$TMP/asm2/$g/from-memory.hsmp" &&
            pass "$enc $g: the sampler from memory is the one from the field file" || fail "$enc $g: the samplers differ"
    done
    rm -rf "$TMP/asm2"
done
# One voxel size for the assembly: its longest world extent (the plate, 0.06 m) / 24.
check "voxel size" "$(json_get "$S" 'round(j["voxel_size"] / (0.06 / 24), 6)')" 1.0
# Version 2 records XXH3 ("xxh3:" and 16 hex digits); the same scene with the FNV-1a hashes of
# version 1, computed here, still checks: both algorithms are verified.
python3 - "$S" "$TMP/asm/scene-v1.json" <<'PY' && pass "scene.json sizes are the files', its hashes XXH3; as version 1 with FNV" || fail "scene.json hashes"
import json, os, re, sys
s = json.load(open(sys.argv[1])); d = os.path.dirname(sys.argv[1])
assert s["format_version"] == 2
def fnv(path):
    h = 0xcbf29ce484222325
    for b in open(path, "rb").read(): h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h
for g in s["geometries"]:
    for f in g["files"].values():
        p = os.path.join(d, f["file"])
        assert os.path.getsize(p) == f["bytes"] and re.fullmatch("xxh3:[0-9a-f]{16}", f["hash"]), p
        f["hash"] = fnv(p)
s["format_version"] = 1
json.dump(s, open(sys.argv[2], "w"))
PY
expect_exit 0 "$dump" "$TMP/asm/scene-v1.json" --check
rm -f "$TMP/asm/scene-v1.json"
# The peg's files are the executables' with --part on any instance, at the scene's voxel size.
vs=$(json_get "$S" 'repr(j["voxel_size"])')
mkdir -p "$TMP/exe" && cd "$TMP/exe" || exit 1
"$HP_BIN/haptic-voxelize" ../pegs.gltf --part 'peg#4' --voxel-size "$vs" -o voxelize.vdb -q &&
  "$HP_BIN/haptic-distance" ../pegs.gltf voxelize.vdb --gradient -o distance.vdb -q &&
  "$HP_BIN/haptic-pointshell" ../pegs.gltf distance.vdb -o pointshell.hps -q &&
  "$HP_BIN/haptic-spheretree" pointshell.hps -o spheretree.hps -q &&
  "$HP_BIN/haptic-cfm" ../pegs.gltf spheretree.hps -o cfm.hcfm -q || fail "the executables with --part"
cd - >/dev/null || exit 1
for f in voxelize.vdb distance.vdb pointshell.hps spheretree.hps cfm.hcfm; do
    cmp -s "$TMP/exe/$f" "$TMP/asm/g1/$f" && pass "g1/$f = the executables' with --part peg#4" || fail "g1/$f differs from the executables'"
done
# Flattening stays the default: the whole file is one mesh.
expect_exit 0 "$dump" "$TMP/pegs.gltf" --json
check "flattened triangles" "$(json_get "$TMP/out" 'j["mesh"]["triangles"]')" $((12 + 5 * 64))

# --- haptic-dump scene.json and --check --------------------------------------------------------
expect_exit 0 "$dump" "$S"
expect_grep "^kind +scene" "$TMP/out"
expect_grep "^parts +6 of 2 geometries" "$TMP/out"
expect_exit 0 "$dump" "$S" --check
cp -r "$TMP/asm" "$TMP/changed"
printf 'x' >> "$TMP/changed/g1/cfm.hcfm"
rm "$TMP/changed/g0/voxelize.vdb"
expect_exit 1 "$dump" "$TMP/changed/scene.json" --check
expect_grep "PROBLEM +part 'peg': .*cfm.hcfm \(cfm\) changed" "$TMP/out"
expect_grep "PROBLEM +part 'plate': .*voxelize.vdb \(voxelmap\) is missing" "$TMP/out"
head -c 300 "$S" > "$TMP/cut.json"
expect_exit 3 "$dump" "$TMP/cut.json"
expect_one_error_line
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["parts"][1]["geometry"]="g7"; json.dump(j, open(sys.argv[2], "w"))' "$S" "$TMP/badgeo.json"
expect_exit 3 "$dump" "$TMP/badgeo.json"
expect_grep "parts\[1\]\.geometry: part 'peg' names no geometry" "$TMP/err"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["format_version"]=3; json.dump(j, open(sys.argv[2], "w"))' "$S" "$TMP/newer.json"
expect_exit 3 "$dump" "$TMP/newer.json"
expect_grep "newer than this build reads" "$TMP/err"

# --- --resume: nothing redone, the same scene.json ---------------------------------------------
cp "$S" "$TMP/scene.first.json"
expect_exit 0 "$pipe" "$P/vps-default.json" "$TMP/pegs.gltf" --assembly -o "$TMP/asm" "${small[@]}" --resume --json
check "both geometries resumed" "$(json_get "$TMP/out" 'j["summary"]["resumed"]')" 2
cmp -s "$S" "$TMP/scene.first.json" && pass "resume writes the same scene.json" || fail "scene.json changed on resume"

# --- shards over geometries, merge, then --resume writes the scene -----------------------------
for i in 1 2; do
    expect_exit 0 "$pipe" "$P/vps-default.json" "$TMP/pegs.gltf" --assembly -o "$TMP/sh" "${small[@]}" --shard "$i/2"
done
[ ! -e "$TMP/sh/scene.json" ] && pass "a shard writes no scene.json" || fail "a shard wrote scene.json"
expect_exit 0 "$pipe" --merge "$TMP"/sh/manifest.shard-*-of-2.json -o "$TMP/sh"
expect_exit 0 "$pipe" "$P/vps-default.json" "$TMP/pegs.gltf" --assembly -o "$TMP/sh" "${small[@]}" --resume
python3 - "$TMP/sh/scene.json" "$S" <<'PY' && pass "sharded scene = the scene of one run" || fail "sharded scene differs"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for k in ("source",): a[k]["file"] = b[k]["file"]
assert a == b
PY

# --- a geometry that fails: the others finish (exit 1); none prepared: exit 3 ------------------
expect_exit 1 "$pipe" "$P/vps-default.json" "$TMP/broken.gltf" --assembly -o "$TMP/broken" "${small[@]}"
check "statuses" "$(json_get "$TMP/broken/scene.json" '" ".join(g["status"] for g in j["geometries"])')" "ok failed"
expect_grep "zero area|degenerate" "$TMP/broken/scene.json"
expect_exit 1 "$dump" "$TMP/broken/scene.json" --check
expect_grep "PROBLEM +part 'flat': geometry g1 was not prepared" "$TMP/out"
expect_exit 3 "$pipe" "$P/vps-default.json" "$TMP/allbroken.gltf" --assembly -o "$TMP/allbroken" "${small[@]}"

# --- real multi-part files of Debian's assimp-testmodels ------------------------------------------
M=/usr/share/assimp/models
if [ -f "$M/glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb" ]; then
    engine="$M/glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb"
    expect_exit 0 "$dump" "$engine" --parts --json
    check "engine: parts of geometries" "$(json_get "$TMP/out" '"%d of %d" % (len(j["parts"]), len(j["geometries"]))')" "67 of 29"
    check "engine: the most used geometry" "$(json_get "$TMP/out" 'max(g["instances"] for g in j["geometries"])')" 20
    expect_exit_within 0 300 "$pipe" "$P/voxelmap-only.json" "$engine" --assembly -o "$TMP/engine" --set voxelize.resolution=48
    check "engine: every geometry prepared" "$(json_get "$TMP/engine/scene.json" 'sum(g["status"] == "ok" for g in j["geometries"])')" 29
    expect_exit 0 "$dump" "$TMP/engine/scene.json" --check
    expect_exit 3 "$dump" "$M/glTF2/RecursiveNodes/RecursiveNodes.gltf" --parts
    expect_one_error_line
    expect_exit 3 "$dump" "$M/glTF2/BoxWithInfinites-glTF-Binary/BoxWithInfinites.glb" --parts
    expect_one_error_line
else
    echo "skipped: assimp-testmodels is not installed"
fi

finish
