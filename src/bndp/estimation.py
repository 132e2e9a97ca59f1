r"""Statistics of the true values from released data: :func:`estimate`.

A bounded mechanism keeps every released value in range by pulling it toward the middle of
the range, so the released column's mean, quantiles and histogram are biased estimates of
the true column's. bndp knows the exact law of every released value: in the default release
(:mod:`bndp.mechanisms.window`) the output of a row :math:`[l, u]` is the grid point
:math:`l + j\gamma`, ``j = 0..n``, with probability

.. math:: P(j \mid i) = w(j - i) / S_i

for a true value whose grid index is ``i``. The released counts are therefore a known
mixture of the laws of the true values, and the distribution of the true values is
estimated by maximum likelihood over that exact law (deconvolution). It is
post-processing of the released data alone: it reads no private data and spends no
privacy budget.

The estimator
-------------
*Support and bins.* The true values of a row are estimated on its release grid thinned to
``M`` points :math:`i_0 = 0 < i_1 < \dots < i_{M-1} = n`, evenly spaced every ``k`` grid
steps, ``k`` the largest step at most ``resolution`` times the noise scale (and ``M`` at
most ``max_support``); both bounds are always support points. The released values are
counted in ``M`` bins, each the grid points nearest to one support point. Detail finer
than the noise scale cannot be resolved from the released data (the likelihood is nearly
flat along it), so the thinning loses little: the mean of a true value between two support
points is carried by the mixture of the two. ``resolution=0`` keeps every grid point
(``M = n + 1``).

*The law of the bins.* :math:`A_{bm} = P(\text{bin } b \mid i_m) = \sum_{j \in b}
w(j - i_m) / S_{i_m}`, summed exactly from the mechanism's own integer kernel table and its
geometric tails (to :math:`2^{-60}` of their mass).

*Maximum likelihood* of the true distribution :math:`g` (on the simplex) given the bin
counts :math:`c_b` out of :math:`N`: maximise :math:`\ell(g) = \sum_b c_b \ln (Ag)_b`. The
EM iteration for this mixture is Richardson–Lucy deconvolution [Ric72]_ [Luc74]_,

.. math:: g_m \leftarrow g_m \sum_b \frac{c_b / N}{(Ag)_b} A_{bm},

which never decreases :math:`\ell`; it is accelerated by SQUAREM [VR08]_ (scheme S3: the
step length :math:`\alpha = -\lVert r\rVert / \lVert v\rVert` from two EM steps, shortened
toward :math:`-1` until the extrapolated point is non-negative, followed by one EM step,
and the plain double EM step kept whenever the extrapolation lowers the likelihood). It
starts from an equal mix of the uniform distribution and the released histogram and stops
when one cycle raises :math:`\ell` by less than ``tol`` (in nats, for the whole column), or
after ``max_iter`` cycles (``converged`` says which).

*Per-row bounds.* Rows are grouped by their bounds: the rows of one group share one law
and one grid, and each group's true distribution is estimated on its own grid. The
column's distribution is the mixture of the groups' weighted by their row counts. The
bounds are public and usually follow the kind of row (a group's true values live in its own
range), so no common distribution is assumed across groups; a group of a few rows is
estimated poorly (the deconvolution has little data), so the estimator needs groups of
many rows each, not a distinct pair of bounds per row.

*Intervals* (parametric bootstrap, ``n_boot`` replicates). A replicate draws a column of
true values from the fitted distribution, :math:`N^* \sim \mathrm{Multinomial}(N, \hat g)`,
releases it through the same law (:math:`c^* \mid N^* \sim \sum_m
\mathrm{Multinomial}(N^*_m, A_{\cdot m})`) and estimates it again with the same procedure
(same start, same stopping rule). For a statistic :math:`T` the replicate's error is
:math:`e^* = T(\hat g^*) - T(N^*/N)` (``target="column"``: the statistic of the column that
was released, whose values are fixed) or :math:`T(\hat g^*) - T(\hat g)`
(``target="population"``: the column as a sample of a larger population), and the interval
at level :math:`1 - a` is the basic bootstrap interval :math:`[T(\hat g) - e^*_{(1-a/2)},
T(\hat g) - e^*_{(a/2)}]`, which also removes the estimator's bias at :math:`\hat g`.
Measured coverage of the column's true mean (``benchmarks/compare.py --estimate-only``, 200
repetitions per setting) is reported in ``docs/estimates.md``.

References
----------
.. [Ric72] W. H. Richardson. "Bayesian-Based Iterative Method of Image Restoration".
   Journal of the Optical Society of America 62(1), 55–59, 1972.
.. [Luc74] L. B. Lucy. "An iterative technique for the rectification of observed
   distributions". The Astronomical Journal 79(6), 745–754, 1974.
.. [VR08] R. Varadhan, C. Roland. "Simple and Globally Convergent Methods for Accelerating
   the Convergence of Any EM Algorithm". Scandinavian Journal of Statistics 35(2),
   335–353, 2008.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ._random import RNGLike, as_generator
from .mechanisms import window

__all__ = ["estimate", "Estimate"]

#: defaults of :func:`estimate`
RESOLUTION = 0.5
MAX_SUPPORT = 512
N_BOOT = 200
TOL = 1e-3
MAX_ITER = 2000


# ------------------------------------------------------------------------------------------
# the law of one group of rows, binned onto its support
# ------------------------------------------------------------------------------------------
class _BinnedLaw:
    """The law of one row class ``[lower, upper]`` on a thinned support: support indices
    ``s`` (fine grid indices), the bin of every fine output index, and ``A`` (bins x
    support, columns summing to 1)."""

    def __init__(self, plan: window.RowPlan, resolution: float, max_support: int) -> None:
        k = plan.kernel
        n = int(plan.n)
        self.plan = plan
        self.lower = float(plan.lower)
        self.gamma = float(plan.gamma)
        self.n = n
        s = _support(n, float(k.scale_grid), resolution, max_support)
        self.s = s
        # bin edges: midpoints between support points (fine indices lo_b..hi_b)
        mid = (s[:-1] + s[1:] + 1) // 2
        self.lo = np.concatenate(([0], mid))
        self.hi = np.concatenate((mid - 1, [n]))
        w, D = _kernel_vector(k, n)
        cpad = np.concatenate(([0.0], np.cumsum(w)))
        top = 2 * D + 1
        hi_i = np.clip(self.hi[:, None] - s[None, :] + D + 1, 0, top)
        lo_i = np.clip(self.lo[:, None] - s[None, :] + D, 0, top)
        A = np.maximum(cpad[hi_i] - cpad[lo_i], 0.0)
        A /= A.sum(axis=0, keepdims=True)
        self.A = np.ascontiguousarray(A)
        self.AT = np.ascontiguousarray(A.T)
        self._cpad, self._D = cpad, D

    def spread(self, points: int = 16) -> np.ndarray:
        """The law of the bins for a true value spread evenly and symmetrically over the cell
        of each interior support point (the fine indices binned to it, at most ``points``
        of them, mean the support point), the end points staying at the bounds: what the bootstrap releases, so that
        its true columns, like real ones, are not confined to the support."""
        s, D, cpad = self.s, self._D, self._cpad
        M = len(s)
        top = 2 * D + 1
        out = self.A.copy()
        for m in range(1, M - 1):
            h = min(int(s[m] - self.lo[m]), int(self.hi[m] - s[m]))
            q = min(points, 2 * h + 1)
            i = s[m] + np.rint(np.linspace(-h, h, q)).astype(np.int64)   # symmetric
            hi_i = np.clip(self.hi[:, None] - i[None, :] + D + 1, 0, top)
            lo_i = np.clip(self.lo[:, None] - i[None, :] + D, 0, top)
            P = np.maximum(cpad[hi_i] - cpad[lo_i], 0.0)
            P /= P.sum(axis=0, keepdims=True)
            out[:, m] = P.mean(axis=1)
        return out

    @property
    def values(self) -> np.ndarray:
        """The support's true values ``lower + s gamma``."""
        return self.lower + self.s.astype(np.float64) * self.gamma

    def bin_counts(self, j: np.ndarray) -> np.ndarray:
        """Counts per bin of released fine indices ``j``."""
        b = np.searchsorted(self.hi, j, side="left")
        return np.bincount(b, minlength=len(self.s)).astype(np.float64)


