"""Planning cost of every 1-D mechanism over epsilon in [1e-12, 1e300]: wall time and peak
memory of constructing the mechanism and its first ``sample`` call (the default grid law's
plan), each cell in a fresh interpreter. Prints a table; a cell is the time in seconds and
the growth of the peak resident set (MB) above the interpreter's size after ``import bndp``,
then ``ok`` (a law, certified at most epsilon), ``ref`` (a ValueError naming the parameter)
or what went wrong. Cells at or over the goal (1 s, 100 MB) are flagged with ``!``.

    PYTHONPATH=src python benchmarks/planning_sweep.py
    python benchmarks/planning_sweep.py --src src --src /path/to/other/checkout/src
    python benchmarks/planning_sweep.py --cases half-line,line-gap --eps 1e-4,5e-5

With several ``--src`` the cells are measured side by side (for each cell, every source in
turn), one column per source. A cell is stopped after ``--timeout`` seconds and its
address space is limited to ``--memory`` MB (an over-budget plan fails instead of taking
the machine down). Timings are noisy on a shared machine: compare columns of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

EPS = [1e-12, 1e-9, 1e-6, 1e-5, 5e-5, 1e-4, 1e-3, 0.01, 0.1, 1.0, 10.0, 1e3, 1e6, 1e15,
       1e100, 1e300]

INF = "math.inf"

#: name -> constructor source (``e`` is epsilon) and the true values of the first sample.
CASES = {
    "laplace": ("bndp.BoundedLaplace(epsilon=e, sensitivity=1.0, lower=0.0, upper=120.0)",
                "[0.0, 30.0, 120.0]"),
    "laplace-delta": ("bndp.BoundedLaplace(epsilon=e, sensitivity=1.0, lower=0.0, upper=120.0,"
                      " delta=1e-6)", "[0.0, 30.0, 120.0]"),
    "gaussian": ("bndp.BoundedGaussian(epsilon=e, sensitivity=1.0, lower=0.0, upper=120.0)",
                 "[0.0, 30.0, 120.0]"),
    "gaussian-tight": ("bndp.BoundedGaussian(epsilon=e, sensitivity=1.0, lower=0.0, "
                       "upper=120.0, sigma_rule='tight')", "[0.0, 30.0, 120.0]"),
    "laplace-wide": ("bndp.BoundedLaplace(epsilon=e, sensitivity=1.0, lower=0.0, upper=1e6)",
                     "[0.0, 30.0, 1e6]"),
    "gaussian-wide": ("bndp.BoundedGaussian(epsilon=e, sensitivity=1.0, lower=0.0, "
                      "upper=1e6)", "[0.0, 30.0, 1e6]"),
    "half-line": (f"bndp.BoundedLaplace(epsilon=e, sensitivity=1.0, lower=0.0, upper={INF})",
                  "[0.0, 30.0]"),
    "half-line-up": (f"bndp.BoundedLaplace(epsilon=e, sensitivity=1.0, lower=-{INF}, "
                     "upper=5.0)", "[0.0, 5.0]"),
    "cl-interval": ("bndp.ConstrainedLaplace(epsilon=e, sensitivity=1.0, lower=0.0, "
                    "upper=120.0)", "[0.0, 30.0]"),
    "cl-interval-gap": ("bndp.ConstrainedLaplace(epsilon=e, sensitivity=1.0, lower=0.0, "
                        "upper=120.0, forbidden=[(10.0, 20.0)])", "[0.0, 30.0]"),
    "cl-interval-gap-metric": ("bndp.ConstrainedLaplace(epsilon=e, sensitivity=1.0, "
                               "lower=0.0, upper=120.0, forbidden=[(10.0, 20.0)], "
                               "guarantee='metric')", "[0.0, 30.0]"),
    "cl-half-line": (f"bndp.ConstrainedLaplace(epsilon=e, sensitivity=1.0, lower=0.0, "
                     f"upper={INF})", "[0.0, 30.0]"),
    "cl-half-line-gap": (f"bndp.ConstrainedLaplace(epsilon=e, sensitivity=1.0, lower=0.0, "
                         f"upper={INF}, forbidden=[(10.0, 20.0)])", "[0.0, 30.0]"),
    "cl-half-line-gap-metric": (f"bndp.ConstrainedLaplace(epsilon=e, sensitivity=1.0, "
                                f"lower=0.0, upper={INF}, forbidden=[(10.0, 20.0)], "
                                "guarantee='metric')", "[0.0, 30.0]"),
    "cl-line": ("bndp.ConstrainedLaplace(epsilon=e, sensitivity=1.0)", "[0.0, 30.0]"),
    "cl-line-gap": ("bndp.ConstrainedLaplace(epsilon=e, sensitivity=1.0, "
                    "forbidden=[(10.0, 20.0)])", "[0.0, 30.0]"),
    "cl-line-gap-metric": ("bndp.ConstrainedLaplace(epsilon=e, sensitivity=1.0, "
                           "forbidden=[(10.0, 20.0)], guarantee='metric')", "[0.0, 30.0]"),
    "sample-rows-laplace": (None, "laplace"),
    "sample-rows-gaussian": (None, "gaussian"),
    "clamped-laplace": ("bndp.ClampedLaplace(epsilon=e, sensitivity=1.0, lower=0.0, "
                        "upper=120.0)", "[0.0, 30.0, 120.0]"),
    "generalized-gaussian": ("bndp.GeneralizedGaussian(epsilon=e, sensitivity=1.0, lower=0.0, "
                             "upper=120.0)", "[0.0, 30.0, 120.0]"),
    "laplace-line": ("bndp.Laplace(epsilon=e, sensitivity=1.0)", "[0.0, 30.0]"),
    "gaussian-line": ("bndp.Gaussian(epsilon=e, delta=1e-6, sensitivity=1.0)", "[0.0, 30.0]"),
}

# The cell, run in a fresh interpreter: prints one JSON line.
CHILD = r"""
import json, math, resource, sys, time, warnings
limit = int(sys.argv[3]) << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import numpy as np
import bndp

