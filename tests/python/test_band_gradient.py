"""A band distance file with gradients read through the package: on the band voxels its gradient is
the dense field's, and both are the direction of steepest increase of the distance values
(central finite differences of the dense field, an independent estimate); beyond the band zero."""
import numpy as np

import hapticprep as hp
from conftest import SAMPLES, tool

BAND = 4


def fields(tmp_path):
    mesh = SAMPLES / "torus.off"
    out = {}
    for name, band in (("band", BAND), ("dense", 0)):
        vm = tmp_path / f"{name}.vox.vdb"
        tool("voxelize", mesh, "--resolution", "64", "--band", band, "-o", vm, "-q")
        df = tmp_path / f"{name}.dist.vdb"
        tool("distance", mesh, vm, "--gradient", "-o", df, "-q")
        out[name] = hp.load_distance(df)
    return out["band"], out["dense"]


def test_band_gradient_matches_dense_and_finite_differences(tmp_path):
    band, dense = fields(tmp_path)
    assert band.metadata["band"] == BAND and "band" not in dense.metadata
    assert band.gradient.shape == dense.gradient.shape == band.distance.shape + (3,)
    assert band.gradient.dtype == np.float32
    inside = np.abs(band.layers) < BAND  # the band voxels: exact distances and gradients
    assert inside.sum() > 10000
    # The dense layers clamped to the band are the band file's layers.
    assert np.array_equal(np.clip(dense.layers, -BAND, BAND), band.layers)

    # On the band voxels: the dense field's values and gradients (the same floats); beyond: zero.
    assert np.array_equal(band.gradient[inside], dense.gradient[inside])
    assert np.array_equal(band.stored[inside], dense.stored[inside])
    assert not band.gradient[~inside].any()
    length = np.linalg.norm(band.gradient[inside].astype(np.float64), axis=-1)
    assert np.abs(length - 1).max() < 1e-5

    # Independent: central differences of the dense distances, (d[+1] - d[-1]) / 2h per axis, on the
    # band voxels away from the grid's border. The torus's tube (radius 7.5 voxels here) curves the
    # field over the stencil, yet every band voxel's gradient is within 14 degrees of the
    # difference's direction (measured: at least 0.976); where the field is smooth over the
    # stencil (the one-sided differences agree to 0.05 and the difference has unit length to 0.02:
    # away from the medial surface, the facets' creases and the tube's curvature) within 2.6 degrees.
    d, h = dense.distance, dense.grid.voxel_size
    core = (slice(1, -1),) * 3
    fd = np.stack([(np.roll(d, -1, a) - np.roll(d, 1, a)) / (2 * h) for a in range(3)], axis=-1)[core]
    fwd = np.stack([(np.roll(d, -1, a) - d) / h for a in range(3)], axis=-1)[core]
    bwd = np.stack([(d - np.roll(d, 1, a)) / h for a in range(3)], axis=-1)[core]
    g = band.gradient[core].astype(np.float64)
    fd_len = np.linalg.norm(fd, axis=-1)
    ins = inside[core]
    cosine = np.sum(g * fd, axis=-1) / np.maximum(fd_len, 1e-12)
    assert cosine[ins].min() > 0.97
    smooth = ins & (np.abs(fd_len - 1) < 0.02) & (np.abs(fwd - bwd).max(axis=-1) < 0.05)
    assert smooth.sum() > 0.25 * ins.sum()
    assert cosine[smooth].min() > 0.999