#: the support is ``EDGE_FINE`` times finer within ``EDGE_SCALES`` noise scales of either
#: bound, where the truncation makes the law of a true value change shape
EDGE_FINE = 4
EDGE_SCALES = 6.0


def _support(n: int, t: float, resolution: float, max_support: int) -> np.ndarray:
    """Support indices on the grid ``0..n`` (``t``: the noise scale in grid steps): every
    ``resolution * t`` steps, ``EDGE_FINE`` times finer within ``EDGE_SCALES * t`` of the
    ends, both ends included; all spacings grown together until at most ``max_support``
    points remain."""
    if resolution == 0 and n + 1 <= max_support:
        return np.arange(n + 1, dtype=np.int64)
    f = 1.0
    W = int(math.ceil(EDGE_SCALES * t))
    while True:
        kc = max(1, int(math.floor(resolution * t * f)))
        kf = max(1, int(math.floor(resolution * t * f / EDGE_FINE)))
        if resolution == 0:
            kc = kf = max(1, int(math.floor(f)))
        if 2 * W >= n:
            parts = [np.arange(0, n + 1, kf)]
        else:
            parts = [np.arange(0, W, kf), np.arange(W, n - W, kc), n - np.arange(W, -1, -kf)]
        s = np.unique(np.concatenate(parts + [np.array([0, n])])).astype(np.int64)
        if len(s) <= max_support:
            return s
        f *= 1.05 * len(s) / max_support


def _kernel_vector(k: window.WindowLaw, n: int) -> tuple[np.ndarray, int]:
    """The kernel weights ``w(d)`` for ``d = -D..D`` (float64), ``D <= n``: the table and
    the geometric tails to ``2^-60`` of their mass (the rest is below double precision of
    every probability)."""
    N = int(k.N)
    tab = np.diff(k.cum).astype(np.float64)              # offsets -N..N
    if k.tailw and n > N:
        p = k.tail_ratio
        reach = int(min(n - N, math.ceil(60 * math.log(2) / -math.log(p)) + 1))
        w1 = k.tailw * math.ldexp(k.tm, -k.sbits)
        tail = w1 * np.exp(np.arange(reach, dtype=np.float64) * math.log(p))
        return np.concatenate((tail[::-1], tab, tail)), N + reach
    if N > n:                                              # the table reaches past the row
        return tab[N - n: N + n + 1], n
    return tab, N


# ------------------------------------------------------------------------------------------
# EM (Richardson-Lucy) with SQUAREM, batched over replicates
# ------------------------------------------------------------------------------------------
def _em(G: np.ndarray, P: np.ndarray, law: _BinnedLaw) -> tuple[np.ndarray, np.ndarray]:
    """One EM step for every row of ``G`` (distributions) against the bin proportions
    ``P``: the next iterate and the log-likelihood per observation of ``G``."""
    F = G @ law.AT
    np.maximum(F, 1e-300, out=F)
    with np.errstate(divide="ignore", invalid="ignore"):
        R = np.where(P > 0, P / F, 0.0)
        L = np.sum(np.where(P > 0, P * np.log(F), 0.0), axis=1)
    return G * (R @ law.A), L


