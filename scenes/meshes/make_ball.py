#!/usr/bin/env python3
"""Writes ball.obj: an icosphere of radius 0.5 m (4 subdivisions of the icosahedron, 2562 vertices,
5120 triangles, counter-clockwise seen from outside), the bouncing ball of scenes/bouncing-ball.json.
Its facets lie at most 0.36 mm inside the sphere. Usage: make_ball.py > ball.obj"""
import math

t = (1 + 5 ** 0.5) / 2
verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
         (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2), (10, 7, 6),
         (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10),
         (8, 6, 7), (9, 8, 1)]
verts = [tuple(c / math.sqrt(sum(x * x for x in v)) for c in v) for v in verts]
for _ in range(4):
    cache, out = {}, []
    def mid(a, b):
        key = (min(a, b), max(a, b))
        if key not in cache:
            m = [(verts[a][i] + verts[b][i]) / 2 for i in range(3)]
            n = math.sqrt(sum(x * x for x in m))
            verts.append(tuple(x / n for x in m))
            cache[key] = len(verts) - 1
        return cache[key]
    for a, b, c in faces:
        ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
        out += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
    faces = out
print("# icosphere, radius 0.5 m, 4 subdivisions (scenes/meshes/make_ball.py)")
for v in verts:
    print("v %.9f %.9f %.9f" % tuple(0.5 * x for x in v))
for a, b, c in faces:
    print("f %d %d %d" % (a + 1, b + 1, c + 1))
