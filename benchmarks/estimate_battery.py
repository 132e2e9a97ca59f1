"""Coverage battery of ``bndp.estimate``'s 95 % intervals (mean, quantiles, histogram bins)
over value shapes, epsilon, sensitivity, both mechanisms, fixed and per-row bounds and
column sizes; writes the table of ``docs/estimates.md`` ("Coverage battery")::

    python benchmarks/estimate_battery.py --list
    python benchmarks/estimate_battery.py --reps 400                       # everything
    python benchmarks/estimate_battery.py --reps 50 --settings payments-laplace rows-scaled
    python benchmarks/estimate_battery.py --reps 50 --write-docs docs/estimates.md
    python benchmarks/estimate_battery.py --reps 200 --jobs 2 --write-docs docs/estimates.md
    python benchmarks/estimate_battery.py --reps 400 --settings scaled --update docs/estimates.md

A setting is named ``SHAPE-MECH[-...]`` (``--list`` prints them); ``--settings`` takes
names or their prefixes. Each setting's repetitions use the seed ``crc32(name) + seed``
(``--seed``): a rerun with the same arguments repeats every column, release and estimate,
whatever ``--jobs`` (settings run in that many processes, one setting a process at a time,
each on one BLAS thread; the table keeps the settings' order).
``--n`` overrides every setting's column size (a quick run). ``--update PATH`` reruns
only the settings chosen: their rows in PATH's table are replaced (or added), the others
kept as they were written, and the pooled row recomputed; use it where a change touches
only those settings' estimates, and say which rows were rerun on which commit.

Two settings release real columns bundled with statsmodels (the RAND Health Insurance
Experiment, ``statsmodels.datasets.randhie``, 20,190 people): ``lpi`` (log of the annual
participation incentive payment: 24 % exact zeros, the rest near the top of ``[0, 8]``)
and ``mdvis`` (visits to a doctor in a year: 31 % zeros, at most 77, on ``[0, 80]``). Their
true column is the same in every repetition (each repetition a fresh release of it, as a
user re-running a release would see), ``--n`` does not apply, and they are skipped, with a
message, where statsmodels is not installed (it is not a dependency of bndp).
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

QS = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
BINS = 8
START, END = "<!-- battery:start -->", "<!-- battery:end -->"


@dataclass(frozen=True)
class Setting:
    shape: str
    mechanism: str
    epsilon: float
    sensitivity: float       # in value units
    lower: float
    upper: float
    n: int
    rows: bool = False       # per-row bounds (values placed by their row's range)

    @property
    def name(self) -> str:
        return (f"{self.shape}-{self.mechanism}-e{self.epsilon:g}-s{self.sensitivity:g}"
                f"-{'rows' if self.rows else 'fixed'}-n{self.n}")


#: the real columns: shape name -> the column of statsmodels' randhie data set
REAL = {"randhie-lpi": "lpi", "randhie-mdvis": "mdvis"}


def _real_column(shape: str) -> np.ndarray | None:
    """A real column (float64), or None where statsmodels is not installed."""
    try:
        from statsmodels.datasets import randhie
    except ImportError:
        return None
    return randhie.load_pandas().data[REAL[shape]].to_numpy(dtype=np.float64)


def _column(s: Setting, n: int, rng: np.random.Generator):
    """True values and bounds (arrays for per-row settings) of one repetition."""
    lo, hi = s.lower, s.upper
    if s.shape in REAL:
        x = _real_column(s.shape)
        assert x is not None and lo <= x.min() and x.max() <= hi
        return x, lo, hi
    w = hi - lo
    if s.shape == "payments":           # 24 % exact zeros, the rest piled near the top
        u = np.clip(1.0 - rng.gamma(2.0, 0.6, n) / 8.0, 0.0, 1.0)
        u[rng.random(n) < 0.24] = 0.0
    elif s.shape == "counts":           # ~60 % zeros, a long tail of counts
        u = np.minimum(rng.negative_binomial(2, 0.15, n), 50) / 50.0
        u[rng.random(n) < 0.6] = 0.0
    elif s.shape == "inner-atom":       # 30 % at one inner value, the rest uniform
        u = np.where(rng.random(n) < 0.3, 0.4, rng.random(n))
    elif s.shape == "skewed":
        u = np.clip(rng.exponential(0.12, n), 0.0, 1.0)
    elif s.shape == "bimodal":
        u = np.clip(np.where(rng.random(n) < 0.4, rng.normal(0.25, 0.04, n),
                             rng.normal(0.75, 0.06, n)), 0.0, 1.0)
    elif s.shape == "near-top":
        u = 1.0 - rng.beta(0.6, 5.0, n)
    elif s.shape == "scaled":           # per-row: lower in [0, 20), width in [10, 90)
        u = rng.beta(0.6, 5.0, n)
    else:
        raise ValueError(f"unknown shape {s.shape!r}")
    if s.rows:
        lo = rng.uniform(0.0, 20.0, n)
        hi = lo + rng.uniform(10.0, 90.0, n)
        return lo + (hi - lo) * u, lo, hi
    if s.shape == "counts":
        u = np.round(u * w) / w
    return lo + w * u, lo, hi


def settings() -> list[Setting]:
    """The battery's settings."""
    out = []
    for mech in ("laplace", "gaussian"):
        out += [
            Setting("payments", mech, 0.25, 0.5, 0.0, 8.0, 20190),
            Setting("counts", mech, 0.5, 1.0, 0.0, 50.0, 20000),
            Setting("inner-atom", mech, 1.0, 1.0, 0.0, 10.0, 10000),
            Setting("skewed", mech, 0.1, 12.0, 0.0, 120.0, 1000),
            Setting("bimodal", mech, 0.5, 1.0, 0.0, 120.0, 10000),
            Setting("near-top", mech, 4.0, 1.0, 0.0, 100.0, 10**6),
            Setting("scaled", mech, 0.5, 1.0, 0.0, 0.0, 20000, rows=True),
            Setting("scaled", mech, 0.5, 1.0, 0.0, 0.0, 10**6, rows=True),
            Setting("randhie-lpi", mech, 0.25, 0.5, 0.0, 8.0, 20190),
            Setting("randhie-mdvis", mech, 0.25, 1.0, 0.0, 80.0, 20190),
        ]
    return out