def rss_now():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()

e = float(sys.argv[2])
make, values = CASE
out = {}
base = rss_now()
t = time.perf_counter()
try:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if make is None:
            lo = np.array([0.0, -5.0, 0.0, 10.0])
            hi = np.array([120.0, 5.0, 0.5, 1e6])
            x = bndp.sample(np.array([30.0, 0.0, 0.2, 12.0]), mechanism=values, epsilon=e,
                            sensitivity=1.0, lower=lo, upper=hi, rng=1)
            out["status"] = "ok" if ((x >= lo) & (x <= hi)).all() else "OUT-OF-BOUNDS"
        else:
            m = eval(make)
            x = m.sample(np.array(eval(values)), rng=1)
            loss = m.privacy_loss() if hasattr(m, "privacy_loss") else None
            # an (epsilon, delta) bounded Laplace is certified for epsilon - ln(1 - delta)
            bound = e - math.log1p(-getattr(m, "delta", 0.0) or 0.0)
            if loss is not None and not loss <= bound:
                out["status"] = f"LOSS {loss:.3g} > eps"
            elif not np.isfinite(x).all():
                out["status"] = "NONFINITE"
            else:
                out["status"] = "ok"
except ValueError as exc:
    msg = str(exc)
    out["status"] = "ref" if "`" in msg else "ref?"
    out["message"] = msg
except MemoryError:
    out["status"] = "MEMORY"
except Exception as exc:
    out["status"] = type(exc).__name__
    out["message"] = str(exc)
out["time"] = time.perf_counter() - t
out["mb"] = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base) / 2**20
print(json.dumps(out))
"""


def run_cell(src: str, case: str, eps: float, timeout: float, memory: int) -> dict:
    make, values = CASES[case]
    code = CHILD.replace("CASE", repr((make, values)))
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    try:
        p = subprocess.run([sys.executable, "-c", code, case, repr(eps), str(memory)],
                           capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "TIMEOUT", "time": timeout, "mb": float("nan")}
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        tail = (p.stderr.strip().splitlines() or ["?"])[-1]
        return {"status": "CRASH", "time": float("nan"), "mb": float("nan"), "message": tail}


def cell_text(r: dict) -> str:
    flag = "!" if (r["time"] >= 1.0 or r["mb"] >= 100.0 or r["status"] not in ("ok", "ref")) \
        else " "
    return f"{r['time']:6.2f}s {r['mb']:5.0f}MB {r['status'][:4]:<4}{flag}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", action="append",
                    help="a source tree to import bndp from (repeat to compare; default: the "
                         "src/ next to this script)")
    ap.add_argument("--cases", help="comma-separated case names (default: all): "
                    + ", ".join(CASES))
    ap.add_argument("--eps", help="comma-separated epsilons (default: 1e-12 ... 1e300)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per cell (30)")
    ap.add_argument("--memory", type=int, default=4096, help="address-space MB per cell (4096)")
    ap.add_argument("--messages", action="store_true", help="print each refusal's message")
    args = ap.parse_args()
    srcs = args.src or [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")]
    cases = args.cases.split(",") if args.cases else list(CASES)
    eps = [float(x) for x in args.eps.split(",")] if args.eps else EPS
    for c in cases:
        if c not in CASES:
            raise SystemExit(f"unknown case {c!r}; known: {', '.join(CASES)}")
    print("sources: " + "  |  ".join(f"[{k}] {s}" for k, s in enumerate(srcs)))
    head = f"{'case':<24}{'epsilon':>8}  " + "".join(f"{f'[{k}]':<22}" for k in range(len(srcs)))
    print(head)
    print("-" * len(head))
    worst = [[0.0, 0.0] for _ in srcs]
    bad = [0 for _ in srcs]
    for c in cases:
        for e in eps:
            cells = []
            for k, s in enumerate(srcs):
                r = run_cell(s, c, e, args.timeout, args.memory)
                cells.append(r)
                if r["time"] == r["time"]:
                    worst[k][0] = max(worst[k][0], r["time"])
                if r["mb"] == r["mb"]:
                    worst[k][1] = max(worst[k][1], r["mb"])
                bad[k] += cell_text(r).endswith("!")
            print(f"{c:<24}{e:>8.2g}  " + "".join(f"{cell_text(r):<22}" for r in cells),
                  flush=True)
            if args.messages:
                for k, r in enumerate(cells):
                    if "message" in r:
                        print(f"    [{k}] {r['message'][:300]}")
    for k in range(len(srcs)):
        print(f"[{k}] slowest {worst[k][0]:.2f} s, largest {worst[k][1]:.0f} MB, "
              f"{bad[k]} cell(s) flagged")


if __name__ == "__main__":
    main()
