#!/usr/bin/env python3
"""Prints haptic-sim's multibody scenes side by side: the narrow phase's time per step against the
number of bodies N for every method (bunny-pile: N bunnies dropped into a box; sphere-stack: the
paper's stack of N balls), the pile's exact penetrations and the stack's drift.
usage: sim_multibody.py DIR... [--json]   DIR: haptic-sim --json outputs bunny-pile.json, sphere-stack.json
(several folders: their summaries side by side, e.g. runs split with --only); --json: the same tables
as one JSON object on stdout."""
import json
import os
import sys

dirs = [a for a in sys.argv[1:] if a != "--json"]
as_json = "--json" in sys.argv[1:]
out = {}
text = []
for scene in ("bunny-pile", "sphere-stack"):
    j, rows = None, []
    for d in dirs:
        try:
            part = json.load(open(os.path.join(d, scene + ".json")))
        except (OSError, ValueError):
            continue
        j = j or part
        rows += [s for s in part["summary"] if s.get("count", 0) > 0]
    if j is None:
        text.append("sim %s: no result" % scene)
        continue
    methods = list(dict.fromkeys(s["method"] for s in rows))
    counts = sorted({s["count"] for s in rows})
    by = {(s["method"], s["count"]): s for s in rows}
    out[scene] = [{k: s.get(k) for k in ("method", "kind", "count", "points", "median_collision_us",
                                         "mean_collision_us", "mean_contacts", "mean_step_contacts", "max_pile_penetration",
                                         "median_final_pile_penetration", "median_drift", "max_drift",
                                         "median_drift_step", "fell_through")} for s in rows]
    w = j["scene"]["window"]
    text.append("")
    text.append("%s: narrow phase per step, median over steps %d-%d (us; mean in brackets; contact points of all pairs per step)" % (scene, w[0], w[1]))
    text.append("%-6s" % "N" + "".join("%24s" % m for m in methods))
    for n in counts:
        cells = []
        for m in methods:
            s = by.get((m, n))
            cells.append("%24s" % ("-" if s is None else "%.1f (%.1f) %dc" % (s["median_collision_us"], s["mean_collision_us"],
                                                                          round(s.get("mean_step_contacts", 0)))))
        text.append("%-6d" % n + "".join(cells))
    if len(counts) > 1:
        text.append("%-6s" % "growth" + "".join(
            "%24s" % ("x%.3g from N=%d to %d" % (by[(m, hi)]["median_collision_us"] / max(by[(m, lo)]["median_collision_us"], 1e-9), lo, hi)
                      if (m, lo) in by and (m, hi) in by else "-")
            for m in methods for lo, hi in [(counts[0], max(c for c in counts if (m, c) in by))]))
    text.append("%s: the pile's exact penetration (mm: max over the run / median at the end), drift across gravity (mm: at the end / max), first step drifting > 1 cm" % scene)
    text.append("%-6s %-12s %14s %12s %12s %12s %10s %6s" % ("N", "method", "pile max", "pile end", "drift end", "drift max",
                                                            "drift step", "fell"))
    for n in counts:
        for m in methods:
            s = by.get((m, n))
            if s is None:
                continue
            text.append("%-6d %-12s %14.2f %12.2f %12.1f %12.1f %10s %6d" % (
                n, m, s["max_pile_penetration"] * 1000, s["median_final_pile_penetration"] * 1000,
                s["median_drift"] * 1000, s["max_drift"] * 1000, s["median_drift_step"] or "never", s["fell_through"]))
if as_json:
    print(json.dumps(out, indent=1))
else:
    print("\n".join(text))
