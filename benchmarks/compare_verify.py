"""Tight vs paper calibration of the bounded Gaussian mechanism, and timings.

Prints (1) Chen & Hale's Table 1 setting (l = (0, 1), u = (10, 9), dQ = 2 sqrt 5) per eps:
sigma^2 under both calibrations, the certified loss at the paper's sigma, and the reduction
of sigma^2 and of the released value's variance (trace, at the box centre and at the lower
corner); (2) the sigma^2 reduction on a 1-D grid of (eps, dQ/(u - l)); (3) the time of one
verification and one tight calibration. Run: PYTHONPATH=src python benchmarks/compare_verify.py
"""

import math
import timeit

import numpy as np

import bndp
from bndp.verify import (bounded_gaussian_loss, bounded_gaussian_tight_sigma,
                         bounded_laplace_profile)


def table1():
    lo, hi, dq = np.array([0.0, 1.0]), np.array([10.0, 9.0]), 2 * math.sqrt(5)
    print("Table 1 setting (m = 2)")
    print("| eps | paper sigma^2 | tight sigma^2 | loss/eps at paper sigma | sigma^2 reduction "
          "| Var reduction (centre) | Var reduction (corner l) |")
    print("|---|---|---|---|---|---|---|")
    for eps in (0.1, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0):
        p = bndp.BoundedGaussian(eps, sensitivity=dq, lower=lo, upper=hi)
        t = bndp.BoundedGaussian(eps, sensitivity=dq, lower=lo, upper=hi, sigma_rule="tight")
        mid = 0.5 * (lo + hi)
        vp_c, vt_c = np.sum(p.variance(mid)), np.sum(t.variance(mid))
        vp_l, vt_l = np.sum(p.variance(lo)), np.sum(t.variance(lo))
        print(f"| {eps} | {p.sigma**2:.4f} | {t.sigma**2:.4f} | {bndp.verify(p)/eps:.4f} "
              f"| {100*(1 - t.sigma**2/p.sigma**2):.1f} % | {100*(1 - vt_c/vp_c):.1f} % "
              f"| {100*(1 - vt_l/vp_l):.1f} % |")


def grid1d():
    ratios = (0.01, 0.1, 0.25, 0.5, 1.0)
    print("\n1-D grid: sigma^2 reduction (tight vs paper), w = u - l = 1")
    print("| eps \\ dQ/w | " + " | ".join(str(r) for r in ratios) + " |")
    print("|---|" + "---|" * len(ratios))
    for eps in (0.01, 0.1, 0.5, 1.0, 2.0, 5.0):
        row = []
        for r in ratios:
            sp = bndp.calibrate.bounded_gaussian_sigma(eps, r, 0.0, 1.0)
            st = bounded_gaussian_tight_sigma(eps, r, 0.0, 1.0, sigma_paper=sp)
            row.append(f"{100*(1 - st**2/sp**2):.1f} %")
        print(f"| {eps} | " + " | ".join(row) + " |")


def timings():
    lo, hi, dq = np.array([0.0, 1.0]), np.array([10.0, 9.0]), 2 * math.sqrt(5)
    s1 = bndp.calibrate.bounded_gaussian_sigma(1.0, 1.0, 0.0, 10.0)
    s2 = bndp.calibrate.bounded_gaussian_sigma(1.0, dq, lo, hi)
    cases = [
        ("verify, univariate", lambda: bounded_gaussian_loss(s1, 1.0, 0.0, 10.0)),
        ("verify, m = 2 (Table 1, eps = 1)", lambda: bounded_gaussian_loss(s2, dq, lo, hi)),
        ("paper calibration, univariate",
         lambda: bndp.calibrate.bounded_gaussian_sigma(1.0, 1.0, 0.0, 10.0)),
        ("paper calibration, m = 2", lambda: bndp.calibrate.bounded_gaussian_sigma(1.0, dq, lo, hi)),
        ("tight calibration, univariate (incl. paper sigma)",
         lambda: bounded_gaussian_tight_sigma(1.0, 1.0, 0.0, 10.0)),
        ("tight calibration, m = 2 (incl. paper sigma)",
         lambda: bounded_gaussian_tight_sigma(1.0, dq, lo, hi)),
        ("bounded Laplace delta(eps) profile",
         lambda: bounded_laplace_profile(1.5, 0.5, 1.0, 0.0, 10.0)),
    ]
    print("\nTimings (best of 5 repeats)")
    print("| operation | time |")
    print("|---|---|")
    for name, fn in cases:
        n = 20
        t = min(timeit.repeat(fn, number=n, repeat=5)) / n
        print(f"| {name} | {t*1e3:.3f} ms |")


def main():
    table1()
    grid1d()
    timings()


if __name__ == "__main__":
    main()
