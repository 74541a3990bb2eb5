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

# row JSON_LINE...: collects result lines printed by a bench executable.
row() { [ -n "$1" ] && echo "$1" >>"$results"; }

for mesh in stanford-bunny fandisk rocker-arm; do
    f="$meshes/$mesh.obj"
    [ -f "$f" ] || continue
    echo "bench: import $mesh" >&2
    row "$("$bin/bench_import" "$f" --runs "$runs")"
done
# Later stages add their rows in bench/stages.sh.
[ -f bench/stages.sh ] && source bench/stages.sh
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
