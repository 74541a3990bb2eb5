# Shared by the CLI tests of --junit and --plot (sourced after lib.sh).
# JUNIT_PY: Debian's Python, where python3-junitparser (scripts/install-deps.sh) lives.
JUNIT_PY=/usr/bin/python3
if ! "$JUNIT_PY" -c 'import junitparser' 2>/dev/null; then
    fail "python3-junitparser is not installed (scripts/install-deps.sh installs it)"
    finish
fi

# make_query_objects: $TMP/block.dist.vdb (static) and $TMP/peg.hps (moving tree) from the samples.
make_query_objects() {
    expect_exit 0 "$HP_BIN/haptic-voxelize" "$SAMPLES/block-with-hole.stl" --units mm --voxel-size 0.001 -o "$TMP/block.vdb" --quiet
    expect_exit 0 "$HP_BIN/haptic-distance" "$SAMPLES/block-with-hole.stl" "$TMP/block.vdb" -o "$TMP/block.dist.vdb" --quiet
    expect_exit 0 "$HP_BIN/haptic-voxelize" "$SAMPLES/peg.stl" --units mm --voxel-size 0.001 -o "$TMP/peg.vdb" --quiet
    expect_exit 0 "$HP_BIN/haptic-pointshell" "$SAMPLES/peg.stl" "$TMP/peg.vdb" -o "$TMP/peg.ps.hps" --quiet
    expect_exit 0 "$HP_BIN/haptic-spheretree" "$TMP/peg.ps.hps" -o "$TMP/peg.hps" --quiet
}

# png_colours FILE: decodes an 8-bit RGB PNG (every chunk's CRC checked, the five row filters
# undone) and prints "WIDTH HEIGHT", then one line "R,G,B COUNT UPPER" per colour that occurs: its
# pixels in the picture and in its upper half. Exits non-zero when the file is no such PNG.
png_colours() {
    "$JUNIT_PY" - "$1" <<'PY'
import struct, sys, zlib
from collections import Counter
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n": sys.exit("not a PNG signature")
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, = struct.unpack(">I", data[pos:pos + 4]); kind = data[pos + 4:pos + 8]; body = data[pos + 8:pos + 8 + n]
    crc, = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
    if zlib.crc32(kind + body) != crc: sys.exit("bad CRC in chunk %r" % kind)
    if kind == b"IHDR": ihdr = struct.unpack(">IIBBBBB", body)
    if kind == b"IDAT": idat += body
    pos += 12 + n
w, h, depth, colour = ihdr[:4]
if depth != 8 or colour != 2: sys.exit("not 8-bit RGB")
raw = zlib.decompress(idat); stride = 3 * w
if len(raw) != h * (stride + 1): sys.exit("wrong image data size")
rows, prev = [], bytearray(stride)
for y in range(h):
    f = raw[y * (stride + 1)]; line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - 3] if i >= 3 else 0; b = prev[i]; c = prev[i - 3] if i >= 3 else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif f != 0: sys.exit("bad filter")
    rows.append(bytes(line)); prev = line
print(w, h)
total, upper = Counter(), Counter()
for y, line in enumerate(rows):
    for x in range(w):
        px = line[3 * x:3 * x + 3]
        total[px] += 1
        if y < h // 2: upper[px] += 1
for px, n in total.items():
    print("%d,%d,%d %d %d" % (px[0], px[1], px[2], n, upper[px]))
PY
}
