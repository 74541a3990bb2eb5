#!/usr/bin/env bash
# haptic-dump on meshes: diagnostics as text and JSON; bad inputs exit 3 with one line.
source "$(dirname "$0")/lib.sh"
dump="$HP_BIN/haptic-dump"

expect_exit 0 "$dump" "$SAMPLES/seam-cube.obj"
expect_grep "vertices +8 " "$TMP/out"
expect_grep "watertight +yes" "$TMP/out"

expect_exit 0 "$dump" "$SAMPLES/seam-cube.obj" --json
cp "$TMP/out" "$TMP/cube.json"
expect_json "$TMP/cube.json"
check "json vertices" "$(json_get "$TMP/cube.json" 'j["mesh"]["vertices"]')" 8
check "json watertight" "$(json_get "$TMP/cube.json" 'j["mesh"]["watertight"]')" True
check "json orientation" "$(json_get "$TMP/cube.json" 'j["mesh"]["orientation"]')" outward

expect_exit 0 "$dump" "$SAMPLES/open-box.obj" --json
check "open box boundary edges" "$(json_get "$TMP/out" 'j["mesh"]["boundary_edges"]')" 4

expect_exit 0 "$dump" "$SAMPLES/peg.stl" --units mm --json
check "units mm" "$(json_get "$TMP/out" 'round(j["mesh"]["bbox"]["max"][2] - j["mesh"]["bbox"]["min"][2], 9)')" 0.03

if [ -f "$MESHES/stanford-bunny.obj" ]; then
    expect_exit 0 "$dump" "$MESHES/stanford-bunny.obj" --json
    check "bunny open bottom" "$(json_get "$TMP/out" 'j["mesh"]["boundary_edges"] > 0 and not j["mesh"]["watertight"]')" True
fi

# Bad inputs: exit 3, exactly one line on stderr naming the file.
printf 'just text\n' > "$TMP/notes.txt"
: > "$TMP/empty.stl"
printf 'v 0 0 0\nv 1 0 0\nl 1 2\n' > "$TMP/lines.obj"
printf 'v nan 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n' > "$TMP/nan.obj"
for bad in "$TMP/missing.stl" "$TMP/empty.stl" "$TMP/notes.txt" "$TMP/lines.obj" "$TMP/nan.obj"; do
    expect_exit 3 "$dump" "$bad" && expect_one_error_line && expect_grep "$(basename "$bad")" "$TMP/err"
done
expect_exit 3 "$dump" "$TMP/lines.obj"
expect_grep "no triangles" "$TMP/err"

# Zero-length and text files are refused at once.
for bad in "$TMP/empty.stl" "$TMP/notes.txt"; do
    expect_exit_within 3 5 "$dump" "$bad" --json && expect_one_error_line
done

# A voxelmap: identified by content (whatever the extension), summary as text and JSON.
"$HP_BIN/haptic-voxelize" "$SAMPLES/seam-cube.obj" --resolution 12 -o "$TMP/cube.vdb" --quiet
cp "$TMP/cube.vdb" "$TMP/cube.data"
expect_exit 0 "$dump" "$TMP/cube.data"
expect_grep "kind +voxelmap \(hapticprep\)" "$TMP/out"
expect_grep "grid +layers: int32" "$TMP/out"
expect_grep "creator +hapticprep" "$TMP/out"
expect_exit 0 "$dump" "$TMP/cube.data" --json
cp "$TMP/out" "$TMP/vdb.json"
expect_json "$TMP/vdb.json"
check "vdb kind" "$(json_get "$TMP/vdb.json" 'j["kind"]')" voxelmap
check "vdb grid name/type" "$(json_get "$TMP/vdb.json" '[(g["name"], g["type"]) for g in j["grids"]]')" "[('layers', 'int32')]"
check "vdb active voxels = grid voxels" \
    "$(json_get "$TMP/vdb.json" 'j["grids"][0]["active_voxels"] == j["dimensions"][0] * j["dimensions"][1] * j["dimensions"][2]')" True
check "vdb sign convention" "$(json_get "$TMP/vdb.json" 'j["metadata"]["sign_convention"]')" inside_positive
check "vdb format version" "$(json_get "$TMP/vdb.json" 'j["metadata"]["format_version"]')" 1
check "vdb source name" "$(json_get "$TMP/vdb.json" 'j["metadata"]["source_name"]')" seam-cube.obj

# Damaged VDB files: truncated (several places) or one bit flipped -> exit 3, one line, fast.
size=$(stat -c %s "$TMP/cube.vdb")
for cut in 7 64 $((size / 3)) $((size / 2)) $((size - 17)) $((size - 1)); do
    head -c "$cut" "$TMP/cube.vdb" > "$TMP/cut.vdb"
    expect_exit_within 3 5 "$dump" "$TMP/cut.vdb" && expect_one_error_line && expect_grep "cut.vdb" "$TMP/err"
