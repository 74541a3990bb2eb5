# Sourced by bench/run.sh: what preparing an assembly adds (docs/scene.md). The assembly of the
# scene benches (bench/make_bench_assembly.py: 1,000 parts of 10 geometries), its geometries alone,
# then bench_assembly in process and the pipeline as a user runs it, assembly against the 10 files
# alone at one voxel size (BENCH_ASSEMBLY_VOXEL, default the issue's 0.0005; one run each).
if [ -x "$bin/bench_assembly" ] && [ -f "$meshes/stanford-bunny.obj" ]; then
    echo "bench: assembly of 1,000 parts" >&2
    asm=$(mktemp -d)
    python3 bench/make_bench_assembly.py "$meshes" "$asm/asm1000.gltf" --alone "$asm/alone"
    "$bin/bench_assembly" "$asm/asm1000.gltf" "$asm/alone" --runs "$runs" >>"$results"
    vs=${BENCH_ASSEMBLY_VOXEL:-0.0005}
    printf '{"name": "scene-bench", "stages": [{"stage": "voxelize", "voxel_size": %s}, {"stage": "distance"}, {"stage": "pointshell"}, {"stage": "spheretree"}]}\n' "$vs" >"$asm/prep.json"
    python3 - "$bin/haptic-pipeline" "$asm" >>"$results" <<'PY'
import json, os, subprocess, sys, time
exe, d = sys.argv[1:3]
def run(args, out):
    t0 = time.monotonic()
    subprocess.run([exe, os.path.join(d, "prep.json"), *args, "-o", os.path.join(d, out), "--threads", "1", "--quiet"], check=False)
    return time.monotonic() - t0
alone = run(sorted(os.path.join(d, "alone", f) for f in os.listdir(os.path.join(d, "alone"))), "out-alone")
whole = run([os.path.join(d, "asm1000.gltf"), "--assembly"], "out-asm")
m = json.load(open(os.path.join(d, "out-asm", "manifest.json")))["summary"]
print(json.dumps({"stage": "assembly", "mesh": "asm1000.gltf as run", "seconds": whole, "peak_rss": 0,
                  "notes": "haptic-pipeline --assembly (voxelize, distance, pointshell, spheretree; --threads 1): %.1f s "
                           "against the 10 geometries alone %.1f s: %+.1f s (target <= +1 s); %d of %d geometries ok"
                           % (whole, alone, whole - alone, m["ok"], m["meshes"])}))
PY
    rm -rf "$asm"
fi
