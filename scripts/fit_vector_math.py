#!/usr/bin/env python3
"""Fits the polynomial and rational coefficients of runtime/include/ansor/vector_math.h.

Near-minimax fits of relative error by Lawson's algorithm (iteratively reweighted least
squares) in 40-digit arithmetic (mpmath), on Chebyshev nodes of the interval:
  exp   e^r ~ 1 + r + c2 r^2 + ... + c6 r^6 on [-ln2/2, ln2/2]
  tail  R(a) = Q(a) e^(a^2/2) ~ P4(a) / Q5(a) on [0, 14.5], Q the upper tail of the standard
        normal distribution (so Phi(x) = 1 - Q(x)); rational fits linearised as
        P(a) - R(a) Q(a) with Q(0) = 1, weighted by 1 / (R(a) Q_previous(a)) (Loeb's iteration).
Prints each fit's maximum relative error and its coefficients (constant term first), which the
header holds rounded to float. Usage: scripts/fit_vector_math.py   (about a minute)
"""
import mpmath as mp

mp.mp.dps = 40


def lawson(basis, target, lo, hi, points=500, iterations=60, fixed=lambda r: 0, denominator=None):
    """Coefficients c minimising max |fixed + sum c_k basis_k - target| / |target| (relative)
    on [lo, hi]; with denominator=(nq, ...) a rational fit, see rational()."""
    nodes = [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (i + 0.5) / points) for i in range(points)]
    ref = [target(r) for r in nodes]
    weights = [mp.mpf(1)] * points
    scale = [mp.mpf(1)] * points
    best = None
    for _ in range(iterations):
        rows, rhs = [], []
        for r, t, w, s in zip(nodes, ref, weights, scale):
            f = mp.sqrt(w) / (abs(t) * s)
            rows.append([f * b(r, t) for b in basis])
            rhs.append(f * (t - fixed(r)))
        c, _ = mp.qr_solve(mp.matrix(rows), mp.matrix(rhs))
        c = [c[k] for k in range(len(basis))]
        value, denom = denominator(c) if denominator else (lambda r: fixed(r) + sum(ck * b(r, 0) for ck, b in zip(c, basis)), None)
        errors = [abs(value(r) - t) / abs(t) for r, t in zip(nodes, ref)]
        worst = max(errors)
        if best is None or worst < best[0]:
            best = (worst, c)
        if denom:
            scale = [abs(denom(r)) for r in nodes]
        total = sum(w * e for w, e in zip(weights, errors))
        weights = [w * e / total for w, e in zip(weights, errors)]
    return best


def rational(np_, nq, target, lo, hi):
    basis = [lambda a, t, k=k: a**k for k in range(np_ + 1)] + [lambda a, t, k=k: -t * a**k for k in range(1, nq + 1)]

    def split(c):
        p, q = c[: np_ + 1], [mp.mpf(1)] + c[np_ + 1 :]
        denom = lambda a: mp.polyval(q[::-1], a)
        return (lambda a: mp.polyval(p[::-1], a) / denom(a)), denom

    worst, c = lawson(basis, target, lo, hi, denominator=split)
    return worst, c[: np_ + 1], [mp.mpf(1)] + c[np_ + 1 :]


def show(name, worst, *coefficient_lists):
    print(f"{name}: max relative error {mp.nstr(worst, 3)}")
    for c in coefficient_lists:
        print("  " + ", ".join(mp.nstr(x, 10, min_fixed=-1, max_fixed=-1) for x in c))


if __name__ == "__main__":
    ln2 = mp.log(2)
    worst, c = lawson([lambda r, t, k=k: r**k for k in range(2, 7)], mp.exp, -ln2 / 2, ln2 / 2, fixed=lambda r: 1 + r)
    show("exp (c2..c6)", worst, c)
    tail = lambda a: mp.erfc(a / mp.sqrt(2)) / 2 * mp.exp(a * a / 2)
    worst, p, q = rational(4, 5, tail, mp.mpf(0), mp.mpf("14.5"))
    show("normal tail R = P4 / Q5", worst, p, q)
