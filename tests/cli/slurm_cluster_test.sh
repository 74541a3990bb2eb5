#!/usr/bin/env bash
# examples/slurm on a real one-node Slurm cluster that this test starts in a temporary folder
# (munged, slurmctld and slurmd with their own key, socket, ports, state and pid files): the
# README's submit block, run as written, converts the sample meshes in a 4-task array and merges
# them; a mesh that fails in one task is "failed" in the merged manifest and the merge job exits
# 1; the README's resubmit block, after the mesh is fixed, completes the batch; every output and
# the merged manifest's hashes equal those of one haptic-pipeline run on one machine.
# Skips (exit 77) when not root or without slurm-wlm and munge (scripts/install-deps.sh installs
# them), and under the sanitizers (see below). Stops the daemons it started, by their pid files,
# whatever happens.
source "$(dirname "$0")/lib.sh"
skip() { echo "skip: $*"; exit 77; }
PATH="$PATH:/usr/sbin"
[ "$(id -u)" -eq 0 ] || skip "starting a Slurm cluster (munged, slurmctld, slurmd as SlurmUser=root) needs root"
for tool in munged slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps.sh installs slurm-wlm and munge)"
done
# The code of ours that the cluster runs (--shard auto, --log, --merge) runs under the
# sanitizers in slurm_env_test.sh and the unit tests; here the sanitized binaries would only make
# the same jobs slower.
[ "${HP_SANITIZED:-0}" = 1 ] && skip "the sanitizer build: slurm_env_test.sh and tests/pipeline run this code under ASan"

C="$TMP/cluster"
mkdir -p "$C/state" "$C/spool"
chmod go+x "$TMP" "$C"  # munged wants its socket's folders searchable by everyone
stop_daemons() {
    if [ -s "$C/slurmctld.pid" ] && kill -0 "$(cat "$C/slurmctld.pid")" 2>/dev/null; then
        scancel --quiet --full --user=root 2>/dev/null
        for _ in $(seq 1 100); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
    fi
    local name pid
    for name in slurmd slurmctld munged; do
        [ -s "$C/$name.pid" ] || continue
        pid=$(cat "$C/$name.pid")
        kill "$pid" 2>/dev/null || continue
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && { echo "$name ($pid) did not stop; killing it" >&2; kill -9 "$pid"; }
    done
}
trap 'stop_daemons; rm -rf "$TMP"' EXIT
trap 'exit 143' TERM INT HUP  # through the EXIT trap

# Ports nothing listens on (not Slurm's 6817/6818).
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
cpus=$(nproc)
export SLURM_CONF="$C/slurm.conf"
cat > "$SLURM_CONF" <<EOF
ClusterName=hptest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$C/munge.sock
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool
SlurmctldPidFile=$C/slurmctld.pid
SlurmdPidFile=$C/slurmd.pid
SlurmctldLogFile=$C/slurmctld.log
SlurmdLogFile=$C/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=600
NodeName=hpnode NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=hp Nodes=hpnode Default=YES MaxTime=INFINITE State=UP
EOF
head -c 1024 /dev/urandom > "$C/munge.key"
chmod 400 "$C/munge.key"
munged --key-file="$C/munge.key" --socket="$C/munge.sock" --pid-file="$C/munged.pid" \
    --log-file="$C/munged.log" --seed-file="$C/munged.seed" || { fail "munged did not start"; cat "$C/munged.log" >&2; finish; }
for _ in $(seq 1 50); do [ -S "$C/munge.sock" ] && break; sleep 0.1; done
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N hpnode || fail "slurmd did not start"

# Meanwhile, the reference: one haptic-pipeline run on this machine over the sample meshes, with
# the pipeline the array will use. The default pipeline at 32 voxels, with a timing budget no
# loaded machine misses (what this test checks is the sharding, not the stages' timing).
pipe="$HP_BIN/haptic-pipeline"
P="$TMP/pipeline.json"
python3 - "$HP_SOURCE_DIR/pipelines/vps-default.json" "$P" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for s in p["stages"]:
    if s["stage"] == "voxelize": s.pop("voxel_size", None); s["resolution"] = 32
    if s["stage"] == "query": s.update(count=50, budget_us=1e6)
