#!/usr/bin/env bash
# haptic-pipeline --shard auto, --log and --merge as a scheduler's tasks use them, without a
# scheduler: the variables Slurm and Kubernetes set are set here by hand. Also the example job
# scripts (examples/slurm) run as a task would run them. The same on a real cluster:
# slurm_cluster_test.sh.
source "$(dirname "$0")/lib.sh"
pipe="$HP_BIN/haptic-pipeline"
vo="$HP_SOURCE_DIR/pipelines/voxelmap-only.json"
small=(--set voxelize.resolution=16 --quiet)
meshes=("$SAMPLES/peg.stl" "$SAMPLES/gear.obj" "$SAMPLES/torus.off")
# A clean environment but for the scheduler's variables given.
task() { env -u SLURM_JOB_ID -u SLURM_ARRAY_JOB_ID -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_MIN \
    -u SLURM_ARRAY_TASK_MAX -u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_TASK_STEP -u JOB_COMPLETION_INDEX "$@"; }
# slurm_task ID MIN MAX CMD...: CMD as task ID of sbatch --array=MIN-MAX.
slurm_task() {
    local id=$1 min=$2 max=$3; shift 3
    task SLURM_JOB_ID=$((100 + id)) SLURM_ARRAY_JOB_ID=100 SLURM_ARRAY_TASK_ID="$id" SLURM_ARRAY_TASK_MIN="$min" \
        SLURM_ARRAY_TASK_MAX="$max" SLURM_ARRAY_TASK_COUNT=$((max - min + 1)) SLURM_ARRAY_TASK_STEP=1 "$@"
}

# --- no scheduler, or one that does not say enough: exit 2, one line, nothing written ----------
expect_exit 2 task "$pipe" "$vo" "${meshes[@]}" -o "$TMP/never" --shard auto
expect_one_error_line
expect_grep "^haptic-pipeline: --shard auto: neither SLURM_ARRAY_TASK_ID .* nor JOB_COMPLETION_INDEX" "$TMP/err"
expect_exit 2 task SLURM_JOB_ID=5 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/never" --shard auto/2
expect_grep "this Slurm job is not an array task" "$TMP/err"
expect_exit 2 task JOB_COMPLETION_INDEX=0 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/never" --shard auto
expect_grep "give it: --shard auto/N with N the job's completions" "$TMP/err"
expect_exit 2 slurm_task 3 3 3 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/never" --shard auto
expect_one_error_line
expect_grep "task ids start at 3 \(SLURM_ARRAY_TASK_MIN\)" "$TMP/err"
expect_exit 2 slurm_task 0 0 1 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/never" --shard auto/2
expect_grep "SLURM_ARRAY_TASK_ID is 0, not a shard number 1..2" "$TMP/err"
expect_exit 2 slurm_task 1 1 2 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/never" --shard auto/x
expect_exit 2 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/never" --log "$TMP/never/log-%I.txt"
expect_grep "%I stands for the shard's index or count, and there is no --shard" "$TMP/err"
[ ! -e "$TMP/never" ] && pass "no output folder after these errors" || fail "the errors left $TMP/never"

# --- a 0-based array (--array=0-1) with --shard auto: shards 1/2 and 2/2, per-shard logs -------
for id in 0 1; do
    expect_exit 0 slurm_task "$id" 0 1 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/a" --shard auto \
        --log "$TMP/a/logs/s-%I-of-%N.log" "${small[@]}"
done
check "task 0 ran shard 1/2, task 1 shard 2/2" \
    "$(json_get "$TMP/a/manifest.shard-1-of-2.json" '[m["name"] for m in j["meshes"]]') $(json_get "$TMP/a/manifest.shard-2-of-2.json" '[m["name"] for m in j["meshes"]]')" \
    "['gear', 'torus'] ['peg']"
check "both shards record the batch's names hash" \
    "$(python3 -c 'import json,sys; a,b=[json.load(open(f))["shard"]["names_hash"] for f in sys.argv[1:]]; print(a == b and len(a) == 16)' "$TMP/a/manifest.shard-1-of-2.json" "$TMP/a/manifest.shard-2-of-2.json")" True
expect_grep "start: .*shard 1/2 \(Slurm array job 100, task 0\), 2 of 3 meshes" "$TMP/a/logs/s-1-of-2.log"
expect_grep "mesh torus: ok in " "$TMP/a/logs/s-1-of-2.log"
expect_grep "end: 1 meshes, 1 ok \(0 resumed\), 0 failed; exit code 0" "$TMP/a/logs/s-2-of-2.log"
expect_exit 0 "$pipe" --merge "$TMP"/a/manifest.shard-*-of-2.json -o "$TMP/a"
check "merged: 3 ok" "$(json_get "$TMP/a/manifest.json" 'j["summary"]["ok"], "names_hash" in str(j["shard"])')" "(3, False)"
# Task 1 alone again (--array=1): without the count it would be 1/1; the folder's shards say 2.
expect_exit 2 slurm_task 1 1 1 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/a" --shard auto "${small[@]}"
expect_one_error_line
expect_grep "manifest.shard-1-of-2.json is a shard of a batch in 2 shards, this array has 1 tasks; .*--shard auto/2" "$TMP/err"
# ...with the count (auto/N: the task id is the shard), it resumes its shard.
expect_exit 0 slurm_task 1 1 1 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/a" --shard auto/2 --resume \
    --log "$TMP/a/logs/s-%I-of-%N.log" "${small[@]}"
