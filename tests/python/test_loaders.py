"""Every loader of the package against files the executables wrote: shapes and counts from
haptic-dump --json, values against closed forms on the unit cube [0, 1]^3."""
import numpy as np
import pytest

import hapticprep as hp
from conftest import dump_json


def box_sdf(p):
    """Signed distance to the unit cube, inside positive (closed form)."""
    q = np.abs(p - 0.5) - 0.5
    out = np.linalg.norm(np.maximum(q, 0.0), axis=-1)
    return np.where(q.max(axis=-1) > 0, -out, -q.max(axis=-1))


def box_sdf_gradient(p):
    """grad of box_sdf (towards increasing depth) where it is defined by one face, edge or corner."""
    q = np.abs(p - 0.5) - 0.5
    s = np.sign(p - 0.5)
    outside = q.max(axis=-1) > 0
    g_out = -s * np.maximum(q, 0.0)
    g_out /= np.maximum(np.linalg.norm(g_out, axis=-1, keepdims=True), 1e-300)
    axis = np.argmax(q, axis=-1)
    g_in = -s * (np.arange(3) == axis[..., None])
    return np.where(outside[..., None], g_out, g_in)


def centers(grid):
    return np.stack(np.meshgrid(*(grid.centers(a) for a in range(3)), indexing="ij"), axis=-1)


def test_voxelmap(cube):
    vm = hp.load_voxelmap(cube["voxelmap"])
    dump = dump_json(cube["voxelmap"])
    assert vm.kind == "voxelmap" and isinstance(vm, hp.Voxelmap)
    assert vm.layers.dtype == np.int32
    assert vm.layers.shape == tuple(dump["dimensions"]) == vm.grid.dims
    assert vm.grid.voxel_size == dump["voxel_size"] == 0.1
    assert list(vm.grid.origin) == dump["origin"]
    assert vm.creator == dump["creator"]
    assert vm.metadata["source_name"] == "seam-cube.obj"
    assert vm.metadata["parameters"]["voxel_size"] == 0.1
    values, counts = np.unique(vm.layers, return_counts=True)
    assert {str(v): int(c) for v, c in zip(values, counts)} == dump["layers"]["histogram"]
    # Voxel (i, j, k) of the array is the voxel whose centre is grid.centers: a voxel whose
    # centre lies more than one voxel inside the cube is a layer inside, one more than a voxel
    # outside is a layer outside.
    d = box_sdf(centers(vm.grid))
    assert np.all(vm.layers[d > 0.1 + 1e-9] > 0)
    assert np.all(vm.layers[d < -0.1 - 1e-9] < 0)
    assert np.any(d > 0.1 + 1e-9) and np.any(d < -0.1 - 1e-9)


@pytest.mark.parametrize("encoding,dtype,tol", [("float", np.float32, 1e-7), ("double", np.float64, 1e-12),
                                                ("scaled", np.int32, 0.5e-6 + 1e-12)])
def test_distance_encodings(cube, encoding, dtype, tol):
    f = hp.load_distance(cube[encoding])
    dump = dump_json(cube[encoding])
    assert f.kind == "distance" and f.encoding == encoding == dump["distance"]["encoding"]
    assert f.distance.shape == tuple(dump["dimensions"]) and f.distance.dtype == np.float64
    assert f.stored.dtype == dtype and f.stored.shape == f.distance.shape
    assert f.layers.shape == f.distance.shape
    assert f.distance.max() == pytest.approx(dump["distance"]["max"], abs=1e-7)
    assert f.distance.min() == pytest.approx(dump["distance"]["min"], abs=1e-7)
    # The exact signed distance of the cube at every voxel centre (inside positive).
    expected = box_sdf(centers(f.grid))
    assert np.max(np.abs(f.distance - expected)) <= tol * max(1.0, np.abs(expected).max())
    if encoding == "scaled":
        assert f.scale_factor == 1e6
        assert np.array_equal(f.stored, np.round(expected * 1e6).astype(np.int32))
        assert np.array_equal(f.distance, f.stored / 1e6)
    else:
        assert f.scale_factor == 1
        assert np.array_equal(f.distance, f.stored.astype(np.float64))
    # The copy of the voxelmap's layers is the voxelmap's.
    assert np.array_equal(f.layers, hp.load_voxelmap(cube["voxelmap"]).layers)


def test_distance_gradient(cube):
    f = hp.load_distance(cube["float"])
    assert f.gradient.shape == f.distance.shape + (3,) and f.gradient.dtype == np.float32
    assert np.allclose(np.linalg.norm(f.gradient, axis=-1), 1, atol=1e-5)
    # Where the closed-form gradient is the same at a voxel and its six neighbours (the distance
    # is linear or radial there, away from the cube's medial surfaces), the file's gradient is it.
    c = centers(f.grid)
    g = box_sdf_gradient(c)
    h = f.grid.voxel_size
    same = np.ones(c.shape[:3], bool)
    for a in range(3):
        for sgn in (-1, 1):
            step = np.zeros(3)
            step[a] = sgn * h
            same &= np.all(np.abs(box_sdf_gradient(c + step) - g) < 1e-9, axis=-1)
    assert same.sum() > 100
    assert np.max(np.abs(f.gradient[same] - g[same])) < 1e-6  # float32 storage
    without = hp.load_distance(cube["double"])
    assert without.gradient is None


