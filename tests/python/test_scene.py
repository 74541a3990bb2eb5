"""hapticprep.Scene: a scene.json of haptic-pipeline --assembly queried from Python equals the pair
query of each part run alone (hapticprep.Query on the part's files, the pose composed into the
part's frame by numpy here, independently of the library)."""
import subprocess
import sys

import numpy as np
import pytest

import hapticprep
from conftest import BIN, SOURCE, tool


def quat_mul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def rotate(q, v):
    w, x, y, z = q
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                  [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                  [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    return r @ v


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    if BIN is None:
        pytest.skip("HP_BIN is not set: run the tests through CTest (make test)")
    d = tmp_path_factory.mktemp("scene")
    gltf = d / "pegs.gltf"
    subprocess.run([sys.executable, str(SOURCE / "tests/cli/make_assembly.py"), "pegs", str(gltf), "3"], check=True)
    tool("pipeline", SOURCE / "pipelines/vps-default.json", gltf, "--assembly", "-o", d / "out",
         "--set", "voxelize.resolution=32", "--set", "query.count=10", "--set", "query.budget_us=1000000", "--quiet")
    return d / "out" / "scene.json"


def test_scene_query_equals_the_pairs_alone(scene):
    s = hapticprep.Scene(scene, tool="peg#2")
    parts = s.parts
    names = [p["name"] for p in parts]
    assert names[:2] == ["plate", "peg"] and s.tool_part == names.index("peg#2")
    tool_placement = parts[s.tool_part]
    # The peg pushed down into the plate and sideways: every pose touches the plate.
    n = 6
    positions = np.array([tool_placement["position"] + np.array([0.0005 * i, 0.0, -0.002]) for i in range(n)])
    quaternions = np.array([tool_placement["quaternion"]] * n)
    r = s.query(positions, quaternions)
    assert r["force"].shape == (n, 3) and r["part_force"].shape == (n, len(parts), 3)
    assert (r["parts_touched"] >= 1).all()
    plate = names.index("plate")
    assert (r["part_contacts"][:, plate] > 0).all()
    # The plate's pair alone: its files, the pose seen from its frame (the plate is at the origin).
    scene_dir = scene.parent
    field = scene_dir / "g0" / "distance.vdb"
    tree = scene_dir / "g1" / "spheretree.hps"
    alone = hapticprep.Query(field, tree)
    for i in range(n):
        pl = parts[plate]
        inv = np.array([pl["quaternion"][0], *(-np.array(pl["quaternion"][1:]))])
        q_local = quat_mul(inv, quaternions[i])
        t_local = rotate(inv, positions[i] - pl["position"])
        a = alone.run(t_local, q_local)
        mine = r["frame"] == i
        mine &= r["part"] == plate
        assert mine.sum() == len(a.contacts)
        np.testing.assert_allclose(r["value"][mine], a.contacts.value, rtol=0, atol=1e-12)
        back = np.array([rotate(pl["quaternion"], p) + pl["position"] for p in a.contacts.position]).reshape(-1, 3)
        np.testing.assert_allclose(r["position"][mine], back, rtol=0, atol=1e-12)


def test_scene_with_maps_equals_the_pairs_alone_with_the_map(scene):
    """cfm=True: the tool part's closest feature map of scene.json on every pair, as Query(cfm=...)
    alone with the pair's share of the frame's sphere tests (max(1, N // candidates))."""
    budget = 4
    s = hapticprep.Scene(scene, tool="peg#2", mode="time-critical", budget_us=1e9, budget_tests=budget, cfm=True)
    plain = hapticprep.Scene(scene, tool="peg#2", mode="time-critical", budget_us=1e9, budget_tests=budget)
    parts = s.parts
    names = [p["name"] for p in parts]
    plate = names.index("plate")
    tool_placement = parts[s.tool_part]
    n = 6
    positions = np.array([tool_placement["position"] + np.array([0.0005 * i, 0.0, -0.002]) for i in range(n)])
    quaternions = np.array([tool_placement["quaternion"]] * n)
    r, r0 = s.query(positions, quaternions), plain.query(positions, quaternions)
    scene_dir = scene.parent
    alone, from_maps = {}, 0
    for i in range(n):
        k = int(r["candidates"][i])
        if k not in alone:
            alone[k] = hapticprep.Query(scene_dir / "g0" / "distance.vdb", scene_dir / "g1" / "spheretree.hps",
                                        cfm=scene_dir / "g1" / "cfm.hcfm", mode="time-critical", budget_us=1e9,
                                        budget_tests=max(1, budget // k))
        pl = parts[plate]
        inv = np.array([pl["quaternion"][0], *(-np.array(pl["quaternion"][1:]))])
        a = alone[k].run(rotate(inv, positions[i] - pl["position"]), quat_mul(inv, quaternions[i]))
        mine = (r["frame"] == i) & (r["part"] == plate)
        assert mine.sum() == len(a.contacts)
        np.testing.assert_allclose(r["value"][mine], a.contacts.value, rtol=0, atol=1e-12)
        from_maps += a.cfm_contacts
    assert from_maps > 0 and len(r["value"]) != len(r0["value"])  # the maps add contacts
    with pytest.raises(hapticprep.Error, match="only by the time-critical mode") as e:
        hapticprep.Scene(scene, tool="peg#2", cfm=True)
    assert e.value.exit_code == 2


def test_scene_errors(scene, tmp_path):
    with pytest.raises(Exception, match="no part 'nope'"):
        hapticprep.Scene(scene, tool="nope")
    with pytest.raises(Exception, match="one of them"):
        hapticprep.Scene(scene)


def test_example_scene_insertion(scene, tmp_path):
    """examples/python/scene_insertion.py as a user runs it: one line per step, the plate touched
    once the peg is pushed in, the force per part as the pair query alone gives it, a picture."""
    import matplotlib.image

    png = tmp_path / "insertion.png"
    steps = 4
    r = subprocess.run([sys.executable, str(SOURCE / "examples/python/scene_insertion.py"), str(scene), "peg#2",
                        "0,0,-0.002", str(png), "--steps", str(steps)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == steps + 2, r.stdout
    assert lines[0].startswith("0.000000 m: force "), lines[0]
    assert "plate" in lines[-2], lines[-2]
    # The last step's plate force, from the pair query alone on the plate's files (the plate sits
    # at the origin, unturned: the world pose is its local pose).
    s = hapticprep.Scene(scene, tool="peg#2")
    peg = s.parts[s.tool_part]
    plate = next(p for p in s.parts if p["name"] == "plate")
    assert np.allclose(plate["position"], 0) and np.allclose(plate["quaternion"], [1, 0, 0, 0])
    alone = hapticprep.Query(scene.parent / "g0" / "distance.vdb", scene.parent / "g1" / "spheretree.hps")
    a = alone.run(np.asarray(peg["position"]) + [0, 0, -0.002], peg["quaternion"])
    assert f"plate {np.linalg.norm(a.force):.4g}" in lines[-2], (lines[-2], a.force)
    import re
    m = re.fullmatch(r"(\d+) of (\d+) parts touched along the move", lines[-1])
    assert m and int(m.group(1)) >= 1 and int(m.group(2)) == len(s.parts), lines[-1]
    image = matplotlib.image.imread(png)
    assert image.shape[:2] == (320, 480)
    assert np.mean(image[..., :3].min(axis=-1) < 0.9) > 0.01


def test_several_tools_each_pair_as_the_pair_query_alone(scene):
    """Two tools: peg#2 (a part, with its field) and the peg's tree as an outside tool, at the same
    poses pushed into the plate, the outside tool 1 mm beside peg#2. Each tool's plate pair equals the
    pair query alone, and the outside tool also meets peg#2 (a tool with a field)."""
    tree = scene.parent / "g1" / "spheretree.hps"
    s = hapticprep.Scene(scene, tool=["peg#2"], tool_files=[tree])
    names = [p["name"] for p in s.parts]
    assert s.tools == ["peg#2", str(tree)]
    peg, plate = names.index("peg#2"), names.index("plate")
    n = 4
    start = np.asarray(s.parts[peg]["position"])
    one = np.array([start + [0.0005 * i, 0.0, -0.002] for i in range(n)])
    beside = one + [0.001, 0.0, 0.0]
    positions = np.stack([one, beside], axis=1)
    quaternions = np.array([[s.parts[peg]["quaternion"]] * 2] * n)
    r = s.query(positions, quaternions)
    assert r["part_contacts"].shape == (n, 2, len(names)) and r["tool_force"].shape == (n, 2, 3)
    assert (r["part_contacts"][:, 1, peg] > 0).all()  # the outside tool inside peg#2
    alone = hapticprep.Query(scene.parent / "g0" / "distance.vdb", tree)
    for i in range(n):
        for t in range(2):
            a = alone.run(positions[i][t], quaternions[i][t])  # the plate sits at the origin, unturned
            mine = (r["frame"] == i) & (r["part"] == plate) & (r["tool"] == t)
            assert mine.sum() == len(a.contacts) > 0
            np.testing.assert_allclose(r["value"][mine], a.contacts.value, rtol=0, atol=1e-12)
            np.testing.assert_allclose(r["part_force"][i, t, plate], a.force, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r["tool_force"].sum(axis=1), r["force"], rtol=1e-12, atol=1e-15)
    with pytest.raises(Exception, match="shape"):
        s.query(one, quaternions[:, 0])
