#!/usr/bin/env python3
"""Prints the Bullet experiments of make bench beside the paper's figures (Sagardia et al. 2014,
section 4) and checks the targets with ratios from this one run.
usage: sim_report.py DIR [RESULTS]   DIR: haptic-sim --json outputs named <scene>.json;
RESULTS: the file of bench/run.sh's main table, to which one JSON row per target is appended."""
import json
import os
import sys

d = sys.argv[1]
results = sys.argv[2] if len(sys.argv) > 2 else None


def load(name):
    p = os.path.join(d, name + ".json")
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        print("sim: %s: no result" % name)
        return None


def entry(j, method, **match):
    for s in (j or {}).get("summary", []):
        if s["method"] == method and all(abs(s.get(k, -1) - v) < 1e-9 for k, v in match.items()):
            return s
    return None


def us(s):
    return "%.2f" % s["mean_collision_us"] if s else "-"


def mm(x):
    return "%.1f" % (1000 * x)


rows = []


def target(name, ok, figure, notes):
    print("  %-62s %-5s %s" % (name, "MET" if ok else "MISSED", figure))
    rows.append({"stage": "sim", "mesh": name, "seconds": 0.0, "notes": ("met: " if ok else "missed: ") + figure + "; " + notes})


# Table 1: bouncing ball, maximum penetration (mm).
ball = load("bouncing-ball")
paper1 = {0.1: (42.5, 6.8, 3.5), 0.5: (42.5, 9.5, 4.0), 0.9: (42.5, 20.1, 19.2)}
print("\nBouncing ball (4.1, Table 1): maximum penetration of the exact sphere into the plane, mm (paper in brackets)")
print("  %-12s %-20s %-20s %-20s" % ("restitution", "Bullet native", "VPS coarse", "VPS fine"))
ball_ok = []
for c, p in paper1.items():
    n, lo, hi = (entry(ball, m, restitution=c) for m in ("native", "vps-coarse", "vps-fine"))
    cells = []
    for s, ref in zip((n, lo, hi), p):
        cells.append(("%s (%.1f)" % (mm(s["max_penetration"]), ref)) if s else "-")
    print("  %-12s %-20s %-20s %-20s" % (c, *cells))
    if n and hi:
        ball_ok.append(hi["max_penetration"] < n["max_penetration"])
if ball:
    lo, hi = entry(ball, "vps-coarse", restitution=0.5), entry(ball, "vps-fine", restitution=0.5)
    if lo and hi:
        print("  points: VPS coarse %d (paper 275), fine %d (paper 25,880)" % (lo["points"], hi["points"]))

# Bunny drop: narrow phase per step over steps 201-600, mean over the rotations.
plane, box = load("bunny-drop-plane"), load("bunny-drop-box")
print("\nBunny drop (4.2.1, 4.2.3): narrow phase per step (us) over steps 201-600: the mean, and the median step")
print("(robust to steps the scheduler interrupts), each averaged over the rotations;")
print("maximum exact penetration (mm): over all steps (the impact), the worst and the median run, and over steps")
print("201-600 (resting), the worst run; runs whose centre of mass fell through")
print("  %-10s %-10s %8s %12s %12s %9s %9s %9s %5s" % ("ground", "method", "points", "mean us", "median us", "max mm", "median mm", "rest mm", "fell"))
for ground, j in (("plane", plane), ("box", box)):
    for m in ("vps-coarse", "vps-fine", "gimpact", "hull", "hacd"):
        s = entry(j, m)
        if s:
            print("  %-10s %-10s %8d %12.2f %12.2f %9s %9s %9s %5d" % (ground, m, s["points"], s["mean_collision_us"],
                  s["median_collision_us"], mm(s["max_penetration"]), mm(s["median_max_penetration"]),
                  mm(s["max_penetration_window"]), s["fell_through"]))
print("  paper (plane, 2014 Xeon): VPS fine 0.71 ms = 710 us (34,892 points), GImpact 137x slower (~97 ms),")
print("  GJK on the 42-vertex hull 339x faster than VPS fine, HACD 1.3x faster than VPS coarse (799 points),")
print("  4.2.3: HACD ~30 us, VPS coarse ~100 us")

