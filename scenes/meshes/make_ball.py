#!/usr/bin/env python3
"""Writes an icosphere of radius 0.5 m (N subdivisions of the icosahedron: 10 * 4^N + 2 vertices,
20 * 4^N triangles, counter-clockwise seen from outside), the bouncing ball of
scenes/bouncing-ball.json, and prints to stderr how far its facets lie inside the sphere.
Usage: make_ball.py [N] > ball.obj (N = 4 by default)"""
import math
import sys

subdivisions = int(sys.argv[1]) if len(sys.argv) > 1 else 4

t = (1 + 5 ** 0.5) / 2
verts = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
         (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]
faces = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2), (10, 7, 6),
         (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5), (2, 4, 11), (6, 2, 10),
         (8, 6, 7), (9, 8, 1)]
verts = [tuple(c / math.sqrt(sum(x * x for x in v)) for c in v) for v in verts]
for _ in range(subdivisions):
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
# The deepest point of a facet below the sphere: its centroid direction's distance, the plane's
# distance from the centre being the least over the facet (a facet's closest point to the centre).
inside = 0.0
for a, b, c in faces:
    p, q, r = verts[a], verts[b], verts[c]
    u = [q[i] - p[i] for i in range(3)]
    v = [r[i] - p[i] for i in range(3)]
    n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
    inside = max(inside, 1 - abs(sum(n[i] * p[i] for i in range(3))) / math.sqrt(sum(x * x for x in n)))
sys.stderr.write("%d subdivisions, %d vertices, %d triangles: facets at most %.3f mm inside the sphere\n"
                 % (subdivisions, len(verts), len(faces), 0.5 * inside * 1000))
print("# icosphere, radius 0.5 m, %d subdivisions (scenes/meshes/make_ball.py)" % subdivisions)
for v in verts:
    print("v %.9f %.9f %.9f" % tuple(0.5 * x for x in v))
for a, b, c in faces:
    print("f %d %d %d" % (a + 1, b + 1, c + 1))
