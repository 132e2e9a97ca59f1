"""Coverage of ``bndp.estimate``'s mean interval in one setting, with what explains it.

For each repetition: a synthetic true column (as ``compare.py --estimate-only`` draws it),
its release, and the estimate under each variant of ``bndp.estimate``'s arguments; records
the estimate, the bootstrap replicates' mean error and standard deviation, and the
interval. Prints per variant: the estimate's bias and standard deviation over repetitions,
the replicates' mean error and sd, the coverage a normal estimate with these moments would
give, the measured coverage, and, on the same estimates for comparison, the bias-corrected
interval's (centred on the estimate less the replicates' mean error) bias left, centre sd
and coverage; ``--save`` keeps the per-repetition records::

    python benchmarks/estimate_coverage.py gaussian 0.5 rows uniform --reps 200
    python benchmarks/estimate_coverage.py laplace 0.1 fixed skewed --variants '{}' \\
        '{"resolution": 0.2, "max_support": 2048}'

The seeds are this script's own (not compare.py's): a second, independent run of a setting;
``--seed K`` gives a further one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import zlib
from statistics import NormalDist

import numpy as np


def main(argv=None) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bndp
    from compare import _est_bounds, _est_column

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mechanism", choices=("laplace", "gaussian"))
    ap.add_argument("epsilon", type=float)
    ap.add_argument("bounds", choices=("fixed", "rows"))
    ap.add_argument("column", choices=("uniform", "skewed", "bimodal"))
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n", type=int, default=10**4)
    ap.add_argument("--boot", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0,
                    help="another independent run of the same setting (0: the first run)")
    ap.add_argument("--variants", nargs="+", default=["{}"],
                    help="JSON objects of bndp.estimate keyword arguments, one per variant")
    ap.add_argument("--save", metavar="FILE.npy",
                    help="save the per-repetition records: the true mean, then per variant "
                         "the estimate, the replicates' mean error and sd, the interval")
    args = ap.parse_args(argv)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:                    # pragma: no cover
        pass
    variants = [json.loads(v) for v in args.variants]
    per_row = args.bounds == "rows"
    key = ("coverage", args.mechanism, args.epsilon, per_row, args.column, args.n)
    if args.seed:
        key += (args.seed,)
    rng = np.random.default_rng(zlib.crc32(repr(key).encode()))
    spec = {"mechanism": args.mechanism, "epsilon": args.epsilon, "sensitivity": 1.0}
    rows, secs = [], [0.0] * len(variants)
    for _ in range(args.reps):
        lo, hi = _est_bounds(per_row, args.n, rng)
        x = _est_column(args.column, args.n, rng, lo, hi)
        y = bndp.sample(x, mechanism=args.mechanism, epsilon=args.epsilon, sensitivity=1.0,
                        lower=lo, upper=hi, rng=rng)
        seed = int(rng.integers(2**63))
        rec = [float(x.mean())]
        for i, v in enumerate(variants):
            t = time.process_time()
            e = bndp.estimate(y, spec, lower=lo, upper=hi, n_boot=args.boot, rng=seed, **v)
            a, b = e.mean_interval
            secs[i] += time.process_time() - t
            err = e.boot @ e.support - e.boot_truth @ e.support
            rec += [e.mean, float(err.mean()), float(err.std(ddof=1)), a, b]
        rows.append(rec)
    R = np.array(rows)
    xm = R[:, 0]
    print(f"{args.mechanism} eps={args.epsilon:g} {args.bounds} {args.column} n={args.n}: "
          f"{args.reps} repetitions, {args.boot} replicates"
          + (f", seed {args.seed}" if args.seed else ""))
    z = NormalDist().inv_cdf(0.975)
    for i, v in enumerate(variants):
        m, be, bs, a, b = R[:, 1 + 5 * i:6 + 5 * i].T
        err = m - xm
        cov = float(np.mean((a <= xm) & (xm <= b)))
        # for comparison, on the same estimates and replicates: the bias-corrected interval
        # (centred on the estimate less the replicates' mean error, same half-width; the
        # true mean lies inside the support, so clipping to it never changes a coverage)
        cerr = err - be
        cov_c = float(np.mean(np.abs(cerr) <= z * bs))
        se = float(np.sqrt(cov * (1 - cov) / args.reps))
        print(f"  {json.dumps(v)}: estimate bias {err.mean():+.4f} ({err.mean() / err.std():+.2f} "
              f"sd) sd {err.std():.4f} | replicates' bias {be.mean():+.4f} sd {bs.mean():.4f} "
              f"| normal coverage from these {_normal_cov(err, bs):.3f} | coverage {cov:.3f} "
              f"(s.e. {se:.3f}) | bias-corrected: bias left {cerr.mean():+.4f} "
              f"({cerr.mean() / err.std():+.2f} sd), centre sd {cerr.std():.4f}, coverage "
              f"{cov_c:.3f} | {secs[i] / args.reps:.2f} s per estimate")
    if args.save:
        np.save(args.save, R)


def _normal_cov(err: np.ndarray, sds: np.ndarray) -> float:
    """The coverage of intervals ``centre -/+ z * s`` (``s`` each repetition's replicates'
    sd) whose centre's error is normal with the measured bias and sd of ``err``."""
    z = NormalDist().inv_cdf(0.975)
    d = NormalDist(float(err.mean()), float(err.std()))
    return float(np.mean([d.cdf(z * s) - d.cdf(-z * s) for s in sds]))


if __name__ == "__main__":
    main()