print("\nTargets (ratios from this run):")
for ground, j in (("box", box), ("plane", plane)):
    fine, gimpact, hacd, hull, coarse = (entry(j, m) for m in ("vps-fine", "gimpact", "hacd", "hull", "vps-coarse"))
    if fine and gimpact:
        r = gimpact["median_collision_us"] / fine["median_collision_us"]
        fig = "%.0fx median step (GImpact %.0f us / VPS fine %.1f us; means %.0f / %.1f us: %.0fx; paper 137x, aim > 300x)" % (
            r, gimpact["median_collision_us"], fine["median_collision_us"], gimpact["mean_collision_us"],
            fine["mean_collision_us"], gimpact["mean_collision_us"] / fine["mean_collision_us"])
        if ground == "box":
            target("bunny on box: VPS fine >= 137x faster than GImpact", r >= 137, fig, "penetration max VPS %s mm, GImpact %s mm" % (mm(fine["max_penetration"]), mm(gimpact["max_penetration"])))
        else:
            print("  (plane, GImpact's vertex shortcut: %s)" % fig)
    if fine and hacd:
        r = hacd["median_collision_us"] / fine["median_collision_us"]
        fig = "HACD/VPS fine = %.2f median step, %.2f mean (HACD %.1f / %.1f us, max pen %s mm, resting %s mm; VPS fine %.1f / %.1f us, max pen %s mm, resting %s mm)" % (
            r, hacd["mean_collision_us"] / fine["mean_collision_us"], hacd["median_collision_us"], hacd["mean_collision_us"],
            mm(hacd["max_penetration"]), mm(hacd["max_penetration_window"]), fine["median_collision_us"],
            fine["mean_collision_us"], mm(fine["max_penetration"]), mm(fine["max_penetration_window"]))
        target("bunny on %s: VPS fine no slower than HACD" % ground, r >= 1, fig, "paper: HACD 1.3x faster than VPS coarse")
    if fine and hull:
        print("  (%s: GJK hull %.2f us median step, %d vertices: %.0fx faster than VPS fine; paper 339x)" % (
            ground, hull["median_collision_us"], hull["points"], fine["median_collision_us"] / hull["median_collision_us"]))
    if coarse and hacd:
        print("  (%s: HACD %.1f us vs VPS coarse %.1f us median step, %d points: HACD %.2fx faster; paper 1.3x at 799 points)" % (
            ground, hacd["median_collision_us"], coarse["median_collision_us"], coarse["points"],
            coarse["median_collision_us"] / hacd["median_collision_us"]))
if ball_ok:
    n = sum(ball_ok)
    target("bouncing ball: VPS fine max penetration below Bullet native's", n == len(ball_ok),
           "%d of %d restitutions" % (n, len(ball_ok)), "Table 1")

# Table 2: segmented levels.
seg = load("bunny-segmented")
paper2 = {"coarse": (102.2, 102.1, 104.2, 102.3, 102.8), "fine": (1387.9, 1477.5, 1407.4, 1449.6, 1494.3)}
print("\nSegmented traversal (4.2.2, Table 2): narrow phase per step (us, mean/median step), bunny on the plane (paper in brackets)")
print("  %-8s %8s %s" % ("res", "points", "".join("%-20s" % ("L = %d" % L) for L in range(1, 6))))
for res, ref in paper2.items():
    cells, pts = [], 0
    for L in range(1, 6):
        s = entry(seg, "vps-%s-L%d" % (res, L))
        cells.append("%-20s" % (("%.1f/%.1f (%.1f)" % (s["mean_collision_us"], s["median_collision_us"], ref[L - 1])) if s else "-"))
        pts = s["points"] if s else pts
    print("  %-8s %8d %s" % (res, pts, "".join(cells)))

# Low rates.
low = load("bunny-low-rate")
print("\nLow rates (4.2.2): bunny on the plane, segmented levels; maximum exact penetration (mm, worst / median run),")
print("runs whose centre of mass ended below the plane (paper: L = 1 holds down to ~30 Hz, L = 4 and 5 down to ~10 Hz)")
print("  %-6s %s" % ("Hz", "".join("%-26s" % ("L = %d" % L) for L in (1, 4, 5))))
for rate in (50, 30, 20, 10):
    cells = []
    for L in (1, 4, 5):
        s = entry(low, "vps-L%d" % L, rate=rate)
        cells.append("%-25s " % (("%s / %s, fell %d/%d" % (mm(s["max_penetration"]), mm(s["median_max_penetration"]), s["fell_through"], s["runs"])) if s else "-"))
    print("  %-6d %s" % (rate, "".join(cells)))
print()

if results:
    with open(results, "a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
