#!/usr/bin/env python3
"""Line coverage of the parsers behind the gate, per fuzz target, from the kept inputs.

    scripts/fuzz_coverage.py BINARY [TARGET...]

BINARY is hp_fuzz_coverage, the replay with clang's source-based coverage of the reader files
(-fprofile-instr-generate -fcoverage-mapping; scripts/fuzz_coverage.sh builds it). For each
target (all of READERS when none is given) it runs over tests/fuzz/seeds/TARGET,
tests/fuzz/corpus/TARGET and tests/fuzz/regressions/TARGET, llvm-profdata merges the profile
(next to BINARY, in coverage/), and llvm-cov reports the lines covered in the target's reader files. Prints a Markdown table: target, file, lines covered /
total, percent. Exit status 1 when a replay fails (a finding) or a tool is missing.
"""
import json
import os
import shutil
import subprocess
import sys

# The reader files behind each target's gate (the parser the target reaches after the checksum
# gate, or the JSON reader). Whole files: the writers in the same files count as well, reached
# only by the round trips.
CONTAINER = ["formats/container.cpp"]
VDB = ["formats/vdb_read.cpp", "formats/vdb_integrity.cpp", "formats/vdb_windowed.cpp", "formats/vdb_chunks.cpp"]
MESH = ["lib/mesh/mesh.cpp", "lib/mesh/import.cpp", "lib/mesh/gltf_check.cpp", "lib/mesh/collada_check.cpp",
        "lib/mesh/ply_check.cpp"]
READERS = {
    "hps": ["formats/shell.cpp"] + CONTAINER,
    "hcfm": ["formats/cfm.cpp"] + CONTAINER,
    "hoct": ["formats/octree.cpp"] + CONTAINER,
    "hsmp": ["formats/sampler.cpp", "lib/field/field.cpp"] + CONTAINER,
    "vdb_field": VDB + ["lib/query/static_field.cpp"],
    "vdb_shell_field": VDB + ["lib/pipeline/stage_pointshell.cpp"],
    "vdb_gradient": VDB,
    "pipeline": ["lib/pipeline/pipeline.cpp", "lib/pipeline/stage.cpp"],
    "manifest": ["lib/pipeline/manifest.cpp"],
    "poses": ["lib/query/scenario.cpp"],
    "scene": ["lib/scene/scene_file.cpp"],
    "mesh_obj": MESH + ["lib/mesh/obj_native.cpp"],
    "mesh_stl": MESH,
    "mesh_ply": MESH,
    "mesh_off": MESH,
    "mesh_gltf": MESH,
    "mesh_glb": MESH,
    "mesh_dae": MESH,
    "mesh_3mf": MESH,
    "bullet_scene": ["lib/bullet/scene.cpp"],
    "hacd_cache": ["lib/bullet/hacd.cpp"],
    # In the OpenCASCADE module (hapticprep_cad_coverage.so next to the binary), and the soup's path.
    "step": ["lib/mesh/cad_occt.cpp", "lib/mesh/cad_text.cpp", "lib/mesh/cad_soup.cpp", "lib/mesh/cad_guard.cpp", "lib/mesh/mesh.cpp"],
    "iges": ["lib/mesh/cad_occt.cpp", "lib/mesh/cad_text.cpp", "lib/mesh/cad_soup.cpp", "lib/mesh/cad_guard.cpp", "lib/mesh/mesh.cpp"],
}
# The files of the OpenCASCADE module: compiled into a module of their own, not into the binary.
CAD_MODULE = ["lib/mesh/cad_occt.cpp", "lib/mesh/cad_text.cpp", "lib/mesh/cad_soup.cpp", "lib/mesh/cad_guard.cpp"]


def tool(name):
    for candidate in (name + "-14", name):
        path = shutil.which(candidate)
        if path:
            return path
    sys.exit(f"fuzz_coverage: {name}-14 not found (scripts/install-deps.sh installs llvm-14)")


def line_summary(llvm_cov, binary, profdata, sources, objects=()):
    """{source: (covered, total)} for the given sources, from llvm-cov export (of the binary and the
    modules in `objects`)."""
    more = [a for o in objects for a in ("-object", o)]
    out = subprocess.run([llvm_cov, "export", "-summary-only", "-instr-profile=" + profdata, binary, *more, *sources],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    found = {}
    for f in json.loads(out)["data"][0]["files"]:
        lines = f["summary"]["lines"]
        for source in sources:
            if os.path.samefile(f["filename"], source):
                found[source] = (lines["covered"], lines["count"])
    return found


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    binary, targets = os.path.abspath(argv[1]), argv[2:] or list(READERS)
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if not os.path.exists(binary):
        sys.exit(f"fuzz_coverage: {binary} not found (scripts/fuzz_coverage.sh builds it)")
    profdata_tool, llvm_cov = tool("llvm-profdata"), tool("llvm-cov")
    profiles = os.path.join(os.path.dirname(binary), "coverage")
    os.makedirs(profiles, exist_ok=True)
    os.chdir(root)
    rows, status = [], 0
    for target in targets:
        if target not in READERS:
            sys.exit(f"fuzz_coverage: unknown target '{target}' (targets: {' '.join(READERS)})")
        inputs = [f"tests/fuzz/{kind}/{target}" for kind in ("seeds", "corpus", "regressions")]
        inputs = [d for d in inputs if os.path.isdir(d)]
        # STEP and IGES: the binary loads the module built with coverage; each writes its own profile.
        module = os.path.join(os.path.dirname(binary), "hapticprep_cad_coverage.so")
        cad = target in ("step", "iges")
        if cad and not os.path.exists(module):
            print(f"fuzz_coverage: {target}: no {module} (a build without OpenCASCADE), skipped", file=sys.stderr)
            continue
        for old in os.listdir(profiles):
            if old.startswith(target + "-") and old.endswith(".profraw"):
                os.remove(os.path.join(profiles, old))
        raw = os.path.join(profiles, target + "-%m.profraw")
        merged = os.path.join(profiles, target + ".profdata")
        env = dict(os.environ, LLVM_PROFILE_FILE=raw, **({"HP_CAD_MODULE": module} if cad else {}))
        run = subprocess.run([binary, target, *inputs], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace")
        if run.returncode == 2 and "unknown target" in run.stderr:  # lib/bullet not built
            print(f"fuzz_coverage: {target}: not in this build, skipped", file=sys.stderr)
            continue
        if run.returncode != 0:
            print(f"fuzz_coverage: the replay of {target} failed (exit {run.returncode}):\n{run.stderr[-2000:]}",
                  file=sys.stderr)
            status = 1
            continue
        raws = [os.path.join(profiles, f) for f in os.listdir(profiles) if f.startswith(target + "-") and f.endswith(".profraw")]
        subprocess.run([profdata_tool, "merge", "-sparse", "-o", merged, *raws], check=True)
        summary = line_summary(llvm_cov, binary, merged, READERS[target], [module] if cad else [])
        for source in READERS[target]:
            covered, total = summary.get(source, (0, 0))
            share = f"{100.0 * covered / total:.1f} %" if total else "-"
            rows.append((target, source, f"{covered} / {total}", share))
    widths = [max(len(r[i]) for r in rows + [("target", "file", "lines covered / total", "%")]) for i in range(4)]
    for row in [("target", "file", "lines covered / total", "%"), tuple("-" * w for w in widths)] + rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
