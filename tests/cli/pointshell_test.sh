#!/usr/bin/env bash
# haptic-pointshell end to end: summary and JSON, determinism, inward normals on an inverted mesh,
# provenance check against the field, bad inputs.
source "$(dirname "$0")/lib.sh"
vox="$HP_BIN/haptic-voxelize"
dist="$HP_BIN/haptic-distance"
shell="$HP_BIN/haptic-pointshell"
dump="$HP_BIN/haptic-dump"

expect_exit 0 "$vox" "$SAMPLES/sphere.obj" --voxel-size 0.05 -o "$TMP/sphere.vdb" --quiet
expect_exit 0 "$dist" "$SAMPLES/sphere.obj" "$TMP/sphere.vdb" -o "$TMP/sphere.d.vdb" --quiet
expect_exit 0 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.d.vdb" -o "$TMP/sphere.hps" --json
cp "$TMP/out" "$TMP/s.json"
expect_json "$TMP/s.json"
# Unit sphere, s = 0.05, alpha*s = 0.0707: spacing at least alpha*s within a neighbourhood, and
# the surface (area 4 pi) holds between one point per (2 alpha s)^2 and one per (alpha s)^2 / 2.
check "spacing min >= 0.3 alpha*s" "$(json_get "$TMP/s.json" 'j["spacing"]["min"] >= 0.3 * 0.05 * 2**0.5')" True
check "median spacing near alpha*s" "$(json_get "$TMP/s.json" '0.0707 <= j["spacing"]["median"] <= 2 * 0.0707')" True
check "count plausible for the area" "$(json_get "$TMP/s.json" '4 * 3.1416 / (2 * 0.0707)**2 < j["points"] < 4 * 3.1416 / (0.0707**2 / 2)')" True
check "coverage within 1.5 alpha*s" "$(json_get "$TMP/s.json" 'j["coverage"]["max"] <= 1.5 * 0.0707')" True
check "no gap reported" "$(json_get "$TMP/s.json" 'j["coverage"]["gap"]')" False
check "normals from the distance gradient" "$(json_get "$TMP/s.json" 'j["normals"]["source"]')" "distance gradient"
expect_exit 0 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.d.vdb" -o "$TMP/sphere1.hps" --threads 1 --quiet
cmp -s "$TMP/sphere.hps" "$TMP/sphere1.hps" && pass "byte-identical with --threads 1" || fail "output differs with --threads 1"
[ ! -s "$TMP/out" ] && pass "--quiet prints nothing" || fail "--quiet printed something"

# haptic-dump on the pointshell: summary, JSON, and PLY export read back by a small independent
# parser (binary little-endian and ASCII must hold the same points; the sphere's normals point
# to its centre, the origin).
expect_exit 0 "$dump" "$TMP/sphere.hps"
expect_grep "^kind +pointshell" "$TMP/out"
expect_grep "^spacing " "$TMP/out"
expect_exit 0 "$dump" "$TMP/sphere.hps" --json
cp "$TMP/out" "$TMP/d.json"
check "dump count = tool count" "$(json_get "$TMP/d.json" 'j["points"]')" "$(json_get "$TMP/s.json" 'j["points"]')"
check "dump spacing = tool spacing" "$(json_get "$TMP/d.json" 'j["spacing"]["min"]')" "$(json_get "$TMP/s.json" 'j["spacing"]["min"]')"
check "provenance" "$(json_get "$TMP/d.json" 'j["metadata"]["source_name"] + " " + j["metadata"]["parameters"]["normals"]')" "sphere.obj gradient"
expect_exit 0 "$dump" "$TMP/sphere.hps" --export ply -o "$TMP/s.ply"
expect_exit 0 "$dump" "$TMP/sphere.hps" --export ply -o "$TMP/sa.ply" --ascii
cat > "$TMP/ply.py" <<'PY'
import struct, sys
def read(path):
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode().split("\n")
    assert header[0] == "ply", header[0]
    fmt = header[1].split()[1]
    n = int([l for l in header if l.startswith("element vertex")][0].split()[2])
    props = [l.split()[2] for l in header if l.startswith("property float")]
    assert props == ["x", "y", "z", "nx", "ny", "nz"], props
    if fmt == "binary_little_endian":
        body = data[end:]
        assert len(body) == 24 * n, (len(body), n)
        rows = [struct.unpack_from("<6f", body, 24 * i) for i in range(n)]
    else:
        assert fmt == "ascii", fmt
        rows = [tuple(float(v) for v in l.split()) for l in data[end:].decode().splitlines()]
        rows = [tuple(struct.unpack("<f", struct.pack("<f", v))[0] for v in r) for r in rows]
    assert len(rows) == n
    return rows
