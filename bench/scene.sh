#!/usr/bin/env bash
# Sourced by bench/run.sh (or run alone: bench/scene.sh [BIN_DIR]): haptic-query --scene on a scene
# of 1,000 placed parts made of 10 geometries (the bunny, fandisk and rocker-arm of HP_MESHES and
# seven sample meshes, each scaled to the bunny's longest side, on a lattice 1.25 of that side
# apart, seeded random rotations), prepared by haptic-pipeline --assembly at the bunny's 0.0005; the
# tool is the paper's bunny shell (pointshell at 0.0007, about 35k points); 2,000 contact poses,
# each against one part in turn; one thread. Prints bench_scene's row (load time, broad phase,
# frame versus the same pairs alone), then bench/scene_load.py's row (haptic-query's load and peak
# RSS against the 10 geometries placed once), and keeps the prepared scene in $SCENE_BENCH_DIR when set.
if [ -z "${results:-}" ]; then  # run alone
    set -uo pipefail
    cd "$(dirname "$0")/.."
    bin=${1:-build/bin}
    meshes=${HP_MESHES:-../shared/meshes}
    results=/dev/stdout
fi
if [ -x "$bin/bench_scene" ] && [ -f "$meshes/stanford-bunny.obj" ] && [ -f "$meshes/fandisk.obj" ] &&
    [ -f "$meshes/rocker-arm.obj" ]; then
    echo "bench: scene query, 1000 parts of 10 geometries" >&2
    scene_dir=${SCENE_BENCH_DIR:-$(mktemp -d)}
    mkdir -p "$scene_dir"
    if [ ! -s "$scene_dir/prepared/scene.json" ]; then
        python3 bench/scene_assembly.py "$scene_dir/parts.gltf" 1000 1.25 "$meshes/stanford-bunny.obj" "$meshes/fandisk.obj" \
            "$meshes/rocker-arm.obj" sample_meshes/{bracket,cup,gear,sphere,seam-cube,two-boxes,half-pipe}.obj
        cat >"$scene_dir/pipeline.json" <<'JSON'
{"name": "scene-bench", "stages": [
  {"stage": "voxelize", "voxel_size": 0.0005},
  {"stage": "distance", "encoding": "float"}]}
JSON
        t0=$(date +%s.%N)
        "$bin/haptic-pipeline" "$scene_dir/pipeline.json" "$scene_dir/parts.gltf" --assembly -o "$scene_dir/prepared" \
            -j 1 --threads 1 --quiet
        echo "bench: scene prepared in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}') s" >&2
    elif ! grep -q '"sampler"' "$scene_dir/prepared/scene.json"; then
        # A kept scene without prepared samplers: --resume keeps its geometries and adds them.
        "$bin/haptic-pipeline" "$scene_dir/pipeline.json" "$scene_dir/parts.gltf" --assembly -o "$scene_dir/prepared" \
            -j 1 --threads 1 --resume --quiet
    fi
    if [ ! -s "$scene_dir/tool.hps" ]; then
        "$bin/haptic-voxelize" "$meshes/stanford-bunny.obj" --voxel-size 0.0007 -o "$scene_dir/tool.vdb" --quiet
        "$bin/haptic-distance" "$meshes/stanford-bunny.obj" "$scene_dir/tool.vdb" -o "$scene_dir/tool.dist.vdb" --quiet
        "$bin/haptic-pointshell" "$meshes/stanford-bunny.obj" "$scene_dir/tool.dist.vdb" -o "$scene_dir/tool.ps.hps" --quiet
        "$bin/haptic-spheretree" "$scene_dir/tool.ps.hps" -o "$scene_dir/tool.hps" --quiet
    fi
    "$bin/bench_scene" "$scene_dir/prepared/scene.json" "$scene_dir/tool.hps" --count 2000 --seed 1 >>"$results"
    # Peers: FCL and Bullet on the same scene (the triangles of its source file), the bunny mesh as
    # the tool and bench_scene's poses, frame by frame beside ours in one process (bench_scene_peers):
    # a row each for ours, FCL and Bullet on all 2,000 poses (SCENE_PEER_POSES=N: about N of them),
    # and ours in time-critical mode with SCENE_BUDGET_TESTS (2,000) sphere tests per frame.
    if [ -x "$bin/bench_scene_peers" ]; then
        echo "bench: scene query beside FCL and Bullet" >&2
        "$bin/bench_scene_peers" "$scene_dir/prepared/scene.json" "$scene_dir/tool.hps" "$meshes/stanford-bunny.obj" \
            --count 2000 --seed 1 --peer-poses "${SCENE_PEER_POSES:-0}" --budget-tests "${SCENE_BUDGET_TESTS:-2000}" >>"$results"
    fi
    # The load as a process, and its memory against the 10 geometries placed once (scene-once.json:
    # the first part of each geometry, the same files): the same haptic-query command on both,
    # alternated, under /usr/bin/time -v; one row with both peak RSS and their ratio.
    python3 bench/scene_load.py "$bin/haptic-query" "$scene_dir/prepared/scene.json" "$scene_dir/tool.hps" >>"$results"
    [ -z "${SCENE_BENCH_DIR:-}" ] && rm -rf "$scene_dir"
fi
