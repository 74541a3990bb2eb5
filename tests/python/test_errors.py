"""Damaged, wrong and missing files raise hapticprep.Error (exit code 3) with the message the
executables print; none crashes the interpreter."""
import subprocess
import sys

import pytest

import hapticprep as hp
from conftest import tool

KINDS = {"voxelmap": hp.load_voxelmap, "float": hp.load_distance, "scaled": hp.load_distance,
         "pointshell": hp.load_pointshell, "tree": hp.load_tree, "cfm": hp.load_cfm}


def damaged(cube, kind, how, tmp_path):
    data = bytearray(cube[kind].read_bytes())
    if how == "truncated":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 2] ^= 0x10
    out = tmp_path / f"{how}_{cube[kind].name}"
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("how", ["truncated", "bitflip"])
def test_damaged_file_raises(cube, kind, how, tmp_path):
    path = damaged(cube, kind, how, tmp_path)
    for load in (KINDS[kind], hp.load):
        with pytest.raises(hp.Error) as e:
            load(path)
        assert e.value.exit_code == 3
        assert str(path) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("kind,flag", [("float", "--static"), ("tree", "--moving")])
@pytest.mark.parametrize("how", ["truncated", "bitflip"])
def test_same_message_as_haptic_query(cube, kind, flag, how, tmp_path):
    path = damaged(cube, kind, how, tmp_path)
    files = {"--static": cube["float"], "--moving": cube["tree"], flag: path}
    r = tool("query", "--static", files["--static"], "--moving", files["--moving"], "--scenario", "random",
             "--count", 1, check=False)
    assert r.returncode == 3
    with pytest.raises(hp.Error) as e:
        hp.Query(files["--static"], files["--moving"])
    assert r.stderr.strip() == f"haptic-query: {e.value}"
    with pytest.raises(hp.Error) as e2:
        KINDS[kind](path)
    assert str(e2.value) == str(e.value)


def test_same_message_for_a_damaged_cfm(cube, tmp_path):
    path = damaged(cube, "cfm", "bitflip", tmp_path)
    r = tool("query", "--static", cube["float"], "--moving", cube["tree"], "--cfm", path, "--mode", "time-critical",
             "--scenario", "random", "--count", 1, check=False)
    assert r.returncode == 3
    with pytest.raises(hp.Error) as e:
        hp.load_cfm(path)
    assert r.stderr.strip() == f"haptic-query: {e.value}"


@pytest.mark.parametrize("load,kind,words", [
    (hp.load_tree, "pointshell", "without a tree"),
    (hp.load_tree, "float", ""),
    (hp.load_cfm, "tree", ""),
    (hp.load_distance, "voxelmap", "not a distance"),
    (hp.load_voxelmap, "scaled", "not a voxelmap"),
    (hp.load_pointshell, "cfm", ""),
])
def test_wrong_kind_raises(cube, load, kind, words):
    with pytest.raises(hp.Error, match=words) as e:
        load(cube[kind])
    assert e.value.exit_code == 3


def test_missing_file_and_not_a_file(cube, tmp_path):
    for load in (*KINDS.values(), hp.load, hp.describe):
        with pytest.raises(hp.Error) as e:
            load(tmp_path / "missing.vdb")
        assert e.value.exit_code == 3
    junk = tmp_path / "junk.hps"
    junk.write_bytes(b"HAPTICPF" + bytes(100))
    with pytest.raises(hp.Error):
        hp.load_tree(junk)


def test_damage_never_crashes_the_interpreter(cube, tmp_path):
    # Every byte position class of a small file, in a child interpreter: a crash would be a
    # signal exit instead of the printed count.
    path = tmp_path / "flip.hps"
    src = cube["tree"].read_bytes()
    code = f"""
import hapticprep as hp
src = open({str(cube['tree'])!r}, 'rb').read()
raised = 0
for pos in range(0, len(src), 97):
    b = bytearray(src); b[pos] ^= 0xff
    open({str(path)!r}, 'wb').write(bytes(b))
    try:
        hp.load_tree({str(path)!r})
    except hp.Error:
        raised += 1
print(raised)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == len(range(0, len(src), 97))
