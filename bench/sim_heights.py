#!/usr/bin/env python3
"""The bouncing ball (scenes/bouncing-ball.json) dropped from many heights: the distribution of the
maximum exact penetration per method and restitution, the paired difference VPS fine - Bullet native
per height, and where each impact's deepest step lies relative to the step grid.

usage: sim_heights.py [--bin DIR] [--cache DIR] [--count N] [--low H] [--high H] [--scene FILE] [--mesh FILE]
                      [--json OUT] [--results FILE]
(--results: the file of bench/run.sh's main table, to which one JSON row per restitution is appended;
--scene: another ball scene (default scenes/bouncing-ball.json); --mesh: another mesh for the ball's VPS
variants, e.g. a finer icosphere of scenes/meshes/make_ball.py)

The scene is copied once per height with the ball's centre at H_k = low + (high - low) k / N,
k = 1..N (default 40 heights, centre from 0.525 to 1.5 m above the plane: the ball's lowest point
falls 0.025 to 1.0 m; the paper's scene is H = 1 m) and run by haptic-sim --threads 1 with its
600 steps at 200 Hz; nothing else changes. Per impact (a run of steps with penetration > 0) it
also reports the penetration of the impact's first step, the free fall's last step: if the
deepest penetration of most impacts is that first step, the methods differ by where the step grid
cuts each fall (the impacts' timing), not by how their contacts stop the ball.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
scene_path = os.path.join(here, "..", "scenes", "bouncing-ball.json")

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--bin", default="build/bin")
ap.add_argument("--cache", default=os.environ.get("HP_SIM_CACHE", "build/sim-cache"))
ap.add_argument("--count", type=int, default=40)
ap.add_argument("--low", type=float, default=0.5)
ap.add_argument("--high", type=float, default=1.5)
ap.add_argument("--scene", default=scene_path, help="the ball scene")
ap.add_argument("--mesh", help="the ball's mesh (default: the scene's)")
ap.add_argument("--json", help="write every run's figures here")
ap.add_argument("--results", help="append one row per restitution to this bench table (JSON lines)")
args = ap.parse_args()

scene = json.load(open(args.scene))
scene_dir = os.path.dirname(os.path.abspath(args.scene))
radius = None
for o in scene["objects"]:
    if "mesh" in o:
        o["mesh"] = os.path.join(scene_dir, o["mesh"])
    if "sphere" in o:
        radius = o["sphere"]
for m in scene["methods"]:
    if "prepare" in m:
        m["prepare"]["pipeline"] = os.path.join(scene_dir, m["prepare"]["pipeline"])
ball = next(o for o in scene["objects"] if "sphere" in o)
if args.mesh:
    ball["mesh"] = os.path.abspath(args.mesh)
rate = scene["rate"]
gravity = abs(scene["gravity"][2])

runs = []  # one per height, method and restitution
with tempfile.TemporaryDirectory() as tmp:
    for k in range(1, args.count + 1):
        h = args.low + (args.high - args.low) * k / args.count
        ball["position"] = [0, 0, h]
        path = os.path.join(tmp, "ball.json")
        json.dump(scene, open(path, "w"))
        steps_csv = os.path.join(tmp, "steps.csv")
        out = subprocess.run([os.path.join(args.bin, "haptic-sim"), path, "--cache", args.cache, "--threads", "1",
                              "--json", "--csv", steps_csv, "--quiet"], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit("sim_heights: haptic-sim failed at height %g: %s" % (h, out.stderr.strip()))
        summary = json.loads(out.stdout)
        rows = {}
        for r in csv.DictReader(open(steps_csv)):
            rows.setdefault((r["method"], float(r["restitution"])), []).append(r)
        for run in summary["runs"]:
            key = (run["method"], run["restitution"])
            steps = rows[key]
            impacts = []
            i = 0
            while i < len(steps):
                if float(steps[i]["penetration"]) <= 0:
                    i += 1
                    continue
                j = i
                while j < len(steps) and float(steps[j]["penetration"]) > 0:
                    j += 1
                depths = [float(s["penetration"]) for s in steps[i:j]]
                # The speed before the impact (the step travels (speed + g dt) dt: velocity first, then position).
                before = steps[i - 1] if i > 0 else None
                impacts.append({"step": i + 1, "first": depths[0], "max": max(depths),
                                "deepest_at": depths.index(max(depths)),
                                "speed": -float(before["vz"]) if before else None})
                i = j
            runs.append({"height": h, "method": run["method"], "restitution": run["restitution"],
                         "max_penetration": run["max_penetration"], "impacts": impacts})
        print("height %.3f m: done" % h, file=sys.stderr)

if args.json:
    json.dump(runs, open(args.json, "w"), indent=1)

methods = []
for r in runs:
    if r["method"] not in methods:
        methods.append(r["method"])
restitutions = sorted({r["restitution"] for r in runs})


def mm(x):
    return "%.1f" % (1000 * x)


print("\nBouncing ball from %d heights (centre %.3f-%.3f m), maximum exact penetration per run, mm:"
      % (args.count, args.low + (args.high - args.low) / args.count, args.high))
print("| restitution | method | median | mean | worst | best |")
print("|---|---|---|---|---|---|")
for e in restitutions:
    for m in methods:
        v = [r["max_penetration"] for r in runs if r["method"] == m and r["restitution"] == e]
        print("| %g | %s | %s | %s | %s | %s |" % (e, m, mm(statistics.median(v)), mm(statistics.mean(v)), mm(max(v)), mm(min(v))))

rows_out = []
for e in restitutions:
    parts = []
    for m in methods:
        v = [r["max_penetration"] for r in runs if r["method"] == m and r["restitution"] == e]
        parts.append("%s %s / %s" % (m, mm(statistics.median(v)), mm(max(v))))
    rows_out.append({"stage": "sim", "mesh": "ball-heights-e%g" % e, "seconds": 0.0,
                     "notes": "max penetration mm, median / worst of %d heights: %s" % (args.count, ", ".join(parts))})
if args.results:
    with open(args.results, "a") as f:
        for r in rows_out:
            f.write(json.dumps(r) + "\n")

print("\nPer height, VPS fine - native (mm; 'equal' within 0.05 mm):")
print("| restitution | fine shallower | equal | fine deeper | median difference | worst for fine | best for fine |")
print("|---|---|---|---|---|---|---|")
by = {(r["method"], r["restitution"], r["height"]): r for r in runs}
for e in restitutions:
    diffs = []
    for r in runs:
        if r["method"] == "native" and r["restitution"] == e:
            f = by.get(("vps-fine", e, r["height"]))
            if f:
                diffs.append(f["max_penetration"] - r["max_penetration"])
    if not diffs:
        continue
    print("| %g | %d | %d | %d | %s | %s | %s |" % (e, sum(d < -5e-5 for d in diffs), sum(abs(d) <= 5e-5 for d in diffs),
                                                    sum(d > 5e-5 for d in diffs), mm(statistics.median(diffs)),
                                                    mm(max(diffs)), mm(min(diffs))))

print("\nImpacts (runs of steps with penetration > 0), all heights; 'at first step': the impact's deepest step is its")
print("first, the free fall's last step; 'first step / travel': that step's depth over the ball's travel in one step at")
print("its speed before the impact (uniform in [0, 1] when the step grid cuts the fall at random):")
print("'caught a step late': the deepest step is the second and the first went under 0.5 mm deep (the exact sphere")
print("touched, the method's contacts did not yet).")
print("| restitution | method | impacts | at first step | caught a step late | first step / travel: median | deepest impact: at first step |")
print("|---|---|---|---|---|---|---|")
dt = 1.0 / rate
for e in restitutions:
    for m in methods:
        sel = [r for r in runs if r["method"] == m and r["restitution"] == e]
        imp = [i for r in sel for i in r["impacts"]]
        if not imp:
            continue
        first = sum(i["deepest_at"] == 0 for i in imp)
        frac = [i["first"] / ((i["speed"] + gravity * dt) * dt) for i in imp if i["speed"] and i["speed"] > 0]
        deepest = [max(r["impacts"], key=lambda i: i["max"]) for r in sel if r["impacts"]]
        late = sum(i["deepest_at"] == 1 and i["first"] < 5e-4 for i in imp)
        print("| %g | %s | %d | %d (%.0f%%) | %d | %.2f | %d of %d |" % (
            e, m, len(imp), first, 100.0 * first / len(imp), late, statistics.median(frac) if frac else float("nan"),
            sum(i["deepest_at"] == 0 for i in deepest), len(deepest)))
