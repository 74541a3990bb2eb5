#!/usr/bin/env bash
# The executables as a user runs them (first table of make bench), beside OpenVDB as a process.
#   usage: bench/asrun.sh [BIN_DIR]   env: HP_MESHES (default ../shared/meshes), BENCH_RUNS (5),
#          BENCH_ASRUN_SHAPES (default "bunny fandisk rocker band"), BENCH_ASRUN_DENSE (shapes that
#          also get OpenVDB's dense product, default "fandisk"; it takes minutes: OpenVDB's exterior
#          band is not bounded by the box and covers several times its voxels), BENCH_DENSE_RUNS
#          (its runs, default 1, within the first runs of ours)
# Every command is timed from outside with /usr/bin/time -v, BENCH_RUNS times, ours and the peer
# alternating within each run so that both see the same load. Per row: wall median and minimum,
# user + sys (median), peak resident memory (median; and per voxel of the grid's box), minor and
# major page faults (median), minor faults per peak resident page, output bytes, and for our tools
# the wall minus the total that their --json reports (what the reported phases do not see).
# The peer is bench_vdb_peer (bench/bench_vdb_peer.cpp): it reads the same mesh file, runs
# OpenVDB's meshToSignedDistanceField on the same grid and writes its .vdb; each row names the
# product it compares with. Ratio: our median wall / the peer's (below 1: we are faster).
# Prints a Markdown table on stdout (progress on stderr).
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin}
meshes=${HP_MESHES:-../shared/meshes}
if [ ! -d "$meshes" ]; then
    echo "bench: no reference meshes at $meshes (set HP_MESHES)" >&2; exit 0
fi
if [ ! -x /usr/bin/time ] || [ ! -x "$bin/bench_vdb_peer" ]; then
    echo "bench: executables as run skipped (needs /usr/bin/time and $bin/bench_vdb_peer)" >&2; exit 0
fi
exec python3 - "$bin" "$meshes" "${BENCH_RUNS:-5}" "${BENCH_ASRUN_SHAPES:-bunny fandisk rocker band}" "${BENCH_ASRUN_DENSE-fandisk}" "${BENCH_DENSE_RUNS:-1}" <<'PY'
import json, os, platform, re, shutil, statistics, subprocess, sys, tempfile, time

bin_dir, meshes, runs, shapes, dense_shapes, dense_runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split(), sys.argv[5].split(), int(sys.argv[6])
tmp = tempfile.mkdtemp(prefix="hp-asrun-")

