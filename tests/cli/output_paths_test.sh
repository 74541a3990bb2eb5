#!/usr/bin/env bash
# -o onto special paths: a symbolic link keeps being a link (its target is replaced), a FIFO and
# a device node are written into as streams and stay what they were; a full device is exit 4.
source "$(dirname "$0")/lib.sh"
vox="$HP_BIN/haptic-voxelize"
mesh="$SAMPLES/block-with-hole.stl"
args=(--units mm --voxel-size 0.002 --quiet)

expect_exit 0 "$vox" "$mesh" "${args[@]}" -o "$TMP/plain.vdb"

# Symbolic link (relative target): the link stays, the target gets the file.
mkdir -p "$TMP/real"
ln -s real/target.vdb "$TMP/link.vdb"
expect_exit 0 "$vox" "$mesh" "${args[@]}" -o "$TMP/link.vdb"
[ -L "$TMP/link.vdb" ] && pass "the link is still a link" || fail "the link was replaced"
cmp -s "$TMP/plain.vdb" "$TMP/real/target.vdb" && pass "the link's target holds the file" || fail "target differs"

# FIFO: a reader gets exactly the bytes of the regular file.
mkfifo "$TMP/pipe"
(timeout 60 cat "$TMP/pipe" >"$TMP/from-pipe.vdb") &
reader=$!
expect_exit 0 "$vox" "$mesh" "${args[@]}" -o "$TMP/pipe"
wait $reader
[ -p "$TMP/pipe" ] && pass "the FIFO is still a FIFO" || fail "the FIFO was replaced"
cmp -s "$TMP/plain.vdb" "$TMP/from-pipe.vdb" && pass "the FIFO carried the file" || fail "FIFO bytes differ"

# Device nodes of our own (root only; a folder mounted nodev cannot open them).
if mknod "$TMP/full" c 1 7 2>/dev/null && mknod "$TMP/null" c 1 3 2>/dev/null && : >"$TMP/null" 2>/dev/null; then
    expect_exit 0 "$vox" "$mesh" "${args[@]}" -o "$TMP/null"
    [ -c "$TMP/null" ] && pass "the null device is still a device" || fail "the null device was replaced"
    expect_exit 4 "$vox" "$mesh" "${args[@]}" -o "$TMP/full"
    expect_one_error_line
    expect_grep "full: .*No space left" "$TMP/err"
    [ -c "$TMP/full" ] && pass "the full device is still a device" || fail "the full device was replaced"
else
    echo "skip: device nodes (mknod needs root and a folder not mounted nodev)"
fi
# -o - : the file on the standard output, byte-identical to a regular output; the summary (text or
# --json) goes to the standard error; a full standard output is exit 4; the pipeline refuses it.
"$vox" "$mesh" "${args[@]}" -o - >"$TMP/stdout.vdb" 2>"$TMP/stdout.err"
check "-o - exits 0" "$?" 0
cmp -s "$TMP/plain.vdb" "$TMP/stdout.vdb" && pass "-o - writes the same bytes" || fail "-o - bytes differ"
"$vox" "$mesh" --units mm --voxel-size 0.002 --json -o - >"$TMP/stdout2.vdb" 2>"$TMP/stdout2.json"
cmp -s "$TMP/plain.vdb" "$TMP/stdout2.vdb" && pass "--json does not mix into the file" || fail "--json mixed into the file"
expect_json "$TMP/stdout2.json"
if [ -c "$TMP/full" ]; then
    "$vox" "$mesh" "${args[@]}" -o - >"$TMP/full" 2>"$TMP/err"
    check "-o - onto a full device exits 4" "$?" 4
    expect_grep "No space left" "$TMP/err"
fi
expect_exit 2 "$HP_BIN/haptic-pipeline" "$HP_SOURCE_DIR/pipelines/voxelmap-only.json" "$mesh" -o -
expect_grep "writes a folder" "$TMP/err"

# SIGTERM while the output is being written: the tool dies of the signal and leaves neither the
# output nor its temporary file (a bunny fine enough that the write takes a while).
mkdir -p "$TMP/term"
"$HP_BIN/haptic-voxelize" "$MESHES/stanford-bunny.obj" --voxel-size 0.0006 -o "$TMP/term/big.vdb" --quiet &
job=$!
seen=0
for _ in $(seq 1 6000); do
    if ls -A "$TMP/term" | grep -q '\.tmp-'; then seen=1; kill -TERM $job; break; fi
    kill -0 $job 2>/dev/null || break
    sleep 0.01
done
wait $job
status=$?
if [ "$seen" = 1 ]; then
    check "killed by SIGTERM" "$status" 143
    check "nothing left in the output folder" "$(ls -A "$TMP/term")" ""
else
    echo "skip: the write ended before the test saw its temporary file"
fi
ls -A "$TMP" | grep -q '\.tmp-' && fail "a temporary file was left: $(ls -A "$TMP")" || pass "no temporary file left"

finish
