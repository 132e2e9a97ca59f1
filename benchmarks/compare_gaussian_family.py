"""Side-by-side timing of bndp's Gaussian calibration against diffprivlib's GaussianAnalytic
(the same Balle-Wang optimum), measured in one run on this machine. Prints times and ratios
next to the project targets (one "optimal" calibration <= 5 us; 10^5 of them <= 0.3 s).

    python benchmarks/compare_gaussian_family.py
    python benchmarks/compare_gaussian_family.py --dpl-python /path/to/venv/bin/python

diffprivlib 0.6.6 needs scikit-learn < 1.8; it is timed in the current interpreter if it
imports there, otherwise in the interpreter given by --dpl-python (or the environment
variable BNDP_DPL_PYTHON), e.g. a separate virtual environment with
``pip install diffprivlib==0.6.6 "scikit-learn<1.8"``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from bndp import calibrate

POINTS = [(0.1, 1e-5), (1.0, 1e-5), (1.0, 1e-10), (5.0, 1e-3), (10.0, 1e-6), (0.5, 0.1)]

_DPL_SNIPPET = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
from diffprivlib.mechanisms import GaussianAnalytic
pts = json.loads(sys.argv[1]); reps = int(sys.argv[2])
out = {"version": __import__("diffprivlib").__version__, "times": [], "sigmas": []}
for eps, delta in pts:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        m = GaussianAnalytic(epsilon=eps, delta=delta, sensitivity=1.0)
        s = m._scale
        best = min(best, time.perf_counter() - t)
    out["times"].append(best)
    out["sigmas"].append(float(s))
print(json.dumps(out))
"""


def best_of(f, repeat: int, number: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            f()
        best = min(best, (time.perf_counter() - t) / number)
    return best


def run_diffprivlib(python: str | None, reps: int):
    args = [json.dumps(POINTS), str(reps)]
    try:
        import diffprivlib  # noqa: F401
        python = sys.executable
    except ImportError:
        pass
    if python is None:
        return None
    r = subprocess.run([python, "-c", _DPL_SNIPPET, *args], capture_output=True, text=True)
    if r.returncode != 0:
        print("diffprivlib run failed:\n" + r.stderr[-2000:])
        return None
    return json.loads(r.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dpl-python", default=os.environ.get("BNDP_DPL_PYTHON"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    ours = []
    for eps, delta in POINTS:
        t = best_of(lambda: calibrate.gaussian_sigma(eps, 1.0, delta=delta), args.repeat, 2000)
        ours.append((t, calibrate.gaussian_sigma(eps, 1.0, delta=delta)))
    rng = np.random.default_rng(0)
    E = 10 ** rng.uniform(-2, 1.5, 100_000)
    D = 10 ** rng.uniform(-12, -2, 100_000)
    t_batch = best_of(lambda: calibrate.gaussian_sigma(E, 1.0, delta=D), max(2, args.repeat // 2))
    t_closed = best_of(lambda: calibrate.gaussian_sigma(1.0, 1.0, delta=1e-5, calibration="zhao2"), args.repeat, 2000)

    dpl = run_diffprivlib(args.dpl_python, args.repeat)

    print("Gaussian calibration, sigma for (eps, delta), sensitivity 1 (best of "
          f"{args.repeat}; shared machine: treat ratios as indicative)")
    hdr = f"{'eps':>6s} {'delta':>7s} | {'bndp us':>9s}"
    if dpl:
        hdr += f" {'diffprivlib us':>14s} {'ratio':>7s} | {'rel. sigma diff':>15s}"
    print(hdr)
    ratios = []
    for i, (eps, delta) in enumerate(POINTS):
        t, s = ours[i]
        line = f"{eps:6g} {delta:7.0e} | {t * 1e6:9.2f}"
        if dpl:
            td, sd = dpl["times"][i], dpl["sigmas"][i]
            ratios.append(td / t)
            line += f" {td * 1e6:14.1f} {td / t:7.0f}x | {s / sd - 1:+15.2e}"
        print(line)
    if dpl:
        print(f"diffprivlib {dpl['version']} GaussianAnalytic: median speed-up "
              f"{float(np.median(ratios)):.0f}x (construction incl. its scale search)")
    t1 = ours[1][0]
    print(f"one 'optimal' calibration (1, 1e-5): {t1 * 1e6:.2f} us   (target <= 5 us: "
          f"{'ok' if t1 <= 5e-6 else 'MISSED'})")
    print(f"batch of 1e5 'optimal' calibrations: {t_batch:.3f} s   (target <= 0.3 s: "
          f"{'ok' if t_batch <= 0.3 else 'MISSED'})")
    print(f"one 'zhao2' (closed form) calibration: {t_closed * 1e6:.2f} us")


if __name__ == "__main__":
    main()
