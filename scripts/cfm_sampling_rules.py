#!/usr/bin/env python3
"""Which per-ring sample count reproduces Table 1 of Giang & O'Sullivan 2006 (docs/references.md)?

Table 1 gives 65 samples at the root with 10 stacks and 167 with 16, and 3 and 11 at the leaves
(the minimum stacks are not printed; 2 and 4 fit). This script tries the natural candidates for
"about N sin(phi) samples per ring" -- rounding (round, floor, ceil), base (N, N + 1, 2N), rings
phi_i = i pi / N over i = 1..N-1, with 0 or 2 pole samples -- and prints the ones that give
both root counts, with the smallest leaf counts they give. lib/cfm/sampling.hpp uses the only hit:
floor((N + 1) sin phi_i), no pole samples, which also gives the leaf counts 3 (N = 2) and 11
(N = 4). Run: python3 scripts/cfm_sampling_rules.py
"""
import itertools
import math

ROOT = {10: 65, 16: 167}
ROUNDING = {
    "round": lambda x: math.floor(x + 0.5),
    "floor": lambda x: math.floor(x + 1e-12),
    "ceil": lambda x: math.ceil(x - 1e-12),
}
BASES = {"N": lambda n: n, "N+1": lambda n: n + 1, "2N": lambda n: 2 * n}


def count(n, rounding, base, poles):
    rings = sum(rounding(base(n) * math.sin(i * math.pi / n)) for i in range(1, n))
    return rings + poles


hits = 0
for (rn, r), (bn, b), poles in itertools.product(ROUNDING.items(), BASES.items(), (0, 2)):
    got = {n: count(n, r, b, poles) for n in ROOT}
    mark = "HIT " if got == ROOT else "    "
    hits += got == ROOT
    small = ", ".join(f"N={n}: {count(n, r, b, poles)}" for n in (2, 3, 4))
    print(f"{mark}{rn:5s}({bn:3s} sin phi) + {poles} poles: N=10 -> {got[10]:3d}, N=16 -> {got[16]:3d}   ({small})")
print(f"{hits} rule(s) give 65 and 167")