def _start(P: np.ndarray) -> np.ndarray:
    M = P.shape[1]
    return 0.5 / M + 0.5 * P


def _fit(P: np.ndarray, N: float, law: _BinnedLaw, tol: float, max_iter: int
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximum likelihood for each row of bin proportions ``P`` (replicates x bins):
    the distributions, the log-likelihoods per observation and the converged flags."""
    G = _start(P)
    R = P.shape[0]
    L = np.full(R, -np.inf)
    done = np.zeros(R, dtype=bool)
    thr = tol / max(N, 1.0)
    act = np.arange(R)
    for _ in range(max_iter):
        if act.size == 0:
            break
        g0, p = G[act], P[act]
        g1, l0 = _em(g0, p, law)
        g2, l1 = _em(g1, p, law)
        r = g1 - g0
        v = g2 - g1 - r
        sr = np.sqrt(np.einsum("ij,ij->i", r, r))
        sv = np.sqrt(np.einsum("ij,ij->i", v, v))
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = np.where(sv > 0, -sr / sv, -1.0)
        alpha = np.minimum(alpha, -1.0)
        gp = g0 - 2.0 * alpha[:, None] * r + (alpha * alpha)[:, None] * v
        for _ in range(6):   # shorten the step toward -1 (g2) until non-negative
            bad = (gp < 0).any(axis=1)
            if not bad.any():
                break
            alpha = np.where(bad, (alpha - 1.0) / 2.0, alpha)
            gp = g0 - 2.0 * alpha[:, None] * r + (alpha * alpha)[:, None] * v
        bad = (gp < 0).any(axis=1)
        gp[bad] = g2[bad]
        gp /= gp.sum(axis=1, keepdims=True)
        gn, lp = _em(gp, p, law)
        worse = lp < l1
        if worse.any():   # the extrapolation lost likelihood: keep the double EM step
            gn[worse], lw = _em(g2[worse], p[worse], law)
            lp = np.where(worse, l1, lp)
        G[act] = gn
        L[act] = lp
        stop = (lp - l0) < thr
        done[act[stop]] = True
        act = act[~stop]
    # the log-likelihood of the returned iterate
    _, L = _em(G, P, law)
    return G, L, done


# ------------------------------------------------------------------------------------------
# the result
# ------------------------------------------------------------------------------------------
def _quantile(x: np.ndarray, g: np.ndarray, q: Any) -> np.ndarray:
    """Inverse CDF (the smallest support point whose cumulative probability reaches ``q``),
    rows of ``g`` over sorted ``x``."""
    c = np.cumsum(g, axis=-1)
    c /= c[..., -1:]
    qa = np.asarray(q, dtype=np.float64)
    if c.ndim == 1:
        idx = np.searchsorted(c, qa - 1e-12, side="left")
        return x[np.minimum(idx, len(x) - 1)]
    out = np.empty(c.shape[:1] + qa.shape)
    for r in range(c.shape[0]):
        idx = np.searchsorted(c[r], qa - 1e-12, side="left")
        out[r] = x[np.minimum(idx, len(x) - 1)]
    return out


def _hist(x: np.ndarray, g: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Probability per bin ``[e_k, e_k+1)`` (the last bin closed), rows of ``g``."""
    b = np.searchsorted(edges, x, side="right") - 1
    b[x == edges[-1]] = len(edges) - 2
    ok = (b >= 0) & (b < len(edges) - 1)
    onehot = np.zeros((len(x), len(edges) - 1))
    onehot[np.flatnonzero(ok), b[ok]] = 1.0
    return g @ onehot


@dataclass(frozen=True, eq=False)
class Estimate:
    r"""The estimated distribution of a column's true values, and bootstrap intervals.

    Returned by :func:`estimate`; see :mod:`bndp.estimation` for the method.

    Attributes
    ----------
    support : ndarray
        The true values the distribution is placed on (sorted; every group's support).
    probabilities : ndarray
        The estimated probability of each support point (sums to 1).
    n : int
        Released values used.
    level : float
        Confidence level of the intervals.
    target : str
        ``"column"`` or ``"population"`` (what the intervals cover; see :func:`estimate`).
    converged : bool
        Whether the fit (and every bootstrap fit) met the stopping rule.
    groups : int
        Row groups (distinct bounds) estimated separately.
    boot : ndarray
        Bootstrap distributions over ``support`` (``n_boot`` x support).
    boot_truth : ndarray
        The replicates' reference distributions: the drawn columns' (``"column"``) or the
        fit's (``"population"``).
    naive_mean : float
        The released values' plain mean (biased toward the middle of the range).

    Examples
    --------
    >>> import bndp, numpy as np
    >>> m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    >>> y = m.sample(np.full(2000, 1.0), rng=1)
    >>> est = bndp.estimate(y, m, rng=2, n_boot=50)
    >>> round(est.mean, 1), round(float(y.mean()), 1)
    (1.0, 1.9)
    """

    support: np.ndarray
    probabilities: np.ndarray
    n: int
    level: float
    target: str
    converged: bool
    groups: int
    boot: np.ndarray
    boot_truth: np.ndarray
    naive_mean: float

    # point estimates ------------------------------------------------------------------
    @property
    def distribution(self) -> tuple[np.ndarray, np.ndarray]:
        """``(support, probabilities)``: the estimated distribution of the true values."""
        return self.support, self.probabilities

    @property
    def mean(self) -> float:
        """The estimated mean of the true values."""
        return float(self.probabilities @ self.support)

    @property
    def variance(self) -> float:
        """The estimated variance of the true values (of the column, ``ddof = 0``)."""
        d = self.support - self.mean
        return float(self.probabilities @ (d * d))

    @property
    def sd(self) -> float:
        """The estimated standard deviation of the true values."""
        return math.sqrt(self.variance)

    def quantile(self, q: Any) -> Any:
        """The estimated ``q`` quantile(s) of the true values: the smallest support point
        whose estimated cumulative probability reaches ``q`` (a float for a scalar ``q``)."""
        out = _quantile(self.support, self.probabilities, _check_q(q))
        return float(out) if np.ndim(out) == 0 else out

    def histogram(self, edges: Any) -> np.ndarray:
        """Estimated probability mass of the true values in each bin ``[e_k, e_{k+1})``
        (the last bin closed, as :func:`numpy.histogram`). Bins narrower than the noise
        scale are not resolved (see :mod:`bndp.estimation`)."""
        return _hist(self.support, self.probabilities, _check_edges(edges))

    # intervals ------------------------------------------------------------------------
    def _need_boot(self) -> None:
        if self.boot.shape[0] == 0:
            raise ValueError("no bootstrap replicates (n_boot=0): intervals need n_boot >= 2")

    def interval(self, statistic: Callable[[np.ndarray, np.ndarray], Any],
                 level: float | None = None) -> tuple[Any, Any]:
        """Bootstrap interval ``(low, high)`` of any statistic of the distribution:
        ``statistic(support, probabilities)`` (returning a float or an array) evaluated on
        the fit and on every replicate (the basic bootstrap interval; see
        :mod:`bndp.estimation`)."""
        self._need_boot()
        lev = self.level if level is None else _check_level(level)
        t0 = np.asarray(statistic(self.support, self.probabilities), dtype=np.float64)
        tb = np.array([statistic(self.support, b) for b in self.boot], dtype=np.float64)
        tt = np.array([statistic(self.support, b) for b in self.boot_truth],
                      dtype=np.float64)
        return _basic(t0, tb - tt, lev)

    @property
    def mean_interval(self) -> tuple[float, float]:
        """``(low, high)``: the interval of the mean at ``level``."""
        self._need_boot()
        t0 = self.mean
        err = self.boot @ self.support - self.boot_truth @ self.support
        lo, hi = _basic(np.float64(t0), err, self.level)
        a, b = float(self.support[0]), float(self.support[-1])
        return float(min(max(lo, a), b)), float(min(max(hi, a), b))

    @property
    def variance_interval(self) -> tuple[float, float]:
        """``(low, high)``: the interval of the variance at ``level``."""
        lo, hi = self.interval(lambda x, g: g @ (x - g @ x) ** 2)
        return float(max(lo, 0.0)), float(hi)

    def quantile_interval(self, q: Any) -> tuple[Any, Any]:
        """``(low, high)``: the interval of the ``q`` quantile(s) at ``level``."""
        self._need_boot()
        qq = _check_q(q)
        t0 = _quantile(self.support, self.probabilities, qq)
        err = _quantile(self.support, self.boot, qq) - _quantile(self.support,
                                                                  self.boot_truth, qq)
        lo, hi = _basic(np.asarray(t0), err, self.level)
        a, b = self.support[0], self.support[-1]
        lo, hi = np.clip(lo, a, b), np.clip(hi, a, b)
        return (float(lo), float(hi)) if np.ndim(lo) == 0 else (lo, hi)

    def histogram_interval(self, edges: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` arrays: the intervals of each bin's mass at ``level``."""
        self._need_boot()
        e = _check_edges(edges)
        t0 = _hist(self.support, self.probabilities, e)
        err = _hist(self.support, self.boot, e) - _hist(self.support, self.boot_truth, e)
        lo, hi = _basic(t0, err, self.level)
        return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)

    def summary(self, quantiles: Sequence[float] = (0.1, 0.25, 0.5, 0.75, 0.9)) -> dict:
        """A plain dictionary of the estimates and their intervals (what ``bndp estimate
        --json`` prints)."""
        lo, hi = self.mean_interval
        vlo, vhi = self.variance_interval
        q = np.asarray(quantiles, dtype=np.float64)
        qv = np.atleast_1d(self.quantile(q))
        qlo, qhi = self.quantile_interval(q)
        return {
            "n": self.n, "level": self.level, "target": self.target,
            "mean": self.mean, "mean_low": lo, "mean_high": hi,
            "sd": self.sd, "sd_low": math.sqrt(vlo), "sd_high": math.sqrt(vhi),
            "naive_mean": self.naive_mean,
            "quantiles": {f"{float(p):g}": {"value": float(v), "low": float(a),
                                             "high": float(b)}
                          for p, v, a, b in zip(q, qv, np.atleast_1d(qlo),
                                                np.atleast_1d(qhi))},
            "converged": self.converged, "groups": self.groups,
        }


def _basic(t0: np.ndarray, err: np.ndarray, level: float) -> tuple[Any, Any]:
    a = 1.0 - level
    lo_e = np.quantile(err, 1.0 - a / 2.0, axis=0)
    hi_e = np.quantile(err, a / 2.0, axis=0)
    lo, hi = t0 - lo_e, t0 - hi_e
    if np.ndim(lo) == 0:
        return float(lo), float(hi)
    return lo, hi


def _check_q(q: Any) -> np.ndarray:
    qa = np.asarray(q, dtype=np.float64)
    if not np.all((qa >= 0) & (qa <= 1)):
        raise ValueError(f"quantile levels must lie in [0, 1]; got {q!r}")
    return qa


def _check_edges(edges: Any) -> np.ndarray:
    e = np.asarray(edges, dtype=np.float64)
    if e.ndim != 1 or e.size < 2 or not np.all(np.diff(e) > 0) or not np.isfinite(e).all():
        raise ValueError("`edges` must be at least two finite, strictly increasing numbers")
    return e


def _check_level(level: Any) -> float:
    if isinstance(level, (bool, np.bool_)) or not isinstance(
            level, (int, float, np.integer, np.floating)) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"`level` must be a number in (0, 1); got {level!r}")
    return float(level)


# ------------------------------------------------------------------------------------------
# laws of the released values
# ------------------------------------------------------------------------------------------
class _Family:
    """What decides the law of a row besides its bounds: the kernel family, the loss to
    certify and the sensitivity; ``plan`` the fixed-bounds law, if any."""

    def __init__(self, fam: int, target: float, sensitivity: float,
                 plan: window.RowPlan | None, what: str) -> None:
        self.fam = fam
        self.target = target
        self.sensitivity = sensitivity
        self.plan = plan
        self.what = what

    def row(self, lower: float, upper: float) -> window.RowPlan:
        if (self.plan is not None and lower == self.plan.lower
                and upper == self.plan.upper):
            return self.plan
        return window.plan_row(self.fam, self.target, self.sensitivity, lower, upper)


def _continuous_error(what: str) -> ValueError:
    return ValueError(
        f"{what}: mode='continuous' releases raw doubles of the continuous law, whose "
        "outputs are not on a grid; bndp.estimate deconvolves the default release (the "
        "grid law, mode='exact'), whose exact law is known for every row")


def _family(spec: Any) -> tuple[_Family, Any, Any]:
    """The law family of ``spec`` (a mechanism, a spec column's settings or a
    :class:`bndp._release.ColumnPlan`) and its bounds (numbers, or column names)."""
    from ._release import ColumnPlan, SpecError, _parse_column
    from .mechanisms import BoundedGaussian, BoundedLaplace

    if isinstance(spec, Mapping):
        entry = dict(spec)
        entry.setdefault("nulls", "keep")
        bounds = {k: entry.get(k) for k in ("lower", "upper")}
        # per-row bounds given as arrays: parse the settings with placeholder names
        for k in ("lower", "upper"):
            if not isinstance(bounds[k], (str, int, float, np.integer, np.floating,
                                          type(None))):
                entry[k] = f"<{k}>"
        try:
            spec = _parse_column("column", entry)
        except SpecError as exc:
            raise ValueError(str(exc)) from None
        if isinstance(spec.lower, str) and spec.lower == "<lower>":
            spec.lower = bounds["lower"]
        if isinstance(spec.upper, str) and spec.upper == "<upper>":
            spec.upper = bounds["upper"]
    if isinstance(spec, ColumnPlan):
        what = f"spec column {spec.name!r}"
        if spec.mechanism not in ("laplace", "gaussian"):
            raise ValueError(f"{what}: bndp.estimate supports the bounded Laplace and bounded "
                             f"Gaussian mechanisms; got {spec.mechanism!r}")
        if spec.options.get("mode", "exact") == "continuous":
            raise _continuous_error(what)
        if spec.mech is not None:
            fam, _, _ = _family(spec.mech)
            fam.what = what
            return fam, spec.lower, spec.upper
        lap = spec.mechanism == "laplace"
        target = spec.epsilon - math.log1p(-spec.delta) if lap else spec.epsilon
        return (_Family(window.LAPLACE if lap else window.GAUSSIAN, float(target),
                        float(spec.sensitivity), None, what), spec.lower, spec.upper)
    if isinstance(spec, (BoundedLaplace, BoundedGaussian)):
        what = type(spec).__name__
        if spec.mode == "continuous":
            raise _continuous_error(what)
        plan = spec.exact_plan
        if not isinstance(plan, window.RowPlan):
            kind = ("a multivariate box" if getattr(spec, "dim", None) is not None
                    else "a half-line (an infinite bound)")
            raise ValueError(f"{what}: bndp.estimate needs finite scalar bounds; this "
                             f"mechanism releases {kind}")
        fam = window.LAPLACE if isinstance(spec, BoundedLaplace) else window.GAUSSIAN
        return (_Family(fam, float(plan.target), float(spec.sensitivity), plan, what),
                plan.lower, plan.upper)
    raise TypeError("`spec_or_mechanism` must be a BoundedLaplace or BoundedGaussian "
                    "mechanism, or a spec column's settings (a mapping with mechanism, "
                    "epsilon, sensitivity, lower, upper, ...); got "
                    f"{type(spec).__name__}")


def _values(released: Any, name: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Released values as float64 and the missing mask (None when nothing is missing)."""
    from ._columns import to_numpy
    from ._values import approx

    col = to_numpy(released, name)
    v = np.ravel(np.asarray(approx(col.values), dtype=np.float64))
    miss = np.isnan(v)
    return v, (miss if miss.any() else None)


def _bounds_array(b: Any, size: int, key: str) -> np.ndarray:
    a = np.asarray(b, dtype=np.float64)
    if a.ndim == 0:
        return np.full(size, float(a))
    a = np.ravel(a)
    if a.shape[0] != size:
        raise ValueError(f"`{key}` holds {a.shape[0]} bounds for {size} released values")
    if not np.isfinite(a).all():
        raise ValueError(f"`{key}`: per-row bounds must be finite")
    return a


def _grid_index(y: np.ndarray, plan: window.RowPlan, what: str) -> np.ndarray:
    """The grid index of every released value of one row class; an error naming the first
    value that is not a grid point of the row."""
    j = np.rint((y - plan.lower) / plan.gamma)
    ok = (j >= 0) & (j <= plan.n)
    jj = np.where(ok, j, 0).astype(np.int64)
    ok &= (plan.lower + jj.astype(np.float64) * plan.gamma) == y
    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        raise ValueError(
            f"released value {float(y[k])!r} is not an output of {what} on "
            f"[{plan.lower!r}, {plan.upper!r}] (its outputs are the grid points lower + "
            f"j * {plan.gamma!r}, j = 0..{plan.n}): was it released with other settings "
            "(epsilon, sensitivity, bounds, mechanism, mode)?")
    return jj


# ------------------------------------------------------------------------------------------
# estimate
# ------------------------------------------------------------------------------------------
class _Group:
    __slots__ = ("law", "counts", "N")

    def __init__(self, law: _BinnedLaw, counts: np.ndarray) -> None:
        self.law = law
        self.counts = counts
        self.N = float(counts.sum())


def _band(A: np.ndarray, mass: float = 1e-12) -> tuple[np.ndarray, int]:
    """Columns of ``A`` cut to the bins ``m - K..m + K`` (``K`` the smallest half-width
    leaving at most ``mass`` outside in every column), renormalised, as rows (support x
    2K + 1), zero-padded at the ends."""
    M = A.shape[0]
    c = np.cumsum(A, axis=0)
    K = 0
    for K in range(M):
        lo = np.arange(M) - K - 1
        hi = np.arange(M) + K
        below = np.where(lo >= 0, c[np.clip(lo, 0, M - 1), np.arange(M)], 0.0)
        above = 1.0 - np.where(hi < M, c[np.clip(hi, 0, M - 1), np.arange(M)], 1.0)
        if float((below + above).max()) <= mass:
            break
    idx = np.arange(-K, K + 1)[None, :] + np.arange(M)[:, None]
    ok = (idx >= 0) & (idx < M)
    out = np.where(ok, A.T[np.arange(M)[:, None], np.clip(idx, 0, M - 1)], 0.0)
    out /= out.sum(axis=1, keepdims=True)
    return out, K


def _release_counts(law: _BinnedLaw, band: tuple[np.ndarray, int], nstar: np.ndarray,
                    gen: np.random.Generator) -> np.ndarray:
    """Bin counts of a column with ``nstar[m]`` true values at support point ``m``,
    released through the law (one multinomial per occupied support point)."""
    P, K = band
    M = P.shape[0]
    occ = np.flatnonzero(nstar)
    draws = gen.multinomial(nstar[occ], P[occ])
    cols = occ[:, None] + np.arange(-K, K + 1)[None, :]
    ok = (cols >= 0) & (cols < M)
    return np.bincount(cols[ok], weights=draws[ok], minlength=M)


def _fit_group(grp: _Group, n_boot: int, target: str, gen: np.random.Generator,
               tol: float, max_iter: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """The fit of one group, its bootstrap fits and the replicates' references (all over
    the group's support), and whether every fit converged."""
    law = grp.law
    P = (grp.counts / grp.N)[None, :]
    g, _, ok = _fit(P, grp.N, law, tol, max_iter)
    g = g[0]
    M = len(law.s)
    if n_boot == 0:
        return g, np.empty((0, M)), np.empty((0, M)), bool(ok[0])
    Nn = int(round(grp.N))
    nstar = gen.multinomial(Nn, g / g.sum(), size=n_boot)
    # columns cut where the mass left out draws one value in 10^4 replicates on average
    band = _band(law.spread(), 1e-4 / max(Nn, 1))
    Pb = np.empty((n_boot, M))
    for b in range(n_boot):
        Pb[b] = _release_counts(law, band, nstar[b], gen) / Nn
    gb, _, okb = _fit(Pb, grp.N, law, tol, max_iter)
    ref = nstar / Nn if target == "column" else np.broadcast_to(g, gb.shape)
    return g, gb, np.asarray(ref, dtype=np.float64), bool(ok[0] and okb.all())


def _combine(groups: list[_Group], fits: list) -> tuple[np.ndarray, ...]:
    """The column's distribution and replicates over the union of the groups' supports,
    each group weighted by its row count."""
    xs = np.unique(np.concatenate([grp.law.values for grp in groups]))
    Ntot = sum(grp.N for grp in groups)
    B = fits[0][1].shape[0]
    g = np.zeros(len(xs))
    gb = np.zeros((B, len(xs)))
    gr = np.zeros((B, len(xs)))
    for grp, (gg, bb, rr, _) in zip(groups, fits):
        pos = np.searchsorted(xs, grp.law.values)
        w = grp.N / Ntot
        np.add.at(g, pos, w * gg)
        if B:
            gb[:, pos] += w * bb     # positions are distinct within a group
            gr[:, pos] += w * rr
    return xs, g, gb, gr


def estimate(released: Any, spec_or_mechanism: Any, *, lower: Any = None, upper: Any = None,
             level: float = 0.95, n_boot: int = N_BOOT, rng: RNGLike = None,
             target: str = "column", nulls: str = "raise", resolution: float = RESOLUTION,
             max_support: int = MAX_SUPPORT, tol: float = TOL,
             max_iter: int = MAX_ITER) -> Any:
    r"""Estimate the distribution of the true values behind a released column, and its
    mean, variance, quantiles and histogram with confidence intervals.

    Maximum likelihood over the exact law of the release (EM / Richardson–Lucy
    deconvolution [Ric72]_ [Luc74]_ accelerated by SQUAREM [VR08]_): the released counts
    :math:`c_b` are a mixture :math:`\sum_m g_m A_{bm}` of the known laws of the true
    values, and :math:`\hat g = rg\max_g \sum_b c_b \ln (Ag)_b` over distributions
    :math:`g` on the release grid (thinned to ``resolution`` times the noise scale). The
    intervals come from a parametric bootstrap through the same law. See
    :mod:`bndp.estimation` for the details. This is post-processing of released data: it
    spends no privacy budget.

    Parameters
    ----------
    released : array_like, pandas Series, pyarrow array, or a data frame
        The released values (any shape; flattened). A data frame (pandas, Polars, PyArrow)
        with a whole release spec as ``spec_or_mechanism`` estimates every column of the
        spec, reading per-row bounds from the frame's bound columns.
    spec_or_mechanism : mechanism, mapping or release spec
        How the values were released: the :class:`bndp.BoundedLaplace` or
        :class:`bndp.BoundedGaussian` that released them (fixed bounds, the default grid
        law), a spec column's settings (``spec["age"]``: mechanism, epsilon, sensitivity,
        delta, lower, upper, as for :func:`bndp.privatize`), or, with a frame, the whole
        spec ``{column: settings}``.
    lower, upper : float or array_like, optional
        Per-row bounds (one per released value) when the settings name bound columns or
        the values were released by :func:`bndp.sample` with array bounds; they replace the
        bounds of ``spec_or_mechanism``.
    level : float, default 0.95
        Confidence level of the intervals.
    n_boot : int, default 200
        Bootstrap replicates (0: no intervals; the interval methods then raise).
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness of the bootstrap (the estimate itself is deterministic).
    target : {"column", "population"}, default "column"
        What the intervals cover: the statistics of the released column's own true values
        (fixed), or of a population the column is a random sample of (wider: it adds the
        sampling variation of the true values).
    nulls : {"raise", "omit"}, default "raise"
        Missing released values (NaN, nulls): an error, or left out.
    resolution : float, default 0.5
        Spacing of the support in units of the noise scale (0: every grid point).
    max_support : int, default 512
        The most support points per row class (the spacing grows to fit).
    tol : float, default 1e-3
        Stop when one SQUAREM cycle raises the log-likelihood of the whole column by less.
    max_iter : int, default 2000
        The most SQUAREM cycles per fit.

    Returns
    -------
    Estimate or dict
        The estimated distribution with ``mean``, ``mean_interval``, ``variance``,
        ``quantile(q)``, ``histogram(edges)``, ``distribution`` and the other intervals; a
        dict ``{column: Estimate}`` for a frame with a whole spec.

    Raises
    ------
    ValueError
        A released value that is not an output of the given law (another mechanism,
        epsilon, sensitivity or bounds), a missing value with ``nulls="raise"``, no
        values, or a law it cannot estimate: ``mode="continuous"`` (raw doubles of the
        continuous law, not on a grid), a half-line or a multivariate box.

    Examples
    --------
    >>> import bndp, numpy as np
    >>> true = np.random.default_rng(0).exponential(5.0, 5000).clip(0, 60)
    >>> m = bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=0, upper=60)
    >>> released = m.sample(true, rng=1)
    >>> est = bndp.estimate(released, m, rng=2, n_boot=50)
    >>> round(float(true.mean()), 1), round(float(released.mean()), 1), round(est.mean, 1)
    (5.1, 9.6, 5.0)
    >>> lo, hi = est.mean_interval
    >>> bool(lo < true.mean() < hi)
    True

    A released frame, with its spec:

    >>> import pandas as pd
    >>> spec = {"age": {"lower": 0, "upper": 60, "sensitivity": 1, "epsilon": 0.25}}
    >>> frame = bndp.privatize(pd.DataFrame({"age": true}), spec, rng=3)
    >>> est = bndp.estimate(frame, spec, rng=4, n_boot=50)
    >>> round(est["age"].mean, 1)
    5.2
    """
    level = _check_level(level)
    if isinstance(n_boot, (bool, np.bool_)) or not isinstance(n_boot, (int, np.integer)) \
            or n_boot < 0 or n_boot == 1:
        raise ValueError(f"`n_boot` must be 0 or an integer >= 2; got {n_boot!r}")
    if target not in ("column", "population"):
        raise ValueError(f"`target` must be 'column' or 'population'; got {target!r}")
    if nulls not in ("raise", "omit"):
        raise ValueError(f"`nulls` must be 'raise' or 'omit'; got {nulls!r}")
    if not (isinstance(resolution, (int, float, np.integer, np.floating))
            and math.isfinite(resolution) and resolution >= 0):
        raise ValueError(f"`resolution` must be a finite number >= 0; got {resolution!r}")
    if isinstance(max_support, bool) or not isinstance(max_support, (int, np.integer)) \
            or max_support < 2:
        raise ValueError(f"`max_support` must be an integer >= 2; got {max_support!r}")
    if _is_frame(released):
        return _estimate_frame(released, spec_or_mechanism, level=level, n_boot=n_boot,
                               rng=rng, target=target, nulls=nulls, resolution=resolution,
                               max_support=max_support, tol=tol, max_iter=max_iter)
    if isinstance(spec_or_mechanism, Mapping):
        spec_or_mechanism = dict(spec_or_mechanism)
        for k, b in (("lower", lower), ("upper", upper)):
            if b is not None:
                spec_or_mechanism[k] = b
    fam, lo0, hi0 = _family(spec_or_mechanism)
    y, miss = _values(released, "released")
    lo_b = lo0 if lower is None else lower
    hi_b = hi0 if upper is None else upper
    for key, b in (("lower", lo_b), ("upper", hi_b)):
        if isinstance(b, str):
            raise ValueError(f"{fam.what}: {key} is the bound column {b!r}: pass the frame "
                             f"(bndp.estimate(frame, spec)) or the bounds as `{key}=`")
        if b is None:
            raise ValueError(f"{fam.what}: `{key}` is needed")
    per_row = np.ndim(lo_b) > 0 or np.ndim(hi_b) > 0
    if per_row:
        lo_a = _bounds_array(lo_b, y.shape[0], "lower")
        hi_a = _bounds_array(hi_b, y.shape[0], "upper")
    if miss is not None:
        if nulls == "raise":
            first = int(np.flatnonzero(miss)[0])
            raise ValueError(f"{int(miss.sum())} missing released value(s) (NaN/null), the "
                             f"first at position {first}; pass nulls='omit' to leave them out")
        keep = ~miss
        y = y[keep]
        if per_row:
            lo_a, hi_a = lo_a[keep], hi_a[keep]
    if y.shape[0] == 0:
        raise ValueError("no released values to estimate from")
    gen = as_generator(rng)
    groups: list[_Group] = []
    if per_row:
        if not (lo_a < hi_a).all():
            bad = int(np.flatnonzero(~(lo_a < hi_a))[0])
            raise ValueError(f"per-row bounds need lower < upper; position {bad} has "
                             f"lower = {lo_a[bad]!r}, upper = {hi_a[bad]!r}")
        pairs, inv = np.unique(np.stack((lo_a, hi_a), axis=1), axis=0, return_inverse=True)
        inv = np.ravel(inv)
        order = np.argsort(inv, kind="stable")
        ends = np.cumsum(np.bincount(inv, minlength=len(pairs)))
        start = 0
        for gi, (a, b) in enumerate(pairs):
            rows = order[start:ends[gi]]
            start = ends[gi]
            plan = fam.row(float(a), float(b))
            groups.append(_group(y[rows], plan, fam.what, resolution, max_support))
    else:
        plan = fam.row(float(lo_b), float(hi_b))
        groups.append(_group(y, plan, fam.what, resolution, max_support))
    fits = [_fit_group(grp, int(n_boot), target, gen, float(tol), int(max_iter))
            for grp in groups]
    xs, g, gb, gr = _combine(groups, fits)
    return Estimate(xs, g, int(y.shape[0]), level, target, all(f[3] for f in fits),
                    len(groups), gb, gr, float(np.mean(y)))


_LAWS: dict = {}


def _group(y: np.ndarray, plan: window.RowPlan, what: str, resolution: float,
           max_support: int) -> _Group:
    key = (id(plan.kernel), plan.lower, plan.upper, plan.n, resolution, max_support)
    hit = _LAWS.get(key)
    if hit is None or hit[0] is not plan.kernel:
        if len(_LAWS) > 64:
            _LAWS.clear()
        hit = (plan.kernel, _BinnedLaw(plan, resolution, max_support))
        _LAWS[key] = hit
    law = hit[1]
    j = _grid_index(y, plan, what)
    fine = np.bincount(j, minlength=plan.n + 1)
    # bin the fine counts: bins are runs of fine indices lo_b..hi_b
    counts = np.add.reduceat(fine.astype(np.float64), law.lo)
    return _Group(law, counts)


def _is_frame(x: Any) -> bool:
    mod = type(x).__module__
    name = type(x).__name__
    return (mod.startswith("pandas") and name == "DataFrame") or \
        (mod.startswith("polars") and name in ("DataFrame", "LazyFrame")) or \
        (mod.startswith("pyarrow") and name == "Table")


def _estimate_frame(frame: Any, spec: Any, **kw: Any) -> dict:
    """Every column of a release spec, from a released frame (per-row bounds read from the
    frame's bound columns)."""
    import narwhals.stable.v2 as nw

    from ._release import parse_spec

    if not isinstance(spec, Mapping):
        raise TypeError("with a data frame, `spec_or_mechanism` must be the release spec "
                        "{column: settings}")
    try:
        plans = parse_spec(spec)
    except ValueError:
        raise
    f = nw.from_native(frame, eager_only=False)
    if hasattr(f, "collect"):
        f = f.collect()
    out = {}
    for p in plans:
        if p.name not in f.columns:
            raise ValueError(f"spec column {p.name!r} not found in the frame; columns are: "
                             f"{', '.join(map(str, f.columns))}")
        vals = np.asarray(f.get_column(p.name).cast(nw.Float64).to_numpy(), dtype=np.float64)
        bnds = {}
        for key in ("lower", "upper"):
            b = getattr(p, key)
            if isinstance(b, str):
                if b not in f.columns:
                    raise ValueError(f"spec column {p.name!r}, key {key!r}: bound column "
                                     f"{b!r} not found in the frame")
                bnds[key] = np.asarray(f.get_column(b).cast(nw.Float64).to_numpy(),
                                       dtype=np.float64)
        col_kw = dict(kw)
        if p.nulls == "keep":   # the release kept missing cells: they carry nothing
            col_kw["nulls"] = "omit"
        out[p.name] = estimate(vals, p, lower=bnds.get("lower"), upper=bnds.get("upper"),
                               **col_kw)
    return out
