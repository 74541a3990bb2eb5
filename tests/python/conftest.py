"""Fixtures of the Python package's tests: files written by the real executables.

Environment (set by CTest, python/hapticprep.cmake): HP_BIN (the executables), HP_SOURCE_DIR,
PYTHONPATH (the built package). HP_SANITIZED=1 in the sanitizer run.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("HP_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BIN = Path(os.environ["HP_BIN"]) if "HP_BIN" in os.environ else None
SAMPLES = SOURCE / "sample_meshes"


def tool(name, *args, check=True):
    """Runs haptic-<name> with args; returns the CompletedProcess (text)."""
    if BIN is None:
        pytest.skip("HP_BIN is not set: run the tests through CTest (make test)")
    cmd = [str(BIN / f"haptic-{name}"), *map(str, args)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr}")
    return r


def dump_json(path):
    return json.loads(tool("dump", path, "--json").stdout)


@pytest.fixture(scope="session")
def cube(tmp_path_factory):
    """The unit cube [0, 1]^3 (seam-cube.obj) through every stage: voxelmap (0.1 voxels), distance
    fields in the three encodings (float with gradient), pointshell, tree, CFMs (full, normal)."""
    d = tmp_path_factory.mktemp("cube")
    mesh = SAMPLES / "seam-cube.obj"
    f = {"mesh": mesh, "dir": d}
    f["voxelmap"] = d / "cube.vdb"
    tool("voxelize", mesh, "--voxel-size", "0.1", "-o", f["voxelmap"], "-q")
    for enc in ("float", "double", "scaled"):
        f[enc] = d / f"cube.{enc}.vdb"
        extra = ["--gradient"] if enc == "float" else []
        tool("distance", mesh, f["voxelmap"], "--encoding", enc, "-o", f[enc], "-q", *extra)
    f["pointshell"] = d / "cube.ps.hps"
    tool("pointshell", mesh, f["float"], "-o", f["pointshell"], "-q")
    f["tree"] = d / "cube.hps"
    tool("spheretree", f["pointshell"], "-o", f["tree"], "-q")
    f["cfm"] = d / "cube.hcfm"
    tool("cfm", mesh, f["tree"], "--store", "full", "-o", f["cfm"], "-q")
    f["cfm_normal"] = d / "cube.normal.hcfm"
    tool("cfm", mesh, f["tree"], "-o", f["cfm_normal"], "-q")
    return f


@pytest.fixture(scope="session")
def peg_block(tmp_path_factory):
    """The query's pair of haptic-query's own test: a peg (moving tree and its CFM) against a block
    with a hole (static distance field and voxelmap), millimetre meshes at 1 mm voxels."""
    d = tmp_path_factory.mktemp("peg_block")
    f = {"dir": d}
    block, peg = SAMPLES / "block-with-hole.stl", SAMPLES / "peg.stl"
    f["block_vox"] = d / "block.vdb"
    tool("voxelize", block, "--units", "mm", "--voxel-size", "0.001", "-o", f["block_vox"], "-q")
    f["block"] = d / "block.dist.vdb"
    tool("distance", block, f["block_vox"], "-o", f["block"], "-q")
    tool("voxelize", peg, "--units", "mm", "--voxel-size", "0.001", "-o", d / "peg.vdb", "-q")
    tool("pointshell", peg, d / "peg.vdb", "-o", d / "peg.ps.hps", "-q")
    f["peg"] = d / "peg.hps"
    tool("spheretree", d / "peg.ps.hps", "-o", f["peg"], "-q")
    f["peg_cfm"] = d / "peg.hcfm"
    tool("cfm", peg, f["peg"], "-o", f["peg_cfm"], "-q")
    return f
