"""Side-by-side comparison of bndp's integer law with other libraries' integer mechanisms on
the integers of [0, 120] at sensitivity 1: bndp's bounded discrete Laplace and bounded
discrete Gaussian (``integer=True``), diffprivlib's ``GeometricTruncated`` and
``GeometricFolded`` and OpenDP's discrete Laplace with its output clamped into the range.
Writes the tables and the figure of ``docs/integer.md``::

    python benchmarks/compare_integer.py                          # tables and the draws check
    python benchmarks/compare_integer.py --write-docs docs/integer.md \\
        --plot docs/img/integer_comparison.png
    python benchmarks/compare_integer.py --speed                  # integer law vs grid law
    python benchmarks/compare_integer.py --speed --write-docs docs/integer.md
    python benchmarks/compare_integer.py --dpl-python /path/to/venv/bin/python

Bias, mean squared error, the mass at each bound and the realised privacy loss are computed
exactly from each law's probability mass function over all 121 true values and all 121
outputs, not from draws: bndp's own ``pmf``; for the peers, the closed forms below (the
two-sided geometric law :math:`P(z) = \\frac{1-a}{1+a} a^{|z|}`, :math:`a = e^{-\\epsilon}`,
clamped or folded into the range). Each closed form is checked against 10^5 of the library's
own draws at one setting (``--check-eps``, ``--check-value``): a chi-squared test over the
outputs (cells of expected count below 5 pooled) and the total-variation distance.

diffprivlib 0.6.6 needs scikit-learn < 1.8: its draws are taken in the current interpreter
if it imports there, otherwise in the interpreter given by ``--dpl-python`` (or the
environment variable ``BNDP_DPL_PYTHON``), e.g. a separate virtual environment with
``pip install diffprivlib==0.6.6 "scikit-learn<1.8"``; without either the check of its
draws is skipped (the closed forms need no diffprivlib). OpenDP (``pip install opendp``)
draws from the operating system's randomness: its check cannot be repeated draw for draw.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from importlib import resources

import numpy as np

LOWER, UPPER = 0, 120
EPSILONS = (0.1, 0.5, 1.0, 2.0)
VALUES = (0, 1, 5, 30, 60, 115, 119, 120)
Y = np.arange(LOWER, UPPER + 1)
START, END = "<!-- integer-comparison:start -->", "<!-- integer-comparison:end -->"
SPEED_START, SPEED_END = "<!-- integer-speed:start -->", "<!-- integer-speed:end -->"

LAWS = ("bndp-laplace", "bndp-gaussian", "dpl-truncated", "dpl-folded", "opendp-clamped")
LABELS = {
    "bndp-laplace": "bndp BoundedLaplace",
    "bndp-gaussian": "bndp BoundedGaussian",
    "dpl-truncated": "diffprivlib GeometricTruncated",
    "dpl-folded": "diffprivlib GeometricFolded",
    "opendp-clamped": "OpenDP discrete Laplace, clamped",
}


# the laws: P[x, y] = P(output y | true value x), x and y the integers of [LOWER, UPPER] ------
def geometric_log_pmf(z: np.ndarray, epsilon: float) -> np.ndarray:
    r"""Log-probabilities of the two-sided geometric (discrete Laplace) law of
    sensitivity 1, :math:`\log\frac{1-a}{1+a} + |z| \log a`, :math:`a = e^{-\epsilon}`:
    the noise of diffprivlib's ``Geometric`` and of OpenDP's integer ``make_laplace`` at
    scale :math:`1/\epsilon`."""
    return (np.log(-np.expm1(-epsilon)) - np.log1p(np.exp(-epsilon))
            - epsilon * np.abs(np.asarray(z, dtype=np.float64)))


def truncated_geometric(epsilon: float) -> np.ndarray:
    r"""The two-sided geometric law clamped into the range (diffprivlib's
    ``GeometricTruncated``; OpenDP's discrete Laplace with its output clamped): inside,
    :math:`P(y \mid x) = \frac{1-a}{1+a} a^{|y-x|}`; at the bounds the whole tail beyond,
    :math:`P(l \mid x) = a^{x-l}/(1+a)` and :math:`P(u \mid x) = a^{u-x}/(1+a)`."""
    x = Y[:, None]
    a = np.exp(-epsilon)
    P = np.exp(geometric_log_pmf(Y[None, :] - x, epsilon))
    P[:, 0] = np.exp(-epsilon * (Y - LOWER)) / (1.0 + a)
    P[:, -1] = np.exp(-epsilon * (UPPER - Y)) / (1.0 + a)
    return P


def fold(v: np.ndarray) -> np.ndarray:
    """diffprivlib's fold of an integer into [LOWER, UPPER] (reflection at each bound,
    repeated): ``v < l`` goes to ``2l - v``, ``v > u`` to ``2u - v``."""
    w = UPPER - LOWER
    t = np.mod(np.asarray(v) - LOWER, 2 * w)
    return LOWER + np.where(t <= w, t, 2 * w - t)


def folded_geometric(epsilon: float) -> np.ndarray:
    r"""The two-sided geometric law folded into the range (diffprivlib's
    ``GeometricFolded``): :math:`P(y \mid x)` sums the noise's mass over every :math:`z`
    with ``fold(x + z) == y``. Offsets up to :math:`|z| \le K` with
    :math:`K = (u - l) + \lceil 60/\epsilon\rceil` are summed: every output's nearest
    offset is within :math:`u - l`, so the mass left out is below :math:`e^{-60}` of each
    output's."""
    K = (UPPER - LOWER) + int(np.ceil(60.0 / epsilon))
    z = np.arange(-K, K + 1)
    pz = np.exp(geometric_log_pmf(z, epsilon))
    P = np.zeros((Y.size, Y.size))
    for i, x in enumerate(Y):
        P[i] = np.bincount(fold(x + z) - LOWER, weights=pz, minlength=Y.size)
    return P


