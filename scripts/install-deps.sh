#!/usr/bin/env bash
# Installs the Debian 12 packages hapticprep needs, only those that are missing.
# Uses sudo when not run as root. Safe to run again: does nothing when all are present.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ccache
  libassimp-dev libopenvdb-dev libboost-iostreams-dev libcli11-dev nlohmann-json3-dev
  libtbb-dev libgtest-dev libnanoflann-dev libpng-dev zlib1g-dev libxxhash-dev
  xxhash                    # tests: xxhsum checks the manifests' XXH3 content hashes from outside
  assimp-testmodels
  libbullet-dev libfcl-dev  # optional: bench_peers (Bullet GImpact and FCL next to our query), lib/bullet
  libbullet-extras-dev      # optional: HACD convex decomposition, the peer of lib/bullet's comparisons
  python3-junitparser python3-yaml  # tests: JUnit reports read by a real consumer; examples/ci's jobs run
  slurm-wlm munge           # optional: tests/cli/slurm_cluster_test.sh starts a one-node Slurm cluster
  pybind11-dev python3-dev python3-numpy  # optional: the Python package hapticprep (docs/python.md)
  python3-pytest python3-matplotlib       # its tests and examples/python
  python3-skbuild python3-venv python3-pip  # pip install . (setup.py, pyproject.toml) and its test
  clang libclang-rt-14-dev llvm-14  # make fuzz: clang 14 with libFuzzer, llvm-profdata/llvm-cov for coverage
  # optional: STEP and IGES through OpenCASCADE (lib/mesh/cad_occt.cpp, docs/cad.md)
  libocct-data-exchange-dev libocct-ocaf-dev libocct-modeling-algorithms-dev libocct-foundation-dev
  libocct-modeling-data-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq || true
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
