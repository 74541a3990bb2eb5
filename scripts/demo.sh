#!/usr/bin/env bash
# make demo: runs the default haptic pipeline on a sample mesh with every stage that is built,
# then prints what each stage made and how long it took.
#   usage: scripts/demo.sh [BIN_DIR]        (env DEMO_MESH, DEMO_UNITS, DEMO_VOXEL override)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin}
mesh=${DEMO_MESH:-sample_meshes/block-with-hole.stl}
units=${DEMO_UNITS:-mm}
voxel=${DEMO_VOXEL:-0.0005}
out=${DEMO_OUT:-build/demo}
mkdir -p "$out"
name=$(basename "${mesh%.*}")

rows=()
now() { date +%s.%N; }
# run_stage STAGE OUTPUT CMD...: runs a stage, records its time and output size.
run_stage() {
    local stage=$1 output=$2; shift 2
    local t0 t1
    t0=$(now)
    if ! "$@"; then
        echo "demo: stage $stage failed: $*" >&2
        exit 1
    fi
    t1=$(now)
    local size="-"
    [ -f "$output" ] && size=$(du -h "$output" | cut -f1)
    rows+=("$(printf '%-12s %-44s %8s %9.3f' "$stage" "$output" "$size" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')")")
}
have() { [ -x "$bin/$1" ]; }

echo "== hapticprep demo: $mesh (units $units, voxel size $voxel m) =="
echo
have haptic-dump || { echo "demo: $bin/haptic-dump is not built (run make build)" >&2; exit 1; }
"$bin/haptic-dump" "$mesh" --units "$units"
echo
if have haptic-voxelize; then
    run_stage voxelize "$out/$name.layers.vdb" \
        "$bin/haptic-voxelize" "$mesh" --units "$units" --voxel-size "$voxel" -o "$out/$name.layers.vdb" --quiet
fi
if have haptic-distance; then
    run_stage distance "$out/$name.distance.vdb" \
        "$bin/haptic-distance" "$mesh" "$out/$name.layers.vdb" --units "$units" -o "$out/$name.distance.vdb" --quiet
fi
if have haptic-pointshell; then
    run_stage pointshell "$out/$name.shell.hps" \
        "$bin/haptic-pointshell" "$mesh" "$out/$name.distance.vdb" --units "$units" -o "$out/$name.shell.hps" --quiet
fi
if have haptic-spheretree; then
    run_stage spheretree "$out/$name.tree.hps" \
        "$bin/haptic-spheretree" "$out/$name.shell.hps" -o "$out/$name.tree.hps" --quiet
fi

printf '%-12s %-44s %8s %9s\n' stage output size seconds
for r in "${rows[@]}"; do echo "$r"; done
for f in "$out"/*.vdb; do
    [ -f "$f" ] || continue
    echo
    "$bin/haptic-dump" "$f"
done