done
python3 - "$TMP/cube.vdb" "$TMP/flip.vdb" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0x10
open(sys.argv[2], "wb").write(b)
PY
expect_exit_within 3 5 "$dump" "$TMP/flip.vdb"
expect_grep "checksum mismatch" "$TMP/err"

# A container written by an independent writer (Python, from the layout in formats/container.md).
make_container() {  # make_container OUT KIND_TAG VERSION
    python3 - "$@" <<'PY'
import json, struct, sys, zlib
out, tag, version = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3])
meta = json.dumps({"tool": "haptic-pointshell", "units": "m", "source_name": "cube.obj"}).encode()
# One point (float64 x y z), its unit inward normal, its source triangle (uint32): formats/shell.md.
sections = [(b"meta", meta), (b"points", struct.pack("<3d", 1, 2, 3)), (b"normals", struct.pack("<3d", 0, 0, -1)),
            (b"triangles", struct.pack("<I", 0))]
if tag == b"TREE":  # its one-cluster tree: the root holds the point (record layout in formats/shell.md)
    sections += [(b"tree", json.dumps({"k": 4, "levels": 1, "thresholds": [0], "clusters": 1}).encode()),
                 (b"clusters", struct.pack("<iiIIII4d", 1, -1, 0, 1, 0, 0, 1, 2, 3, 0)),
                 (b"cluster_points", struct.pack("<I", 0))]
total = 40 + sum(32 + len(p) for _, p in sections)
head = b"HAPTICPF" + struct.pack("<I", version) + tag + struct.pack("<QII", total, len(sections), 0)
data = head + struct.pack("<II", zlib.crc32(head), 0)
for name, payload in sections:
    sh = name.ljust(16, b"\0") + struct.pack("<QI", len(payload), zlib.crc32(payload))
    data += sh + struct.pack("<I", zlib.crc32(sh)) + payload
open(out, "wb").write(data)
PY
}
make_container "$TMP/shell.bin" SHEL 1
expect_exit 0 "$dump" "$TMP/shell.bin"
expect_grep "kind +pointshell \(format v1\)" "$TMP/out"
expect_grep "section +points: 24 bytes" "$TMP/out"
expect_exit 0 "$dump" "$TMP/shell.bin" --json
cp "$TMP/out" "$TMP/shell.json"
expect_json "$TMP/shell.json"
check "container kind" "$(json_get "$TMP/shell.json" 'j["kind"]')" pointshell
check "container sections" "$(json_get "$TMP/shell.json" '[(s["name"], s["bytes"]) for s in j["sections"]]')" \
    "[('meta', $(python3 -c 'import json; print(len(json.dumps({"tool": "haptic-pointshell", "units": "m", "source_name": "cube.obj"})))')), ('points', 24), ('normals', 24), ('triangles', 4)]"
check "pointshell facts" "$(json_get "$TMP/shell.json" '(j["points"], j["bounds"]["min"])')" "(1, [1.0, 2.0, 3.0])"
check "container metadata" "$(json_get "$TMP/shell.json" 'j["metadata"]["source_name"]')" cube.obj
make_container "$TMP/tree.bin" TREE 1
expect_exit 0 "$dump" "$TMP/tree.bin" --json
check "tree kind" "$(json_get "$TMP/out" 'j["kind"]')" "point-sphere tree"
check "tree facts" "$(json_get "$TMP/out" '(j["points"], j["tree"]["levels"], j["tree"]["per_level"][0]["radius"]["max"])')" "(1, 1, 0.0)"

# Damaged containers: every bit flip in a few bytes of each part, truncations, newer version.
csize=$(stat -c %s "$TMP/shell.bin")
for at in 0 9 13 20 33 45 60 $((csize - 30)) $((csize - 1)); do
    python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[int(sys.argv[3])] ^= 4; open(sys.argv[2], "wb").write(b)' \
        "$TMP/shell.bin" "$TMP/flip.bin" "$at"
    expect_exit_within 3 5 "$dump" "$TMP/flip.bin" && expect_one_error_line
done
head -c $((csize - 40)) "$TMP/shell.bin" > "$TMP/cut.bin"  # inside the normals, before the triangles
expect_exit_within 3 5 "$dump" "$TMP/cut.bin"
expect_grep "truncated at byte $((csize - 40)) of $csize, in section 'normals'" "$TMP/err"
make_container "$TMP/v3.bin" SHEL 3
expect_exit 3 "$dump" "$TMP/v3.bin"
expect_grep "written by a newer hapticprep \(format v3\); this build reads up to v1" "$TMP/err"

# Usage errors: exit 2.
expect_exit 2 "$dump"
expect_exit 2 "$dump" "$SAMPLES/peg.stl" --units furlong
expect_exit 2 "$dump" "$SAMPLES/peg.stl" --no-such-flag
expect_exit 0 "$dump" --help
expect_grep "Examples" "$TMP/out"
expect_exit 0 "$dump" --version
expect_grep "hapticprep" "$TMP/out"
finish
