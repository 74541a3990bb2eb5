#!/usr/bin/env bash
# pip install as a Python user does it: a fresh virtual environment of Debian's python3 (with its
# site packages, where numpy and scikit-build live), `pip install --no-build-isolation --no-index`
# of the source tree's packaging (pyproject.toml, setup.py), then the package imported from the
# environment, outside the source and build trees, and used on a file the tools write.
# The extension is the one this build made (setup.py's HP_PREBUILT): the same package metadata
# without a second compile of the library. `pip install .` proper (CMake through scikit-build) is
# run by hand: docs/python.md, "Install with pip".
# Env (set by CMake): HP_BUILD_DIR, HP_SOURCE_DIR, HP_PYTHON (the interpreter the build is for).
: "${HP_BUILD_DIR:?HP_BUILD_DIR must point to the build directory}"
: "${HP_SOURCE_DIR:?HP_SOURCE_DIR must point to the repository}"
PY=${HP_PYTHON:-/usr/bin/python3}
HP_BIN="$HP_BUILD_DIR/bin"
source "$HP_SOURCE_DIR/tests/cli/lib.sh"

# The packaging files in a scratch source tree, so that pip's build leaves the checkout untouched.
SRC="$TMP/src"
mkdir -p "$SRC/docs"
cp "$HP_SOURCE_DIR/pyproject.toml" "$HP_SOURCE_DIR/setup.py" "$HP_SOURCE_DIR/CMakeLists.txt" "$SRC/"
cp "$HP_SOURCE_DIR/docs/python.md" "$SRC/docs/"

expect_exit 0 "$PY" -m venv --system-site-packages "$TMP/venv" || finish
VPY="$TMP/venv/bin/python"
HP_PREBUILT="$HP_BUILD_DIR/python" expect_exit 0 "$VPY" -m pip install --no-build-isolation \
    --no-index --disable-pip-version-check --no-cache-dir "$SRC" || { tail -20 "$TMP/out" >&2; finish; }

# pip knows the package, its version (the project's) and its dependency on numpy.
expect_exit 0 "$VPY" -m pip show hapticprep
version=$(sed -n 's/^project(hapticprep VERSION \([0-9.]*\).*/\1/p' "$HP_SOURCE_DIR/CMakeLists.txt")
expect_grep "^Version: $version\$" "$TMP/out"
expect_grep '^Requires: numpy$' "$TMP/out"

# Imported from the environment, not from the build or source tree.
expect_exit 0 "$HP_BIN/haptic-voxelize" "$SAMPLES/sphere.obj" -o "$TMP/sphere.vox.vdb" --resolution 32
cd "$TMP" || finish
env -u PYTHONPATH "$VPY" - "$TMP/venv" "$TMP/sphere.vox.vdb" "$version" >"$TMP/py.out" 2>&1 <<'PYCODE'
import os, sys
import numpy
import hapticprep as hp
venv, path, version = sys.argv[1:]
where = os.path.realpath(hp.__file__)
assert where.startswith(os.path.realpath(venv)), f"imported from {where}, not the environment"
assert hp.__version__ == version, (hp.__version__, version)
v = hp.load_voxelmap(path)
assert isinstance(v.layers, numpy.ndarray) and v.layers.ndim == 3, type(v.layers)
assert (v.layers == 0).any() and (v.layers > 0).any(), "no surface or inside voxels"
# The OpenVDB module the read loaded is the one installed beside the extension.
maps = [l.split()[-1] for l in open("/proc/self/maps") if l.rstrip().endswith("hapticprep_vdb.so")]
assert maps and all(os.path.realpath(m).startswith(os.path.realpath(venv)) for m in maps), maps
print("imported", where, "layers", v.layers.shape)
PYCODE
[ $? -eq 0 ] && pass "import from the environment: $(tail -1 "$TMP/py.out")" || { fail "import: $(cat "$TMP/py.out")"; }

# The environment's pip uninstalls it cleanly.
expect_exit 0 "$VPY" -m pip uninstall -y hapticprep
cd / && env -u PYTHONPATH "$VPY" -c "import hapticprep" 2>/dev/null && fail "still importable after uninstall" || pass "gone after uninstall"
finish
