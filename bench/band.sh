# Narrow-band rows of make bench (docs/voxelize.md, "Narrow band"; sourced by bench/run.sh; uses
# row, bin, meshes, results). The tools run as a user runs them, one run each; their time and peak
# memory are what their --json reports (seconds.total, peak_rss_bytes: the process's maximum RSS).
#  band-field  the bunny at voxel 0.000125 (1250 x 1239 x 970) with --band 8: haptic-voxelize +
#              haptic-distance, next to OpenVDB's narrow-band meshToSignedDistanceField (3/3 voxels)
#              on the same grid in its own process (bench_band, row openvdb-band); targets: at most
#              2x OpenVDB's time, at most 1.5 GB peak. BENCH_BAND_DENSE=1 adds the dense voxelize on
#              the same grid (bench_voxelize, row voxelize: about 200 s and 7.5 GB, off by default;
#              the tools themselves refuse this grid dense, its distance stage would need ~60 GB).
#  band-big    BENCH_BAND_BIG=1: the bunny at 0.0000625 (2498 x 2476 x 1937, 1.2e10 voxels dense)
#              with --band 8: voxelize + distance time, peak memory, file sizes (minutes, a few GB).
#  band-files  the bunny at 0.0005 with --band 8 and dense: voxelmap and field sizes.
#  band-query  Sagardia et al. 2014's case (bunny field at 0.0005, bunny shell at 0.0007, tree K = 4)
#              on the band and the dense field, the same contact poses (BENCH_QUERY_COUNT, default
#              2000, seed 1), one thread; target: band p99 at most 1.2x dense p99. The band field
#              goes through the query's sparse sampler (docs/field.md, "Narrow-band fields"); the
#              row also counts the poses with the same contacts, and the query's peak memory on both.
#  band-query-fine  BENCH_BAND_FINE=1: the same query's peak memory on band and dense fields at
#              voxel 0.00025 (the dense field takes minutes and several GB to make; off by default).
if [ -f "$meshes/stanford-bunny.obj" ] && [ -x "$bin/bench_band" ]; then
    bd=$(mktemp -d)
    bunny="$meshes/stanford-bunny.obj"
    # band_run NAME ARGS...: runs a tool with --json into $bd/NAME.json (empty on failure).
    band_run() { local n=$1; shift; "$@" --json >"$bd/$n.json" 2>"$bd/$n.err" || { echo "bench: band: $n failed: $(tail -1 "$bd/$n.err")" >&2; : >"$bd/$n.json"; }; }
    echo "bench: band bunny at 0.000125 (--band 8, OpenVDB 3/3)" >&2
    band_run vox125 "$bin/haptic-voxelize" "$bunny" --voxel-size 0.000125 --band 8 -o "$bd/v125.vdb"
    band_run dist125 "$bin/haptic-distance" "$bunny" "$bd/v125.vdb" -o "$bd/d125.vdb"
    "$bin/bench_band" "$bunny" --voxel-size 0.000125 --band 3 --runs 1 >"$bd/peer125.json" || : >"$bd/peer125.json"
    if [ "${BENCH_BAND_DENSE:-0}" = 1 ]; then
        # The tools refuse a dense grid this large (exit 2: the dense distance stage would need about
        # 60 GB); the library's dense voxelize alone, next to OpenVDB again, gives the dense figures.
        echo "bench: dense voxelize bunny at 0.000125 (BENCH_BAND_DENSE=1)" >&2
        row "$("$bin/bench_voxelize" "$bunny" --voxel-size 0.000125 --runs 1 --samples 0)"
    fi
    if [ "${BENCH_BAND_BIG:-0}" = 1 ]; then
        echo "bench: band bunny at 0.0000625 (--band 8, BENCH_BAND_BIG=1)" >&2
        band_run vox62 "$bin/haptic-voxelize" "$bunny" --voxel-size 0.0000625 --band 8 -o "$bd/v62.vdb"
        band_run dist62 "$bin/haptic-distance" "$bunny" "$bd/v62.vdb" -o "$bd/d62.vdb"
    fi
    echo "bench: band bunny at 0.0005, files and queries" >&2
    for bm in band:8 dense:0; do
        band_run "vox-${bm%:*}" "$bin/haptic-voxelize" "$bunny" --voxel-size 0.0005 --band "${bm#*:}" -o "$bd/v-${bm%:*}.vdb"
        band_run "dist-${bm%:*}" "$bin/haptic-distance" "$bunny" "$bd/v-${bm%:*}.vdb" -o "$bd/d-${bm%:*}.vdb"
    done
    # The dense field exact to 7 layers, as the band is within its 8 (haptic-distance --exact-layers).
    "$bin/haptic-distance" "$bunny" "$bd/v-dense.vdb" --exact-layers 7 -o "$bd/d-dense-x7.vdb" --quiet
    "$bin/haptic-voxelize" "$bunny" --voxel-size 0.0007 -o "$bd/v7.vdb" --quiet &&
        "$bin/haptic-distance" "$bunny" "$bd/v7.vdb" -o "$bd/d7.vdb" --quiet &&
        "$bin/haptic-pointshell" "$bunny" "$bd/d7.vdb" -o "$bd/s7.hps" --quiet &&
        "$bin/haptic-spheretree" "$bd/s7.hps" --k 4 -o "$bd/t7.hps" --quiet
    # --budget-us: the rows compare latencies; a descheduled query over the default budget would exit 1.
    bq=(--moving "$bd/t7.hps" --threads 1 --budget-us 100000 --report)
    band_run q-dense0 "$bin/haptic-query" --static "$bd/d-dense.vdb" "${bq[@]}" "$bd/q-dense0.rep" --scenario contact \
        --count "${BENCH_QUERY_COUNT:-2000}" --seed 1 --write-poses "$bd/poses.json"
    # Alternating runs on the same poses; the second of each is quoted (the first warms the caches).
    for br in 1 2; do
        band_run "q-band$br" /usr/bin/time -f %M -o "$bd/q-band$br.kb" "$bin/haptic-query" --static "$bd/d-band.vdb" "${bq[@]}" "$bd/q-band$br.rep" --poses "$bd/poses.json"
        band_run "q-dense$br" /usr/bin/time -f %M -o "$bd/q-dense$br.kb" "$bin/haptic-query" --static "$bd/d-dense.vdb" "${bq[@]}" "$bd/q-dense$br.rep" --poses "$bd/poses.json"
    done
    band_run q-dense-x7 "$bin/haptic-query" --static "$bd/d-dense-x7.vdb" "${bq[@]}" "$bd/q-dense-x7.rep" --poses "$bd/poses.json"
    if [ "${BENCH_BAND_FINE:-0}" = 1 ]; then
        echo "bench: band and dense bunny at 0.00025, query memory (BENCH_BAND_FINE=1)" >&2
        for bm in band:8 dense:0; do
            "$bin/haptic-voxelize" "$bunny" --voxel-size 0.00025 --band "${bm#*:}" -o "$bd/fv.vdb" --quiet &&
                "$bin/haptic-distance" "$bunny" "$bd/fv.vdb" -o "$bd/fd-${bm%:*}.vdb" --quiet && rm -f "$bd/fv.vdb"
            band_run "qf-${bm%:*}" /usr/bin/time -f %M -o "$bd/qf-${bm%:*}.kb" "$bin/haptic-query" --static "$bd/fd-${bm%:*}.vdb" "${bq[@]}" "$bd/qf-${bm%:*}.rep" --poses "$bd/poses.json"
        done
    fi
    python3 - "$bd" >>"$results" <<'PY'