b, a = read(sys.argv[1]), read(sys.argv[2])
assert a == b, "ascii and binary differ"
bad = [r for r in b if abs(r[3]**2 + r[4]**2 + r[5]**2 - 1) > 1e-5 or r[0]*r[3] + r[1]*r[4] + r[2]*r[5] >= 0]
print(len(b), len(bad))
PY
check "PLY read back: count, unit inward normals" "$(python3 "$TMP/ply.py" "$TMP/s.ply" "$TMP/sa.ply")" "$(json_get "$TMP/s.json" 'j["points"]') 0"
expect_exit 3 "$dump" "$TMP/sphere.vdb" --export ply -o "$TMP/x.ply"
expect_exit 2 "$dump" "$TMP/sphere.hps" --export ply
expect_exit 2 "$dump" "$TMP/sphere.hps" --export stl -o "$TMP/x.obj"
head -c 2000 "$TMP/sphere.hps" > "$TMP/cut.hps"
expect_exit 3 "$dump" "$TMP/cut.hps"
expect_one_error_line
expect_exit 3 "$dump" "$TMP/cut.hps" --export ply -o "$TMP/x.ply"
[ ! -e "$TMP/x.ply" ] && pass "no PLY after errors" || fail "a PLY file was left behind"

# A scaled-integer distance field gives the same points (they depend on the surface voxels only)
# and gradient normals from its distances.
expect_exit 0 "$dist" "$SAMPLES/sphere.obj" "$TMP/sphere.vdb" -o "$TMP/sphere.s.vdb" --encoding scaled --precision 6 --quiet
expect_exit 0 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.s.vdb" -o "$TMP/sphere.s.hps" --json
check "scaled field: same count" "$(json_get "$TMP/out" 'j["points"]')" "$(json_get "$TMP/s.json" 'j["points"]')"
check "scaled field: distance gradient" "$(json_get "$TMP/out" 'j["normals"]["source"]')" "distance gradient"

# Text summary names the facts.
expect_exit 0 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.vdb" -o "$TMP/sphere.l.hps" --normals surface
for key in points spacing coverage normals wrote; do expect_grep "^$key " "$TMP/out"; done

# An inverted box (wound inward) is turned outward at import: no component is left inverted, and
# its points and normals are those of the same box wound outward.
expect_exit 0 "$vox" "$SAMPLES/inverted-box.obj" --voxel-size 0.05 -o "$TMP/inv.vdb" --quiet
expect_exit 0 "$shell" "$SAMPLES/inverted-box.obj" "$TMP/inv.vdb" -o "$TMP/inv.hps" --normals surface --json
check "no inverted component after import" "$(json_get "$TMP/out" 'j["normals"]["inverted_components"]')" 0

# The mesh must be the field's source: exit 3 unless --force.
expect_exit 3 "$shell" "$SAMPLES/gear.obj" "$TMP/sphere.d.vdb" -o "$TMP/x.hps"
expect_grep "not the mesh" "$TMP/err"
expect_one_error_line
# Bad fields: a pointshell instead of a field, a truncated field, a text file; a voxelmap without
# surface voxels cannot be made by the tools, so a mesh far away from the field stands in for
# "nothing to sample" (forced past the hash check).
expect_exit 3 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.hps" -o "$TMP/x.hps"
expect_one_error_line
head -c 3000 "$TMP/sphere.vdb" > "$TMP/cut.vdb"
expect_exit 3 "$shell" "$SAMPLES/sphere.obj" "$TMP/cut.vdb" -o "$TMP/x.hps"
expect_one_error_line
printf 'hello\n' > "$TMP/text.vdb"
expect_exit 3 "$shell" "$SAMPLES/sphere.obj" "$TMP/text.vdb" -o "$TMP/x.hps"
printf 'v 10 10 10\nv 11 10 10\nv 10 11 10\nf 1 2 3\n' > "$TMP/far.obj"
expect_exit 3 "$shell" "$TMP/far.obj" "$TMP/sphere.vdb" -o "$TMP/x.hps" --force
expect_grep "no surface voxel" "$TMP/err"
[ ! -e "$TMP/x.hps" ] && pass "no output after errors" || fail "an output file was left behind"
expect_exit 2 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.vdb" -o "$TMP/x.hps" --alpha 0
expect_exit 2 "$shell" "$SAMPLES/sphere.obj" "$TMP/sphere.vdb" -o "$TMP/x.hps" --normals wrong
expect_exit 0 "$shell" --help
expect_grep "Examples" "$TMP/out"
finish
