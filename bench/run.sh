#!/usr/bin/env bash
# make bench: times every stage on the reference meshes and prints one table.
#   usage: bench/run.sh [BIN_DIR]     env: HP_MESHES (default ../shared/meshes), BENCH_RUNS (5)
# Each row: stage, mesh, seconds (median of BENCH_RUNS runs), peak RSS, and where a stage has a
# peer on the same grid (OpenVDB), the peer's median time measured in the same run and the ratio
# ours / peer. Bench executables print one JSON line per row.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin}
meshes=${HP_MESHES:-../shared/meshes}
runs=${BENCH_RUNS:-5}
if [ ! -d "$meshes" ]; then
    echo "bench: no reference meshes at $meshes (set HP_MESHES)"; exit 0
fi
results=$(mktemp)
trap 'rm -f "$results"' EXIT

# First: the executables as a user runs them, timed from outside, beside OpenVDB as a process
# (bench/asrun.sh; its own Markdown table, printed before the rows below).
bench/asrun.sh "$bin"
echo

# row JSON_LINE...: collects result lines printed by a bench executable.
row() { [ -n "$1" ] && echo "$1" >>"$results"; }
# What each call of a tool costs before any work: --version and a tiny voxelization (bench/startup.sh).
[ -f bench/startup.sh ] && source bench/startup.sh

for mesh in stanford-bunny fandisk rocker-arm; do
    f="$meshes/$mesh.obj"
    [ -f "$f" ] || continue
    echo "bench: import $mesh" >&2
    row "$("$bin/bench_import" "$f" --runs "$runs")"
done
# Later stages add their rows in bench/stages.sh.
[ -f bench/stages.sh ] && source bench/stages.sh
# Assemblies: what preparing 1,000 parts of 10 geometries adds to preparing the 10 (bench/assembly.sh).
[ -f bench/assembly.sh ] && source bench/assembly.sh
# STEP: a generated assembly of 100 parts, read and meshed, beside OpenCASCADE alone (bench/cad.sh).
[ -f bench/cad.sh ] && source bench/cad.sh
# Narrow-band fields next to OpenVDB's narrow band and to the dense ones (bench/band.sh).
[ -f bench/band.sh ] && source bench/band.sh
# A tool against a scene of 1,000 placed parts of 10 geometries (bench/scene.sh, docs/scene.md).
[ -f bench/scene.sh ] && source bench/scene.sh
# Implicit sphere trees (docs/octree.md): the bunny at 0.001 against itself in shallow contact, next
# to VPS on the same poses, with the one-child and side optimizations on and off.
if [ -f "$meshes/stanford-bunny.obj" ]; then
    echo "bench: implicit sphere trees bunny" >&2
    "$bin/bench_octree" "$meshes/stanford-bunny.obj" --voxel 0.001 --count 1000 --depth 0.5 >>"$results"
fi

# Throughput to plan batches with (docs/pipeline.md, "Throughput"): the default pipeline over the
# sample meshes on one core (-j 1 --threads 1), one run: meshes per hour from the wall time (start
# to manifest) and from the CPU time (what an otherwise idle core gives), and the load it ran under.
if [ -x "$bin/haptic-pipeline" ]; then
    echo "bench: pipeline throughput, sample meshes, one core" >&2
    out=$(mktemp -d)
    python3 - "$bin/haptic-pipeline" "$out" >>"$results" <<'PY'
import glob, json, os, resource, subprocess, sys, time
exe, out = sys.argv[1:3]
meshes = sorted(glob.glob("sample_meshes/*.obj") + glob.glob("sample_meshes/*.stl") + glob.glob("sample_meshes/*.off"))
t0 = time.monotonic()
subprocess.run([exe, "pipelines/vps-default.json", *meshes, "-o", out, "-j", "1", "--threads", "1", "--quiet"])
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru.ru_utime + ru.ru_stime
m = json.load(open(os.path.join(out, "manifest.json")))
s = m["summary"]
rss = max((st["peak_rss_bytes"] for e in m["meshes"] for st in e["stages"]), default=0)
print(json.dumps({"stage": "pipeline", "mesh": "sample_meshes (%d)" % s["meshes"], "seconds": wall, "peak_rss": rss,
                  "notes": "vps-default -j 1 --threads 1: %.0f meshes/h/core by wall time, %.0f by CPU time (%.1f s); "
                           "%d ok, %d failed; load average %.1f on %d cores"
                           % (s["meshes"] / wall * 3600, s["meshes"] / cpu * 3600, cpu, s["ok"], s["failed"],
                              os.getloadavg()[0], os.cpu_count())}))
PY
    rm -rf "$out"
fi
# The paper's Bullet experiments with haptic-sim (bench/sim.sh).
[ -f bench/sim.sh ] && source bench/sim.sh
# The exact continuous contact (lib/exact, docs/exact.md) on 1,000-step trajectories: its time per
# step, its agreement with bisection over exact static tests, FCL's continuousCollide on the same
# steps, and VPS's early/late/tunnelling counts at two voxel sizes (bench_exact, built with FCL).
if [ -x "$bin/bench_exact" ]; then
    echo "bench: exact peg in hole" >&2
    "$bin/bench_exact" sample_meshes/block-with-hole.stl sample_meshes/peg.stl --from 1.5,0,30 --to 1.5,0,21 \
        --wobble 3 --cycles 40 --slide 0,1,0 --voxels 1,0.5 >>"$results"
    if [ -f "$meshes/stanford-bunny.obj" ]; then
        echo "bench: exact bunny vs bunny" >&2
        "$bin/bench_exact" "$meshes/stanford-bunny.obj" "$meshes/stanford-bunny.obj" --from 0.14,0.02,0.01 \
            --to 0.134,0.02,0.01 --wobble 0.003 --cycles 40 --slide 0,0.01,0 --voxels 0.002,0.001 --poly-stride 20 >>"$results"
        # The same turning by 1 mrad per step about the bunny's centre (split steps).
        "$bin/bench_exact" "$meshes/stanford-bunny.obj" "$meshes/stanford-bunny.obj" --from 0.14,0.02,0.01 \
            --to 0.134,0.02,0.01 --wobble 0.003 --cycles 40 --slide 0,0.01,0 --spin 0.001 --voxels 0.002,0.001 >>"$results"
    fi
fi

python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def mb(b): return "%.1f MB" % (b / 1048576.0)
# "OpenVDB s" and "ratio" (ours / OpenVDB, below 1 = we are faster) are filled for rows with an
# OpenVDB peer on the same grid; the query peers (Bullet, FCL) carry their ratios in their notes.
print("%-12s %-22s %10s %11s %10s %8s  %s" % ("stage", "mesh", "seconds", "peak RSS", "OpenVDB s", "ratio", "notes"))
for r in rows:
    peer = r.get("peer_seconds")
    print("%-12s %-22s %10.4f %11s %10s %8s  %s" % (
        r["stage"], r["mesh"], r["seconds"], mb(r.get("peak_rss", 0)),
        "%.4f" % peer if peer else "-", "%.2f" % (r["seconds"] / peer) if peer else "-", r.get("notes", "")))
PY