def bndp_mechanism(mechanism: str, epsilon: float):
    """bndp's integer-law mechanism (``"laplace"`` or ``"gaussian"``) on the range."""
    import bndp
    cls = bndp.BoundedLaplace if mechanism == "laplace" else bndp.BoundedGaussian
    return cls(epsilon, sensitivity=1, lower=LOWER, upper=UPPER, integer=True)


def bndp_law(mechanism: str, epsilon: float) -> tuple[np.ndarray, float, object]:
    """bndp's integer law: its ``pmf`` over every output for every true value, its
    certified privacy loss and the mechanism."""
    m = bndp_mechanism(mechanism, epsilon)
    P = np.asarray(m.pmf(Y[None, :], Y[:, None]), dtype=np.float64)
    return P, float(m.privacy_loss()), m


def law_matrix(law: str, epsilon: float) -> np.ndarray:
    if law.startswith("bndp-"):
        return bndp_law(law[5:], epsilon)[0]
    return folded_geometric(epsilon) if law == "dpl-folded" else truncated_geometric(epsilon)


# what is compared ------------------------------------------------------------------------------
def ages() -> np.ndarray:
    """The ages of ``people.csv`` (bundled with bndp): 1000 integers in [5, 116]."""
    text = (resources.files("bndp") / "data" / "people.csv").read_text(encoding="utf-8")
    rows = [line.split(",") for line in text.strip().splitlines()]
    col = rows[0].index("age")
    return np.array([int(r[col]) for r in rows[1:]], dtype=np.int64)


def metrics(P: np.ndarray) -> dict:
    """Per true value: bias, mean squared error, the mass at each bound; and the realised
    privacy loss, the largest ``|log P(y|x) - log P(y|x+1)|`` over neighbours and outputs
    where both probabilities are positive (``unlisted``: the pairs where exactly one is
    zero; an exact law has none, bndp's ``pmf`` lists outputs down to 2^-60 of the law)."""
    d = Y[None, :] - Y[:, None]
    bias = P @ Y - Y
    mse = (P * d * d).sum(axis=1)
    a, b = P[:-1], P[1:]
    both = (a > 0) & (b > 0)
    loss = float(np.max(np.abs(np.log(a[both]) - np.log(b[both]))))
    return {"bias": bias, "mse": mse, "lower": P[:, 0].copy(), "upper": P[:, -1].copy(),
            "total": P.sum(axis=1), "loss": loss, "unlisted": int(np.sum((a > 0) != (b > 0)))}


