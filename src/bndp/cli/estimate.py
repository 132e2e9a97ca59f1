"""``bndp estimate``: statistics of the true values behind released columns of a CSV or
Parquet file (:func:`bndp.estimate`), printed as a table or JSON."""

from __future__ import annotations

import argparse
import json
import math
import os
from typing import Any

import numpy as np

from .._release.spec import _parse_column
from ..estimation import estimate
from ._errors import CLIError, DataError, FileError, _need, int_at_least, workers_arg
from ._io import _guess_format, _read_header, _save_figure, arrow_without_cells
from .privatize import _load_spec_file



#: the most histogram bins ``bndp plot`` draws from a released file
MAX_PLOT_BINS = 10_000

def _read_columns(path: str, fmt: str, names: list[str], delimiter: str) -> dict[str, np.ndarray]:
    """The named columns of a CSV or Parquet file as float64 (NaN where missing)."""
    if not os.path.exists(path):
        raise FileError(f"{path}: no such file")
    kind = _guess_format(path) if fmt == "auto" else fmt
    if kind is None:
        raise CLIError(f"{path}: cannot tell the format from the name; pass --format csv or "
                       "--format parquet")
    pa = _need("pyarrow", "arrow", "bndp estimate")
    try:
        if kind == "parquet":
            pq = _need("pyarrow.parquet", "arrow", "bndp estimate")
            have = pq.read_schema(path).names
            missing = [n for n in names if n not in have]
            if missing:
                raise DataError(f"{path}: column {missing[0]!r} not found; columns are: "
                                f"{', '.join(have)}")
            table = pq.read_table(path, columns=names)
        else:
            pcsv = _need("pyarrow.csv", "arrow", "bndp estimate")
            _read_header(path, delimiter)     # one name a column, as privatize reads it
            table = pcsv.read_csv(path, parse_options=pcsv.ParseOptions(delimiter=delimiter),
                                  convert_options=pcsv.ConvertOptions(
                                      include_columns=names, include_missing_columns=True,
                                      column_types={n: pa.float64() for n in names}))
            for n in names:
                if table.column(n).null_count == len(table) and len(table):
                    raise DataError(f"{path}: column {n!r} not found or empty")
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"{path}: {arrow_without_cells(' '.join(str(exc).split()))}") from None
    out = {}
    for n in names:
        try:
            col = table.column(n).cast(pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise DataError(f"{path}: column {n!r} must be numeric; got "
                            f"{table.column(n).type}") from None
        out[n] = np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64)
    return out


def _cmd_estimate(args: argparse.Namespace) -> int:
    cols, _ = _load_spec_file(args.spec)
    chosen = args.column or list(cols)
    for c in chosen:
        if c not in cols:
            raise CLIError(f"--column {c}: not a column of the spec {args.spec} (its columns: "
                           f"{', '.join(cols)})")
    need: list[str] = []
    for c in chosen:
        entry = cols[c]
        if not isinstance(entry, dict):
            raise CLIError(f"--spec {args.spec}: column {c!r}: expected a table of settings")
        try:    # the spec's own checks, naming the column, before any data is read
            _parse_column(c, entry)
        except (ValueError, TypeError) as exc:
            raise CLIError(f"--spec {args.spec}: {' '.join(str(exc).split())}") from None
        for n in [c] + [entry.get(k) for k in ("lower", "upper")]:
            if isinstance(n, str) and n not in need:
                need.append(n)
    data = _read_columns(args.input, args.format, need, args.delimiter)
    rng = np.random.default_rng(args.seed)
    q = args.quantiles
    results: dict[str, Any] = {}
    for c in chosen:
        entry = dict(cols[c])
        lo = data[entry["lower"]] if isinstance(entry.get("lower"), str) else None
        hi = data[entry["upper"]] if isinstance(entry.get("upper"), str) else None
        for k in ("lower", "upper"):
            if isinstance(entry.get(k), str):
                entry[k] = 0.0 if k == "lower" else 1.0   # replaced by the column's values
        try:
            est = estimate(data[c], entry, lower=lo, upper=hi, level=args.level,
                           n_boot=args.n_boot, rng=rng, target=args.target, nulls="omit",
                           gap_tol=args.gap_tol, workers=args.workers)
        except ValueError as exc:
            raise DataError(f"column {c!r}: {' '.join(str(exc).split())}") from None
        results[c] = est.summary(q)
        if args.bins is not None:
            bounds = [lo, hi]
            for i, b in enumerate(bounds):
                if b is not None:   # per-row bounds: the widest range of the column's rows
                    b = b[~np.isnan(data[c])]
                    bounds[i] = b if b.size else None
            edges = np.linspace(float(entry["lower"]) if bounds[0] is None
                                else float(np.min(bounds[0])),
                                float(entry["upper"]) if bounds[1] is None
                                else float(np.max(bounds[1])), args.bins + 1)
            results[c]["histogram"] = _histogram(est, edges)
    if args.json:
        print(json.dumps({"columns": results}, indent=2))
        return 0
    pct = f"{100 * args.level:g}%"
    head = (f"{'column':<14}{'n':>9}  {'mean':>11}  {pct + ' interval':>25}  {'sd':>10}  "
            f"{'naive mean':>11}")
    print(head)
    for c, r in results.items():
        iv = _interval(r["mean_low"], r["mean_high"])
        print(f"{c:<14}{r['n']:>9}  {r['mean']:>11.5g}  {iv:>25}  {r['sd']:>10.4g}  "
              f"{r['naive_mean']:>11.5g}")
    print()
    print(f"{'column':<14}{'quantile':>9}  {'estimate':>11}  {pct + ' interval':>25}")
    for c, r in results.items():
        for p, v in r["quantiles"].items():
            iv = _interval(v["low"], v["high"])
            print(f"{c:<14}{p:>9}  {v['value']:>11.5g}  {iv:>25}")
    if args.bins is not None:
        print()
        print(f"{'column':<14}{'bin':>21}  {'estimate':>11}  {pct + ' interval':>25}")
        for c, r in results.items():
            for b in r["histogram"]:
                span = f"[{b['from']:.4g}, {b['to']:.4g}" + ("]" if b is r["histogram"][-1]
                                                          else ")")
                iv = _interval(b["low"], b["high"])
                print(f"{c:<14}{span:>21}  {b['probability']:>11.4g}  {iv:>25}")
    bad = [c for c, r in results.items() if not r["converged"]]
    if bad:
        print(f"\nnote: the fit of {', '.join(bad)} stopped at the iteration limit")
    print("\nestimated by maximum likelihood over the release's exact law (post-processing: "
          "no privacy budget is spent); 'naive mean' is the released values' plain mean")
    return 0


