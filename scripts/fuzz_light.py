#!/usr/bin/env python3
"""One fuzz binary against the release build: only a few files compiled by clang, the rest linked
from the release build's libraries (docs/fuzzing.md, "Light builds").

    scripts/fuzz_light.py coverage BUILD OUT
    scripts/fuzz_light.py canary BUILD OUT TARGET [FILE]
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
    file; the other modules are not instrumented (the fuzzer gets no coverage from them). FILE: another
    reader file with a canary of the target (MORE_CANARIES; OUT/fuzz_canary_TARGET-STEM), compiled with
    the target's other reader files as for `target`. The step and
    iges canaries are in the OpenCASCADE module: OUT/hapticprep_cad_canary.so, as for `target`.
target: OUT/fuzz_TARGET, the same without the canary: the reader files behind the target's gate
    (READERS), the entry file and the libFuzzer main compiled with the fuzzer and the sanitizers.
    For step and iges also OUT/hapticprep_cad.so, the OpenCASCADE module (lib/mesh/cad_occt.cpp,
    cad_text.cpp, cad_soup.cpp, cad_guard.cpp) compiled the same way and linked as the build links its own; the binary exports
    the sanitizers' symbols to it (-rdynamic) and loads it when HP_CAD_MODULE names it.
"""
import hashlib
import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_coverage import CAD_MODULE, READERS  # noqa: E402

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
    "mesh_obj": "lib/mesh/mesh.cpp",
    "mesh_stl": "lib/mesh/mesh.cpp",
    "mesh_ply": "lib/mesh/import.cpp",
    "mesh_off": "lib/mesh/import.cpp",
    "mesh_gltf": "lib/mesh/gltf_check.cpp",
    "mesh_glb": "lib/mesh/import.cpp",
    "mesh_dae": "lib/mesh/collada_check.cpp",
    "mesh_3mf": "lib/mesh/import.cpp",
    "step": "lib/mesh/cad_occt.cpp",
    "iges": "lib/mesh/cad_occt.cpp",
}
# Second canaries of a target, in another reader file (the canary FILE argument): the VDB grid
# reads behind the framing walk.
MORE_CANARIES = {"vdb_field": ["formats/vdb_read.cpp"], "vdb_shell_field": ["formats/vdb_read.cpp"],
                 "vdb_gradient": ["formats/vdb_read.cpp"]}
# The file of each target's entry function (the groups of tests/fuzz/fuzz.cmake).
GROUPS = {
    "targets_container.cpp": ["hps", "hcfm", "hoct", "hsmp"],
    "targets_vdb.cpp": ["vdb_field", "vdb_shell_field", "vdb_gradient"],
    "targets_text.cpp": ["pipeline", "manifest", "poses", "scene"],
    "targets_mesh.cpp": ["mesh_obj", "mesh_stl", "mesh_ply", "mesh_off", "mesh_gltf", "mesh_glb", "mesh_dae",
                         "mesh_3mf", "step", "iges"],
    "targets_bullet.cpp": ["bullet_scene", "hacd_cache"],
}
ENTRY = {target: entry for entry, targets in GROUPS.items() for target in targets}
FUZZ_FLAGS = ["-O1", "-gline-tables-only", "-DNDEBUG", "-fsanitize=fuzzer-no-link,address,undefined",
              "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined",
              "-fsanitize-ignorelist=" + os.path.join(ROOT, "tests", "fuzz", "ubsan_ignore.txt")]
COVERAGE_FLAGS = ["-O0", "-fprofile-instr-generate", "-fcoverage-mapping"]
# STEP and IGES: the import layer and lib/mesh/cad.cpp in the binary, the OpenCASCADE module's own
# files (fuzz_coverage.CAD_MODULE) in OUT/hapticprep_cad.so.
CAD_READERS = ["lib/mesh/mesh.cpp", "lib/mesh/import.cpp", "lib/mesh/gltf_check.cpp", "lib/mesh/collada_check.cpp",
               "lib/mesh/ply_check.cpp", "lib/mesh/cad.cpp"]


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


def link_libraries(build, target, drop=()):
    """The libraries and link flags of the build's `target` (its link.txt), without its objects,
    its output and its optimisation flags, nor the arguments in `drop`."""
    with open(os.path.join(build, "CMakeFiles", target + ".dir", "link.txt")) as f:
        args = shlex.split(f.read())
    libs, i = [], 1
    while i < len(args):
        a = args[i]
        if a == "-o":
            i += 2
            continue
        if not a.endswith(".o") and a not in drop and not a.startswith(("-O", "-DNDEBUG")):
            libs.append(a)
        i += 1
    return libs