def column_summary(m: dict, column: np.ndarray) -> dict:
    """A column's averages: the bias of its released mean, the mean squared error per row
    and the share of rows released at each bound."""
    w = np.bincount(column - LOWER, minlength=Y.size) / column.size
    return {k: float(w @ m[k]) for k in ("bias", "mse", "lower", "upper")}


def compare(epsilons=EPSILONS) -> dict:
    """Every law's metrics at every epsilon, bndp's certificates and the seconds taken."""
    out: dict = {"metrics": {}, "certified": {}}
    for eps in epsilons:
        for law in LAWS:
            if law.startswith("bndp-"):
                P, cert, _ = bndp_law(law[5:], eps)
                out["certified"][law, eps] = cert
            else:
                P = law_matrix(law, eps)
            out["metrics"][law, eps] = metrics(P)
    return out


# the closed forms against each library's own draws ----------------------------------------------
_DPL_SNIPPET = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
import diffprivlib
from diffprivlib.mechanisms import GeometricFolded, GeometricTruncated
eps, value, n, seed, lo, hi = json.loads(sys.argv[1])
out = {"version": diffprivlib.__version__}
for name, cls in (("dpl-truncated", GeometricTruncated), ("dpl-folded", GeometricFolded)):
    m = cls(epsilon=eps, sensitivity=1, lower=lo, upper=hi, random_state=seed)
    out[name] = np.bincount([m.randomise(value) - lo for _ in range(n)],
                            minlength=hi - lo + 1).tolist()
print(json.dumps(out))
"""


def diffprivlib_counts(python: str | None, eps: float, value: int, n: int, seed: int):
    """Output counts of ``n`` draws of diffprivlib's two mechanisms (and its version), or
    ``None`` when diffprivlib is not available."""
    try:
        import diffprivlib  # noqa: F401
        python = sys.executable
    except ImportError:
        pass
    if python is None:
        return None
    r = subprocess.run([python, "-c", _DPL_SNIPPET,
                        json.dumps([eps, value, n, seed, LOWER, UPPER])],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("diffprivlib run failed:\n" + r.stderr[-2000:])
        return None
    return json.loads(r.stdout)


def opendp_counts(eps: float, value: int, n: int):
    """Output counts of ``n`` draws of OpenDP's integer discrete Laplace at scale
    ``1/eps`` (its privacy map checked to give ``eps`` at sensitivity 1), clamped into the
    range, and OpenDP's version; ``None`` without OpenDP."""
    try:
        from importlib.metadata import version

        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=dp.i64)),
                             dp.l1_distance(T=dp.i64), scale=1.0 / eps)
    mapped = meas.map(1)
    if not mapped <= eps * (1 + 1e-9):
        raise ValueError(f"OpenDP's privacy map gives {mapped} at scale 1/{eps}")
    y = np.clip(np.asarray(meas([value] * n), dtype=np.int64), LOWER, UPPER)
    return {"version": version("opendp"), "opendp-clamped": np.bincount(
        y - LOWER, minlength=Y.size).tolist(), "map": float(mapped)}


def bndp_counts(eps: float, value: int, n: int, seed: int) -> dict:
    """Output counts of ``n`` draws of bndp's two integer laws (int64 in, int64 out)."""
    out = {}
    for law in ("bndp-laplace", "bndp-gaussian"):
        m = bndp_mechanism(law[5:], eps)
        y = m.sample(np.full(n, value, dtype=np.int64), rng=seed)
        if y.dtype != np.int64 or y.min() < LOWER or y.max() > UPPER:
            raise ValueError(f"{law}: outputs of dtype {y.dtype} in [{y.min()}, {y.max()}]")
        out[law] = np.bincount(y - LOWER, minlength=Y.size).tolist()
    return out


