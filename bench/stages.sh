# Stage rows of make bench (sourced by bench/run.sh; uses row, bin, meshes, runs).

# voxelize vs OpenVDB meshToSignedDistanceField (3-voxel bands), same grid, same run.
for spec in "stanford-bunny 0.0005" "fandisk 0.0165" "rocker-arm 0.0033"; do
    set -- $spec
    [ -f "$meshes/$1.obj" ] || continue
    echo "bench: voxelize $1 at $2" >&2
    row "$("$bin/bench_voxelize" "$meshes/$1.obj" --voxel-size "$2" --runs "$runs" --samples 1000)"
done

# Sign agreement over uniformly sampled voxels of the open bunny (the row above samples half of
# its voxels near the surface, where disagreements concentrate).
if [ -f "$meshes/stanford-bunny.obj" ]; then
    echo "bench: voxelize bunny, uniform samples" >&2
    row "$("$bin/bench_voxelize" "$meshes/stanford-bunny.obj" --voxel-size 0.0005 --runs 1 --samples 5000 --uniform)"
fi

# Open-mesh agreement table: the default fill (auto: hybrid on open meshes) and the vote fill
# against the exact generalized winding number (summed over all triangles by bench_fill itself) on
# every voxel where it is decisive (||w| - 1/2| > 0.1): every voxel of the open sample meshes at 64
# voxels along the longest side, 20,000 uniformly drawn voxels of the bunny at 0.0005.
for f in half-pipe open-tube cup corrugated-sheet open-box; do
    [ -f "sample_meshes/$f.obj" ] || continue
    echo "bench: fill agreement $f" >&2
    "$bin/bench_fill" "sample_meshes/$f.obj" --resolution 64 >>"$results"
done
if [ -f "$meshes/stanford-bunny.obj" ]; then
    echo "bench: fill agreement bunny" >&2
    "$bin/bench_fill" "$meshes/stanford-bunny.obj" --voxel-size 0.0005 --samples 20000 --runs "$runs" >>"$results"
fi

# Scaling of haptic-voxelize (whole tool: import, voxelize, write) on the bunny, one run each,
# time and peak RSS from the tool's own --json. BENCH_SCALE_MIN sets the finest voxel size.
for s in 0.001 0.0005 0.00025 0.000125; do
    awk -v s="$s" -v m="${BENCH_SCALE_MIN:-0.000125}" 'BEGIN{exit !(s >= m)}' || continue
    [ -f "$meshes/stanford-bunny.obj" ] || continue
    echo "bench: haptic-voxelize bunny at $s" >&2
    out=$(mktemp -d)
    "$bin/haptic-voxelize" "$meshes/stanford-bunny.obj" --voxel-size "$s" -o "$out/b.vdb" --json 2>/dev/null |
        python3 -c '
import json, sys, os
j = json.load(sys.stdin)
d = j["grid"]["dims"]
print(json.dumps({"stage": "voxelize-cli", "mesh": "stanford-bunny.obj @" + sys.argv[1],
                  "seconds": j["seconds"]["total"], "peak_rss": j["peak_rss_bytes"],
                  "notes": "%dx%dx%d, file %.1f MB" % (d[0], d[1], d[2], os.path.getsize(sys.argv[2]) / 1048576.0)}))
' "$s" "$out/b.vdb" >>"$results"
    rm -rf "$out"
done

# voxelize + distance vs OpenVDB with a full interior band (wall and CPU time, same run), and
# accuracy against brute force of the field and of the scaled encoding (P = 6) as stored; for the
# bunny also the file and in-memory sizes of each encoding (--memory). Rows dist-phases (where the
# time goes) and dist-beyond (every voxel beyond the exact band against the exact distance,
# --check-all: the largest error and the voxels above 0.25 voxel).
for spec in "fandisk 0.0165 --check-all" "rocker-arm 0.0033 --check-all" "stanford-bunny 0.0005 --memory --check-all"; do
    set -- $spec
    [ -f "$meshes/$1.obj" ] || continue
    echo "bench: voxelize+distance $1 at $2" >&2
    row "$("$bin/bench_distance" "$meshes/$1.obj" --voxel-size "$2" --runs "$runs" --samples 1000 "${@:3}")"
done

# Geometry kernels on the bunny: exact BVH closest points at the voxels within 3 voxels of the
# surface, fast winding number at every 2nd voxel along each axis (accuracy vs the exact sum).
if [ -f "$meshes/stanford-bunny.obj" ]; then
    echo "bench: geometry kernels, bunny" >&2
    "$bin/bench_geometry" "$meshes/stanford-bunny.obj" --voxel-size 0.0005 --stride 2 >>"$results"
fi

# VDB writing at scale: a synthetic layered Int32 ball (worst case: almost no tiles), producer
# freeing its slices as the writer goes. BENCH_VDB_DIM=1145 gives the largest target, 1.5e9 voxels.
for d in ${BENCH_VDB_DIM:-512}; do
    echo "bench: vdb write ${d}^3" >&2
    out=$(mktemp -d)
    row "$("$bin/bench_vdb_write" --dims "$d" "$d" "$d" -o "$out/big.vdb")"
    rm -rf "$out"
done

