#!/usr/bin/env bash
# Two haptic-pipeline runs into one output folder: the second fails at once (exit 4, naming the
# first's pid) instead of both succeeding and the manifest losing the first run's meshes; shards
# of one batch still run side by side; a finished run leaves the folder free.
source "$(dirname "$0")/lib.sh"
pipe="$HP_BIN/haptic-pipeline"
vox_only="$HP_SOURCE_DIR/pipelines/voxelmap-only.json"
out="$TMP/batch"

# The first run is long enough (a fine voxelmap of the bunny) to be caught running.
big=(--set voxelize.resolution=400)
"$pipe" "$vox_only" "$MESHES/stanford-bunny.obj" -o "$out" "${big[@]}" --quiet >"$TMP/first.out" 2>"$TMP/first.err" &
first=$!
for _ in $(seq 1 200); do
    [ -e "$out/.manifest.json.lock" ] && break
    sleep 0.05
done
sleep 0.5  # the lock is taken right after the file is made; the voxelmap takes seconds more
expect_exit 4 "$pipe" "$vox_only" "$SAMPLES/peg.stl" -o "$out" --quiet
expect_one_error_line
expect_grep "batch: is being written by another haptic-pipeline \(pid $first\)" "$TMP/err"
wait $first
check "the first run succeeds" "$?" 0
check "its mesh is in the manifest" "$(json_get "$out/manifest.json" '[m["name"] for m in j["meshes"]]')" "['stanford-bunny']"

# Free again once the first has finished.
expect_exit 0 "$pipe" "$vox_only" "$SAMPLES/peg.stl" -o "$out" --quiet

# Shards of one batch write manifests of their own: two at once both succeed.
"$pipe" "$vox_only" "$MESHES/stanford-bunny.obj" "$SAMPLES/peg.stl" -o "$TMP/sh" --shard 1/2 "${big[@]}" --quiet 2>"$TMP/s1.err" &
s1=$!
expect_exit 0 "$pipe" "$vox_only" "$MESHES/stanford-bunny.obj" "$SAMPLES/peg.stl" -o "$TMP/sh" --shard 2/2 "${big[@]}" --quiet
wait $s1
check "shard 1 succeeds beside shard 2" "$?" 0
finish