def goodness(counts, p: np.ndarray) -> tuple[float, float]:
    """Chi-squared p-value of ``counts`` against the probabilities ``p`` (outputs of
    expected count below 5 pooled into one cell) and the total-variation distance."""
    from scipy import stats
    c = np.asarray(counts, dtype=np.float64)
    n = c.sum()
    e = n * p
    small = e < 5
    obs = np.append(c[~small], c[small].sum())
    exp = np.append(e[~small], e[small].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    exp *= obs.sum() / exp.sum()
    pval = float(stats.chisquare(obs, exp).pvalue)
    return pval, 0.5 * float(np.abs(c / n - p).sum())


def check_draws(eps: float, value: int, n: int, seed: int, dpl_python: str | None) -> list:
    """``[(law, library version, chi-squared p-value, total variation)]`` of each law's
    draws against its pmf (closed form for the peers, ``pmf`` for bndp)."""
    import bndp
    rows = []
    got = {"bndp": ({"version": bndp.__version__} | bndp_counts(eps, value, n, seed)),
           "diffprivlib": diffprivlib_counts(dpl_python, eps, value, n, seed),
           "opendp": opendp_counts(eps, value, n)}
    for law in LAWS:
        lib = {"bndp": "bndp", "dpl": "diffprivlib", "opendp": "opendp"}[law.split("-")[0]]
        res = got[lib]
        if res is None:
            rows.append((law, None, None, None))
            continue
        p = law_matrix(law, eps)[value - LOWER]
        rows.append((law, res["version"], *goodness(res[law], p)))
    return rows


# tables and the figure ------------------------------------------------------------------------
def _fmt_p(p: float) -> str:
    """A probability: three decimals, a power of ten below 0.001, ``<1e-6`` below 10^-6."""
    return f"{p:.3f}" if p >= 0.001 else (f"{p:.1e}" if p >= 1e-6 else "<1e-6")


def _fmt_loss(loss: float, eps: float) -> str:
    """A realised loss to 8 decimals, marked ✓ when at most epsilon (to 10^-12)."""
    return f"{loss:.8f}" + (" ✓" if loss <= eps * (1 + 1e-12) else " ✗")


def tables(res: dict, column: np.ndarray, checks: list | None, epsilons=EPSILONS) -> str:
    """The Markdown text of the comparison: per epsilon, bias and MSE per true value and
    law, and the mass at each bound; the realised privacy loss; the draws check."""
    head = "| true value | " + " | ".join(LABELS[k] for k in LAWS) + " |"
    rule = "|---" * (len(LAWS) + 1) + "|"
    lines = ["Each cell is computed exactly from the law's probability mass function over "
             "the 121 outputs (no draws). Sensitivity 1, range [0, 120]; the ages column is "
             f"`people.csv`'s {column.size} ages (bndp's bundled sample data): the bias of "
             "its released mean, the mean squared error per row and the share of rows "
             "released at each bound."]
    for eps in epsilons:
        rows_b = [f"**ε = {eps:g}**: bias / mean squared error", "", head, rule]
        rows_m = ["", f"**ε = {eps:g}**: mass at the lower bound / at the upper bound, "
                  "P(0) / P(120)", "", head, rule]
        for v in list(VALUES) + ["ages"]:
            cb, cm = [], []
            for law in LAWS:
                m = res["metrics"][law, eps]
                if v == "ages":
                    s = column_summary(m, column)
                else:
                    s = {k: float(m[k][v - LOWER]) for k in ("bias", "mse", "lower", "upper")}
                cb.append(f"{round(s['bias'], 2) + 0.0:+.2f} / {s['mse']:.3g}")
                cm.append(f"{_fmt_p(s['lower'])} / {_fmt_p(s['upper'])}")
            name = "ages column" if v == "ages" else str(v)
            rows_b.append(f"| {name} | " + " | ".join(cb) + " |")
            rows_m.append(f"| {name} | " + " | ".join(cm) + " |")
        lines += ["", *rows_b, *rows_m]
    lines += ["", "**Realised privacy loss**: the largest |log P(y|x) − log P(y|x+1)| over "
              "the neighbouring true values x, x + 1 of [0, 120] and every output y (for "
              "bndp, over the outputs its `pmf` lists, and in brackets the certificate "
              "`privacy_loss()`, computed from the sampler's integer table over every "
              "output); ✓: at most ε", "",
              "| law | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |",
              "|---" * (len(epsilons) + 1) + "|"]
    for law in LAWS:
        cells = []
        for eps in epsilons:
            c = _fmt_loss(res["metrics"][law, eps]["loss"], eps)
            if (law, eps) in res["certified"]:
                c += f" ({_fmt_loss(res['certified'][law, eps], eps)})"
            cells.append(c)
        lines.append(f"| {LABELS[law]} | " + " | ".join(cells) + " |")
    if checks:
        eps, value, n, rows = checks
        lines += ["", f"**Each pmf against the library's own draws**: {n:,} draws at ε = "
                  f"{eps:g}, true value {value}; chi-squared test over the outputs (cells of "
                  "expected count below 5 pooled) and total-variation distance", "",
                  "| law | library version | chi-squared p-value | total variation |",
                  "|---|---|---|---|"]
        for law, ver, pval, tv in rows:
            if ver is None:
                lines.append(f"| {LABELS[law]} | not available | | |")
            else:
                lines.append(f"| {LABELS[law]} | {ver} | {pval:.3f} | {tv:.4f} |")
    return "\n".join(lines)


def plot(res: dict, path: str, epsilons=EPSILONS) -> None:
    """Bias, root mean squared error and the mass at the bounds against the true value,
    one column of panels per epsilon."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    style = {"bndp-laplace": ("tab:blue", "-"), "bndp-gaussian": ("tab:green", "-"),
             "dpl-truncated": ("tab:red", "-"), "dpl-folded": ("tab:orange", "-"),
             "opendp-clamped": ("k", ":")}
    fig, axes = plt.subplots(3, len(epsilons), figsize=(3.2 * len(epsilons), 7.6),
                             sharex=True, squeeze=False)
    for j, eps in enumerate(epsilons):
        for law in LAWS:
            m = res["metrics"][law, eps]
            c, ls = style[law]
            kw = dict(color=c, ls=ls, lw=1.3, label=LABELS[law])
            axes[0, j].plot(Y, m["bias"], **kw)
            axes[1, j].plot(Y, np.sqrt(m["mse"]), **kw)
            axes[2, j].plot(Y, m["lower"] + m["upper"], **kw)
        axes[0, j].set_title(f"ε = {eps:g}")
        axes[2, j].set_xlabel("true value")
    axes[0, 0].set_ylabel("bias")
    axes[1, 0].set_ylabel("root mean squared error")
    axes[2, 0].set_ylabel("P(0) + P(120)")
    axes[0, 0].legend(frameon=False, fontsize=7)
    fig.suptitle("Integer mechanisms on [0, 120], sensitivity 1 (exact, from each pmf)")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def write_docs(path: str, text: str, start: str = START, end: str = END) -> None:
    """Replace the text in ``path`` between the markers ``start`` and ``end`` (the
    comparison's by default; the timing's with :data:`SPEED_START`, :data:`SPEED_END`)."""
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    if start not in doc or end not in doc:
        raise ValueError(f"{path}: no {start} ... {end} markers to write the tables between")
    doc = re.sub(re.escape(start) + ".*?" + re.escape(end),
                 lambda _: f"{start}\n{text}\n{end}", doc, flags=re.S)
    with open(path, "w", encoding="utf-8") as f:
        f.write(doc)


# speed: the integer law against the default grid law -------------------------------------------
def speed(n: int = 10**6, repeat: int = 9, seed: int = 0,
          steps: tuple = (1, 5)) -> list[dict]:
    """CPU seconds of releasing ``n`` int64 values on [0, 120] (or per-row ranges [0, u],
    u in {100, 120, 150}) by :func:`bndp.sample` with the integer law of each lattice step
    ``k`` in ``steps`` (``integer=k``; 5 is not a power of two: the law of step 1 on the
    lattice's indices, mapped) against the default grid law (``integer=False``), at
    epsilon 1 and sensitivity ``k``: medians of ``repeat`` interleaved runs (each
    configuration once per round, after one untimed release that builds its plan), and
    their ratio."""
    import bndp
    r = np.random.default_rng(seed)
    values = r.integers(0, 101, n)
    bounds = {"fixed": (LOWER, UPPER),
              "per-row": (np.zeros(n, dtype=np.int64),
                          r.choice(np.array([100, 120, 150], dtype=np.int64), n))}
    configs = [(mech, where, k, integer) for mech in ("laplace", "gaussian")
               for where in bounds for k in steps for integer in (k, False)]
    gen = np.random.default_rng(seed + 1)

    def release(mech, where, k, integer):
        lo, hi = bounds[where]
        return bndp.sample(values, mechanism=mech, epsilon=1.0, sensitivity=k, lower=lo,
                           upper=hi, integer=integer, rng=gen)

    times: dict = {c: [] for c in configs}
    for c in configs:
        y = release(*c)
        want = np.int64 if c[3] else np.float64
        if y.dtype != want:
            raise ValueError(f"{c}: released dtype {y.dtype}, expected {np.dtype(want)}")
    for _ in range(repeat):
        for c in configs:
            t = time.process_time()
            release(*c)
            times[c].append(time.process_time() - t)
    out = []
    for mech in ("laplace", "gaussian"):
        for where in bounds:
            for k in steps:
                ti = float(np.median(times[mech, where, k, k]))
                tg = float(np.median(times[mech, where, k, False]))
                out.append({"mechanism": mech, "bounds": where, "step": k, "integer_s": ti,
                            "grid_s": tg, "ratio": ti / tg})
    return out


def speed_table(rows: list[dict], n: int, repeat: int) -> str:
    lines = [f"Releasing {n:,} int64 values, epsilon 1, sensitivity = the step k: CPU "
             f"seconds, medians of {repeat} interleaved runs (a shared machine: the ratios "
             "are the result)", "",
             "| mechanism | bounds | step k | integer law (s) | grid law (s) | ratio |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['mechanism']} | {r['bounds']} | {r['step']} | "
                     f"{r['integer_s']:.4f} | {r['grid_s']:.4f} | {r['ratio']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> str:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dpl-python", default=os.environ.get("BNDP_DPL_PYTHON"),
                    help="an interpreter where diffprivlib imports (for its draws)")
    ap.add_argument("--draws", type=int, default=10**5, help="draws per law in the check")
    ap.add_argument("--check-eps", type=float, default=0.5)
    ap.add_argument("--check-value", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-check", action="store_true", help="skip the draws check")
    ap.add_argument("--write-docs", metavar="PATH", help="write the tables into PATH")
    ap.add_argument("--plot", metavar="PNG", help="draw the figure into PNG")
    ap.add_argument("--speed", action="store_true",
                    help="time the integer law against the grid law instead")
    ap.add_argument("--n", type=int, default=10**6, help="values per release (--speed)")
    ap.add_argument("--repeat", type=int, default=9, help="interleaved runs (--speed)")
    args = ap.parse_args(argv)
    if args.speed:
        text = speed_table(speed(args.n, args.repeat, args.seed), args.n, args.repeat)
        print(text)
        if args.write_docs:
            write_docs(args.write_docs, text, SPEED_START, SPEED_END)
        return text
    if not LOWER <= args.check_value <= UPPER:
        ap.error(f"--check-value must lie in [{LOWER}, {UPPER}]")
    t = time.perf_counter()
    res = compare()
    checks = None
    if not args.no_check:
        checks = (args.check_eps, args.check_value, args.draws,
                  check_draws(args.check_eps, args.check_value, args.draws, args.seed,
                              args.dpl_python))
    text = tables(res, ages(), checks)
    print(text)
    print(f"({time.perf_counter() - t:.1f} s)", file=sys.stderr)
    if args.plot:
        plot(res, args.plot)
    if args.write_docs:
        write_docs(args.write_docs, text)
    return text


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
