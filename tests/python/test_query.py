"""hapticprep.Query against haptic-query --report: the same poses give the same contacts, forces,
torques and test counts, pose by pose, bit for bit (the report's JSON numbers round-trip)."""
import json

import numpy as np
import pytest

import hapticprep as hp
from conftest import tool

COUNT = 60


def report_and_poses(files, static, *args):
    d = files["dir"]
    name = f"{static.stem}_{len(list(d.glob('report_*')))}"
    report, poses = d / f"report_{name}.json", d / f"poses_{name}.json"
    # No time budget to meet here (timing is haptic-query's own test): a loaded machine passes too.
    budget = [] if "--budget-us" in args else ["--budget-us", "1e9"]
    tool("query", "--static", static, "--moving", files["peg"], "--scenario", "contact", "--count", COUNT,
         "--seed", 4, "--threads", 1, "--report", report, "--write-poses", poses, "-q", *budget, *args)
    return json.loads(report.read_text())["per_query"], json.loads(poses.read_text())["poses"]


@pytest.mark.parametrize("static,args,options", [
    ("block", [], {}),
    ("block", ["--mode", "brute"], {"mode": "brute"}),
    ("block", ["--mode", "segmented", "--level", "3"], {"mode": "segmented", "level": 3}),
    ("block", ["--mode", "time-critical", "--budget-us", "1e9", "--budget-tests", "40"],
     {"mode": "time-critical", "budget_us": 1e9, "budget_tests": 40}),
    ("block_vox", [], {}),
])
def test_query_equals_haptic_query(peg_block, static, args, options):
    expected, poses = report_and_poses(peg_block, peg_block[static], *args)
    assert len(expected) == len(poses) == COUNT
    q = hp.Query(hp.load_distance(peg_block[static]) if static == "block" else peg_block[static],
                 hp.load_tree(peg_block["peg"]), **options)
    touching = 0
    for i, (pose, want) in enumerate(zip(poses, expected)):
        r = q.run(pose["position"], pose["quaternion"])
        assert r.summary == want, f"pose {i}"
        assert len(r.contacts) == want["contacts"]
        assert r.force.tolist() == want["force"] and r.torque.tolist() == want["torque"]
        touching += len(r.contacts) > 0
        if len(r.contacts):
            # The force is the sum of depth x normal over the contacts, in the report's order.
            f = np.zeros(3)
            for v, n in zip(r.contacts.value, r.contacts.normal):
                f += v * n
            assert f.tolist() == r.force.tolist()
            assert r.max_penetration == r.contacts.value.max()
    assert touching > COUNT // 2


def test_query_with_cfm(peg_block):
    args = ["--mode", "time-critical", "--budget-us", "1e9", "--budget-tests", "20", "--cfm", peg_block["peg_cfm"]]
    expected, poses = report_and_poses(peg_block, peg_block["block"], *args)
    q = hp.Query(peg_block["block"], peg_block["peg"], cfm=hp.load_cfm(peg_block["peg_cfm"]),
                 mode="time-critical", budget_us=1e9, budget_tests=20)
    results = [q.run(p["position"], p["quaternion"]) for p in poses]
    assert [r.summary for r in results] == expected
    assert sum(r.cfm_contacts for r in results) > 0
    cfm_rows = np.concatenate([r.contacts.cluster for r in results])
    assert np.any(cfm_rows >= 0)


def test_query_value_and_identity(peg_block):
    q = hp.Query(str(peg_block["block"]), peg_block["peg"])
    assert q.kind == "distance" and q.encoding == "float"
    f = hp.load_distance(peg_block["block"])
    g = f.grid
    i, j, k = (d // 2 for d in g.dims)
    centre = [g.centers(a)[n] for a, n in enumerate((i, j, k))]
    assert q.value(centre) == pytest.approx(f.distance[i, j, k], abs=1e-12)
    # Far away: no contact, zero force, a positive separation bound.
    r = q.run([1.0, 1.0, 1.0])
    assert len(r.contacts) == 0 and r.force.tolist() == [0, 0, 0] and r.min_distance_bound > 0


def test_query_usage_errors(peg_block):
    with pytest.raises(hp.Error, match="unknown query mode 'fast'") as e:
        hp.Query(peg_block["block"], peg_block["peg"], mode="fast")
    assert e.value.exit_code == 2
    with pytest.raises(hp.Error) as e:
        hp.Query(peg_block["block"], peg_block["peg"], mode="full", cfm=peg_block["peg_cfm"])
    assert e.value.exit_code == 2 and "time" in str(e.value)
    q = hp.Query(peg_block["block"], peg_block["peg"])
    with pytest.raises(hp.Error) as e:
        q.run([0, 0, 0], [0, 0, 0, 0])
    assert e.value.exit_code == 2
