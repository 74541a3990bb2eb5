#!/usr/bin/env bash
# haptic-pipeline reading manifests back (--resume, --merge): a manifest with a key missing or of
# the wrong type is exit 3 with one line naming the file and the key, and nothing runs.
source "$(dirname "$0")/lib.sh"
pipe="$HP_BIN/haptic-pipeline"
P="$HP_SOURCE_DIR/pipelines"
vo=("$P/voxelmap-only.json" "$SAMPLES/peg.stl" "$SAMPLES/gear.obj" --set voxelize.resolution=16 --quiet)

expect_exit 0 "$pipe" "${vo[@]}" -o "$TMP/a"
M="$TMP/a/manifest.json"
# An edited manifest: remove or retype one key, keep the rest as written.
edit() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(j, open(sys.argv[1], "w"), indent=2)' "$M" "$1"; }
stamp() { find "$TMP/a" -name '*.vdb' -printf '%p %T@\n' | sort; }
stamp > "$TMP/before"

edit 'del j["meshes"][1]["outputs"][0]["hash"]'
expect_exit 3 "$pipe" "${vo[@]}" -o "$TMP/a" --resume
expect_one_error_line
expect_grep "manifest.json: key 'meshes\[1\]\.outputs\[0\]\.hash' is missing" "$TMP/err"
stamp > "$TMP/after"
cmp -s "$TMP/before" "$TMP/after" && pass "nothing ran" || fail "a mesh ran although the manifest could not be read"

expect_exit 0 "$pipe" "${vo[@]}" -o "$TMP/a"
edit 'j["summary"]["ok"] = "2"'
expect_exit 3 "$pipe" "${vo[@]}" -o "$TMP/a" --resume
expect_grep "manifest.json: key 'summary\.ok' must be an integer >= 0" "$TMP/err"

# --merge reads shard manifests the same way.
expect_exit 0 "$pipe" "${vo[@]}" -o "$TMP/s" --shard 1/2
expect_exit 0 "$pipe" "${vo[@]}" -o "$TMP/s" --shard 2/2
S2="$TMP/s/manifest.shard-2-of-2.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j["meshes"][0]["status"] = "done"; json.dump(j, open(sys.argv[1], "w"))' "$S2"
expect_exit 3 "$pipe" --merge "$TMP/s/manifest.shard-1-of-2.json" "$S2" -o "$TMP/s"
expect_one_error_line
expect_grep "manifest.shard-2-of-2.json: key 'meshes\[0\]\.status' must be \"ok\", \"failed\" or \"planned\"" "$TMP/err"
[ ! -e "$TMP/s/manifest.json" ] && pass "no merged manifest" || fail "merge wrote a manifest"
finish
