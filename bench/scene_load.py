#!/usr/bin/env python3
"""The scene's load as a process (bench/scene.sh): haptic-query --scene SCENE --tool-files TOOL
--scenario contact --count 1 --threads 1 --json under /usr/bin/time -v, on the scene and on the
same geometries placed once (SCENE's folder/scene-once.json: the first part of each geometry, the
same files), alternated ROUNDS times. Prints one JSON row: the wall time of the process and its
load (load_seconds of the report), its CPU time and page faults, the peak RSS of each, and the
ratio of the peak RSS (the instances' share of memory; the target is <= 1.2).

With --compare OTHER (another build's haptic-query), each round also runs OTHER on both scenes,
right after this build, and a second row gives OTHER's figures ("build": "compare"): two builds
measured alternated in one run.

  scene_load.py HAPTIC_QUERY SCENE.json TOOL.hps [ROUNDS] [--compare OTHER_HAPTIC_QUERY]
"""
import json
import os
import re
import statistics
import subprocess
import sys


def once_scene(scene_path):
    """Writes scene-once.json beside the scene: its first part of each geometry."""
    with open(scene_path) as f:
        scene = json.load(f)
    seen, parts = set(), []
    for p in scene["parts"]:
        if p["geometry"] not in seen:
            seen.add(p["geometry"])
            parts.append(p)
    scene["parts"] = parts
    for g in scene["geometries"]:
        g["instances"] = 1 if g["id"] in seen else 0
    out = os.path.join(os.path.dirname(scene_path), "scene-once.json")
    with open(out, "w") as f:
        json.dump(scene, f, indent=2)
    return out, len(parts)


def run(query, scene, tool):
    cmd = ["/usr/bin/time", "-v", query, "--scene", scene, "--tool-files", tool, "--scenario", "contact", "--count", "1",
           "--threads", "1", "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", r.stderr)
    user = re.search(r"User time \(seconds\): ([\d.]+)", r.stderr)
    system = re.search(r"System time \(seconds\): ([\d.]+)", r.stderr)
    faults = re.search(r"Minor \(reclaiming a frame\) page faults: (\d+)", r.stderr)
    if r.returncode not in (0, 1) or not rss or not wall or not user or not system:
        sys.exit("scene_load.py: %s failed (exit %d): %s" % (" ".join(cmd), r.returncode, r.stderr.strip()[-300:]))
    report = json.loads(r.stdout)
    h, m, s = wall.groups()
    return {"wall": int(h or 0) * 3600 + int(m) * 60 + float(s), "rss": int(rss.group(1)) * 1024,
            "cpu": float(user.group(1)) + float(system.group(1)), "faults": int(faults.group(1)) if faults else 0,
            "load": report["load_seconds"], "parts": report["parts"], "geometries": report["geometries_loaded"]}


def row(label, many_runs, once_runs, rounds):
    med = lambda runs, k: statistics.median(r[k] for r in runs)
    many, few = many_runs[0], once_runs[0]
    ratio = med(many_runs, "rss") / med(once_runs, "rss")
    notes = ("%shaptic-query --scene --count 1 as a process, %d rounds alternated, medians: %d parts of %d geometries: "
             "process %.2f s wall (%.2f s CPU, %d minor faults), load %.3f s, peak RSS %.0f MB; the %d geometries placed "
             "once: process %.2f s (%.2f s CPU), load %.3f s, peak RSS %.0f MB; RSS ratio %.3f (target <= 1.2)") % (
        label, rounds, many["parts"], many["geometries"], med(many_runs, "wall"), med(many_runs, "cpu"),
        med(many_runs, "faults"), med(many_runs, "load"), med(many_runs, "rss") / 1e6, few["parts"], med(once_runs, "wall"),
        med(once_runs, "cpu"), med(once_runs, "load"), med(once_runs, "rss") / 1e6, ratio)
    out = {"stage": "scene load", "mesh": "%d parts" % many["parts"], "seconds": med(many_runs, "load"),
           "peak_rss": int(med(many_runs, "rss")), "notes": notes,
           "process_seconds": med(many_runs, "wall"), "process_cpu_seconds": med(many_runs, "cpu"),
           "minor_faults": int(med(many_runs, "faults")), "once_load_seconds": med(once_runs, "load"),
           "once_process_seconds": med(once_runs, "wall"), "once_process_cpu_seconds": med(once_runs, "cpu"),
           "once_peak_rss": int(med(once_runs, "rss")), "rss_ratio": ratio}
    if label:
        out["build"] = "compare"
    print(json.dumps(out))
    print("scene_load: " + notes, file=sys.stderr)


def main():
    args = sys.argv[1:]
    other = None
    if "--compare" in args:
        i = args.index("--compare")
        if i + 1 >= len(args):
            sys.exit("scene_load.py: --compare needs another build's haptic-query")
        other = args[i + 1]
        del args[i:i + 2]
    if len(args) < 3:
        sys.exit("usage: scene_load.py HAPTIC_QUERY SCENE.json TOOL.hps [ROUNDS] [--compare OTHER_HAPTIC_QUERY]")
    query, scene, tool = args[0:3]
    rounds = int(args[3]) if len(args) > 3 else 2
    once, _ = once_scene(scene)
    runs = {query: ([], []), other: ([], [])} if other else {query: ([], [])}
    for _ in range(rounds):
        for q, (many_runs, once_runs) in runs.items():
            many_runs.append(run(q, scene, tool))
            once_runs.append(run(q, once, tool))
    row("", *runs[query], rounds)
    if other:
        row("compare (%s): " % other, *runs[other], rounds)


if __name__ == "__main__":
    main()