def timed(cmd, out):
    """Runs cmd under /usr/bin/time -v; returns its figures and its --json (or None)."""
    tv = os.path.join(tmp, "time.txt")
    p = subprocess.run(["/usr/bin/time", "-v", "-o", tv] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("bench: %s failed (exit %d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip().splitlines()[-1:]))
    t = open(tv).read()
    def field(name):
        return re.search(re.escape(name) + r":\s*(\S+)", t).group(1)
    h, m, s = ([0, 0] + field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":"))[-3:]
    r = {"wall": int(h) * 3600 + int(m) * 60 + float(s),
         "cpu": float(field("User time (seconds)")) + float(field("System time (seconds)")),
         "rss": int(field("Maximum resident set size (kbytes)")) * 1024,
         "minor": int(field("Minor (reclaiming a frame) page faults")),
         "major": int(field("Major (requiring I/O) page faults")),
         "bytes": os.path.getsize(out)}
    try: r["json"] = json.loads(p.stdout)
    except ValueError: r["json"] = None
    return r

def total_of(results):
    """Sums the processes of one run of a row (a pair: voxelize then distance)."""
    return {"wall": sum(r["wall"] for r in results), "cpu": sum(r["cpu"] for r in results),
            "rss": max(r["rss"] for r in results), "minor": sum(r["minor"] for r in results),
            "major": sum(r["major"] for r in results), "bytes": results[-1]["bytes"],
            "reported": sum(r["json"]["seconds"]["total"] for r in results if r["json"])}

def q(p): return "`" + " ".join(os.path.basename(a) if "/" in a else a for a in p) + "`"  # file names only

vox = os.path.join(bin_dir, "haptic-voxelize")
dist = os.path.join(bin_dir, "haptic-distance")
peer = os.path.join(bin_dir, "bench_vdb_peer")
# (name, mesh file, voxel size, band of our pair or 0, peer products for each row)
table = {"bunny": ("bunny", "stanford-bunny.obj", "0.0005", 0), "fandisk": ("fandisk", "fandisk.obj", "0.0165", 0),
         "rocker": ("rocker-arm", "rocker-arm.obj", "0.0033", 0), "band": ("bunny", "stanford-bunny.obj", "0.000125", 8)}
rows = []
for key in shapes:
    name, mesh_file, s, band = table[key]
    mesh = os.path.join(meshes, mesh_file)
    if not os.path.exists(mesh): continue
    v_out, d_out, p_out = (os.path.join(tmp, n) for n in ("m.layers.vdb", "m.dist.vdb", "peer.vdb"))
    bandarg = ["--band", str(band)] if band else []
    v_cmd = [vox, mesh, "--voxel-size", s] + bandarg + ["-o", v_out, "--json"]
    d_cmd = [dist, mesh, v_out] + bandarg + ["-o", d_out, "--json"]
    if band:
        peers = {"band": ["--product", "band", "--band", str(band)]}
    else:
        peers = {"band": ["--product", "band", "--band", "3"], "interior": ["--product", "interior"]}
        if key in dense_shapes: peers["dense"] = ["--product", "dense"]
    ours = {"voxelize": [], "distance": [], "pair": []}
    theirs = {k: [] for k in peers}
    dims = None
    for r in range(runs):
        print("bench: as run %s at %s, run %d of %d" % (name, s, r + 1, runs), file=sys.stderr, flush=True)
        now = [k for k in peers if k != "dense" or r < dense_runs]
        for k in (now if r % 2 else []): theirs[k].append(timed([peer, mesh, "--voxel-size", s] + peers[k] + ["-o", p_out], p_out))
        a = timed(v_cmd, v_out)
        b = timed(d_cmd, d_out)
        dims = a["json"]["grid"]["dims"]
        ours["voxelize"].append(total_of([a])); ours["distance"].append(total_of([b])); ours["pair"].append(total_of([a, b]))
        for k in ([] if r % 2 else now): theirs[k].append(timed([peer, mesh, "--voxel-size", s] + peers[k] + ["-o", p_out], p_out))
    for k, v in theirs.items():
        pj = v[-1]["json"]
        if pj["dims"] != dims: sys.exit("bench: OpenVDB's grid %s is not ours %s" % (pj["dims"], dims))
    voxels = dims[0] * dims[1] * dims[2]
    what = "%s @%s%s (%s = %.1fM voxels)" % (name, s, " --band %d" % band if band else "", "x".join(map(str, dims)), voxels / 1e6)
    def peer_text(k):
        pj = theirs[k][-1]["json"]
        if k == "band": return "OpenVDB band %d/%d" % (band or 3, band or 3)
        if k == "interior": return "OpenVDB full interior (exterior 3)"
        return ("OpenVDB dense: full interior, exterior %g voxels (active: %.1fx the box's voxels, it does not stop at the box), %d run%s"
                % (pj["exterior_band"], pj["active_voxels"] / voxels, len(theirs[k]), "s" if len(theirs[k]) > 1 else ""))
    plan = [("voxelize", "band", [v_cmd])]
    if band: plan = [("voxelize", None, [v_cmd]), ("distance", None, [d_cmd]), ("pair", "band", [v_cmd, d_cmd])]
    else:
        plan += [("distance", None, [d_cmd]), ("pair", "interior", [v_cmd, d_cmd])]
        if "dense" in peers: plan.append(("pair", "dense", [v_cmd, d_cmd]))
    for ours_key, peer_key, cmds in plan:
        rows.append({"what": what, "voxels": voxels, "ours": ours[ours_key], "cmds": cmds,
                     "peer": theirs[peer_key] if peer_key else None, "peer_text": peer_text(peer_key) if peer_key else "",
                     "peer_cmd": [peer, mesh, "--voxel-size", s] + peers[peer_key] + ["-o", p_out] if peer_key else None})
shutil.rmtree(tmp, ignore_errors=True)

def med(v, k): return statistics.median(x[k] for x in v)
def mb(b): return "%.0f MB" % (b / 1e6) if b >= 1e7 else "%.1f MB" % (b / 1e6)
page = os.sysconf("SC_PAGE_SIZE")
load = os.getloadavg()
print("Executables as run, %d runs each (ours and OpenVDB alternating); %s, %d cores, %.1f GB; %s; load average at the end %.1f %.1f %.1f"
      % (runs, platform.processor() or platform.machine(), os.cpu_count(), os.sysconf("SC_PHYS_PAGES") * page / 1e9,
         time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), *load))
print()
print("| shape | process | wall median / min s | user+sys s | peak RSS (B/voxel) | minor / major faults (per peak page) | output | wall - reported | compared with | its wall median / min s | its peak RSS | ratio |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    o, p = r["ours"], r["peer"]
    cmd = " + ".join(q(c[:1]) for c in r["cmds"]).replace("`", "")
    gap = med(o, "wall") - med(o, "reported")
    cells = [r["what"], cmd, "%.2f / %.2f" % (med(o, "wall"), min(x["wall"] for x in o)), "%.2f" % med(o, "cpu"),
             "%s (%.1f)" % (mb(med(o, "rss")), med(o, "rss") / r["voxels"]),
             "%d / %d (%.2f)" % (med(o, "minor"), med(o, "major"), med(o, "minor") / (med(o, "rss") / page)),
             mb(med(o, "bytes")), "%.2f s (%.0f %%)" % (gap, 100.0 * gap / med(o, "wall"))]
    if p:
        cells += [r["peer_text"], "%.2f / %.2f" % (med(p, "wall"), min(x["wall"] for x in p)), mb(med(p, "rss")),
                  "%.2f" % (med(o, "wall") / med(p, "wall"))]
    else:
        cells += ["-", "-", "-", "-"]
    print("| " + " | ".join(cells) + " |")
print()
print("Commands (the executables of the build's bin folder, the reference meshes; a pair runs its first, then its second):")
print()
seen = set()
for r in rows:
    for c in r["cmds"] + ([r["peer_cmd"]] if r["peer_cmd"] else []):
        t = q(c)
        if t not in seen: seen.add(t); print("- " + t)
PY