import json, os, sys
d = sys.argv[1]
def load(n):
    try: return json.load(open(os.path.join(d, n)))
    except (OSError, ValueError): return None
def gb(b): return "%.2f GB" % (b / 1e9)
def mb(p): return "%.1f MB" % (os.path.getsize(os.path.join(d, p)) / 1048576.0) if os.path.exists(os.path.join(d, p)) else "-"
def kb(n):
    try: return int(open(os.path.join(d, n)).read().split()[-1]) * 1024
    except (OSError, ValueError, IndexError): return 0
def mark(ok): return "met" if ok else "MISSED"
vox, dist, peer = load("vox125.json"), load("dist125.json"), load("peer125.json")
if vox and dist and peer:
    t = vox["seconds"]["total"] + dist["seconds"]["total"]
    rss = max(vox["peak_rss_bytes"], dist["peak_rss_bytes"])
    dims = "x".join(str(x) for x in peer["dims"])
    if vox["grid"]["dims"] != peer["dims"]: dims += " (ours %s: not the same grid)" % vox["grid"]["dims"]
    print(json.dumps({"stage": "openvdb-band", "mesh": "stanford-bunny.obj @0.000125", "seconds": peer["seconds"],
                      "peak_rss": peer["peak_rss"], "notes": "%s, meshToSignedDistanceField 3/3 voxels, %d active voxels"
                                                             % (dims, peer["active_voxels"])}))
    notes = ("%s --band 8: voxelize %.1f s %s, distance %.1f s %s; files %.1f + %.1f MB; target <= 2x OpenVDB: %s "
             "(%.1fx), <= 1.5 GB: %s (%s)" % (dims, vox["seconds"]["total"], gb(vox["peak_rss_bytes"]), dist["seconds"]["total"],
                                            gb(dist["peak_rss_bytes"]), os.path.getsize(os.path.join(d, "v125.vdb")) / 1048576.0, os.path.getsize(os.path.join(d, "d125.vdb")) / 1048576.0,
                                            mark(t <= 2 * peer["seconds"]), t / peer["seconds"], mark(rss <= 1.5e9), gb(rss)))
    print(json.dumps({"stage": "band-field", "mesh": "stanford-bunny.obj @0.000125", "seconds": t, "peak_rss": rss,
                      "peer_seconds": peer["seconds"], "notes": notes}))