json.dump(p, open(sys.argv[2], "w"), indent=1)
PY
samples=("$SAMPLES"/*.obj "$SAMPLES"/*.stl "$SAMPLES"/*.off)
expect_exit 0 "$pipe" "$P" "${samples[@]}" -o "$TMP/ref" --quiet

up=0
for _ in $(seq 1 150); do
    [ "$(sinfo -h -n hpnode -o %t 2>/dev/null)" = idle ] && { up=1; break; }
    sleep 0.2
done
if [ "$up" != 1 ]; then
    fail "the node did not come up: $(sinfo -h -o '%t %E' 2>&1)"
    tail -5 "$C/slurmctld.log" "$C/slurmd.log" >&2
    finish
fi
pass "one-node cluster up (slurmctld port $ctld_port, slurmd port $slurmd_port, $cpus CPUs)"

# The batch: copies of the sample meshes, inverted-box.obj broken (shard 3 of 4 by name order).
mkdir -p "$TMP/parts"
cp "${samples[@]}" "$TMP/parts/"
printf 'v 0 0 0\nthis is not an obj file\n' > "$TMP/parts/inverted-box.obj"

# readme_block FIRST_LINE: the README's fenced block that starts with FIRST_LINE.
readme_block() {
    awk -v first="$1" '/^```/ { if (grab) exit; fence = 1; next }
                       fence && $0 == first { grab = 1 }
                       { fence = 0 } grab' "$HP_SOURCE_DIR/examples/slurm/README.md"
}
submit=$(readme_block "# Submit the array, then the merge once every task has succeeded:")
resubmit=$(readme_block "# Submit those tasks again, then the merge again:")
[ -n "$submit" ] && [ -n "$resubmit" ] && pass "the README's submit and resubmit blocks" || { fail "README blocks not found"; finish; }

# wait_jobs ID...: until none is queued or running (a merge that can never run is a failure).
wait_jobs() {
    local ids=$(IFS=,; echo "$*") reason
    for _ in $(seq 1 600); do
        [ -z "$(squeue -h -j "$ids" 2>/dev/null)" ] && return 0
        reason=$(squeue -h -j "$ids" -o %r 2>/dev/null | grep -m1 DependencyNeverSatisfied)
        [ -n "$reason" ] && { fail "a job can never run ($reason): a task failed"; return 1; }
        sleep 0.2
    done
    fail "jobs $ids still queued or running after 120 s"; return 1
}
# job_states ID: "STATE EXITCODE" of the job, one line per array task.
job_states() {
    scontrol -o show job "$1" |
        awk '{ for (i = 1; i <= NF; i++) { if ($i ~ /^JobState=/) s = substr($i, 10); if ($i ~ /^ExitCode=/) e = substr($i, 10) }
               print s, e }'
}

# As the README says: from the repository, with the variables of its first block.
PIPELINE=$P
MESHES=("$TMP"/parts/*)
OUT=$TMP/batch  # ($TMP/out is lib.sh's)
N=4
export PATH="$HP_BIN:$PATH"
cd "$HP_SOURCE_DIR" || exit 1
t0=$(date +%s.%N)
eval "$submit" > "$TMP/submit.out" 2>&1 || { fail "submitting: $(cat "$TMP/submit.out")"; finish; }
pass "submitted: $(cat "$TMP/submit.out")"
wait_jobs "$array" "$merge"
echo "(the array and its merge: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}') s from submission)"

check "the 4 array tasks completed (a failed mesh does not fail its task)" \
    "$(job_states "$array" | sort | uniq -c | awk '{$1=$1; print}')" "4 COMPLETED 0:0"
check "the merge job failed with exit code 1" "$(job_states "$merge")" "FAILED 1:0"
M="$OUT/manifest.json"
expect_json "$M"
check "merged manifest: 14 ok, inverted-box failed as a bad input file" \
    "$(json_get "$M" '(j["summary"]["ok"], j["summary"]["failed"], [(e["name"], e["exit_code"], "inverted-box.obj" in e["error"]) for e in j["meshes"] if e["status"] == "failed"], j["merged_from"] is not None and len(j["merged_from"]))')" \
    "(14, 1, [('inverted-box', 3, True)], 4)"
for i in 1 2 3 4; do
    [ -f "$OUT/manifest.shard-$i-of-4.json" ] || fail "no manifest of shard $i/4"
    expect_grep "start: .*shard $i/4 \(Slurm array job $array, task $i\)" "$OUT/logs/shard-$i-of-4.log"
    expect_grep "end: " "$OUT/logs/shard-$i-of-4.log"
    expect_grep "convert.sbatch: array job $array task $i on .*--shard auto," "$OUT/logs/convert-${array}_$i.out"
done
failed_line=$(grep '^shards with failed meshes: ' "$OUT"/logs/merge-"$merge".out)
TASKS=$(echo "$failed_line" | sed -n 's/^shards with failed meshes: \([0-9,]*\) of 4 .*/\1/p')
check "the merge lists the shard holding inverted-box" "$TASKS" \
    "$(json_get "$TMP/ref/manifest.json" '[i % 4 + 1 for i, e in enumerate(j["meshes"]) if e["name"] == "inverted-box"][0]')"
expect_grep "mesh inverted-box: failed \(exit code 3\)" "$OUT/logs/shard-$TASKS-of-4.log"

# Fix the mesh, submit that task and the merge again as the README says.
cp "$SAMPLES/inverted-box.obj" "$TMP/parts/inverted-box.obj"
first_array=$array
eval "$resubmit" > "$TMP/resubmit.out" 2>&1 || { fail "resubmitting: $(cat "$TMP/resubmit.out")"; finish; }
pass "resubmitted task $TASKS: $(cat "$TMP/resubmit.out")"
t0=$(date +%s.%N)
wait_jobs "$array" "$merge"
echo "(the task and its merge: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}') s from submission)"
[ "$array" != "$first_array" ] || fail "the resubmission reused job id $array"
check "the resubmitted task completed" "$(job_states "$array")" "COMPLETED 0:0"
check "the second merge succeeded" "$(job_states "$merge")" "COMPLETED 0:0"
check "merged manifest: all 15 ok" "$(json_get "$M" '(j["summary"]["ok"], j["summary"]["failed"])')" "(15, 0)"
S="$OUT/manifest.shard-$TASKS-of-4.json"
check "the task converted only inverted-box again, the rest of its shard resumed" \
    "$(json_get "$S" '[e["name"] for e in j["meshes"] if not e["resumed"]], j["summary"]["resumed"] == len(j["meshes"]) - 1')" \
    "(['inverted-box'], True)"
expect_grep "start: .*shard $TASKS/4 \(Slurm array job $array, task $TASKS\)" "$OUT/logs/shard-$TASKS-of-4.log"
expect_grep "convert.sbatch: array job $array task $TASKS on .*--shard auto/4," "$OUT/logs/convert-${array}_$TASKS.out"

# Identical to the run on one machine: the same files, byte for byte (query.json holds measured
# latencies, so only its presence), and the same hashes in the merged manifest.
(cd "$TMP/ref" && find . -mindepth 2 -type f | sort) > "$TMP/ref.files"
(cd "$OUT" && find . -mindepth 2 -type f ! -path './logs/*' | sort) > "$TMP/out.files"
check "the same output files as on one machine" "$(diff "$TMP/ref.files" "$TMP/out.files" && echo same)" same
differ=0
while read -r f; do
    case "$f" in */query.json) continue ;; esac
    cmp -s "$TMP/ref/$f" "$OUT/$f" || { differ=$((differ + 1)); echo "differs: $f" >&2; }
done < "$TMP/ref.files"
check "every output byte-identical to the run on one machine ($(grep -vc query.json "$TMP/ref.files") files)" "$differ" 0
check "merged manifest: the same meshes, statuses, input and output hashes as one machine's" "$(python3 -c '
import json, sys
def key(f):
    return sorted((e["name"], e["status"], e["input_hash"], e["params_hash"],
                   [(o["file"], o["bytes"], o["hash"]) for o in e["outputs"] if o.get("deterministic", True)])
                  for e in json.load(open(f))["meshes"])
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print(key(sys.argv[1]) == key(sys.argv[2]) and a["params_hash"] == b["params_hash"] and len(a["meshes"]) == 15)' "$M" "$TMP/ref/manifest.json")" True
finish
