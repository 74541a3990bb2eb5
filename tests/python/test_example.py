"""examples/python/plot_tree_levels.py runs as a user runs it and writes its picture."""
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.image  # noqa: E402
import numpy as np  # noqa: E402

import hapticprep as hp  # noqa: E402
from conftest import SAMPLES, SOURCE, tool  # noqa: E402


def test_plot_tree_levels(tmp_path):
    mesh = SAMPLES / "gear.obj"
    tool("voxelize", mesh, "--resolution", 64, "-o", tmp_path / "gear.vdb", "-q")
    tool("pointshell", mesh, tmp_path / "gear.vdb", "-o", tmp_path / "gear.ps.hps", "-q")
    tool("spheretree", tmp_path / "gear.ps.hps", "-o", tmp_path / "gear.hps", "-q")
    png = tmp_path / "levels.png"
    r = subprocess.run([sys.executable, str(SOURCE / "examples/python/plot_tree_levels.py"), str(tmp_path / "gear.hps"),
                        str(png)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    tree = hp.load_tree(tmp_path / "gear.hps")
    assert f"{len(tree.radius)} clusters, {tree.levels} levels" in r.stdout
    image = matplotlib.image.imread(png)
    cols = min(tree.levels + 1, 4)
    rows = -(-(tree.levels + 1) // cols)
    assert image.shape[:2] == (rows * 4 * 80, cols * 4 * 80)
    # Not blank: a good share of the pixels are drawn (points, circles, bars).
    assert np.mean(image[..., :3].min(axis=-1) < 0.9) > 0.02
