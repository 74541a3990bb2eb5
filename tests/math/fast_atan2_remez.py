#!/usr/bin/env python3
"""Derives fast_atan2's polynomial (lib/math/fast_atan2.hpp, kQ) and prints it as C++.

atan(v) = v + v s Q(s), s = v^2, |v| <= 1/2: Q is the polynomial of degree 11 that minimizes the
largest error of v + v s Q(s) relative to atan v, i.e. |w(s) (f(s) - Q(s))| with
f(s) = (atan(sqrt s)/sqrt s - 1)/s and w(s) = s sqrt(s)/atan(sqrt s), over s in [0, 1/4]. The
Remez exchange finds it: solve for Q and the levelled error E on 13 points, move the points to the
extrema of the error, repeat until E and the largest error agree. Decimal arithmetic at 60 digits
(standard library only); a run takes a few seconds. Run: python3 tests/math/fast_atan2_remez.py
"""
import math
from decimal import Decimal as D, getcontext

getcontext().prec = 60
DEGREE, TOP = 11, D(1) / 4
EPS = D(10) ** -58


def atan(z):
    """atan z for 0 <= z <= 1: halve the angle until z < 0.05, then the Taylor series."""
    k = 0
    while z > D("0.05"):
        z, k = z / (1 + (1 + z * z).sqrt()), k + 1
    z2, term, total, n = z * z, z, z, 1
    while True:
        term, n = -term * z2, n + 2
        if abs(term / n) < EPS:
            return total * 2**k
        total += term / n


def f(s):
    if s < D("0.01"):  # the series of (atan(z)/z - 1)/z^2: no cancellation near 0
        total, power, k = D(0), D(1), 1
        while True:
            term = power / (2 * k + 1) * (-1 if k % 2 else 1)
            if abs(term) < EPS:
                return total
            total, power, k = total + term, power * s, k + 1
    z = s.sqrt()
    return (atan(z) / z - 1) / s


def w(s):
    return D(0) if s == 0 else s * s.sqrt() / atan(s.sqrt())


def solve(a, b):
    """Gaussian elimination with partial pivoting."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            factor = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= factor * m[c][k]
    x = [D(0)] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def horner(c, s):
    total = D(0)
    for a in reversed(c):
        total = total * s + a
    return total


def main():
    points = DEGREE + 2
    ref = [D((1 - math.cos(math.pi * (i + 0.5) / points)) / 2) * TOP for i in range(points)]
    grid = [D((1 - math.cos(math.pi * i / 3000)) / 2) * TOP for i in range(3001)]
    fg, wg = [f(g) if g > 0 else D(-1) / 3 for g in grid], [w(g) for g in grid]
    for _ in range(20):
        rows = [[r**j for j in range(DEGREE + 1)] + [D((-1) ** i) / w(r)] for i, r in enumerate(ref)]
        sol = solve(rows, [f(r) for r in ref])
        coef, level = sol[: DEGREE + 1], abs(sol[DEGREE + 1])
        err = [wg[i] * (fg[i] - horner(coef, grid[i])) for i in range(len(grid))]
        worst = max(abs(e) for e in err)
        # The extremum of each run of one sign; keep the largest DEGREE + 2.
        runs, run = [], [1]
        for i in range(2, len(grid)):
            if (err[i] > 0) == (err[run[0]] > 0):
                run.append(i)
            else:
                runs.append(run)
                run = [i]
        runs.append(run)
        ext = [max(r, key=lambda k: abs(err[k])) for r in runs]
        while len(ext) > points:
            ext.pop(0 if abs(err[ext[0]]) < abs(err[ext[-1]]) else -1)
        if len(ext) < points:
            break
        ref = [grid[k] for k in ext]
        if worst - level < level * D("1e-9"):
            break
    print(f"// largest relative error of v + v s Q(s): {float(worst):.3g} (2^{math.log2(float(worst)):.1f})")
    print(f"inline constexpr double kQ[{DEGREE + 1}] = {{" + ", ".join(repr(float(a)) for a in coef) + "};")


if __name__ == "__main__":
    main()
