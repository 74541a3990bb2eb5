#!/usr/bin/env bash
# Prepares the objects lib/bullet's tests and example read, with the toolchain's own stages:
# voxelmap, distance field, pointshell and point-sphere tree of
#   sphere  sample_meshes/sphere.obj    (icosphere, radius 1), voxel 0.05
#   cube    sample_meshes/seam-cube.obj (unit cube [0,1]^3),   voxel 0.05
#   openbox sample_meshes/open-box.obj  (unit cube without top), voxel 0.05 (field and tree only)
# into DIR as <name>.dist.vdb and <name>.hps. Env: HP_BIN, HP_SOURCE_DIR.
set -euo pipefail
: "${HP_BIN:?HP_BIN must point to the folder of the executables}"
: "${HP_SOURCE_DIR:?HP_SOURCE_DIR must point to the repository}"
out=${1:?usage: prepare.sh DIR}
mkdir -p "$out"
for entry in sphere:sphere.obj cube:seam-cube.obj openbox:open-box.obj; do
    name=${entry%%:*}
    mesh="$HP_SOURCE_DIR/sample_meshes/${entry#*:}"
    "$HP_BIN/haptic-voxelize" "$mesh" --voxel-size 0.05 -o "$out/$name.vox.vdb" --quiet
    "$HP_BIN/haptic-distance" "$mesh" "$out/$name.vox.vdb" -o "$out/$name.dist.vdb" --quiet
    "$HP_BIN/haptic-pointshell" "$mesh" "$out/$name.dist.vdb" -o "$out/$name.ps.hps" --quiet
    "$HP_BIN/haptic-spheretree" "$out/$name.ps.hps" -o "$out/$name.hps" --quiet
    echo "prepared $name"
done
