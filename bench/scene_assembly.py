#!/usr/bin/env python3
"""Writes the scene benchmark's assembly (bench/scene.sh): a glTF of N placed parts made of the
given OBJ meshes, each scaled to the first mesh's longest side and centred on its box centre,
placed on a cubic lattice (spacing SPACING times that side) at seeded random rotations, part i
an instance of mesh i mod len(meshes).

  scene_assembly.py OUT.gltf N SPACING MESH.obj...
"""
import base64
import json
import math
import random
import struct
import sys


def read_obj(path):
    verts, tris = [], []
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "v":
                verts.append(tuple(float(x) for x in w[1:4]))
            elif w[0] == "f":
                idx = [int(x.split("/")[0]) for x in w[1:]]
                idx = [i - 1 if i > 0 else len(verts) + i for i in idx]
                tris += [(idx[0], idx[k], idx[k + 1]) for k in range(1, len(idx) - 1)]
    return verts, tris


def random_quaternion(rng):  # Shoemake; glTF order x, y, z, w
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    a, b = math.sqrt(1 - u1), math.sqrt(u1)
    return [a * math.sin(2 * math.pi * u2), a * math.cos(2 * math.pi * u2), b * math.sin(2 * math.pi * u3),
            b * math.cos(2 * math.pi * u3)]


def main():
    out, n, spacing, paths = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
    meshes = [read_obj(p) for p in paths]
    def extent(v):
        lo = [min(p[k] for p in v) for k in range(3)]
        hi = [max(p[k] for p in v) for k in range(3)]
        return lo, hi
    lo0, hi0 = extent(meshes[0][0])
    size = max(hi0[k] - lo0[k] for k in range(3))
    blob, views, accessors, out_meshes = b"", [], [], []
    for verts, tris in meshes:
        lo, hi = extent(verts)
        s = size / max(hi[k] - lo[k] for k in range(3))
        c = [(lo[k] + hi[k]) / 2 for k in range(3)]
        v = [tuple((p[k] - c[k]) * s for k in range(3)) for p in verts]
        pos = b"".join(struct.pack("<3f", *p) for p in v)
        idx = b"".join(struct.pack("<3I", *t) for t in tris)
        vlo, vhi = extent(v)
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(pos), "target": 34962})
        blob += pos
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(idx), "target": 34963})
        blob += idx
        accessors.append({"bufferView": len(views) - 2, "componentType": 5126, "count": len(v), "type": "VEC3",
                          "min": vlo, "max": vhi})
        accessors.append({"bufferView": len(views) - 1, "componentType": 5125, "count": 3 * len(tris), "type": "SCALAR"})
        out_meshes.append({"primitives": [{"attributes": {"POSITION": len(accessors) - 2}, "indices": len(accessors) - 1}]})
    rng = random.Random(1)
    side = math.ceil(round(n ** (1 / 3), 9))
    nodes = []
    for i in range(n):
        x, y, z = i % side, (i // side) % side, i // (side * side)
        nodes.append({"name": "part%04d" % i, "mesh": i % len(meshes),
                      "translation": [spacing * size * x, spacing * size * y, spacing * size * z],
                      "rotation": random_quaternion(rng)})
    doc = {"asset": {"version": "2.0", "generator": "hapticprep bench"}, "scene": 0, "scenes": [{"nodes": [0]}],
           "nodes": [{"name": "scene", "children": list(range(1, n + 1))}] + nodes, "meshes": out_meshes,
           "accessors": accessors, "bufferViews": views,
           "buffers": [{"byteLength": len(blob), "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode()}]}
    with open(out, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