def test_pointshell(cube):
    ps = hp.load_pointshell(cube["pointshell"])
    dump = dump_json(cube["pointshell"])
    n = dump["points"]
    assert ps.kind == "pointshell"
    assert ps.points.shape == (n, 3) and ps.normals.shape == (n, 3) and ps.triangles.shape == (n,)
    assert ps.triangles.max() < dump["triangles"]
    assert ps.points.min(axis=0).tolist() == dump["bounds"]["min"]
    assert ps.points.max(axis=0).tolist() == dump["bounds"]["max"]
    # On the cube's surface, normals unit and inward.
    assert np.max(np.abs(box_sdf(ps.points))) < 1e-12
    assert np.allclose(np.linalg.norm(ps.normals, axis=1), 1, atol=1e-6)
    assert np.all(np.einsum("ij,ij->i", ps.normals, 0.5 - ps.points) > 0)


def test_tree(cube):
    t = hp.load_tree(cube["tree"])
    ps = hp.load_pointshell(cube["pointshell"])
    dump = dump_json(cube["tree"])
    assert t.kind == "point-sphere tree" and isinstance(t, hp.Pointshell)
    assert np.array_equal(t.points, ps.points) and np.array_equal(t.normals, ps.normals)
    assert t.k == dump["tree"]["k"] and t.levels == dump["tree"]["levels"]
    c = len(t.radius)
    assert c == dump["tree"]["clusters"]
    assert t.center.shape == (c, 3) and t.level.shape == (c,) and t.parent.shape == (c,)
    assert t.level[0] == 1 and t.parent[0] == -1
    assert len(t.children_start) == c + 1 and len(t.cluster_points_start) == c + 1
    assert [s["clusters"] for s in t.level_stats] == [s["clusters"] for s in dump["tree"]["per_level"]]
    assert np.array_equal(np.bincount(t.level)[1:], [s["clusters"] for s in dump["tree"]["per_level"]])
    # Links both ways, and every sphere holds all points below it (checked from the leaves up).
    below = [set() for _ in range(c)]
    for cl in reversed(range(c)):
        kids = t.children[t.children_start[cl]:t.children_start[cl + 1]]
        assert np.all(t.parent[kids] == cl) and np.all(t.level[kids] == t.level[cl] + 1)
        below[cl].update(t.cluster_points[t.cluster_points_start[cl]:t.cluster_points_start[cl + 1]].tolist())
        for kid in kids:
            below[cl] |= below[kid]
        pts = t.points[sorted(below[cl])]
        assert np.max(np.linalg.norm(pts - t.center[cl], axis=1)) <= t.radius[cl] * (1 + 1e-9) + 1e-12
    assert below[0] == set(range(len(t.points)))


def test_cfm(cube):
    m = hp.load_cfm(cube["cfm"])
    t = hp.load_tree(cube["tree"])
    dump = dump_json(cube["cfm"])
    s = len(m.radius)
    assert s == dump["spheres"] == len(t.radius)
    assert m.store == "full" and m.sampling == dump["sampling"] and m.root_stacks == dump["stacks"]
    assert m.min_stacks == dump["min_stacks"] and m.levels == t.levels
    assert np.array_equal(m.cluster, np.arange(s)) and np.array_equal(m.level, t.level)
    assert np.array_equal(m.center, t.center) and np.array_equal(m.radius, t.radius)
    r = len(m.normals)
    assert r == dump["records"] == int(m.count.sum())
    assert np.array_equal(m.first, np.concatenate([[0], np.cumsum(m.count)[:-1]]))
    names = ["face", "edge", "vertex"]
    assert {names[k]: int((m.types == k).sum()) for k in range(3)} == dump["records_by_type"]
    # Closest points on the cube's surface; a face record's normal is that face's outward normal.
    assert np.max(np.abs(box_sdf(m.points))) < 1e-12
    assert np.allclose(np.linalg.norm(m.normals, axis=1), 1, atol=1e-6)
    face = m.types == 0
    on = (np.abs(m.points[face]) < 1e-12) | (np.abs(m.points[face] - 1) < 1e-12)
    expected = np.where(on, np.sign(m.points[face] - 0.5), 0)
    assert np.allclose(m.normals[face], expected, atol=1e-6)
    # The sample directions of the root and the lookup of one of them.
    dirs = m.directions(1)
    assert dirs.shape == (m.count[0] if not m.single_feature[0] else len(dirs), 3)
    assert np.allclose(np.linalg.norm(dirs, axis=1), 1)
    assert m.lookup(0, dirs[3]) == (m.first[0] + (0 if m.single_feature[0] else 3))
    normal_only = hp.load_cfm(cube["cfm_normal"])
    assert normal_only.store == "normal" and normal_only.points is None and normal_only.types is None
    assert np.allclose(normal_only.normals[normal_only.first], m.normals[m.first], atol=1e-6)


def test_load_any_and_describe(cube):
    assert isinstance(hp.load(cube["voxelmap"]), hp.Voxelmap)
    assert isinstance(hp.load(cube["scaled"]), hp.DistanceField)
    assert type(hp.load(cube["pointshell"])) is hp.Pointshell
    assert isinstance(hp.load(cube["tree"]), hp.Tree)
    assert isinstance(hp.load(cube["cfm"]), hp.Cfm)
    assert isinstance(hp.load(cube["mesh"]), hp.Mesh)
    assert hp.describe(cube["tree"]) == dump_json(cube["tree"])
    assert hp.check(cube["float"])["check"]["ok"] is True


def test_mesh(cube):
    mesh = hp.load_mesh(cube["mesh"])
    assert mesh.vertices.shape == (8, 3) and mesh.triangles.shape == (12, 3)
    d = mesh.diagnostics
    assert d["watertight"] is True and d["orientation"] == "outward"
    # Volume of the unit cube from the triangles (divergence theorem).
    v = mesh.vertices[mesh.triangles]
    assert np.einsum("ij,ij->i", v[:, 0], np.cross(v[:, 1], v[:, 2])).sum() / 6 == pytest.approx(1.0)
    assert d["signed_volume"] == pytest.approx(1.0)