def run_setting(s: Setting, reps: int, n_boot: int, seed: int, n: int | None = None,
                **options):
    """Coverage of the mean, the quantiles (pooled) and the histogram bins (pooled over
    the bins holding at least 0.5 % of the values) over ``reps`` repetitions, and the
    seconds per estimate; None for a real column where statsmodels is not installed.
    ``options``: more arguments of ``bndp.estimate`` (``gap_tol``)."""
    import bndp
    if s.shape in REAL and _real_column(s.shape) is None:
        return None
    nn = s.n if n is None or s.shape in REAL else n
    rng = np.random.default_rng(zlib.crc32(s.name.encode()) + seed)
    spec = {"mechanism": s.mechanism, "epsilon": s.epsilon, "sensitivity": s.sensitivity}
    mean_hit, q_hit, b_hit, b_tot, secs = 0, 0, 0, 0, 0.0
    err, naive, se, l1, l1_naive, l1_noise = [], [], [], [], [], []
    for _ in range(reps):
        x, lo, hi = _column(s, nn, rng)
        y = bndp.sample(x, lower=lo, upper=hi, rng=rng, **spec)
        t = time.process_time()
        e = bndp.estimate(y, spec, lower=lo, upper=hi, n_boot=n_boot,
                          rng=int(rng.integers(2**62)), **options)
        a, b = e.mean_interval
        qa, qb = e.quantile_interval(QS)
        edges = np.linspace(float(np.min(lo)), float(np.max(hi)), BINS + 1)
        ha, hb = e.histogram_interval(edges)
        secs += time.process_time() - t
        mean_hit += a <= x.mean() <= b
        tq = np.quantile(x, QS, method="inverted_cdf")
        q_hit += int(np.sum((qa <= tq) & (tq <= qb)))
        th = np.histogram(x, edges)[0] / x.size
        keep = th >= 0.005
        b_hit += int(np.sum(((ha <= th) & (th <= hb))[keep]))
        b_tot += int(keep.sum())
        # the errors (item 3): the estimate's and the naive mean's (the released values'
        # mean), the interval's standard error (its half-width over 1.96, before any
        # widening it carries), the histograms' L1 distances to the column's
        yf = np.asarray(y, dtype=np.float64)
        err.append(e.mean - x.mean())
        naive.append(yf.mean() - x.mean())
        se.append((b - a) / (2 * 1.959964))
        l1.append(float(np.abs(e.histogram(edges) - th).sum()))
        l1_naive.append(float(np.abs(np.histogram(yf, edges)[0] / yf.size - th).sum()))
        # the histogram's sampling noise: the bins' standard deviations from n values
        l1_noise.append(float(np.sum(np.sqrt(th * (1 - th) / x.size))))
    err_a, naive_a = np.array(err), np.array(naive)
    return {"name": s.name, "reps": reps, "n": nn, "seed": seed,
            "mean": mean_hit / reps, "quantiles": q_hit / (reps * QS.size),
            "bins": b_hit / max(b_tot, 1), "mean_hits": mean_hit, "secs": secs / reps,
            "rmse": float(np.sqrt(np.mean(err_a ** 2))),
            "rmse_naive": float(np.sqrt(np.mean(naive_a ** 2))),
            "bias": float(err_a.mean()), "se": float(np.mean(se)),
            "l1": float(np.mean(l1)), "l1_naive": float(np.mean(l1_naive)),
            "l1_noise": float(np.mean(l1_noise))}