# Point-sphere tree of the bunny at K = 4 and K = 8: build time, levels against log_K(N) and the
# largest radius excess over a brute-force lower bound of each sphere's minimum. Inputs: the
# bunny's pointshell built through the library (not timed; peak RSS includes it) at voxel 0.0007
# (about 35,000 points, Sagardia et al. 2014's count) and at that paper's 0.0005, and a seeded uniform
# random sampling of the surface with 35,000 points.
if [ -f "$meshes/stanford-bunny.obj" ]; then
    for s in 0.0007 0.0005; do
        echo "bench: spheretree bunny pointshell at $s" >&2
        "$bin/bench_spheretree" "$meshes/stanford-bunny.obj" --voxel-size "$s" --k 4,8 --runs "$runs" >>"$results"
    done
    echo "bench: spheretree bunny, 35,000 random surface samples" >&2
    "$bin/bench_spheretree" "$meshes/stanford-bunny.obj" --points 35000 --k 4,8 --runs "$runs" >>"$results"
fi

# Closest feature maps (Giang & O'Sullivan 2006): sample counts (Table 1) and neighbour-distance spread
# (Table 2) next to the paper's, then the bunny's map (16 -> 4 stacks) on a tree (K = 4) of its
# pointshell at voxel 0.001 (a tree on its vertices if that pipeline fails): build time, file
# sizes, stored records against brute force.
echo "bench: cfm sampling" >&2
row "$("$bin/bench_cfm" --sampling)"
if [ -f "$meshes/stanford-bunny.obj" ]; then
    echo "bench: cfm bunny" >&2
    out=$(mktemp -d)
    shell_args=()
    "$bin/haptic-voxelize" "$meshes/stanford-bunny.obj" --voxel-size 0.001 -o "$out/b.vdb" --quiet 2>/dev/null &&
        "$bin/haptic-pointshell" "$meshes/stanford-bunny.obj" "$out/b.vdb" -o "$out/b.hps" --quiet 2>/dev/null &&
        shell_args=(--tree "$out/b.hps")
    row "$("$bin/bench_cfm" "$meshes/stanford-bunny.obj" "${shell_args[@]}" --runs "$runs")"
    rm -rf "$out"
fi

# Pointshell sampling on the bunny at Sagardia et al. 2014's resolution (voxelize + distance via the library,
# not timed): count against the paper's 35,596, sampling time against its "under 20 s", and the
# spacing/coverage/normal targets of the stage, one row per normal mode.
if [ -f "$meshes/stanford-bunny.obj" ]; then
    echo "bench: pointshell bunny at 0.0005" >&2
    "$bin/bench_pointshell" "$meshes/stanford-bunny.obj" --voxel-size 0.0005 --runs "$runs" >>"$results"
fi

# VPS queries (bench_query): Sagardia et al. 2014's case, the bunny's distance field at 0.0005 against the
# bunny's own pointshell tree (shell at 0.0007: 35,214 points, the paper had 35,596), shallow
# contact poses, one thread; full/brute/time-critical/segmented L1-5 with
# K = 4 and full with K = 8, and the force direction of time-critical queries interrupted at 20 and
# 50 us without and with the tree's CFM (rows query-tc-dir). BENCH_QUERY_COUNT poses (default 2000).
if [ -f "$meshes/stanford-bunny.obj" ]; then
    echo "bench: query bunny vs bunny at 0.0005" >&2
    "$bin/bench_query" "$meshes/stanford-bunny.obj" "$meshes/stanford-bunny.obj" --static-voxel 0.0005 \
        --moving-voxel 0.0007 --count "${BENCH_QUERY_COUNT:-2000}" >>"$results"
fi
# A large static part against a small moving tool: fandisk's field against the bunny's tree.
if [ -f "$meshes/fandisk.obj" ] && [ -f "$meshes/stanford-bunny.obj" ]; then
    echo "bench: query fandisk vs bunny" >&2
    "$bin/bench_query" "$meshes/fandisk.obj" "$meshes/stanford-bunny.obj" --static-voxel 0.0165 \
        --moving-voxel 0.005 --moving-scale 5 --count "${BENCH_QUERY_COUNT:-2000}" --levels 0 >>"$results"
fi

# The query next to its peers (bench_peers, built when Bullet and FCL are found): Bullet's GImpact
# and FCL's OBBRSS mesh-mesh collision with contacts, on the same meshes and the same contact poses
# in one run, one thread. Sagardia et al. 2014's case (the bunny's field at 0.0005 against the bunny's shell
# at 0.0007, 35,214 points) and a CAD part against itself. BENCH_PEERS_COUNT poses (default 200).
if [ -x "$bin/bench_peers" ]; then
    for spec in "stanford-bunny 0.0005 0.0007" "rocker-arm 0.0033 0.005"; do
        set -- $spec
        [ -f "$meshes/$1.obj" ] || continue
        echo "bench: peers $1 vs $1" >&2
        "$bin/bench_peers" "$meshes/$1.obj" "$meshes/$1.obj" --static-voxel "$2" --moving-voxel "$3" \
            --count "${BENCH_PEERS_COUNT:-200}" >>"$results"
    done
else
    echo "bench: bench_peers not built (needs libbullet-dev and libfcl-dev), peers skipped" >&2
fi
