#!/usr/bin/env python3
"""The assembly of the scene benches: 10 distinct geometries placed 1,000 times, as one glTF file.

  make_bench_assembly.py MESHES_DIR OUT.gltf [--parts 1000] [--seed 1]
        [--alone DIR]     also write each geometry alone (DIR/g<i>.gltf, one node at the origin)

Geometries: the Stanford bunny, fandisk and rocker-arm (MESHES_DIR), and seven closed sample meshes
(bracket, gear, sphere, seam-cube, two-boxes, inverted-box, torus), each scaled to the bunny's
bounding-box diagonal and centred at its box centre. Part i uses geometry i % 10 and stands on a
grid cell 1.2 bunny diagonals wide, turned by a random rotation (seeded): neighbours do not touch.
"""
import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "cli"))
from make_assembly import gltf  # noqa: E402

SAMPLES = ["bracket.obj", "gear.obj", "sphere.obj", "seam-cube.obj", "two-boxes.obj", "inverted-box.obj", "torus.off"]


def read_mesh(path):
    verts, tris = [], []
    with open(path) as f:
        if path.endswith(".off"):
            tokens = [t for line in f for t in line.split("#")[0].split()]
            assert tokens[0] == "OFF"
            nv, nf = int(tokens[1]), int(tokens[2])
            pos = 4
            for _ in range(nv):
                verts.append(tuple(float(x) for x in tokens[pos:pos + 3]))
                pos += 3
            for _ in range(nf):
                k = int(tokens[pos])
                idx = [int(x) for x in tokens[pos + 1:pos + 1 + k]]
                tris += [(idx[0], idx[j], idx[j + 1]) for j in range(1, k - 1)]
                pos += 1 + k
            return verts, tris
        for line in f:
            p = line.split()
            if not p:
                continue
            if p[0] == "v":
                verts.append(tuple(float(x) for x in p[1:4]))
            elif p[0] == "f":
                idx = [int(x.split("/")[0]) - 1 for x in p[1:]]
                tris += [(idx[0], idx[j], idx[j + 1]) for j in range(1, len(idx) - 1)]
    return verts, tris


def normalised(mesh, diagonal):
    verts, tris = mesh
    lo = [min(v[k] for v in verts) for k in range(3)]
    hi = [max(v[k] for v in verts) for k in range(3)]
    c = [(lo[k] + hi[k]) / 2 for k in range(3)]
    s = diagonal / math.dist(lo, hi)
    return [tuple((v[k] - c[k]) * s for k in range(3)) for v in verts], tris


def random_quaternion(rng):  # Shoemake's uniform rotation, glTF order x, y, z, w
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    a, b = math.sqrt(1 - u1), math.sqrt(u1)
    return [a * math.sin(2 * math.pi * u2), a * math.cos(2 * math.pi * u2), b * math.sin(2 * math.pi * u3),
            b * math.cos(2 * math.pi * u3)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("meshes")
    ap.add_argument("out")
    ap.add_argument("--parts", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--alone")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    bunny = read_mesh(os.path.join(a.meshes, "stanford-bunny.obj"))
    lo = [min(v[k] for v in bunny[0]) for k in range(3)]
    hi = [max(v[k] for v in bunny[0]) for k in range(3)]
    diagonal = math.dist(lo, hi)
    sources = [os.path.join(a.meshes, m) for m in ("stanford-bunny.obj", "fandisk.obj", "rocker-arm.obj")]
    sources += [os.path.join(here, "..", "sample_meshes", m) for m in SAMPLES]
    meshes = [normalised(read_mesh(p), diagonal) for p in sources]
    rng = random.Random(a.seed)
    side = math.ceil(a.parts ** (1 / 3))
    step = 1.2 * diagonal
    nodes = []
    for i in range(a.parts):
        x, y, z = i % side, (i // side) % side, i // (side * side)
        nodes.append({"name": "part%04d" % i, "mesh": i % len(meshes),
                      "translation": [x * step, y * step, z * step], "rotation": random_quaternion(rng)})
    gltf(meshes, nodes, a.out)
    if a.alone:
        os.makedirs(a.alone, exist_ok=True)
        for g, m in enumerate(meshes):
            gltf([m], [{"name": "g%d" % g, "mesh": 0}], os.path.join(a.alone, "g%d.gltf" % g))


if __name__ == "__main__":
    main()
