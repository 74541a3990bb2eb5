#!/usr/bin/env bash
# bench_scene_peers (make bench's scene query beside FCL and Bullet) on a small scene: eight closed
# parts (spheres and cubes) on a lattice, a sphere as the tool, contact poses against each part in
# turn. FCL and Bullet are the independent check: on closed meshes pressed 3 voxels deep, the parts
# they find touched by triangle crossings are the parts ours finds touched, but for grazing ones.
# Skipped (77) when the build has no bench_scene_peers (FCL or Bullet not found).
source "$(dirname "$0")/lib.sh"
peers="$HP_BIN/bench_scene_peers"
[ -x "$peers" ] || { echo "skip: no $peers"; exit 77; }

python3 "$HP_SOURCE_DIR/bench/scene_assembly.py" "$TMP/parts.gltf" 8 1.25 "$SAMPLES/sphere.obj" "$SAMPLES/seam-cube.obj"
cat >"$TMP/pipe.json" <<'JSON'
{"name": "scene-peers-test", "stages": [
  {"stage": "voxelize", "voxel_size": 0.05},
  {"stage": "distance", "encoding": "float"}]}
JSON
expect_exit 0 "$HP_BIN/haptic-pipeline" "$TMP/pipe.json" "$TMP/parts.gltf" --assembly -o "$TMP/prep" -j 1 --quiet
"$HP_BIN/haptic-voxelize" "$SAMPLES/sphere.obj" --voxel-size 0.07 -o "$TMP/tool.vdb" --quiet &&
    "$HP_BIN/haptic-distance" "$SAMPLES/sphere.obj" "$TMP/tool.vdb" -o "$TMP/tool.dist.vdb" --quiet &&
    "$HP_BIN/haptic-pointshell" "$SAMPLES/sphere.obj" "$TMP/tool.dist.vdb" -o "$TMP/tool.ps.hps" --quiet &&
    "$HP_BIN/haptic-spheretree" "$TMP/tool.ps.hps" -o "$TMP/tool.hps" --quiet || fail "cannot make the tool"

expect_exit 0 "$peers" "$TMP/prep/scene.json" "$TMP/tool.hps" "$SAMPLES/sphere.obj" --count 40 --seed 3 --depth 3 \
    --peer-poses 0 --warmup 1
cp "$TMP/out" "$TMP/rows.jsonl"
row() { python3 -c 'import json,sys; rows={r["stage"]: r for r in map(json.loads, open(sys.argv[1]))}; r=rows[sys.argv[2]]; print(eval(sys.argv[3]))' "$TMP/rows.jsonl" "$@"; }
check "three rows" "$(wc -l <"$TMP/rows.jsonl")" 3
for stage in scene-vps scene-fcl scene-bullet; do
    check "$stage: every pose a frame" "$(row "$stage" 'r["frames"]')" 40
    check "$stage: at least one part touched per frame on average" "$(row "$stage" 'r["parts_touched_mean"] >= 1')" True
done
# Every part ours touches, the peers touch too; a part only a peer touches is a grazing contact
# (the sampled field rounds the cubes' edges by up to a voxel): under 2 voxels by the peer's depth.
for stage in scene-fcl scene-bullet; do
    check "$stage: touches every part ours touches" "$(row "$stage" 'r["agreement"]["parts_ours_only"]')" 0
    check "$stage: and most frame by frame" "$(row "$stage" 'r["agreement"]["frames_equal"] >= 30')" True
    check "$stage: what only it touches is grazing" "$(row "$stage" 'r["agreement"]["peer_only_deepest_voxels"] < 2')" True
done
check "both touch parts" "$(row scene-fcl 'r["agreement"]["parts_both"] >= 40')" True
check "ratios beside ours" "$(row scene-fcl '"p99" in r["ratio_thread_cpu"] and "p50" in r["ratio_wall"]')" True

# The triangles must be those the scene was prepared from: another file is refused in one line.
expect_exit 3 "$peers" "$TMP/prep/scene.json" "$TMP/tool.hps" "$SAMPLES/sphere.obj" --count 4 \
    --source "$SAMPLES/sphere.obj"
expect_one_error_line
expect_grep 'sphere.obj: is not the file the scene was prepared from' "$TMP/err"
expect_exit 3 "$peers" "$TMP/prep/missing.json" "$TMP/tool.hps" "$SAMPLES/sphere.obj" --count 4
expect_one_error_line
expect_exit 2 "$peers" "$TMP/prep/scene.json"
finish
