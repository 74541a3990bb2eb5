#!/usr/bin/env bash
# haptic-dump --slice (ASCII and PNG) and --export levelset on voxelmaps and distance fields;
# the PNG is decoded by hand (zlib + struct) and compared pixel by pixel with the documented map.
source "$(dirname "$0")/lib.sh"
dump="$HP_BIN/haptic-dump"

"$HP_BIN/haptic-voxelize" "$SAMPLES/seam-cube.obj" --resolution 12 -o "$TMP/cube.vdb" --quiet
"$HP_BIN/haptic-distance" "$SAMPLES/seam-cube.obj" "$TMP/cube.vdb" -o "$TMP/cube.dist.vdb" --quiet

# ASCII slice: rows top first, JSON rows the same.
expect_exit 0 "$dump" "$TMP/cube.vdb" --slice z=6
expect_grep "slice z=6 of .*cube.vdb \(layers\): [0-9]+ x [0-9]+ voxels, x to the right, y up" "$TMP/out"
expect_exit 0 "$dump" "$TMP/cube.vdb" --slice z=6 --json
cp "$TMP/out" "$TMP/slice.json"
expect_json "$TMP/slice.json"
check "json slice" "$(json_get "$TMP/slice.json" 'j["slice"], j["field"], j["right"], j["up"]')" "('z=6', 'layers', 'x', 'y')"
check "rows = height" "$(json_get "$TMP/slice.json" 'len(j["rows"]) == j["height"] and all(len(r) == j["width"] for r in j["rows"])')" True
check "ascii has surface, inside, outside" "$(json_get "$TMP/slice.json" 'all(any(c in "".join(j["rows"]) for c in s) for s in ("#", "123456789", "abcdefghi"))')" True
check "surface count" "$(json_get "$TMP/slice.json" '"".join(j["rows"]).count("#") == j["surface_voxels"]')" True

# PNG of the same slice: decoded independently, each voxel block has the documented colour of
# the layer the ASCII slice shows.
expect_exit 0 "$dump" "$TMP/cube.vdb" --slice z=6 --png "$TMP/z6.png"
expect_grep "wrote .*z6.png: slice z=6 .* px per voxel; colours: surface black, inside warm, outside cool, saturating at [0-9.]+ voxels" "$TMP/out"
python3 - "$TMP/z6.png" "$TMP/slice.json" <<'PY' && pass "PNG pixels match the documented colours" || fail "PNG pixels"
import json, struct, sys, zlib
data = open(sys.argv[1], "rb").read()
j = json.load(open(sys.argv[2]))
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    assert zlib.crc32(kind + body) == struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
    if kind == b"IHDR": ihdr = struct.unpack(">IIBBBBB", body)
    if kind == b"IDAT": idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = ihdr
assert (depth, ctype, interlace) == (8, 2, 0), ihdr
raw = zlib.decompress(idat)
stride, rows, prev = 3 * w, [], bytearray(3 * w)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for x in range(stride):
        a = line[x - 3] if x >= 3 else 0
        b = prev[x]
        c = prev[x - 3] if x >= 3 else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        else: assert f == 0
    rows.append(line); prev = line
zoom = 512 // max(j["width"], j["height"])
assert (w, h) == (j["width"] * zoom, j["height"] * zoom), (w, h)
warm = [(253, 219, 199), (244, 165, 130), (214, 96, 77), (178, 24, 43)]
cool = [(209, 229, 240), (146, 197, 222), (67, 147, 195), (33, 102, 172)]
def colour(value, scale):
    stops = warm if value >= 0 else cool
    x = min(abs(value) / scale, 1.0) * 3
    k = min(2, int(x)); f = x - k
    return tuple(int(p + (q - p) * f + 0.5) for p, q in zip(stops[k], stops[k + 1]))
bad = 0
for r, text in enumerate(j["rows"]):
    for u, ch in enumerate(text):
        want = (0, 0, 0) if ch == "#" else colour(int(ch) if ch.isdigit() else -(ord(ch) - ord("a") + 1), j["scale_voxels"])
        for y in range(r * zoom, (r + 1) * zoom):
            for x in range(u * zoom, (u + 1) * zoom):
                bad += tuple(rows[y][3 * x:3 * x + 3]) != want
assert bad == 0, f"{bad} pixels differ"
PY

# Distance fields: slice along x, PNG along y; JSON of the PNG.
expect_exit 0 "$dump" "$TMP/cube.dist.vdb" --slice x=3
expect_grep "\(distance\): [0-9]+ x [0-9]+ voxels, y to the right, z up" "$TMP/out"
expect_exit 0 "$dump" "$TMP/cube.dist.vdb" --slice y=5 --png "$TMP/y5.png" --json
check "png json" "$(json_get "$TMP/out" 'j["png"].endswith("y5.png"), j["field"], j["right"], j["up"]')" "(True, 'distance', 'x', 'z')"
[ -s "$TMP/y5.png" ] && pass "png written" || fail "no png"