vox, dist = load("vox62.json"), load("dist62.json")
if vox and dist:
    print(json.dumps({"stage": "band-big", "mesh": "stanford-bunny.obj @0.0000625",
                      "seconds": vox["seconds"]["total"] + dist["seconds"]["total"],
                      "peak_rss": max(vox["peak_rss_bytes"], dist["peak_rss_bytes"]),
                      "notes": "%s --band 8 (%.3g voxels dense): voxelize %.1f s %s, distance %.1f s %s; files %.1f + %.1f MB"
                               % ("x".join(str(x) for x in vox["grid"]["dims"]), vox["grid"]["voxels"], vox["seconds"]["total"],
                                  gb(vox["peak_rss_bytes"]), dist["seconds"]["total"], gb(dist["peak_rss_bytes"]),
                                  os.path.getsize(os.path.join(d, "v62.vdb")) / 1048576.0, os.path.getsize(os.path.join(d, "d62.vdb")) / 1048576.0)}))
vb, db, vd, ddn = load("vox-band.json"), load("dist-band.json"), load("vox-dense.json"), load("dist-dense.json")
if vb and db and vd and ddn:
    print(json.dumps({"stage": "band-files", "mesh": "stanford-bunny.obj @0.0005",
                      "seconds": vb["seconds"]["total"] + db["seconds"]["total"],
                      "peak_rss": max(vb["peak_rss_bytes"], db["peak_rss_bytes"]),
                      "notes": "--band 8: voxelmap %s (dense %s), field %s (dense %s); dense voxelize + distance %.1f s %s"
                               % (mb("v-band.vdb"), mb("v-dense.vdb"), mb("d-band.vdb"), mb("d-dense.vdb"),
                                  vd["seconds"]["total"] + ddn["seconds"]["total"],
                                  gb(max(vd["peak_rss_bytes"], ddn["peak_rss_bytes"])))}))
qb, qd = load("q-band2.rep"), load("q-dense2.rep")
if qb and qd:
    lb, ld = qb["latency_us"], qd["latency_us"]
    s = qd["static"]["voxel_size"]
    within = same = shallow = same_shallow = 0
    for a, b in zip(qd["per_query"], qb["per_query"]):
        deepest = max(a["max_penetration"], b["max_penetration"])
        equal = a["contacts"] == b["contacts"] and a["force"] == b["force"]
        if deepest < 8 * s:
            within += 1
            same += equal
        if deepest < 2.5 * s:  # where the dense field is exact too (docs/distance.md)
            shallow += 1
            same_shallow += equal
    n = len(qd["per_query"])
    qx = load("q-dense-x7.rep")  # the dense field exact to 7 layers: the band's values wherever it is exact
    within_x = same_x = 0
    for a, b in zip(qx["per_query"] if qx else [], qb["per_query"]):
        if max(a["max_penetration"], b["max_penetration"]) < 8 * s:
            within_x += 1
            same_x += a["contacts"] == b["contacts"] and a["force"] == b["force"]
    print(json.dumps({"stage": "band-query", "mesh": "stanford-bunny.obj @0.0005",
                      "seconds": lb["mean"] * n / 1e6, "peak_rss": kb("q-band2.kb"),
                      "notes": "band p50/p99 %.1f/%.1f us, dense %.1f/%.1f us (%d poses, 1 thread): p99 %.2fx, target <= 1.2x: %s; "
                               "spheres tested %.0f vs %.0f; same contacts and force on %d of the %d poses within the band (target: all, %s), "
                               "on %d of the %d no deeper than 2.5 voxels; against the dense field exact to 7 layers (--exact-layers 7) on %d of %d; seconds: the band queries' sum; query peak band %s, dense %s"
                               % (lb["p50"], lb["p99"], ld["p50"], ld["p99"], n, lb["p99"] / ld["p99"], mark(lb["p99"] <= 1.2 * ld["p99"]),
                                  qb["mean_spheres_tested"], qd["mean_spheres_tested"], same, within, mark(same == within),
                                  same_shallow, shallow, same_x, within_x, gb(kb("q-band2.kb")), gb(kb("q-dense2.kb")))}))
fb, fdn = load("qf-band.rep"), load("qf-dense.rep")
if fb and fdn:
    print(json.dumps({"stage": "band-query-fine", "mesh": "stanford-bunny.obj @0.00025", "seconds": fb["latency_us"]["mean"] * len(fb["per_query"]) / 1e6,
                      "peak_rss": kb("qf-band.kb"),
                      "notes": "query peak memory band %s, dense %s; p50/p99 band %.1f/%.1f us, dense %.1f/%.1f us (same poses as band-query)"
                               % (gb(kb("qf-band.kb")), gb(kb("qf-dense.kb")), fb["latency_us"]["p50"], fb["latency_us"]["p99"],
                                  fdn["latency_us"]["p50"], fdn["latency_us"]["p99"])}))
PY
    rm -rf "$bd"; unset -f band_run
fi
