# Sourced by bench/run.sh: what every call of a tool costs before it does anything (a batch
# script calling the tools on thousands of small parts pays it each time). Per executable,
# `--version` BENCH_RUNS x 4 times, timed from outside: wall median and minimum; the shared
# libraries it loads (ldd) and the dynamic loader's relocations (LD_DEBUG=statistics); /bin/true
# in the same run as the floor. Then haptic-voxelize on a 12-triangle cube at 16 voxels.
echo "bench: start-up" >&2
python3 - "$bin" "$runs" >>"$results" <<'PY'
import json, os, statistics, subprocess, sys, tempfile, time
bin_dir, runs = sys.argv[1], int(sys.argv[2]) * 4
def wall(cmd):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)
floor, _ = wall(["/bin/true"])
for name in sorted(os.listdir(bin_dir)):
    exe = os.path.join(bin_dir, name)
    if not name.startswith("haptic-") or not os.access(exe, os.X_OK):
        continue
    median, low = wall([exe, "--version"])
    libs = sum(1 for l in subprocess.run(["ldd", exe], capture_output=True, text=True).stdout.splitlines() if "=>" in l)
    stats = subprocess.run([exe, "--version"], capture_output=True, text=True, env={**os.environ, "LD_DEBUG": "statistics"}).stderr
    relocs = next((l.split(":")[-1].strip() for l in stats.splitlines() if "final number of relocations:" in l), "?")
    print(json.dumps({"stage": "startup", "mesh": name + " --version", "seconds": median, "peak_rss": 0,
                      "notes": "min %.4f s; %d shared libraries, %s relocations; /bin/true %.4f s (target <= 0.030 s)"
                               % (low, libs, relocs, floor)}))
with tempfile.TemporaryDirectory() as d:
    cube = os.path.join(d, "cube.obj")
    with open(cube, "w") as f:
        f.write("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
                "f 1 4 3\nf 1 3 2\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n")
    median, low = wall([os.path.join(bin_dir, "haptic-voxelize"), cube, "--resolution", "16", "-o", os.path.join(d, "c.vdb"), "-q"])
    print(json.dumps({"stage": "startup", "mesh": "cube 16 voxelize", "seconds": median, "peak_rss": 0,
                      "notes": "haptic-voxelize on a 12-triangle cube at 16 voxels, min %.4f s (target <= 0.030 s)" % low}))
PY
