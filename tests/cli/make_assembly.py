#!/usr/bin/env python3
"""Writes the test assemblies of the assembly tests (glTF 2.0 with an embedded buffer, OBJ groups).

  make_assembly.py pegs OUT.gltf N      a 60 x 60 x 10 mm plate and N pegs (r 3, h 20 mm), one mesh
                                        shared by every peg node (instancing), each peg at its own
                                        translation and rotation about z, sunk 5 mm into the plate
  make_assembly.py baked OUT.gltf       a box instanced three times: plain, scaled by 2 (uniform),
                                        and mirrored in x (a reflection)
  make_assembly.py nan OUT.gltf         a box whose node translation is huge enough to overflow (inf)
  make_assembly.py groups OUT.obj       two boxes as `o` groups and a third as a `g` group
  make_assembly.py broken OUT.gltf      a box and a part whose triangles all have zero area
  make_assembly.py allbroken OUT.gltf   two parts whose triangles all have zero area
Units: metres in the files (the mm figures above times 0.001).
"""
import base64
import json
import math
import struct
import sys


def box(x0, y0, z0, x1, y1, z1):
    v = [(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0),
         (x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]
    t = [(0, 2, 1), (0, 3, 2), (4, 5, 6), (4, 6, 7), (0, 1, 5), (0, 5, 4),
         (1, 2, 6), (1, 6, 5), (2, 3, 7), (2, 7, 6), (3, 0, 4), (3, 4, 7)]
    return v, t


def cylinder(r, h, n):
    v = [(0.0, 0.0, 0.0), (0.0, 0.0, h)]
    for i in range(n):
        a = 2 * math.pi * i / n
        v += [(r * math.cos(a), r * math.sin(a), 0.0), (r * math.cos(a), r * math.sin(a), h)]
    t = []
    for i in range(n):
        j = (i + 1) % n
        b0, t0, b1, t1 = 2 + 2 * i, 3 + 2 * i, 2 + 2 * j, 3 + 2 * j
        t += [(0, b1, b0), (1, t0, t1), (b0, b1, t1), (b0, t1, t0)]
    return v, t


def gltf(meshes, nodes, path):
    """meshes: [(verts, tris)]; nodes: [dict] (glTF node objects, 'mesh' indices into meshes)."""
    blob = b""
    accessors, views, out_meshes = [], [], []
    for verts, tris in meshes:
        pos = b"".join(struct.pack("<3f", *p) for p in verts)
        idx = b"".join(struct.pack("<3I", *t) for t in tris)
        lo = [min(p[k] for p in verts) for k in range(3)]
        hi = [max(p[k] for p in verts) for k in range(3)]
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(pos), "target": 34962})
        blob += pos
        views.append({"buffer": 0, "byteOffset": len(blob), "byteLength": len(idx), "target": 34963})
        blob += idx
        accessors.append({"bufferView": len(views) - 2, "componentType": 5126, "count": len(verts),
                          "type": "VEC3", "min": lo, "max": hi})
        accessors.append({"bufferView": len(views) - 1, "componentType": 5125, "count": 3 * len(tris),
                          "type": "SCALAR"})
        out_meshes.append({"primitives": [{"attributes": {"POSITION": len(accessors) - 2},
                                           "indices": len(accessors) - 1}]})
    doc = {"asset": {"version": "2.0", "generator": "hapticprep tests"},
           "scene": 0, "scenes": [{"nodes": [0]}],
           "nodes": [{"name": "assembly", "children": list(range(1, len(nodes) + 1))}] + nodes,
           "meshes": out_meshes, "accessors": accessors, "bufferViews": views,
           "buffers": [{"byteLength": len(blob),
                        "uri": "data:application/octet-stream;base64," + base64.b64encode(blob).decode()}]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def z_rotation(angle):
    return [0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)]  # glTF: x, y, z, w


def main():
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "pegs":
        n = int(sys.argv[3])
        plate = box(-0.03, -0.03, 0.0, 0.03, 0.03, 0.01)
        peg = cylinder(0.003, 0.02, 16)
        nodes = [{"name": "plate", "mesh": 0}]
        side = math.ceil(math.sqrt(n))
        for i in range(n):
            x = -0.02 + 0.04 * (i % side) / max(side - 1, 1)
            y = -0.02 + 0.04 * (i // side) / max(side - 1, 1)
            nodes.append({"name": "peg", "mesh": 1, "translation": [x, y, 0.005], "rotation": z_rotation(0.3 * i)})
        gltf([plate, peg], nodes, path)
    elif kind == "baked":
        b = box(0.0, 0.0, 0.0, 0.01, 0.02, 0.03)
        nodes = [{"name": "plain", "mesh": 0, "translation": [0.0, 0.0, 0.0]},
                 {"name": "double", "mesh": 0, "translation": [0.05, 0.0, 0.0], "scale": [2.0, 2.0, 2.0]},
                 {"name": "mirror", "mesh": 0, "translation": [0.1, 0.0, 0.0], "scale": [-1.0, 1.0, 1.0]}]
        gltf([b], nodes, path)
    elif kind == "nan":
        gltf([box(0, 0, 0, 1, 1, 1)], [{"name": "lost", "mesh": 0, "translation": [1e39, 0.0, 0.0]}], path)
    elif kind in ("broken", "allbroken"):
        flat = ([(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (2.0, 0.0, 0.0), (3.0, 0.0, 0.0)], [(0, 1, 2), (1, 2, 3)])
        first = flat if kind == "allbroken" else box(0.0, 0.0, 0.0, 0.01, 0.01, 0.01)
        gltf([first, flat], [{"name": "first", "mesh": 0}, {"name": "flat", "mesh": 1, "translation": [0.05, 0.0, 0.0]}], path)
    elif kind == "groups":
        with open(path, "w") as f:
            f.write("# three boxes: two `o` objects and a `g` group\n")
            base = 0
            for name, (x0, kw) in zip(["left", "middle", "right"], [(0.0, "o"), (2.0, "o"), (4.0, "g")]):
                v, t = box(x0, 0.0, 0.0, x0 + 1.0, 1.0, 1.0)
                f.write(f"{kw} {name}\n")
                for p in v:
                    f.write("v %g %g %g\n" % p)
                for a, b_, c in t:
                    f.write(f"f {a + 1 + base} {b_ + 1 + base} {c + 1 + base}\n")
                base += len(v)
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