def link_cad_module(build, out, objects, file_name, flags=()):
    """OUT/FILE_NAME, the OpenCASCADE module from `objects`, with the libraries of the build's own
    module. Its sanitizer and libFuzzer symbols stay undefined: the fuzz binary exports them
    (-rdynamic)."""
    libs = link_libraries(build, "hapticprep_cad", ("-Wl,--no-undefined", "-shared", "-fPIC"))
    module = os.path.join(os.path.abspath(out), file_name)
    subprocess.run(["clang++", "-shared", "-fPIC", *flags, *objects, "-o", module, *libs], check=True, cwd=build)
    return module


def link(build, out, name, objects, flags):
    binary = os.path.join(os.path.abspath(out), name)
    subprocess.run(["clang++", *flags, *objects, "-o", binary, *link_libraries(build, "hp_fuzz_replay")], check=True,
                   cwd=build)
    return binary


def main(argv):
    if len(argv) < 4 or argv[1] not in ("coverage", "canary", "target") or \
            (argv[1] != "coverage" and len(argv) not in ((5, 6) if argv[1] == "canary" else (5,))):
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
        # The readers this build compiles (lib/bullet only with Bullet); the OpenCASCADE module's
        # files (with OpenCASCADE) into OUT/hapticprep_cad_coverage.so, which the replay of step and
        # iges loads (scripts/fuzz_coverage.py).
        built = set(compiled_files(build))
        readers = sorted(({f for files in READERS.values() for f in files} & built) - set(CAD_MODULE))
        sources = [(f, f, ()) for f in ["tests/fuzz/replay_main.cpp", *readers]]
        objects = compile_all(build, out, sources, COVERAGE_FLAGS)
        if set(CAD_MODULE) <= built:
            module = compile_all(build, out, [(f, f, ["-fPIC"]) for f in CAD_MODULE], COVERAGE_FLAGS)
            link_cad_module(build, out, module, "hapticprep_cad_coverage.so", ["-fprofile-instr-generate"])
        print(link(build, out, "hp_fuzz_coverage", objects, ["-fprofile-instr-generate"]))
        return
    target = argv[4]
    known = CANARY if mode == "canary" else ENTRY
    if target not in known:
        sys.exit(f"fuzz_light: no light {mode} binary of '{target}' (targets: {' '.join(known)})")
    entry = ENTRY[target]
    cad = target in ("step", "iges")
    if mode == "canary":
        reader, name = CANARY[target], "fuzz_canary_" + target
        if len(argv) > 5:
            if argv[5] not in MORE_CANARIES.get(target, []):
                sys.exit(f"fuzz_light: no canary of '{target}' in {argv[5]}")
            reader, name = argv[5], name + "-" + os.path.splitext(os.path.basename(argv[5]))[0]
            # With the target's other reader files, as `target` compiles them: vdb_read.cpp compiled
            # by clang beside GCC's vdb_integrity.cpp and vdb_windowed.cpp stops at a misaligned TBB
            # iterator (UndefinedBehaviorSanitizer) on the first input.
            readers = [(f, f, ["-DHP_FUZZ_CANARY=1"] if f == reader else []) for f in READERS[target]]
        else:
            readers = [] if cad else [(reader, reader, ["-DHP_FUZZ_CANARY=1"])]
    else:
        files = CAD_READERS if target in ("step", "iges") else READERS[target]
        readers, name = [(f, f, ()) for f in files], "fuzz_" + target
    sources = [*readers, ("tests/fuzz/" + entry, "tests/fuzz/" + entry, ()),
               ("tests/fuzz/fuzz_main.cpp", "tests/fuzz/replay_main.cpp",
                [f"-DHP_FUZZ_ENTRY={target}", *(["-DHP_FUZZ_VDB_MUTATOR=1"] if target.startswith("vdb_") else [])])]
    objects = compile_all(build, out, sources, FUZZ_FLAGS)
    flags = ["-fsanitize=fuzzer,address,undefined"]
    if cad:
        canary = ["-DHP_FUZZ_CANARY=1"] if mode == "canary" else []
        module = compile_all(build, out, [(f, f, ["-fPIC", *(canary if f == CANARY[target] else [])]) for f in CAD_MODULE],
                             FUZZ_FLAGS)
        print(link_cad_module(build, out, module, "hapticprep_cad_canary.so" if canary else "hapticprep_cad.so"),
              file=sys.stderr)
        flags.append("-rdynamic")
    print(link(build, out, name, objects, flags))


if __name__ == "__main__":
    main(sys.argv)
