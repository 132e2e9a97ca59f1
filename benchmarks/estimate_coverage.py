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
    python benchmarks/estimate_coverage.py laplace 1 fixed skewed --statistics

``--statistics`` also measures, on each variant's estimates, the coverage of the
quantile (0.1, 0.25, 0.5, 0.75, 0.9), variance and histogram-bin (12 bins over [0, 120])
intervals against the column's own values, with, for comparison, the basic bootstrap
intervals (the estimate less the replicates' 97.5 % and 2.5 % error quantiles; for the
histogram, of the errors less their mean) on the same estimates.

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
    ap.add_argument("--statistics", action="store_true",
                    help="also the quantiles', variance's and histogram bins' intervals")
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
    stats = [[] for _ in variants]
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
            if args.statistics:
                stats[i].append(_statistics(x, e))
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
    if args.statistics:
        for i, v in enumerate(variants):
            if len(variants) > 1:
                print(f"  {json.dumps(v)}:")
            _print_statistics(np.array(stats[i]))
        R = np.hstack([R, np.array(stats[0])])
    if args.save:
        np.save(args.save, R)


QS = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
EDGES = np.linspace(0.0, 120.0, 13)
#: per statistic (true values, estimates, intervals' lows and highs, basic lows and highs)
#: its width in the records
_WIDTH = (("quantiles", QS.size), ("variance", 1), ("histogram", EDGES.size - 1))


def _statistics(x: np.ndarray, e) -> np.ndarray:
    """One repetition's record for ``--statistics``: per statistic, its value on the true
    column, the estimate, the interval, and the basic bootstrap interval."""
    from bndp.estimation._result import _hist, _quantile

    z_lo, z_hi = 0.025, 0.975
    out = []
    # quantiles (the column's: the smallest value whose empirical cdf reaches q)
    err = _quantile(e.support, e.boot, QS) - _quantile(e.support, e.boot_truth, QS)
    t0 = np.asarray(e.quantile(QS))
    a, b = e.quantile_interval(QS)
    out += [np.quantile(x, QS, method="inverted_cdf"), t0, a, b,
            t0 - np.quantile(err, z_hi, axis=0), t0 - np.quantile(err, z_lo, axis=0)]
    # variance (ddof = 0)
    def var(g):                  # rows of g, as Estimate.variance computes it
        m = g @ e.support
        return np.sum(g * (e.support[None, :] - m[:, None]) ** 2, axis=1)
    err = var(e.boot) - var(e.boot_truth)
    a, b = e.variance_interval
    out += [[x.var()], [e.variance], [a], [b], [e.variance - np.quantile(err, z_hi)],
            [e.variance - np.quantile(err, z_lo)]]
    # histogram bins
    tb = (sum(p.w * p.boot_histograms(EDGES) for p in e.parts) if e.parts
          else _hist(e.support, e.boot, EDGES))
    err = tb - _hist(e.support, e.boot_truth, EDGES)
    t0 = e.histogram(EDGES)
    a, b = e.histogram_interval(EDGES)
    err = err - err.mean(axis=0)      # the bins' basic intervals centred on the estimate
    out += [np.histogram(x, EDGES)[0] / x.size, t0, a, b,
            t0 - np.quantile(err, z_hi, axis=0), t0 - np.quantile(err, z_lo, axis=0)]
    return np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in out])


def _print_statistics(S: np.ndarray) -> None:
    """Coverage per statistic of the intervals and of the basic intervals (histogram bins
    with a mean true mass above 0.5 %)."""
    k = 0
    for name, w in _WIDTH:
        t, est, a, b, ba, bb = (S[:, k + w * i:k + w * (i + 1)] for i in range(6))
        k += 6 * w
        keep = t.mean(axis=0) > 0.005 if name == "histogram" else np.ones(w, dtype=bool)
        cov = np.mean((a <= t) & (t <= b), axis=0)[keep]
        basic = np.mean((ba <= t) & (t <= bb), axis=0)[keep]
        print(f"  {name}: coverage {' '.join(f'{c:.3f}' for c in cov)} | basic "
              f"{' '.join(f'{c:.3f}' for c in basic)}")


def _normal_cov(err: np.ndarray, sds: np.ndarray) -> float:
    """The coverage of intervals ``centre -/+ z * s`` (``s`` each repetition's replicates'
    sd) whose centre's error is normal with the measured bias and sd of ``err``."""
    z = NormalDist().inv_cdf(0.975)
    d = NormalDist(float(err.mean()), float(err.std()))
    return float(np.mean([d.cdf(z * s) - d.cdf(-z * s) for s in sds]))


if __name__ == "__main__":
    main()
