#!/usr/bin/env python3
"""One fuzz binary against the release build: only a few files compiled by clang, the rest linked
from the release build's libraries (docs/fuzzing.md, "Light builds").

    scripts/fuzz_light.py coverage BUILD OUT
    scripts/fuzz_light.py canary BUILD OUT TARGET
    scripts/fuzz_light.py target BUILD OUT TARGET

BUILD is a configured and built release build (GCC; hp_fuzz_replay built): its
compile_commands.json gives each file's include directories and definitions, the link command of
hp_fuzz_replay the libraries. Objects of the files compiled here come first on the link line, so
the libraries' copies of them are never pulled in.

coverage: OUT/hp_fuzz_coverage, the replay (tests/fuzz/replay_main.cpp) with the reader files
    behind the gates (scripts/fuzz_coverage.py READERS) compiled with clang's source-based
    coverage (-O0 -fprofile-instr-generate -fcoverage-mapping).
canary: OUT/fuzz_canary_TARGET, the libFuzzer binary of TARGET (-fsanitize=fuzzer,address,undefined)
    with the reader file that holds its canary compiled with HP_FUZZ_CANARY, and the target's entry
    file; the other modules are not instrumented (the fuzzer gets no coverage from them).
target: OUT/fuzz_TARGET, the same without the canary: the reader files behind the target's gate
    (READERS), the entry file and the libFuzzer main compiled with the fuzzer and the sanitizers.
"""
import hashlib
import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_coverage import READERS  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
# The file that holds each target's canary (as HP_FUZZ_CANARY_<target> in tests/fuzz/fuzz.cmake).
CANARY = {
    "hps": "formats/shell.cpp",
    "hcfm": "formats/cfm.cpp",
    "hoct": "formats/octree.cpp",
    "hsmp": "formats/sampler.cpp",
    "vdb_field": "formats/vdb_integrity.cpp",
    "vdb_shell_field": "formats/vdb_integrity.cpp",
    "vdb_gradient": "formats/vdb_integrity.cpp",
    "pipeline": "lib/pipeline/stage.cpp",
    "manifest": "lib/pipeline/manifest.cpp",
    "poses": "lib/query/scenario.cpp",
    "scene": "lib/scene/scene_file.cpp",
    "bullet_scene": "lib/bullet/scene.cpp",
    "hacd_cache": "lib/bullet/hacd.cpp",
}
# The file of each target's entry function (the groups of tests/fuzz/fuzz.cmake).
GROUPS = {
    "targets_container.cpp": ["hps", "hcfm", "hoct", "hsmp"],
    "targets_vdb.cpp": ["vdb_field", "vdb_shell_field", "vdb_gradient"],
    "targets_text.cpp": ["pipeline", "manifest", "poses", "scene"],
    "targets_mesh.cpp": ["mesh_obj", "mesh_stl", "mesh_ply", "mesh_off", "mesh_gltf", "mesh_glb", "mesh_dae",
                         "mesh_3mf"],
    "targets_bullet.cpp": ["bullet_scene", "hacd_cache"],
}
ENTRY = {target: entry for entry, targets in GROUPS.items() for target in targets}
FUZZ_FLAGS = ["-O1", "-gline-tables-only", "-DNDEBUG", "-fsanitize=fuzzer-no-link,address,undefined",
              "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
COVERAGE_FLAGS = ["-O0", "-fprofile-instr-generate", "-fcoverage-mapping"]


def compiled_files(build):
    with open(os.path.join(build, "compile_commands.json")) as f:
        return {os.path.relpath(os.path.normpath(e["file"]), ROOT): e["command"] for e in json.load(f)}


def include_flags(build, source):
    """The -D, -I and -std flags of `source` in the build's compile database."""
    command = compiled_files(build).get(source)
    if not command:
        sys.exit(f"fuzz_light: {source} is not in {build}/compile_commands.json (build hp_fuzz_replay there)")
    args = shlex.split(command)
    keep, i = [], 0
    while i < len(args):
        a = args[i]
        if a in ("-isystem", "-I", "-D"):
            keep += [a, args[i + 1]]
            i += 1
        elif a.startswith(("-D", "-I", "-std=")):
            keep.append(a)
        i += 1
    return keep


def compile_all(build, out, sources, flags):
    """Objects of (source, file whose include flags it takes, extra flags); an object is kept
    while its command is the same and it is newer than its source (headers are not tracked)."""
    objects = []
    for source, like, extra in sources:
        cmd = ["clang++", *include_flags(build, like), *flags, *extra, "-c", os.path.join(ROOT, source)]
        key = hashlib.sha1(" ".join(cmd).encode()).hexdigest()[:12]
        obj = os.path.join(out, "objects", source.replace("/", "_") + "." + key + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(os.path.join(ROOT, source)):
            print("fuzz_light: compiling", source, file=sys.stderr)
            subprocess.run([*cmd, "-o", obj], check=True)
        objects.append(obj)
    return objects


def link(build, out, name, objects, flags):
    with open(os.path.join(build, "CMakeFiles", "hp_fuzz_replay.dir", "link.txt")) as f:
        args = shlex.split(f.read())
    libs, i = [], 1
    while i < len(args):
        a = args[i]
        if a == "-o":
            i += 2
            continue
        if not a.endswith(".o") and not a.startswith(("-O", "-DNDEBUG")):
            libs.append(a)
        i += 1
    binary = os.path.join(os.path.abspath(out), name)
    subprocess.run(["clang++", *flags, *objects, "-o", binary, *libs], check=True, cwd=build)
    return binary


def main(argv):
    if len(argv) < 4 or argv[1] not in ("coverage", "canary", "target") or (argv[1] != "coverage" and len(argv) != 5):
        sys.exit(__doc__)
    mode, build, out = argv[1], os.path.abspath(argv[2]), os.path.abspath(argv[3])
    # With HP_VDB_MODULE (the default), the build's programs reach the VDB readers through the module
    # hapticprep_vdb.so, which the files compiled here would never replace: refuse such a build.
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        if any(line.strip() == "HP_VDB_MODULE:BOOL=ON" for line in f):
            sys.exit(f"fuzz_light: {build} loads the VDB readers as a module (HP_VDB_MODULE=ON), which this "
                     "binary would not instrument; use a build configured with -DHP_VDB_MODULE=OFF "
                     "(make fuzz-coverage makes build-fuzz-light)")
    os.makedirs(out, exist_ok=True)
    if mode == "coverage":
        # The readers this build compiles (lib/bullet only with Bullet).
        readers = sorted({f for files in READERS.values() for f in files} & set(compiled_files(build)))
        sources = [(f, f, ()) for f in ["tests/fuzz/replay_main.cpp", *readers]]
        objects = compile_all(build, out, sources, COVERAGE_FLAGS)
        print(link(build, out, "hp_fuzz_coverage", objects, ["-fprofile-instr-generate"]))
        return
    target = argv[4]
    known = CANARY if mode == "canary" else ENTRY
    if target not in known:
        sys.exit(f"fuzz_light: no light {mode} binary of '{target}' (targets: {' '.join(known)})")
    entry = ENTRY[target]
    if mode == "canary":
        reader = CANARY[target]
        readers, name = [(reader, reader, ["-DHP_FUZZ_CANARY=1"])], "fuzz_canary_" + target
    else:
        readers, name = [(f, f, ()) for f in READERS[target]], "fuzz_" + target
    sources = [*readers, ("tests/fuzz/" + entry, "tests/fuzz/" + entry, ()),
               ("tests/fuzz/fuzz_main.cpp", "tests/fuzz/replay_main.cpp", [f"-DHP_FUZZ_ENTRY={target}"])]
    objects = compile_all(build, out, sources, FUZZ_FLAGS)
    print(link(build, out, name, objects, ["-fsanitize=fuzzer,address,undefined"]))


if __name__ == "__main__":
    main(sys.argv)