def error_checks(r: dict) -> dict:
    r"""Item 3 of the targets, per setting: ``tenth`` (the mean's RMS error at most a tenth of
    the naive mean's, judged where the interval's standard error is below a twentieth of
    the naive error; None elsewhere), ``within`` (the RMS error within 2.5 standard errors)
    and ``hist`` (the estimated histogram's mean L1 distance to the column's no worse than
    the released values' by more than the histogram's sampling noise: the sum over the
    bins of :math:`\sqrt{p(1-p)/n}`, the standard deviations of the bins' shares among
    ``n`` values)."""
    judged = r["se"] < r["rmse_naive"] / 20
    return {"tenth": (r["rmse"] <= r["rmse_naive"] / 10) if judged else None,
            "within": r["rmse"] <= 2.5 * r["se"],
            "hist": r["l1"] - r["l1_naive"] <= r["l1_noise"]}


def _header(n_boot: int, gap_tol: Any) -> list[str]:
    return [f"Repetitions per setting and seeds as listed; {n_boot} bootstrap replicates; "
            f"`gap_tol={gap_tol!r}`; "
            "seconds of CPU time per estimate (intervals included) on a shared machine. "
            "Coverage of the 95 % intervals: mean, quantiles, histogram bins. Errors: the "
            "estimated mean's RMS error over the naive mean's (the released values'), the "
            "interval's standard error over the naive RMS error, the RMS error over the "
            "standard error, and the mean L1 distance of the estimated and the released "
            "histograms to the column's, with the histogram's sampling noise (✓/✗: the "
            "targets of item 3, see `error_checks`; – where the tenth is not judged).",
            "",
            "| setting | n | reps | seed | mean | quantiles | histogram bins | error / naive "
            "| s.e. / naive | error / s.e. | histogram L1, estimate / released (noise) | s |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]


def _row(r: dict) -> str:
    def mark(v):
        return "–" if v is None else ("✓" if v else "✗")

    flag = " ✗" if r["mean"] < 0.9 else ""
    c = error_checks(r)
    return (f"| {r['name']} | {r['n']} | {r['reps']} | {r['seed']} | "
            f"{r['mean']:.3f}{flag} | {r['quantiles']:.3f} | {r['bins']:.3f} | "
            f"{r['rmse'] / r['rmse_naive']:.3f} {mark(c['tenth'])} | "
            f"{r['se'] / r['rmse_naive']:.3f} | "
            f"{r['rmse'] / r['se']:.2f} {mark(c['within'])} | "
            f"{r['l1']:.4f} / {r['l1_naive']:.4f} ({r['l1_noise']:.4f}) "
            f"{mark(c['hist'])} | "
            f"{r['secs']:.2f} |")


def _pooled(rows: list[tuple[int, int, float, float]]) -> str:
    """The pooled row from ``(reps, mean_hits, quantiles, bins)`` per setting: the mean's
    coverage over every repetition, the quantiles' and the bins' averaged over the
    settings."""
    total = sum(r[0] for r in rows)
    hits = sum(r[1] for r in rows)
    return (f"| pooled | | {total} | | {hits / max(total, 1):.3f} | "
            f"{np.mean([r[2] for r in rows]):.3f} | "
            f"{np.mean([r[3] for r in rows]):.3f} | | | | | |")


def table(results: list[dict], n_boot: int, gap_tol: Any = "auto") -> str:
    """The Markdown table of the results, with the pooled coverage of the mean."""
    lines = _header(n_boot, gap_tol) + [_row(r) for r in results]
    lines.append(_pooled([(r["reps"], r["mean_hits"], r["quantiles"], r["bins"])
                          for r in results]))
    return "\n".join(lines)


def update_table(old: str, results: list[dict], n_boot: int, gap_tol: Any = "auto") -> str:
    """``old`` (a table written by :func:`table`) with the rows of ``results``' settings
    replaced or added, the rows of the other settings kept, in the order of
    :func:`settings` (rows of names no longer a setting are dropped), and the pooled row
    recomputed (a kept row's mean hits are its coverage times its repetitions). Refuses
    a table written with other bootstrap replicates or ``gap_tol``: its rows would not
    be comparable."""
    head = _header(n_boot, gap_tol)
    lines = old.strip().splitlines()
    if lines[:len(head)] != head:
        raise ValueError("the table in the document was written with other --n-boot or "
                         "--gap-tol; rerun every setting (--write-docs) instead")
    rows: dict[str, tuple[str, tuple[int, int, float, float]]] = {}
    for line in lines[len(head):]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "pooled":
            continue
        reps, mean = int(cells[2]), float(cells[4].split()[0])
        rows[cells[0]] = (line, (reps, round(mean * reps), float(cells[5]),
                                 float(cells[6])))
    for r in results:
        rows[r["name"]] = (_row(r), (r["reps"], r["mean_hits"], r["quantiles"], r["bins"]))
    kept = [rows[s.name] for s in settings() if s.name in rows]
    return "\n".join(head + [k[0] for k in kept] + [_pooled([k[1] for k in kept])])


def read_table(path: str) -> str:
    """The battery's table in ``path`` (between its two markers)."""
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    m = re.search(re.escape(START) + "\n(.*?)\n" + re.escape(END), doc, flags=re.S)
    if m is None:
        raise ValueError(f"{path}: no {START} ... {END} markers around a table")
    return m.group(1)


def write_docs(path: str, text: str) -> None:
    """Replace the battery's table in ``path`` (between its two markers)."""
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    if START not in doc or END not in doc:
        raise ValueError(f"{path}: no {START} ... {END} markers to write the table between")
    doc = re.sub(re.escape(START) + ".*?" + re.escape(END),
                 lambda _: f"{START}\n{text}\n{END}", doc, flags=re.S)
    with open(path, "w", encoding="utf-8") as f:
        f.write(doc)


def _one_thread() -> None:
    """Every BLAS and OpenMP pool of this process on one thread (the times are per
    estimate on one core)."""
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
    except ImportError:                    # pragma: no cover
        pass


def _run(s: Setting, reps: int, n_boot: int, seed: int, n: int | None, options: dict):
    """:func:`run_setting` (a module-level function: ``--jobs`` sends it to other
    processes)."""
    return run_setting(s, reps, n_boot, seed, n, **options)


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=None, help="every setting's column size")
    ap.add_argument("--settings", nargs="+", default=None,
                    help="names or name prefixes of the settings to run (default: all)")
    ap.add_argument("--list", action="store_true", help="print the settings' names")
    ap.add_argument("--write-docs", metavar="PATH", help="write the table into PATH")
    ap.add_argument("--update", metavar="PATH",
                    help="replace or add the rows of the settings run in PATH's table, "
                         "keeping the others (same --n-boot and --gap-tol)")
    ap.add_argument("--gap-tol", default=None, metavar="auto|off|NATS",
                    help="bndp.estimate's gap_tol (default: its own default, auto)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="settings run in this many processes at once (same results)")
    args = ap.parse_args(argv)
    every = settings()
    if args.list:
        text = "\n".join(s.name for s in every)
        print(text)
        return text
    chosen = every if not args.settings else [
        s for s in every if any(s.name.startswith(p) for p in args.settings)]
    if not chosen:
        ap.error("no setting matches --settings; --list prints them")
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    _one_thread()
    options: dict = {}
    if args.gap_tol is not None:
        options["gap_tol"] = (None if args.gap_tol == "off" else
                              "auto" if args.gap_tol == "auto" else float(args.gap_tol))
    run = functools.partial(_run, reps=args.reps, n_boot=args.n_boot, seed=args.seed,
                            n=args.n, options=options)
    if args.jobs > 1:
        import multiprocessing
        import signal
        # a terminated run takes its worker processes with it
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        pool = multiprocessing.get_context("spawn").Pool(min(args.jobs, len(chosen)),
                                                         initializer=_one_thread)
        done = pool.imap(run, chosen, chunksize=1)
    else:
        pool, done = None, map(run, chosen)
    results = []
    try:
        for s, r in zip(chosen, done):
            if r is None:
                print(f"{s.name}: skipped (its real column needs statsmodels: pip install "
                      "statsmodels)", flush=True)
                continue
            print(f"{r['name']}: mean {r['mean']:.3f} quantiles {r['quantiles']:.3f} bins "
                  f"{r['bins']:.3f} ({r['reps']} reps, {r['secs']:.2f} s each)", flush=True)
            results.append(r)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    gap = options.get("gap_tol", "auto")
    text = table(results, args.n_boot, gap)
    print(text)
    if args.write_docs:
        write_docs(args.write_docs, text)
    if args.update:
        write_docs(args.update, update_table(read_table(args.update), results,
                                             args.n_boot, gap))
    return text


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
