"""The levels of a point-sphere tree, drawn with matplotlib (notebook-style: run the cells in
order, or the whole file).

    python3 plot_tree_levels.py TREE.hps [OUT.png]

TREE.hps is a haptic-spheretree file, e.g.
    haptic-voxelize gear.obj --resolution 64 -o gear.vdb
    haptic-pointshell gear.obj gear.vdb -o gear.ps.hps
    haptic-spheretree gear.ps.hps -o gear.hps
The picture (OUT.png, default tree_levels.png) has one panel per level: the pointshell's points and
the level's spheres, seen along the tree's thinnest axis; the last panel shows per level the
cluster count and the median sphere radius.
"""
# %% Imports: the Agg backend writes files without a display.
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import PatchCollection  # noqa: E402
from matplotlib.patches import Circle  # noqa: E402

import hapticprep as hp  # noqa: E402

# %% Load the tree: points, normals and per cluster its level, centre and radius as numpy arrays.
tree_path = sys.argv[1] if len(sys.argv) > 1 else "tree.hps"
out_path = sys.argv[2] if len(sys.argv) > 2 else "tree_levels.png"
tree = hp.load_tree(tree_path)
print(f"{tree_path}: {len(tree.points)} points, {len(tree.radius)} clusters, {tree.levels} levels, k = {tree.k}")

# %% View along the axis in which the points extend least; draw the other two.
extent = tree.points.max(axis=0) - tree.points.min(axis=0)
view = int(np.argmin(extent))
u, v = [a for a in range(3) if a != view]
names = "xyz"

# %% One panel per level, and one for the per-level figures.
panels = tree.levels + 1
cols = min(panels, 4)
rows = -(-panels // cols)
fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 4 * rows), squeeze=False)
lo = tree.points[:, [u, v]].min(axis=0) - tree.radius[0] * 0.05
hi = tree.points[:, [u, v]].max(axis=0) + tree.radius[0] * 0.05
for level in range(1, tree.levels + 1):
    ax = axes.flat[level - 1]
    on_level = np.flatnonzero(tree.level == level)
    ax.scatter(tree.points[:, u], tree.points[:, v], s=2, color="0.6", linewidths=0)
    circles = [Circle((tree.center[c, u], tree.center[c, v]), tree.radius[c]) for c in on_level]
    colors = plt.cm.viridis(np.linspace(0, 1, max(len(circles), 2)))[: len(circles)]
    ax.add_collection(PatchCollection(circles, facecolors="none", edgecolors=colors, linewidths=0.8))
    ax.set_title(f"level {level}: {len(on_level)} sphere{'' if len(on_level) == 1 else 's'}")
    ax.set_xlim(min(lo[0], (tree.center[on_level, u] - tree.radius[on_level]).min()),
                max(hi[0], (tree.center[on_level, u] + tree.radius[on_level]).max()))
    ax.set_ylim(min(lo[1], (tree.center[on_level, v] - tree.radius[on_level]).min()),
                max(hi[1], (tree.center[on_level, v] + tree.radius[on_level]).max()))
    ax.set_aspect("equal")
    ax.set_xlabel(names[u])
    ax.set_ylabel(names[v])

ax = axes.flat[tree.levels]
levels = np.arange(1, tree.levels + 1)
stats = tree.level_stats  # what haptic-dump prints per level
ax.bar(levels, [s["clusters"] for s in stats], color="tab:blue")
ax.set_yscale("log")
ax.set_xlabel("level")
ax.set_ylabel("clusters", color="tab:blue")
ax.set_xticks(levels)
ax2 = ax.twinx()
ax2.plot(levels, [s["radius"]["median"] for s in stats], "o-", color="tab:red")
ax2.set_yscale("log")
ax2.set_ylabel("median radius", color="tab:red")
ax.set_title("per level")
for ax in axes.flat[panels:]:
    ax.axis("off")

# %% Save.
fig.suptitle(f"{tree.metadata.get('source_name', tree_path)}: point-sphere tree, view along {names[view]}")
fig.tight_layout()
fig.savefig(out_path, dpi=80)
print(f"wrote {out_path}")