def _interval(low: float | None, high: float | None) -> str:
    """An interval as the tables print it; ``-`` without one (``--n-boot 0``)."""
    return "-" if low is None or high is None else f"[{low:.4g}, {high:.4g}]"


def _histogram(est: Any, edges: np.ndarray) -> list[dict[str, Any]]:
    """The estimated probability of each bin ``[edges[k], edges[k + 1])`` (the last bin
    closed) with its interval (None without bootstrap replicates)."""
    p = est.histogram(edges)
    low: np.ndarray | None
    high: np.ndarray | None
    if est.boot.shape[0]:
        low, high = (np.asarray(a, dtype=np.float64) for a in est.histogram_interval(edges))
    else:
        low = high = None
    return [{"from": float(edges[k]), "to": float(edges[k + 1]), "probability": float(p[k]),
             "low": None if low is None else float(low[k]),
             "high": None if high is None else float(high[k])}
            for k in range(p.shape[0])]


def _number(text: str, ok: Any, what: str) -> float:
    """An argument parsed as a float that ``ok`` accepts (NaN fails every comparison)."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not ok(v):
        raise argparse.ArgumentTypeError(f"expected {what}; got {text!r}")
    return v


def _level(text: str) -> float:
    return _number(text, lambda v: 0.0 < v < 1.0, "a number in (0, 1)")


def _quantile(text: str) -> float:
    return _level(text) if text not in ("0", "1") else float(text)


def _gap(text: str) -> float | str | None:
    """``--gap-tol``: ``auto``, ``off`` (the cycle rule alone) or a number of nats."""
    if text in ("auto", "off"):
        return None if text == "off" else text
    try:
        return _number(text, lambda v: 0.0 < v < math.inf, "a finite number > 0")
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected 'auto', 'off' or a finite number > 0; got {text!r}") from None


def _bins(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 2 <= n <= MAX_PLOT_BINS:
        raise argparse.ArgumentTypeError(f"expected an integer from 2 to {MAX_PLOT_BINS}; "
                                         f"got {text!r}")
    return n


def add_parser(sub: Any, delimiter: Any) -> None:
    """Register ``bndp estimate``."""
    p = sub.add_parser(
        "estimate", help="estimate the true columns' mean, sd, quantiles and histogram from "
                         "released data",
        description="Estimate the distribution of the true values behind released columns of "
                    "a CSV or Parquet file (bndp privatize's output), given the release spec "
                    "that released them: maximum likelihood over the release's exact law, "
                    "with bootstrap intervals. Prints the mean with its interval, the sd, "
                    "quantiles and, with --bins, the histogram per column (--json: as JSON). Post-processing of released data: "
                    "no privacy budget is spent. Per-row bounds are read from the file's "
                    "bound columns.",
        epilog="Example: bndp estimate released.parquet --spec release.toml --json")
    p.add_argument("input", help="released .csv or .parquet file")
    p.add_argument("--spec", required=True, metavar="FILE",
                   help="the release spec (TOML or JSON) the file was released with")
    p.add_argument("--column", action="append", metavar="NAME",
                   help="estimate only this released column (repeatable; default: all)")
    p.add_argument("--level", type=_level, default=0.95,
                   help="confidence level of the intervals (default 0.95)")
    p.add_argument("--n-boot", type=int_at_least(0, "an integer >= 0"), default=200,
                   help="bootstrap replicates, 0 for none (default 200)")
    p.add_argument("--target", choices=("column", "population"), default="column",
                   help="intervals for the file's own true values (default) or for a "
                        "population the rows are a sample of")
    p.add_argument("--quantiles", type=_quantile, nargs="+",
                   default=[0.1, 0.25, 0.5, 0.75, 0.9], metavar="Q",
                   help="quantile levels to print (default 0.1 0.25 0.5 0.75 0.9)")
    p.add_argument("--gap-tol", type=_gap, default="auto", metavar="NATS",
                   help="iterate each fit until it is certified within NATS of the maximum "
                        "likelihood (bndp.estimate's gap_tol): auto (the default: 0.1 where "
                        "a law's noise is at least a third of its range), off (the cycle rule "
                        "alone) or a number")
    p.add_argument("--workers", type=workers_arg, default=1,
                   help="threads for the bootstrap's fits of a Laplace release (default 1; "
                        "-1: every CPU; the same results for any number)")
    p.add_argument("--bins", type=_bins, default=None, metavar="N",
                   help="also estimate the histogram of the true values: the probability of "
                        "each of N equal bins over the column's bounds (per-row bounds: the "
                        "lowest lower to the highest upper), with its interval (2 to "
                        f"{MAX_PLOT_BINS}; bins narrower than the noise scale are not "
                        "resolved)")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.add_argument("--format", choices=("auto", "csv", "parquet"), default="auto",
                   help="input format (default: from the file name)")
    p.add_argument("--delimiter", type=delimiter, default=",",
                   help="CSV delimiter (default ','; 'tab' for tabs)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the bootstrap (default: fresh entropy)")
    p.set_defaults(func=_cmd_estimate)


def _cmd_plot_released(args: argparse.Namespace) -> int:
    """``bndp plot RELEASED --spec SPEC --column NAME -o OUT``: the released and the
    estimated histograms of one column."""
    given = [f"--{k}" for k in ("epsilon", "sensitivity", "lower", "upper")
             if getattr(args, k) is not None]
    if given:
        raise CLIError(f"bndp plot {args.input}: the settings come from --spec; drop "
                       f"{', '.join(given)}")
    if not args.spec:
        raise CLIError("bndp plot with a released file needs --spec (the release spec it "
                       "was released with)")
    if not args.column:
        raise CLIError("bndp plot with a released file needs --column NAME (the released "
                       "column to draw)")
    if not 2 <= args.bins <= MAX_PLOT_BINS:     # a million took 79 s and 6.7 GB
        raise CLIError(f"--bins must be from 2 to {MAX_PLOT_BINS}; got {args.bins}")
    if not args.output.lower().endswith((".png", ".svg", ".pdf")):
        raise CLIError(f"{args.output}: the plot is written as .png, .svg or .pdf")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise FileError(f"{args.output}: directory {out_dir} does not exist")
    matplotlib = _need("matplotlib", "plot", "bndp plot")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols, _ = _load_spec_file(args.spec)
    c = args.column
    if c not in cols:
        raise CLIError(f"--column {c}: not a column of the spec {args.spec} (its columns: "
                       f"{', '.join(cols)})")
    entry = dict(cols[c]) if isinstance(cols[c], dict) else None
    if entry is None:
        raise CLIError(f"--spec {args.spec}: column {c!r}: expected a table of settings")
    need = [c] + [n for n in (entry.get("lower"), entry.get("upper")) if isinstance(n, str)]
    data = _read_columns(args.input, args.format, list(dict.fromkeys(need)), args.delimiter)
    bnd = {}
    for k in ("lower", "upper"):
        if isinstance(entry.get(k), str):
            bnd[k] = data[entry[k]]
            entry[k] = 0.0 if k == "lower" else 1.0   # replaced by the column's values
    try:
        est = estimate(data[c], entry, lower=bnd.get("lower"), upper=bnd.get("upper"),
                       n_boot=0, nulls="omit")
    except ValueError as exc:
        raise DataError(f"column {c!r}: {' '.join(str(exc).split())}") from None
    y = data[c][~np.isnan(data[c])]
    lo = float(np.min(bnd["lower"])) if "lower" in bnd else float(entry["lower"])
    hi = float(np.max(bnd["upper"])) if "upper" in bnd else float(entry["upper"])
    edges = np.linspace(lo, hi, args.bins + 1)
    released = np.histogram(y, edges)[0] / y.shape[0]
    fig, ax = plt.subplots(figsize=(args.width, args.height), constrained_layout=True)
    ax.stairs(released, edges, color="tab:red", lw=1.5,
              label=f"released (mean {float(np.mean(y)):.4g})")
    ax.stairs(est.histogram(edges), edges, color="tab:blue", lw=1.5, fill=False,
              label=f"estimated true values (mean {est.mean:.4g})")
    ax.set_xlabel(c)
    ax.set_ylabel(f"share per bin of {(hi - lo) / args.bins:.3g}")
    ax.set_title(f"{c}: {y.shape[0]} released values and the estimated true distribution")
    ax.legend(frameon=False)
    _save_figure(fig, args.output, args.dpi)
    print(f"bndp: wrote {args.output}")
    return 0
