#!/usr/bin/env bash
# haptic-dump --check of a prepared sampler (.hsmp, formats/sampler.md): a file that
# haptic-pipeline --assembly writes passes with its layout described (text and --json); files with
# right CRC-32s and a wrong layout (the scalars record or an array's offset edited, every checksum
# recomputed here with zlib, independently of the tools) are refused with exit 3 and one line
# naming the file and the damage.
source "$(dirname "$0")/lib.sh"
pipe="$HP_BIN/haptic-pipeline"
dump="$HP_BIN/haptic-dump"

# A dense distance field and a narrow band of two voxels, on a coarse grid.
expect_exit 0 "$pipe" "$HP_SOURCE_DIR/pipelines/voxelmap-only.json" "$SAMPLES/two-boxes.obj" --assembly -o "$TMP/asm" \
    --set voxelize.resolution=12 --quiet
dense=$(find "$TMP/asm" -name '*.hsmp' | sort | head -1)
[ -n "$dense" ] && pass "the assembly has a prepared sampler" || fail "no .hsmp under $TMP/asm"

expect_exit 0 "$dump" "$dense" --check
expect_grep "^kind +prepared sampler" "$TMP/out"
expect_grep "layout: a [0-9]+ x [0-9]+ x [0-9]+ grid of voxel size [0-9.e-]+, dense, float32 samples" "$TMP/out"
expect_exit 0 "$dump" "$dense" --check --json
check "--json: the layout check passed" "$(json_get "$TMP/out" 'any(p.startswith("layout: a ") for p in j["check"]["passed"])')" True
check "--json: ok" "$(json_get "$TMP/out" 'j["check"]["ok"]')" True

# Copies of the dense file, one change each, every CRC-32 of the container recomputed; one line per
# copy: NAME KIND ARG, with KIND
#   scalar OFFSET:FORMAT:VALUE  packs VALUE (struct FORMAT) at OFFSET of the scalars record
#   add OFFSET:FORMAT:N         adds N to the integer there
#   same -                      no change (the container framed again)
#   shift SECTION               moves SECTION's payload 4 bytes later (a 4-byte pad section before it)
# The scalars record (formats/sampler.md): dims at 0, flags 12, origin 16, voxel size 40, slope
# bound 48, largest sample 56, floor 64, first tile brick 72, reserved 76, counts 80.
python3 - "$dense" "$TMP" <<'PY'
import struct, sys, zlib
src, out_dir = sys.argv[1:3]
edits = """
same same -
voxel-zero scalar 40:d:0
voxel-negative scalar 40:d:-0.01
voxel-inf scalar 40:d:inf
voxel-nan scalar 40:d:nan
dims-zero scalar 0:i:0
dims-huge scalar 4:i:1048577
dims-other scalar 8:i:100
origin-inf scalar 24:d:-inf
flags scalar 12:I:4
band-flag scalar 12:I:1
slope-below-one scalar 48:d:0.5
slope-inf scalar 48:d:inf
max-nan scalar 56:d:nan
dense-floor scalar 64:d:1.5
dense-tile scalar 72:I:1
reserved scalar 76:I:7
samples-one-more add 80:Q:1
pyramid-huge scalar 88:Q:18446744073709551615
band-tables scalar 96:Q:1
samples-shifted shift samples
pyramid-shifted shift pyramid
"""
b = open(src, "rb").read()
assert b[:8] == b"HAPTICPF"
count = struct.unpack_from("<I", b, 24)[0]
for line in edits.strip().splitlines():
    name, kind, arg = line.split()
    at, parts = 40, []
    for _ in range(count):
        sname = b[at:at + 16].split(b"\0")[0]
        size = struct.unpack_from("<Q", b, at + 16)[0]
        parts.append([sname, bytearray(b[at + 32:at + 32 + size])])
        at += 32 + size
    if kind in ("scalar", "add"):
        off, fmt, value = arg.split(":")
        value = float(value) if fmt in ("d", "f") else int(value)
        payload = [p for n, p in parts if n == b"scalars"][0]
        if kind == "add":
            value += struct.unpack_from("<" + fmt, payload, int(off))[0]
        struct.pack_into("<" + fmt, payload, int(off), value)
    elif kind == "shift":
        parts.insert([n for n, _ in parts].index(arg.encode()), [b"pad:x", bytearray(4)])
    body = b""
    for sname, payload in parts:
        sh = sname.ljust(16, b"\0") + struct.pack("<QI", len(payload), zlib.crc32(payload))
        body += sh + struct.pack("<I", zlib.crc32(sh)) + payload
    head = b"HAPTICPF" + b[8:16] + struct.pack("<QII", 40 + len(body), len(parts), 0)
    open(f"{out_dir}/{name}.hsmp", "wb").write(head + struct.pack("<II", zlib.crc32(head), 0) + body)
PY

# The edit itself changes nothing else: the same bytes framed again read and check.
expect_exit 0 "$dump" "$TMP/same.hsmp" --check

refused() {  # refused NAME PATTERN: the edited copy is refused with exit 3, one line, naming it
    expect_exit 3 "$dump" "$TMP/$1.hsmp" --check && expect_one_error_line
    expect_grep "$1.hsmp: corrupt prepared sampler: $2" "$TMP/err"
}
refused voxel-zero "the voxel size is not positive and finite"
refused voxel-negative "the voxel size is not positive and finite"
refused voxel-inf "the voxel size is not positive and finite"
refused voxel-nan "the voxel size is not positive and finite"
refused dims-zero "grid dims 0 x"
refused dims-huge "grid dims [0-9]+ x 1048577 x [0-9]+ \(each axis 1 to 2\^20 voxels"
refused dims-other "[0-9]+ samples where its grid has room for"
refused origin-inf "the grid origin is not finite"
refused flags "unknown flags 4"
refused band-flag "its brick table does not have one entry per block"
refused slope-below-one "the slope bound is not a finite number of at least 1"
refused slope-inf "the slope bound is not a finite number of at least 1"
refused max-nan "the largest sample is not finite"
refused dense-floor "a dense sampler with a band's floor"
refused dense-tile "a dense sampler with a band's floor or first tile brick"
refused reserved "a reserved field is not 0"
refused samples-one-more "section 'samples' has [0-9]+ bytes, not [0-9]+ elements"
refused pyramid-huge "section 'pyramid' has [0-9]+ bytes, not 18446744073709551615 elements"
refused band-tables "a dense sampler with a narrow band's tables"
refused samples-shifted "section 'samples' starts at byte [0-9]+, not at a multiple of 64"
refused pyramid-shifted "section 'pyramid' starts at byte [0-9]+, not at a multiple of 64"

finish
