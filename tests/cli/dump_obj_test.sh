#!/usr/bin/env bash
# haptic-dump --export obj: a tree level's spheres as icosahedra. Checked against the tree's JSON
# export (another code path) by an independent Python reader: one object per cluster of the
# level, 12 vertices on the cluster's sphere around its centre, 20 outward-wound faces.
source "$(dirname "$0")/lib.sh"
dump="$HP_BIN/haptic-dump"

"$HP_BIN/haptic-voxelize" "$SAMPLES/sphere.obj" --voxel-size 0.05 -o "$TMP/s.vdb" --quiet
"$HP_BIN/haptic-distance" "$SAMPLES/sphere.obj" "$TMP/s.vdb" -o "$TMP/s.d.vdb" --quiet
"$HP_BIN/haptic-pointshell" "$SAMPLES/sphere.obj" "$TMP/s.d.vdb" -o "$TMP/s.hps" --quiet
"$HP_BIN/haptic-spheretree" "$TMP/s.hps" -o "$TMP/t.hps" --quiet
expect_exit 0 "$dump" "$TMP/t.hps" --export json -o "$TMP/t.json" --quiet

for level in 1 2; do
    expect_exit 0 "$dump" "$TMP/t.hps" --level "$level" --export obj -o "$TMP/l$level.obj" --json
    result=$(python3 - "$TMP/t.json" "$TMP/l$level.obj" "$level" <<'PY'
import json, math, sys
tree = json.load(open(sys.argv[1]))
level = int(sys.argv[3])
want = [c for c in tree["clusters"] if c["level"] == level]
objects, verts, faces = [], [], []
for line in open(sys.argv[2]):
    f = line.split()
    if not f or f[0] == "#": continue
    if f[0] == "o": objects.append((f[1], len(verts), len(faces)))
    elif f[0] == "v": verts.append([float(x) for x in f[1:4]])
    elif f[0] == "f": faces.append([int(x) - 1 for x in f[1:4]])
problems = []
if len(objects) != len(want): problems.append("%d objects for %d clusters" % (len(objects), len(want)))
for n, (c, (name, v0, f0)) in enumerate(zip(want, objects)):
    if name != "cluster_%d" % c["id"]: problems.append("object %s for cluster %d" % (name, c["id"]))
    v1 = objects[n + 1][1] if n + 1 < len(objects) else len(verts)
    f1 = objects[n + 1][2] if n + 1 < len(objects) else len(faces)
    vs = verts[v0:v1]
    if len(vs) != 12 or f1 - f0 != 20: problems.append("cluster %d: %d vertices, %d faces" % (c["id"], len(vs), f1 - f0)); continue
    ctr, r = c["center"], c["radius"]
    mean = [sum(v[a] for v in vs) / 12 for a in range(3)]
    if max(abs(mean[a] - ctr[a]) for a in range(3)) > 1e-9 * (1 + r): problems.append("cluster %d: off centre" % c["id"])
    for v in vs:
        if abs(math.dist(v, ctr) - r) > 1e-9 * (1 + r): problems.append("cluster %d: vertex off the sphere" % c["id"]); break
    for fa in faces[f0:f1]:
        a, b, d = (verts[i] for i in fa)
        if not all(v0 <= i < v1 for i in fa): problems.append("face indices outside the object"); break
        e1 = [b[i] - a[i] for i in range(3)]; e2 = [d[i] - a[i] for i in range(3)]
        nrm = [e1[1]*e2[2]-e1[2]*e2[1], e1[2]*e2[0]-e1[0]*e2[2], e1[0]*e2[1]-e1[1]*e2[0]]
        cen = [(a[i] + b[i] + d[i]) / 3 - ctr[i] for i in range(3)]
        if r > 0 and sum(nrm[i] * cen[i] for i in range(3)) <= 0: problems.append("cluster %d: inward face" % c["id"]); break
print("ok %d" % len(want) if not problems else "; ".join(problems[:3]))
PY
)
    check "level $level spheres match the JSON export" "${result%% *}" ok
    check "level $level sphere count in --json" "$(json_get "$TMP/out" 'j["spheres"]')" "${result##* }"
done

expect_exit 2 "$dump" "$TMP/t.hps" --export obj -o "$TMP/x.obj"          # no --level
expect_exit 2 "$dump" "$TMP/t.hps" --level 99 --export obj -o "$TMP/x.obj"
[ ! -e "$TMP/x.obj" ] && pass "nothing written on usage errors" || fail "x.obj was written"
expect_exit 3 "$dump" "$TMP/s.hps" --level 1 --export obj -o "$TMP/x.obj"  # a pointshell without a tree
head -c 200 "$TMP/t.hps" > "$TMP/trunc.hps"
expect_exit 3 "$dump" "$TMP/trunc.hps" --level 1 --export obj -o "$TMP/x.obj"
finish
