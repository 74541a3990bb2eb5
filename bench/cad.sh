# Sourced by bench/run.sh: STEP import (docs/cad.md). The generated assembly of 100 parts (10
# distinct solids, each placed 10 times; bench_cad --write), read and tessellated by the tools'
# import as a process (haptic-dump FILE --parts --json: read, mesh and the parts' exact areas and
# volumes) beside OpenCASCADE alone reading and meshing it as a process (bench_cad --peer), at one
# chord tolerance (0.01 mm), one core and two, alternated run by run, BENCH_RUNS runs each: wall medians
# from outside (/usr/bin/time), the tool's own read and mesh seconds from its --json.
if [ -x "$bin/bench_cad" ]; then
    echo "bench: STEP assembly of 100 parts" >&2
    cad=$(mktemp -d)
    "$bin/bench_cad" --write "$cad/asm100.step" --geometries 10 --instances 10 >/dev/null
    python3 - "$bin" "$cad" "$runs" >>"$results" <<'PY'
import json, os, statistics, subprocess, sys
bin_dir, d, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
step = os.path.join(d, "asm100.step")
deflection = "0.00001"  # m: 0.01 mm on solids 8 to 38 mm across
def timed(cmd):
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M", *cmd], capture_output=True, text=True)
    wall, rss_kb = out.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss_kb) * 1024, json.loads(out.stdout) if out.returncode == 0 else None
for threads in (1, 2):
    ours, peer = [], []
    for _ in range(runs):
        ours.append(timed([os.path.join(bin_dir, "haptic-dump"), step, "--parts", "--json", "--linear-deflection", deflection,
                           "--threads", str(threads)]))
        peer.append(timed([os.path.join(bin_dir, "bench_cad"), "--peer", step, "--linear-deflection", deflection,
                           "--threads", str(threads)]))
    if any(r[2] is None for r in ours + peer):
        print(json.dumps({"stage": "step-import", "mesh": "asm100.step", "seconds": 0, "notes": "a run failed"}))
        continue
    t = ours[-1][2]["tessellation"]
    parts, geoms = len(ours[-1][2]["parts"]), len(ours[-1][2]["geometries"])
    p = peer[-1][2]
    print(json.dumps({"stage": "step-import", "mesh": "asm100.step (t%d)" % threads,
                      "seconds": statistics.median(r[0] for r in ours), "peak_rss": max(r[1] for r in ours),
                      "peer_seconds": statistics.median(r[0] for r in peer),
                      "notes": "haptic-dump --parts --json, %d parts of %d solids, chord 0.01 mm, --threads %d: its read %.2f s + "
                               "mesh %.2f s; peer: OpenCASCADE alone (read %.2f + mesh %.2f s, %d triangles), both as processes"
                               % (parts, geoms, threads, t["seconds_read"], t["seconds_mesh"], p["seconds"]["read"],
                                  p["seconds"]["mesh"], p["triangles"])}))
PY
    rm -rf "$cad"
fi
