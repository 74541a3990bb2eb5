# The paper's experiments in Bullet (sourced by bench/run.sh; uses row, bin, results). Needs
# haptic-sim (built with lib/bullet). Each scene of scenes/ runs once with haptic-sim --json; the
# VPS files and HACD hulls are prepared on the first run into HP_SIM_CACHE (default build/sim-cache)
# and reused. bench/sim_report.py prints every figure beside the paper's (Sagardia et al. 2014,
# Tables 1 and 2, the 137x and 0.71 ms) and the targets with ratios from this one run, and adds rows
# to the main table. BENCH_SIM_ROTATIONS overrides the scenes' 10 rotations (fewer: a quicker look);
# BENCH_SIM_HEIGHTS the ball's drop heights of bench/sim_heights.py (default 40, 0 skips it).
if [ -x "$bin/haptic-sim" ] && [ -f "$meshes/stanford-bunny.obj" ]; then
    simdir=$(mktemp -d)
    simcache=${HP_SIM_CACHE:-build/sim-cache}
    simargs=(--cache "$simcache" --json --threads 1)
    [ -n "${BENCH_SIM_ROTATIONS:-}" ] && simargs+=(--rotations "$BENCH_SIM_ROTATIONS")
    for scene in bouncing-ball bunny-drop-plane bunny-drop-box bunny-segmented bunny-low-rate; do
        echo "bench: sim $scene" >&2
        "$bin/haptic-sim" "scenes/$scene.json" "${simargs[@]}" >"$simdir/$scene.json" ||
            echo "bench: haptic-sim scenes/$scene.json failed" >&2
    done
    python3 bench/sim_report.py "$simdir" "$results"
    # Multibody scenes (issue 39): 1, 8, 64 bunnies dropped into a box (VPS, HACD; GImpact up to 8)
    # and the paper's stack of 2, 4, 8 balls, side by side: the narrow phase per step against N, the
    # pile's exact penetrations, the stack's drift (bench/sim_multibody.py; --json for the same as
    # JSON), and the plots <scene>-count.png / -time.png / -energy.png in HP_SIM_PLOTS (default
    # build/sim-plots). BENCH_SIM_MULTIBODY=0 skips them (the pile takes tens of minutes: GImpact).
    if [ "${BENCH_SIM_MULTIBODY:-1}" != 0 ]; then
        simplots=${HP_SIM_PLOTS:-build/sim-plots}
        for scene in sphere-stack bunny-pile; do
            echo "bench: sim $scene" >&2
            "$bin/haptic-sim" "scenes/$scene.json" --cache "$simcache" --json --threads 1 --plots "$simplots" \
                >"$simdir/$scene.json" || echo "bench: haptic-sim scenes/$scene.json failed" >&2
        done
        python3 bench/sim_multibody.py "$simdir"
    fi
    # The ball from BENCH_SIM_HEIGHTS drop heights (default 40; 0 skips): the distribution of the
    # maximum penetration per method, the per-height difference VPS fine - native, the impacts' timing.
    if [ "${BENCH_SIM_HEIGHTS:-40}" -gt 0 ]; then
        echo "bench: sim ball heights" >&2
        python3 bench/sim_heights.py --bin "$bin" --cache "$simcache" --count "${BENCH_SIM_HEIGHTS:-40}" \
            --results "$results" 2>/dev/null || echo "bench: bench/sim_heights.py failed" >&2
    fi
    rm -rf "$simdir"
else
    echo "bench: haptic-sim not built (needs libbullet-dev) or no bunny: the Bullet scenes are skipped" >&2
fi
