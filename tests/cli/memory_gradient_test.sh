#!/usr/bin/env bash
# The memory estimate before any work counts the gradient grid a pipeline's distance stage will
# compute: a dense grid that fits without it but not with it is refused at once (exit 2, no
# allocation, nothing written) with the band and the voxel size that would fit.
source "$(dirname "$0")/lib.sh"
M="$SAMPLES/torus.off"

# The torus's box is 2.6 x 2.6 x 0.6; with 2 voxels of padding a voxel size s gives
# (ceil(2.6/s)+4)^2 (ceil(0.6/s)+4) voxels. Pick s so that the dense estimate without the gradient
# (40 bytes per voxel) is within 90 % of this machine's memory and with it (56) is not: about
# 0.9 * memory / 48 voxels.
memory=$(awk '/^MemTotal:/ {print $2 * 1024}' /proc/meminfo)
s=$(python3 -c '
import math, sys
mem = float(sys.argv[1])
n = lambda s: (math.ceil(2.6 / s) + 4) ** 2 * (math.ceil(0.6 / s) + 4)
lo, hi = 1e-5, 1.0  # n decreases with s: bisect for n(s) = 0.9 mem / 48
for _ in range(200):
    mid = (lo + hi) / 2
    lo, hi = (mid, hi) if n(mid) > 0.9 * mem / 48 else (lo, mid)
v = n(hi)
ok = 40 * v <= 0.9 * mem < 56 * v and v <= 2 ** 31
print("%.9g" % hi if ok else "skip")' "$memory")
if [ "$s" = skip ]; then
    pass "skipped: no dense grid of at most 2^31 voxels fits without the gradient and not with it here"
    finish
fi

cat > "$TMP/g.json" <<JSON
{"name": "g", "description": "dense with gradients", "stages": [
  {"stage": "voxelize", "voxel_size": $s, "band": 0}, {"stage": "distance", "gradient": true}]}
JSON
# A batch exits 1 when a mesh failed; the mesh's failure carries the executable's exit code.
expect_exit_within 1 20 "$HP_BIN/haptic-pipeline" "$TMP/g.json" "$M" -o "$TMP/pipe" --quiet --json
check "the mesh failed with exit 2" "$(json_get "$TMP/out" '[m["exit_code"] for m in j["meshes"]]')" "[2]"
expect_grep 'with the gradient' "$TMP/out"
expect_grep 'use --band 8 \(about [0-9.]+ GB\) or a voxel size of at least' "$TMP/out"
[ -e "$TMP/pipe/torus/voxelize.vdb" ] && fail "a refused run wrote its voxelmap" || pass "no voxelmap after the refusal"
# The suggested voxel size fits with the gradient (56 bytes per voxel within 90 % of memory).
t=$(grep -Eo 'voxel size of at least [0-9.e-]+' "$TMP/out" | head -1 | awk '{print $NF}')
check "the suggested voxel size fits with the gradient" "$(python3 -c '
import math, sys
mem, t = float(sys.argv[1]), float(sys.argv[2])
n = (math.ceil(2.6 / t) + 4) ** 2 * (math.ceil(0.6 / t) + 4)
print(56 * n <= 0.9 * mem)' "$memory" "$t")" True

finish
