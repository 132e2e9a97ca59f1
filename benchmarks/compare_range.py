"""Side-by-side timings for the range-constraint mechanisms; prints ratios.

Run:  PYTHONPATH=src python benchmarks/compare_range.py
Timings are the best of a few repeats (noisy on a shared machine).
"""

import time

import numpy as np

import bndp


def best(f, repeat=5):
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t)


def main():
    n = 1_000_000
    gen = np.random.default_rng(0)
    m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=[(0.0, 1.0)])
    vals = np.linspace(-3.0, -0.1, n)
    t_np = best(lambda: gen.laplace(2.0, 1.0, size=n))
    t_cl = best(lambda: m.sample(2.0, size=n, rng=gen))
    t_npa = best(lambda: gen.laplace(vals, 1.0))
    t_cla = best(lambda: m.sample(vals, rng=gen))
    print(f"sampling 1e6, one forbidden interval, scalar true value: "
          f"{t_cl * 1e3:.1f} ms vs numpy laplace {t_np * 1e3:.1f} ms, ratio {t_cl / t_np:.2f}")
    print(f"sampling 1e6, one forbidden interval, per-row true values: "
          f"{t_cla * 1e3:.1f} ms vs numpy laplace(array loc) {t_npa * 1e3:.1f} ms, "
          f"ratio {t_cla / t_npa:.2f}")
    rng = np.random.default_rng(0)
    f = np.cumsum(rng.uniform(0.1, 2.0, 200)).reshape(100, 2)
    for g in ("dp", "metric"):
        t = best(lambda: bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=f, guarantee=g))
        tb = best(lambda: bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=f, lower=-5.0,
                                                  upper=float(f[-1, 1]) + 5.0, guarantee=g))
        print(f"calibration, n = 100 forbidden intervals, guarantee={g!r}: {t * 1e3:.2f} ms "
              f"(with finite lower/upper: {tb * 1e3:.2f} ms)")


if __name__ == "__main__":
    main()
