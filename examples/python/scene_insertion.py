"""Push one part of an assembly into the others and plot the force per part along the way.

    python3 scene_insertion.py SCENE.json TOOL_PART DX,DY,DZ [OUT.png] [--steps N]

SCENE.json is what `haptic-pipeline --assembly` writes for a multi-part file; TOOL_PART is the name
of the part that moves (`haptic-dump SCENE.json` lists them). The tool starts at its place in the
assembly and moves by DX,DY,DZ (metres, world frame) in N steps without turning. Prints one line per
step (offset, total force, the parts touched and each one's force) and, given OUT.png, draws the
magnitude of each touched part's force against the distance moved.
"""
import argparse
import sys

import numpy as np

import hapticprep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scene")
    ap.add_argument("tool_part")
    ap.add_argument("move", help="DX,DY,DZ in metres")
    ap.add_argument("png", nargs="?")
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    move = np.array([float(v) for v in args.move.split(",")])
    if move.shape != (3,) or args.steps < 1:
        sys.exit("scene_insertion: give the move as DX,DY,DZ and --steps >= 1")

    try:
        scene = hapticprep.Scene(args.scene, tool=args.tool_part)
    except hapticprep.Error as e:
        sys.exit(str(e))
    start = scene.parts[scene.tool_part]
    t = np.linspace(0, 1, args.steps + 1)
    positions = np.asarray(start["position"]) + t[:, None] * move
    quaternions = np.repeat(np.asarray(start["quaternion"])[None, :], len(t), axis=0)
    r = scene.query(positions, quaternions)

    names = [p["name"] for p in scene.parts]
    magnitude = np.linalg.norm(r["part_force"], axis=2)  # (frames, parts)
    touched = [k for k in range(len(names)) if (r["part_contacts"][:, k] > 0).any()]
    distance = t * np.linalg.norm(move)
    for i in range(len(t)):
        parts = ", ".join(f"{names[k]} {magnitude[i, k]:.4g}" for k in touched if r["part_contacts"][i, k] > 0)
        print(f"{distance[i]:.6f} m: force {np.linalg.norm(r['force'][i]):.4g}, "
              f"{int(r['parts_touched'][i])} parts touched{': ' + parts if parts else ''}")
    print(f"{len(touched)} of {len(names)} parts touched along the move")

    if args.png:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4), dpi=80)
        for k in touched:
            ax.plot(distance * 1000, magnitude[:, k], marker="o", label=names[k])
        ax.set_xlabel(f"distance moved by {args.tool_part} (mm)")
        ax.set_ylabel("force magnitude (query units)")
        ax.set_title("force per part along the move")
        if touched:
            ax.legend()
        fig.tight_layout()
        fig.savefig(args.png)


if __name__ == "__main__":
    main()