# Usage errors: exit 2 with one line.
for args in "--slice z=99" "--slice w=1" "--slice z" "--png $TMP/p.png" "--export levelset" "--export nosuch -o $TMP/x.vdb"; do
    # shellcheck disable=SC2086
    expect_exit 2 "$dump" "$TMP/cube.vdb" $args && expect_one_error_line
done
expect_grep "unknown format" "$TMP/err"
"$HP_BIN/haptic-voxelize" "$SAMPLES/seam-cube.obj" --resolution 170 -o "$TMP/big.vdb" --quiet
expect_exit 2 "$dump" "$TMP/big.vdb" --slice z=3
expect_grep "too large for ASCII .*--png" "$TMP/err"
expect_exit 0 "$dump" "$TMP/big.vdb" --slice z=3 --png "$TMP/big.png" --json
check "big png: 512 // side px per voxel" \
    "$(json_get "$TMP/out" 'j["pixels_per_voxel"] == 512 // max(j["width"], j["height"]) and j["width_px"] == 2 * j["width"]')" True

# Level set export: a plain VDB file (described as foreign, class level set).
expect_exit 0 "$dump" "$TMP/cube.dist.vdb" --export levelset -o "$TMP/ls.vdb"
expect_grep "wrote .*ls.vdb: OpenVDB level set 'surface' \(inside negative" "$TMP/out"
expect_exit 0 "$dump" "$TMP/ls.vdb" --json
check "level set as seen by dump" "$(json_get "$TMP/out" '[(g["name"], g["type"], g["class"]) for g in j["grids"]], j["ours"]')" \
    "([('surface', 'float', 'level set')], False)"
expect_exit 0 "$dump" "$TMP/cube.vdb" --export levelset -o "$TMP/ls2.vdb" --json
check "from layers" "$(json_get "$TMP/out" 'j["from"]')" layers

# Damaged or wrong files with the new options: exit 3, one line, fast, no output left behind.
size=$(stat -c %s "$TMP/cube.dist.vdb")
head -c $((size / 2)) "$TMP/cube.dist.vdb" > "$TMP/cut.vdb"
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 3] ^= 1; open(sys.argv[2], "wb").write(b)' \
    "$TMP/cube.dist.vdb" "$TMP/flip.vdb"
: > "$TMP/empty.vdb"
printf 'HAPTICPF not really\n' > "$TMP/fake.bin"
for bad in "$TMP/cut.vdb" "$TMP/flip.vdb" "$TMP/empty.vdb" "$TMP/fake.bin" "$TMP/ls.vdb" "$SAMPLES/peg.stl" "$TMP/missing.vdb"; do
    for args in "--slice z=1" "--slice z=1 --png $TMP/bad.png" "--export levelset -o $TMP/bad.vdb"; do
        # shellcheck disable=SC2086
        expect_exit_within 3 5 "$dump" "$bad" $args && expect_one_error_line && expect_grep "$(basename "$bad")" "$TMP/err"
    done
done
[ ! -e "$TMP/bad.png" ] && [ ! -e "$TMP/bad.vdb" ] && pass "nothing written for bad inputs" || fail "output left behind"

# --check: our files pass; a file whose metadata was edited (trailer recomputed, so the checksum
# holds) fails with exit 1 and the problem listed; damaged files are exit 3 as everywhere.
for f in cube.vdb cube.dist.vdb; do
    expect_exit 0 "$dump" "$TMP/$f" --check
    expect_grep "^check +passed" "$TMP/out"
done
expect_exit 0 "$dump" "$TMP/cube.dist.vdb" --check --json
check "check json" "$(json_get "$TMP/out" 'j["check"]["ok"], j["kind"], len(j["check"]["problems"])')" "(True, 'distance field', 0)"
python3 - "$TMP/cube.dist.vdb" "$TMP/edited.vdb" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
assert b[-16:-8] == b"HPVDBXH3"  # XXH3-64; the edited copy gets the older FNV-1a trailer, still read
body = bytes(b[:-16]).replace(b"inside_positive", b"inside_negative")
h = 0xcbf29ce484222325
for x in body:  # FNV-1a 64, formats/vdb.md
    h = ((h ^ x) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
open(sys.argv[2], "wb").write(body + b"HPVDBSUM" + struct.pack("<Q", h))
PY
expect_exit 1 "$dump" "$TMP/edited.vdb" --check
expect_grep "^PROBLEM +haptic:sign_convention is \"inside_negative\"" "$TMP/out"
expect_grep "^check +FAILED" "$TMP/out"
expect_exit 1 "$dump" "$TMP/ls.vdb" --check
expect_grep "not written by hapticprep" "$TMP/out"
for bad in "$TMP/cut.vdb" "$TMP/flip.vdb" "$TMP/empty.vdb" "$TMP/fake.bin" "$TMP/missing.vdb"; do
    expect_exit_within 3 5 "$dump" "$bad" --check && expect_one_error_line
done
finish