check "task 1 with auto/2: shard 1/2 resumed" "$(json_get "$TMP/a/manifest.shard-1-of-2.json" 'j["summary"]["resumed"]')" 2
check "the log is appended: two runs of shard 1" "$(grep -c ' start: ' "$TMP/a/logs/s-1-of-2.log")" 2

# --- a Kubernetes indexed job: JOB_COMPLETION_INDEX k is shard k + 1 ---------------------------
expect_exit 0 task JOB_COMPLETION_INDEX=1 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/k" --shard auto/2 "${small[@]}"
check "index 1 of 2 is shard 2/2" "$(json_get "$TMP/k/manifest.shard-2-of-2.json" '[m["name"] for m in j["meshes"]]')" "['peg']"
cmp -s "$TMP/k/peg/voxelize.vdb" "$TMP/a/peg/voxelize.vdb" && pass "the same file as the Slurm task's" || fail "Kubernetes and Slurm shards differ"

# --- more shards than meshes: the empty shards run and merge ------------------------------------
for i in 1 2 3 4; do expect_exit 0 "$pipe" "$vo" "$SAMPLES/peg.stl" "$SAMPLES/gear.obj" -o "$TMP/e" --shard "$i/4" "${small[@]}"; done
expect_exit 0 "$pipe" --merge "$TMP"/e/manifest.shard-*-of-4.json -o "$TMP/e"
check "4 shards of 2 meshes merge" "$(json_get "$TMP/e/manifest.json" 'j["summary"]["ok"], len(j["merged_from"])')" "(2, 4)"

# --- the merge refuses shards of other pipelines or mesh lists, naming the shard and the difference
expect_exit 0 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/p" --shard 1/2 "${small[@]}"
expect_exit 0 "$pipe" "$vo" "${meshes[@]}" -o "$TMP/p" --shard 2/2 "${small[@]}" --set voxelize.resolution=20
expect_exit 2 "$pipe" --merge "$TMP/p/manifest.shard-1-of-2.json" "$TMP/p/manifest.shard-2-of-2.json" -o "$TMP/p"
expect_one_error_line
expect_grep "^haptic-pipeline: $TMP/p/manifest.shard-2-of-2.json: made with another pipeline: stage 'voxelize' key 'resolution': 20 vs 16" "$TMP/err"
expect_exit 0 "$pipe" "$vo" "$SAMPLES/peg.stl" "$SAMPLES/gear.obj" -o "$TMP/l" --shard 1/2 "${small[@]}"
expect_exit 0 "$pipe" "$vo" "$SAMPLES/peg.stl" "$SAMPLES/torus.off" -o "$TMP/l" --shard 2/2 "${small[@]}"
expect_exit 2 "$pipe" --merge "$TMP"/l/manifest.shard-*-of-2.json -o "$TMP/l"
expect_one_error_line
expect_grep "manifest.shard-2-of-2.json: its batch had other mesh names than .*manifest.shard-1-of-2.json's" "$TMP/err"
[ ! -e "$TMP/p/manifest.json" ] && [ ! -e "$TMP/l/manifest.json" ] && pass "no merged manifest written" || fail "a refused merge wrote a manifest"
expect_exit 2 "$pipe" --merge "$TMP"/a/manifest.shard-*-of-2.json -o "$TMP/a" --log "$TMP/x.log"

# --- the example job scripts, as a task runs them (without Slurm) ------------------------------
ex="$HP_SOURCE_DIR/examples/slurm"
printf 'not a mesh\n' > "$TMP/broken.obj"
list="$TMP/list.txt"
printf '%s\n' "$SAMPLES/peg.stl" "" "$TMP/broken.obj" > "$list"
for id in 1 2; do
    expect_exit 0 slurm_task "$id" 1 2 env HAPTIC_PIPELINE="$pipe" HP_MESH_LIST="$list" \
        bash "$ex/convert.sbatch" "$vo" "$TMP/s" "$SAMPLES/gear.obj" -- --set voxelize.resolution=16
    [ "$id" = 1 ] && expect_grep "some meshes of this shard failed" "$TMP/out"
done
check "a failed mesh leaves the task's exit code 0, its manifest says failed" \
    "$(json_get "$TMP/s/manifest.shard-1-of-2.json" '[(m["name"], m["status"]) for m in j["meshes"]]')" "[('broken', 'failed'), ('peg', 'ok')]"
check "options after -- reach haptic-pipeline" "$(json_get "$TMP/s/manifest.shard-2-of-2.json" 'j["pipeline"]["stages"][0]["resolution"]')" 16
expect_exit 1 env HAPTIC_PIPELINE="$pipe" bash "$ex/merge.sbatch" "$TMP/s" 2
expect_grep "^shards with failed meshes: 1 of 2 " "$TMP/out"
expect_exit 2 slurm_task 1 1 2 env HAPTIC_PIPELINE="$pipe" bash "$ex/convert.sbatch" "$vo" "$TMP/s" "$SAMPLES/gear.obj" -- --bogus
expect_exit 2 task env HAPTIC_PIPELINE="$pipe" bash "$ex/convert.sbatch" "$vo" "$TMP/s" "$SAMPLES/gear.obj"
expect_grep "not an array task" "$TMP/err"
expect_exit 3 env HAPTIC_PIPELINE="$pipe" bash "$ex/merge.sbatch" "$TMP/s" 3
expect_grep "no shard manifests .*manifest.shard-\*-of-3.json" "$TMP/err"
grep -n '/work\|/tmp\|/home' "$ex"/*.sbatch && fail "a path of this machine in the job scripts" || pass "no machine paths in the job scripts"
finish
