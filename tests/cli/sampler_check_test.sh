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

# edit IN OUT KIND ARG: a copy of IN with one change, every CRC-32 of the container recomputed.
#   scalar OFFSET:FORMAT:VALUE  packs VALUE (struct FORMAT) at OFFSET of the scalars record
#   add OFFSET:FORMAT:N         adds N to the integer there
#   same -                      no change (the container framed again)
#   shift SECTION               moves SECTION's payload 4 bytes later (a 4-byte pad section before it)
edit() {
    python3 - "$@" <<'PY'
import struct, sys, zlib
src, dst, kind, arg = sys.argv[1:5]
b = open(src, "rb").read()
assert b[:8] == b"HAPTICPF"
count = struct.unpack_from("<I", b, 24)[0]
at, parts = 40, []
for _ in range(count):
    name = b[at:at + 16].split(b"\0")[0]
    size = struct.unpack_from("<Q", b, at + 16)[0]
    parts.append([name, bytearray(b[at + 32:at + 32 + size])])
    at += 32 + size
if kind in ("scalar", "add"):
    off, fmt, value = arg.split(":")
    value = float(value) if fmt in ("d", "f") else int(value)
    payload = [p for n, p in parts if n == b"scalars"][0]
    if kind == "add":
        value += struct.unpack_from("<" + fmt, payload, int(off))[0]
    struct.pack_into("<" + fmt, payload, int(off), value)
elif kind == "shift":
    i = [n for n, _ in parts].index(arg.encode())
    parts.insert(i, [b"pad:x", bytearray(4)])
out = b""
for name, payload in parts:
    sh = name.ljust(16, b"\0") + struct.pack("<QI", len(payload), zlib.crc32(payload))
    out += sh + struct.pack("<I", zlib.crc32(sh)) + payload
head = b[8:16] + struct.pack("<QII", 40 + len(out), len(parts), 0)
head = b"HAPTICPF" + head
open(dst, "wb").write(head + struct.pack("<II", zlib.crc32(head), 0) + out)
PY
}

# The edit itself changes nothing else: the same bytes re-framed read and check.
edit "$dense" "$TMP/same.hsmp" same -
expect_exit 0 "$dump" "$TMP/same.hsmp" --check

refused() {  # refused NAME PATTERN KIND ARG: the edited copy is refused with exit 3, one line, naming it
    local name=$1 pattern=$2
    edit "$dense" "$TMP/$name.hsmp" "$3" "$4"
    expect_exit 3 "$dump" "$TMP/$name.hsmp" --check && expect_one_error_line
    expect_grep "$name.hsmp: corrupt prepared sampler: $pattern" "$TMP/err"
}
# Scalars record (formats/sampler.md): dims at 0, flags 12, origin 16, voxel size 40, slope bound
# 48, largest sample 56, floor 64, first tile brick 72, reserved 76, counts 80.
refused voxel-zero "the voxel size is not positive and finite" scalar 40:d:0
refused voxel-negative "the voxel size is not positive and finite" scalar 40:d:-0.01
refused voxel-inf "the voxel size is not positive and finite" scalar 40:d:inf
refused voxel-nan "the voxel size is not positive and finite" scalar 40:d:nan
refused dims-zero "grid dims 0 x" scalar 0:i:0
refused dims-huge "grid dims [0-9]+ x 1048577 x [0-9]+ \(each axis 1 to 2\^20 voxels" scalar 4:i:1048577
refused dims-other "[0-9]+ samples where its grid has room for" scalar 8:i:100
refused origin-inf "the grid origin is not finite" scalar 24:d:-inf
refused flags "unknown flags 4" scalar 12:I:4
refused band-flag "its brick table does not have one entry per block" scalar 12:I:1
refused slope-below-one "the slope bound is not a finite number of at least 1" scalar 48:d:0.5
refused slope-inf "the slope bound is not a finite number of at least 1" scalar 48:d:inf
refused max-nan "the largest sample is not finite" scalar 56:d:nan
refused dense-floor "a dense sampler with a band's floor" scalar 64:d:1.5
refused dense-tile "a dense sampler with a band's floor or first tile brick" scalar 72:I:1
refused reserved "a reserved field is not 0" scalar 76:I:7
refused samples-one-more "section 'samples' has [0-9]+ bytes, not [0-9]+ elements" add 80:Q:1
refused pyramid-huge "section 'pyramid' has [0-9]+ bytes, not 18446744073709551615 elements" scalar 88:Q:18446744073709551615
refused band-tables "a dense sampler with a narrow band's tables" scalar 96:Q:1
refused samples-shifted "section 'samples' starts at byte [0-9]+, not at a multiple of 64" shift samples
refused pyramid-shifted "section 'pyramid' starts at byte [0-9]+, not at a multiple of 64" shift pyramid

finish
