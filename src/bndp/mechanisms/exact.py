r"""The default release law: a table of integer weights on a power-of-two grid, sampled by an
integer inverse CDF, with its privacy loss certified from the same table.

(Since 0.4 the univariate bounded mechanisms and per-row bounds release the *windowed* grid
law of :mod:`bndp.mechanisms.window`: a table over the kernel's effective support with
geometric tails, anchored at the lower bound, certified in O(n). The whole-range law below
remains the law of the multivariate Gaussian (:class:`ProductPlan`) and of
:class:`ConstrainedPlan`.)

Why. A floating-point sampler such as ``q + b * log(u)`` or an inverse CDF evaluated in
doubles does not release a sample of the continuous law: it releases one of finitely many
doubles, and which doubles can appear depends on ``q`` (Mironov [Mir12]_). An observer who
sees one output that input ``q`` can produce and its neighbour ``q'`` cannot learns which
was used: against an observer of the raw doubles the privacy loss is infinite. The grid law
removes that structure:

1. the true value ``q`` (clipped into :math:`[l, u]`) is rounded to the grid
   :math:`\gamma\mathbb{Z}` (nearest point, ties up), :math:`\gamma = 2^e`, then clipped to
   the grid points :math:`(k_l + j)\gamma`, ``j = 0..n``, of :math:`[l, u]`: index ``i``;
2. the output index ``j`` is drawn from the law defined by integer weights
   :math:`W_d = \operatorname{rint}(2^K \kappa(d)) + F`, :math:`d \in [-n, n]`, with the
   Laplace kernel :math:`\kappa(d) = e^{-|d|/t}` or the Gaussian kernel
   :math:`\kappa(d) = e^{-d^2/(2s^2)}` (scale ``t`` or ``s`` in grid steps):

   .. math:: P(j \mid i) = W_{j-i} / S_i, \qquad S_i = \sum_{j=0}^{n} W_{j-i};

   ``F = 2^12`` gives every grid point a positive weight under every input (the support
   does not depend on ``q``) and mixes in a uniform law of negligible mass
   (:math:`(n+1)F/S_i \le 2^{-32}(n+1)` here); ``K`` makes the total at most
   :math:`2^{58}`;
3. the draw is an integer inverse CDF: a uniform integer :math:`T` in
   :math:`[C_{n-i}, C_{2n-i+1})` of the cumulative table :math:`C` (Lemire's exact bounded
   integer; a rejection happens with probability below :math:`2^{-6}`, whatever ``q``), then
   the entry with :math:`C_k \le T < C_{k+1}` by a branch-free 4-ary search (three
   comparisons per step, the three keys of a node stored together: one vector comparison
   where the CPU has AVX2, the same result from the portable version) whose number of
   steps depends on the table size only; draws are made 32 at a time, interleaved. No
   floating-point operation decides a draw, no rejection depends on ``q``, and the released
   double :math:`(k_l + j)2^e` is exact.

Certificate. Rounding moves neighbouring inputs at most :math:`d_k = \lceil \Delta Q/\gamma
\rceil` grid steps apart (``floor(x + 1/2)`` is monotone and ``floor(x + D) - floor(x) <=
ceil(D)``; clipping is 1-Lipschitz). For every shift :math:`1 \le \delta \le d_k` the kernel
computes, from the very table the sampler reads,

.. math:: \lambda_\delta \ge \max_{i, j} \ln\frac{P(j \mid i)}{P(j \mid i + \delta)}

exactly over all ``i`` and ``j`` (a sliding-window maximum; the other direction is the
mirror image, since the table is symmetric bit for bit), plus :math:`2^{-40}`, which bounds
every rounding of its evaluation (the weights are integers below :math:`2^{58}`, rounded to
double with a relative error of at most :math:`2^{-53}`; ``log`` errs by at most one ulp;
see ``_gd_shift_losses`` in
``_core_exact.pxi`` for the proof). The univariate loss is :math:`\max_\delta \lambda_\delta`.
For the multivariate Gaussian the law is the product of per-coordinate laws; a neighbour at
:math:`\ell_2` distance :math:`\le\Delta Q` shifts coordinate ``c`` by :math:`r_c` steps
with :math:`\sum_c (r_c - 1)_+^2 < (\Delta Q/\gamma)^2`, so the loss is at most
:math:`\max \sum_c \lambda^{(c)}_{r_c}` over that set, which is bounded by its Lagrangian
dual :math:`\min_{\mu \ge 0} \mu B + \sum_c \max_r [\lambda^{(c)}_r - \mu (r - 1)_+^2]`
(weak duality; :math:`B = \lfloor(\Delta Q/\gamma)^2\rfloor`).

Calibration. The scale in grid steps is the bisection point (relative width :math:`10^{-7}`;
for :class:`ConstrainedPlan` a bracketed secant search to the same width, ``_search``)
whose table is certified :math:`\le` the target: :math:`\epsilon`, or for the Laplace with
:math:`\delta > 0` the loss bound :math:`\epsilon - \ln(1 - \delta)` behind Theorem 3.5 of
[HABM20]_ (a loss bound :math:`L` implies :math:`(\epsilon, \delta)`-DP since
:math:`P(A) \le \min(1, e^{\epsilon}P'(A)/(1-\delta)) \le e^{\epsilon}P'(A) + \delta`).
Only the returned table is used; its certificate does not rely on any monotonicity.

Grid. :math:`\gamma` is the largest power of two :math:`\le \min(b, \Delta Q)/16` (b the
continuous scale) and :math:`\le (u - l)/1024`, refined until :math:`\Delta Q/\gamma` is an
integer or at least 256 (so that rounding inflates the sensitivity by at most 0.4 %); for
the multivariate Gaussian :math:`\gamma \le \Delta Q/(64\sqrt m)`. At most :math:`2^{22}` grid intervals (the grid is
coarsened beyond, at a cost in noise stated by :attr:`ExactPlan.scale`).

Departures from the papers. The scales are not those of [HABM20]_ Theorem 3.5 or of Chen and
Hale's sufficient condition: they are calibrated on the certificate of the discrete law
actually sampled. The Laplace scale comes out slightly below :math:`b^*`. The Gaussian
one is smaller than the continuous :math:`\sigma^*`, whose condition is sufficient, not
tight; on ranges much wider than the scale it is also below the tightest continuous
calibration, because the weight floor ``F`` caps the likelihood ratio in the far tail
(where the bounded Gaussian's loss grows with the distance): the released law is the
bounded discrete Gaussian mixed with a uniform law of mass at most :math:`2^{-32}(n+1)`, and
the certificate covers exactly that mixture.

.. [Mir12] I. Mironov. "On Significance of the Least Significant Bits for Differential
   Privacy". ACM CCS 2012.
.. [HABM20] N. Holohan, S. Antonatos, S. Braghin, P. Mac Aonghusa. "The Bounded Laplace
   Mechanism in Differential Privacy". J. Privacy and Confidentiality 10(1), 2020.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from .. import _core, _dispatch

__all__ = ["ExactPlan", "ProductPlan", "ConstrainedPlan", "plan_bounded_laplace",
           "plan_bounded_gaussian", "plan_constrained_laplace", "check_mode", "grid_law",
           "MODES"]

LAPLACE, GAUSSIAN = 0, 1
_FAMILY = {LAPLACE: "laplace", GAUSSIAN: "gaussian"}
MODES = ("exact", "continuous")

GRID_STEPS = 16            # gamma <= min(scale, sensitivity) / 16
SENS_STEPS = 256           # ... refined until sensitivity / gamma is an integer or >= 256
MULTI_STEPS = 64           # multivariate: gamma <= sensitivity / (64 sqrt(m))
WIDTH_STEPS = 1024         # gamma <= (upper - lower) / 1024
METRIC_STEPS = 512         # metric guarantee: gamma <= scale / 512 ...
GAP_STEPS = 64             # ... and <= (narrowest gap) / 64
MAX_INTERVALS = 1 << 22    # n: grid intervals in [l, u] (table memory: 16 (n + 1) bytes)
MAX_PAIRS = 1 << 28        # n * d_k: work of the certificate
MAX_INDEX = 1 << 53        # |grid index|: (k_l + j) * gamma is then an exact double
FLOOR_BITS = 12            # F = 2^12
TOTAL_BITS = 58            # table total <= 2^58 (a bounded-integer rejection < 2^-6)
MIN_PEAK_BITS = 32         # 2^K >= 2^32: peak / F >= 2^20
REL_TOL = 1e-7             # bisection width of the calibrated scale


def _gceil(x: float, e: int) -> int:
    """ceil(x / 2^e), exactly (math.ldexp rounds when the quotient is subnormal)."""
    return math.ceil(Fraction(x) / Fraction(2) ** e)


def _gfloor(x: float, e: int) -> int:
    """floor(x / 2^e), exactly."""
    return math.floor(Fraction(x) / Fraction(2) ** e)


def check_mode(mode: Any) -> str:
    """Validate ``mode=``: ``None`` or ``"exact"`` (the grid law, default) or
    ``"continuous"`` (raw doubles; attackable when they are published, see the threat model
    in the documentation)."""
    if mode is None:
        return "exact"
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"`mode` must be 'exact' (the default grid law) or 'continuous'; "
                         f"got {mode!r}")
    return mode


@dataclass(frozen=True, eq=False)
class ExactPlan:
    """A calibrated grid law for one coordinate: grid, weight table and certified loss.

    Attributes
    ----------
    family : str
        ``"laplace"`` or ``"gaussian"``.
    exponent : int
        The granularity is :math:`\\gamma = 2^{exponent}`.
    kl, n : int
        The grid points of :math:`[l, u]` are :math:`(k_l + j)\\gamma`, ``j = 0..n``.
    dk : int
        Grid steps between neighbouring rounded inputs (at most).
    scale_grid : float
        Kernel scale in grid steps (``t`` or ``s``).
    kexp, floor_weight : int
        ``W_d = rint(2^kexp kernel(d)) + floor_weight``.
    cum : ndarray of uint64
        The cumulative weight table the sampler reads (length ``2n + 2``, read-only).
    target : float
        The loss the calibration had to certify.
    certified_epsilon : float
        Certified worst-case privacy loss (``<= target``).
    shift_losses : ndarray
        ``lam[delta - 1]``, certified loss for a shift of ``delta`` grid steps.
    """

    family: str
    exponent: int
    kl: int
    n: int
    dk: int
    scale_grid: float
    kexp: int
    floor_weight: int
    cum: np.ndarray = field(repr=False)
    target: float
    certified_epsilon: float
    shift_losses: np.ndarray = field(repr=False)

    @property
    def gamma(self) -> float:
        """Granularity of the grid (a power of two)."""
        return math.ldexp(1.0, self.exponent)

    @property
    def scale(self) -> float:
        """Kernel scale in value units (``scale_grid * gamma``)."""
        return self.scale_grid * self.gamma

    @property
    def weights(self) -> np.ndarray:
        """Integer weights ``W_d``, ``d = -n..n`` (uint64)."""
        return np.diff(self.cum)

    def grid(self) -> np.ndarray:
        """The ``n + 1`` attainable outputs."""
        return np.ldexp(np.arange(self.kl, self.kl + self.n + 1, dtype=np.float64),
                        self.exponent)

    def index(self, value: Any) -> np.ndarray:
        """Grid index (int64 in ``[0, n]``) of clipped true values, as the sampler rounds."""
        v = np.ascontiguousarray(np.ravel(np.asarray(value, dtype=np.float64)))
        return _core.gd_index(v, self.exponent, self.kl, self.n).reshape(np.shape(value))

    def weights_for(self, value: Any) -> tuple[np.ndarray, int]:
        """Integer weights over the grid for one true value, and their total ``S_i``."""
        i = int(self.index(float(value)))
        w = self.weights[self.n - i: 2 * self.n - i + 1]
        return w, int(self.cum[2 * self.n - i + 1] - self.cum[self.n - i])

    def pmf(self, value: Any) -> np.ndarray:
        """Output probabilities over :meth:`grid` for one clipped true value."""
        w, s = self.weights_for(value)
        return w.astype(np.float64) / float(s)

    @property
    def search_tree(self) -> tuple[np.ndarray, int]:
        """The cumulative table as the sampler searches it: (padded array, levels)."""
        tree = self.__dict__.get("_tree")
        if tree is None:
            tree = search_tree(self.cum)
            tree[0].setflags(write=False)
            object.__setattr__(self, "_tree", tree)
        return tree

    def sample(self, value: np.ndarray, size: Any, gen: np.random.Generator, workers: Any = 1):
        """Draws for clipped true values ``value`` (NumPy's size rule; ``workers`` as for
        :func:`bndp.sample`)."""
        (tree, levels), n, e, kl = self.search_tree, self.n, self.exponent, self.kl

        def one(gen, q):
            return _core.gd_one(gen, tree, levels, n, e, kl, q)

        def fill(gen, q, out):
            _core.gd_fill(gen, tree, levels, n, e, kl, q, out)

        def rows(gen, q, out):
            _core.gd_fill_rows(gen, tree, levels, n, e, kl, q, out)

        return _dispatch.sample(one, fill, rows, [np.asarray(value, dtype=np.float64)], size, gen,
                                workers)

    def _tail(self, x: Any, value: Any, what: str):
        """sf / logsf / logcdf at ``x``, or isf at probabilities ``x``, of the grid law for
        one value: from exact integer sums of the weights (no ``1 - cdf``)."""
        w, s = self.weights_for(value)
        above, upto = _tail_sums(w)
        g = self.grid()
        xa = np.asarray(x, dtype=np.float64)
        out = np.empty(xa.shape)
        for idx, xv in np.ndenumerate(xa):
            if what == "isf":    # smallest grid point whose sf is <= xv
                k = next((k for k in range(len(g)) if above[k] <= xv * s), len(g) - 1)
                out[idx] = g[k]
                continue
            k = int(np.searchsorted(g, xv, side="right")) - 1    # last grid point <= x
            if what == "logcdf":
                out[idx] = -math.inf if k < 0 else _log_ratio(upto[k], s)
            else:
                num = s if k < 0 else above[k]
                out[idx] = _log_ratio(num, s) if what == "logsf" else num / s
        return float(out) if out.ndim == 0 else out

    # the law, for the mechanisms' pmf/cdf/ppf/moments -----------------------------------
    def law(self, x: Any, value: Any, what: str):
        """Evaluate ``what`` in pmf/cdf/ppf/mean/var (or a tail function) for one value
        (x broadcast)."""
        if what in ("sf", "logsf", "logcdf", "isf"):
            return self._tail(x, value, what)
        c = None
        if what in ("cdf", "ppf"):
            w, tot = self.weights_for(value)
            c = _exact_cdf(w, tot)
        return _law_from(self.grid(), self.pmf(value), x, what, c)


def _exact_cdf(w: np.ndarray, tot: int) -> np.ndarray:
    """CDF from integer weights (total <= 2^58): the partial sums are exact in uint64, each
    converted and divided once (relative error below 2^-51)."""
    return np.cumsum(np.asarray(w, dtype=np.uint64), dtype=np.uint64) / float(tot)


def _law_from(g: np.ndarray, p: np.ndarray, x: Any, what: str, c: np.ndarray | None = None):
    """pmf/cdf/ppf at ``x`` or mean/var of the law ``p`` on the sorted points ``g`` (``c``:
    its CDF when known more accurately than the running sum of ``p``)."""
    if what == "mean":
        return float(np.dot(p, g))
    if what == "var":
        mu = float(np.dot(p, g))
        return float(np.dot(p, (g - mu) ** 2))
    xa = np.asarray(x, dtype=np.float64)
    if what == "pmf":
        idx = np.searchsorted(g, xa)
        idc = np.clip(idx, 0, len(g) - 1)
        out = np.where(g[idc] == xa, p[idc], 0.0)
    elif what == "cdf":
        c = np.cumsum(p) if c is None else c.copy()
        c[-1] = 1.0
        k = np.searchsorted(g, xa, side="right") - 1
        out = np.where(k < 0, 0.0, c[np.clip(k, 0, len(g) - 1)])
    else:  # ppf: the smallest grid point with cdf >= p
        c = np.cumsum(p) if c is None else c.copy()
        c[-1] = 1.0
        k = np.clip(np.searchsorted(c, xa, side="left"), 0, len(g) - 1)
        out = g[k]
    return float(out) if out.ndim == 0 else out


def _tail_sums(w: np.ndarray) -> tuple[list[int], list[int]]:
    """Exact integer sums of the weights above and up to each grid point."""
    ws = [int(v) for v in w]
    above, acc = [0] * len(ws), 0
    for k in range(len(ws) - 1, -1, -1):
        above[k] = acc
        acc += ws[k]
    upto, acc = [0] * len(ws), 0
    for k, v in enumerate(ws):
        acc += v
        upto[k] = acc
    return above, upto


def search_tree(cum: np.ndarray) -> tuple[np.ndarray, int]:
    """The table the sampler searches, and ``levels``: ``cum`` padded with 2^63 - 1 to
    4^levels entries (the leaf level of a 4-ary search of ``levels`` steps), followed by the
    upper levels, level ``l`` holding ``cum[j 4^(levels-1-l)]``, ``j < 4^(l+1)``: the entries
    of each node contiguous (layout in ``_grid_search.h``). 64-byte aligned."""
    m, size, levels = len(cum), 4, 1
    while size < m:
        size *= 4
        levels += 1
    total, offsets = _core.gd_search_table_layout(levels)
    buf = np.empty(total + 8, dtype=np.uint64)
    skip = (-buf.ctypes.data % 64) // 8
    out = buf[skip: skip + total]
    leaf = out[:size]
    leaf[:m] = cum
    leaf[m:] = np.iinfo(np.int64).max
    for lvl in range(levels - 1):
        step = 4 ** (levels - 1 - lvl)
        out[offsets[lvl]: offsets[lvl] + 4 ** (lvl + 1)] = leaf[::step]
    return out, levels


def _log_ratio(a: int, b: int) -> float:
    """ln(a / b) for positive integers, without overflow or underflow."""
    if a == 0:
        return -math.inf
    if 2 * a > b:                     # near 1: log1p of the exact complement
        return math.log1p(-((b - a) / b))
    return math.log(a) - math.log(b)


def _certify(cum: np.ndarray, n: int, dk: int) -> np.ndarray:
    return np.maximum.accumulate(_core.gd_shift_losses(cum, n, dk))


def _kexp(fam: int, u: float, n: int) -> int:
    z = min(1.0 + 2.0 * u if fam == LAPLACE else 1.0 + math.sqrt(2.0 * math.pi) * u,
            2.0 * n + 1.0)
    avail = 2.0 ** TOTAL_BITS - (2.0 * n + 1.0) * (2.0 ** FLOOR_BITS + 1.0)
    return int(math.floor(math.log2(avail / (z * (1.0 + 1e-9)))))


def _table(fam: int, u: float, n: int) -> tuple[np.ndarray, int]:
    k = _kexp(fam, u, n)
    cum = _core.gd_table(fam, u, n, k, 1 << FLOOR_BITS)
    if int(cum[-1]) > (1 << TOTAL_BITS):  # pragma: no cover - guaranteed by _kexp
        raise RuntimeError("grid law: table total exceeds 2^58")
    cum.setflags(write=False)
    return cum, k


def _choose_grid(scale: float, dq: float, lo: float, hi: float, dim: int | None,
                 fam: int, cap: float = math.inf) -> tuple[int, int, int, int]:
    """(e, kl, n, dk) for the grid of [lo, hi]; ``cap``: a further upper bound on gamma
    (before the grid is coarsened to fit the size limits)."""
    width = hi - lo
    dq_eff = min(dq, width) if dim is None else dq
    if dim is None:
        base = min(scale, dq_eff) / GRID_STEPS
    else:
        base = min(scale / GRID_STEPS, dq / (MULTI_STEPS * math.sqrt(dim)))
    # at least WIDTH_STEPS intervals: a nearly flat law on n + 1 points has variance
    # (1 + 2/n) times the continuous one
    base = min(base, width / WIDTH_STEPS, cap)
    if not (base > 0 and math.isfinite(base)):
        raise ValueError("grid law: the scale and sensitivity give no usable grid "
                         f"(scale {scale!r}, sensitivity {dq!r}); pass mode='continuous'")
    e = math.frexp(base)[1] - 1                       # 2^e <= base
    if dim is None:                                   # sensitivity a multiple of gamma
        for _ in range(8):
            r = math.ldexp(dq_eff, -e)
            if r == math.floor(r) or r >= SENS_STEPS:
                break
            e -= 1
    for _ in range(2200):
        if e < -1022 or e > 1022:
            break
        kl = _gceil(lo, e)
        ku = _gfloor(hi, e)
        n = ku - kl
        dk = max(1, _gceil(dq_eff if dim is None else dq, e))
        if dim is None:
            dk = min(dk, max(n, 1))
        u = math.ldexp(scale, -e)
        if (1 <= n <= MAX_INTERVALS and n * dk <= MAX_PAIRS
                and _kexp(fam, u * 4.0, n) >= MIN_PEAK_BITS):
            if max(abs(kl), abs(ku)) >= MAX_INDEX:
                raise ValueError(
                    "grid law: the bounds are too far from 0 for the grid granularity "
                    f"2^{e} (grid indices beyond 2^53); shift the data towards 0 or pass "
                    "mode='continuous'")
            return e, kl, n, dk
        e += 1
    raise ValueError("grid law: no grid fits these bounds, sensitivity and scale; pass "
                     "mode='continuous'")


def _bisect(cert, u0: float, target: float):
    """Smallest scale (to REL_TOL) whose certificate is <= target; returns (u, result)."""
    ok = None
    u = u0
    r = cert(u)
    if r[0] <= target:
        ok = (u, r)
        bad = u
        for _ in range(200):
            bad *= 0.8
            r = cert(bad)
            if r[0] > target:
                break
            ok = (bad, r)
        else:  # pragma: no cover
            raise RuntimeError("grid law: the scale search did not bracket")
    else:
        bad = u
        good = u
        for _ in range(400):
            good *= 1.25
            r = cert(good)
            if r[0] <= target:
                ok = (good, r)
                break
            bad = good
        else:
            raise ValueError("grid law: no scale certifies the target on this grid; pass "
                             "mode='continuous'")
    good = ok[0]
    while (good - bad) > REL_TOL * good:
        mid = 0.5 * (good + bad)
        r = cert(mid)
        if r[0] <= target:
            ok = (mid, r)
            good = mid
        else:
            bad = mid
    return ok


def _search(cert, u0: float, target: float, rel: float = REL_TOL):
    """Smallest scale (to ``rel``) whose certificate is <= target, as :func:`_bisect`, but
    by secant steps on (ln u, ln cert) with a bracket: the certificate is smooth in the
    scale (about proportional to 1/u), so a handful of evaluations suffice; each proposal
    is followed by the probe just below it, which closes the bracket once the secant is
    accurate. Falls back to geometric bisection when a step does not shrink the bracket.
    Only the returned table is used: soundness does not depend on the search."""
    good = bad = None           # (u, result): the smallest certified, largest refused
    pts: list[tuple[float, float]] = []

    def ev(u):
        nonlocal good, bad
        r = cert(u)
        if r[0] <= target:
            if good is None or u < good[0]:
                good = (u, r)
        elif bad is None or u > bad[0]:
            bad = (u, r)
        if math.isfinite(r[0]) and r[0] > 0:
            pts.append((math.log(u), math.log(r[0])))
        return r[0]

    lt = math.log(target)
    u = u0
    c = ev(u)
    for _ in range(200):
        if good is not None and bad is not None and good[0] - bad[0] <= rel * good[0]:
            return good
        if bad is not None and math.isinf(bad[1][0]) and good is None:
            u = bad[0] * 2.0                               # nothing usable yet: grow
        elif len(pts) >= 2:
            # secant through the two evaluated points nearest the target
            (x1, y1), (x2, y2) = sorted(pts, key=lambda p: abs(p[1] - lt))[:2]
            if y1 != y2 and x1 != x2:
                u = math.exp(x1 + (lt - y1) * (x2 - x1) / (y2 - y1))
            else:
                u = math.exp(x1 - (lt - y1))
        else:
            x1, y1 = pts[-1]
            u = math.exp(x1 + (y1 - lt))                    # certificate ~ 1/u
        u *= 1.0 + 0.25 * rel                               # aim just above the root
        if good is not None and bad is not None:
            lo_u, hi_u = bad[0], good[0]
            if not (lo_u < u < hi_u) or (hi_u - lo_u) > 0.5 * hi_u:
                u = math.sqrt(lo_u * hi_u) if not (lo_u < u < hi_u) else u
        elif good is not None:
            u = min(u, good[0] * (1.0 - 0.5 * rel)) if u < good[0] else good[0] * 0.8
        elif bad is not None:
            u = max(u, bad[0] * (1.0 + 0.5 * rel)) if u > bad[0] else bad[0] * 1.25
        if not (u > 0 and math.isfinite(u)):
            break
        before = (good[0] - bad[0]) if (good is not None and bad is not None) else math.inf
        c = ev(u)
        if c <= target and (bad is None or u - bad[0] > rel * u):
            ev(u * (1.0 - 0.5 * rel))                       # the probe just below
        after = (good[0] - bad[0]) if (good is not None and bad is not None) else math.inf
        if (math.isfinite(before) and after > 0.5 * before and good is not None
                and bad is not None):
            m = math.sqrt(good[0] * bad[0])                 # a slow step: bisect as well
            ev(m)
    if good is None:
        raise ValueError("grid law: no scale certifies the target on this grid; pass "
                         "mode='continuous'")
    return good


@lru_cache(maxsize=256)
def _plan_1d(fam: int, target: float, hint: float, dq: float, lo: float,
             hi: float) -> ExactPlan:
    e, kl, n, dk = _choose_grid(hint, dq, lo, hi, None, fam)

    def cert(u):
        cum, k = _table(fam, u, n)
        lam = _certify(cum, n, dk)
        return float(lam[-1]), cum, k, lam

    u, (c, cum, k, lam) = _bisect(cert, math.ldexp(hint, -e), target)
    lam.setflags(write=False)
    return ExactPlan(_FAMILY[fam], e, kl, n, dk, u, k, 1 << FLOOR_BITS, cum, target, c, lam)


def plan_bounded_laplace(epsilon: float, sensitivity: float, lower: float, upper: float,
                         delta: float = 0.0, scale_hint: float | None = None) -> Any:
    """Grid bounded Laplace for validated inputs (a :class:`~bndp.mechanisms.window.RowPlan`
    of the windowed grid law); target loss ``eps - ln(1 - delta)``."""
    if scale_hint is None:
        from ..calibrate import bounded_laplace_scale
        scale_hint = float(bounded_laplace_scale(epsilon, sensitivity, lower, upper, delta))
    target = epsilon - math.log1p(-delta)
    from .window import plan_row
    return plan_row(LAPLACE, float(target), float(sensitivity), float(lower), float(upper),
                    float(scale_hint))


# --- multivariate (product) law -----------------------------------------------------------

def _dual_bound(lams: list[np.ndarray], budget: int) -> float:
    """Upper bound on max sum_c lam_c[r_c] over sum_c (r_c - 1)_+^2 <= budget (weak duality,
    minimised over a grid of multipliers; every multiplier gives a valid bound)."""
    r = [np.arange(len(lam) + 1, dtype=np.float64) for lam in lams]
    cost = [np.maximum(x - 1.0, 0.0) ** 2 for x in r]
    vals = [np.concatenate(([0.0], lam)) for lam in lams]

    def bound(mu: float) -> float:
        tot = mu * budget
        for v, c in zip(vals, cost):
            tot += float(np.max(v - mu * c))
        return tot

    top = max(float(np.max(v)) for v in vals) + 1.0
    mus = np.concatenate(([0.0], np.geomspace(1e-12 * top, top, 400)))
    best_i = int(np.argmin([bound(m) for m in mus]))
    lo_m = mus[max(best_i - 1, 0)]
    hi_m = mus[min(best_i + 1, len(mus) - 1)]
    cands = np.concatenate((np.linspace(lo_m, hi_m, 101), [mus[best_i]]))
    mu = float(cands[int(np.argmin([bound(m) for m in cands]))])
    # the bound at the chosen multiplier, in exact rational arithmetic of the (certified)
    # float values, rounded up: no rounding error enters the certificate
    fm = Fraction(mu)
    tot = fm * budget
    for v, c in zip(vals, cost):
        tot += max(Fraction(float(a)) - fm * Fraction(float(b)) for a, b in zip(v, c))
    out = float(tot)
    return out if Fraction(out) >= tot else math.nextafter(out, math.inf)


def grid_law(plan: "ExactPlan", what: str, x: Any, value: np.ndarray):
    """pmf/cdf/ppf (at ``x``) or mean/var of the grid law for each clipped true value."""
    v = np.asarray(value, dtype=np.float64)
    if v.ndim == 0:
        return plan.law(x, float(v), what)
    xa = np.asarray(x, dtype=np.float64)
    shape = np.broadcast_shapes(v.shape, xa.shape)
    vb = np.broadcast_to(v, shape).ravel()
    xb = np.broadcast_to(xa, shape).ravel()
    out = np.array([plan.law(xx, vv, what) for xx, vv in zip(xb, vb)], dtype=np.float64)
    return out.reshape(shape)


@dataclass(frozen=True, eq=False)
class ProductPlan:
    """The multivariate grid Gaussian: one :class:`ExactPlan` per coordinate (common grid
    and scale), certified over the :math:`\\ell_2` ball of neighbours.

    Attributes
    ----------
    coords : tuple of ExactPlan
        Per-coordinate laws (their ``certified_epsilon`` is the univariate loss only).
    certified_epsilon : float
        Certified loss of the product law over the :math:`\\ell_2` ball.
    target : float
    """

    coords: tuple
    target: float
    certified_epsilon: float

    family = "gaussian"

    @property
    def exponent(self) -> int:
        return self.coords[0].exponent

    @property
    def gamma(self) -> float:
        return self.coords[0].gamma

    @property
    def scale(self) -> float:
        return self.coords[0].scale

    @property
    def dim(self) -> int:
        return len(self.coords)

    def pmf(self, value: Any) -> list[np.ndarray]:
        """Per-coordinate output probabilities (the joint law is their product)."""
        v = np.asarray(value, dtype=np.float64)
        return [p.pmf(v[c]) for c, p in enumerate(self.coords)]

    def sample(self, value: np.ndarray, size: Any, gen: np.random.Generator, workers: Any = 1):
        """Draws for clipped true values (trailing axis of length m)."""
        m = self.dim
        q = np.asarray(value, dtype=np.float64)
        if size is not None:
            from .._validation import check_size
            shape = tuple(check_size(size) or ()) + (m,)
            q = np.broadcast_to(q, shape)
        out = np.empty(q.shape)
        for c, p in enumerate(self.coords):
            col = p.sample(np.ascontiguousarray(q[..., c]), None, gen, workers)
            out[..., c] = col
        return out


@lru_cache(maxsize=64)
def _plan_product(target: float, hint: float, dq: float, los: tuple, his: tuple) -> ProductPlan:
    m = len(los)
    e = max(_choose_grid(hint, dq, lo, hi, m, GAUSSIAN)[0] for lo, hi in zip(los, his))
    grids = [_choose_grid_at(e, dq, lo, hi) for lo, hi in zip(los, his)]
    rr = Fraction(dq) / Fraction(2) ** e if e >= 0 else Fraction(dq) * Fraction(2) ** (-e)
    budget = math.floor(rr * rr)
    keys = sorted(set((kl, n) for kl, n, _ in grids))

    def cert(u):
        tabs = {}
        for kl, n in keys:
            dk = next(d for k2, n2, d in grids if (k2, n2) == (kl, n))
            cum, k = _table(GAUSSIAN, u, n)
            lam = _core.gd_shift_losses(cum, n, dk)
            tabs[(kl, n)] = (cum, k, np.maximum.accumulate(lam), dk)
        lams = [tabs[(kl, n)][2] for kl, n, _ in grids]
        return _dual_bound(lams, budget), tabs

    u, (c, tabs) = _bisect(cert, math.ldexp(hint, -e), target)
    coords = []
    for kl, n, dk in grids:
        cum, k, lam, _ = tabs[(kl, n)]
        lam.setflags(write=False)
        coords.append(ExactPlan("gaussian", e, kl, n, dk, u, k, 1 << FLOOR_BITS, cum, target,
                                float(lam[-1]), lam))
    return ProductPlan(tuple(coords), target, c)


def _choose_grid_at(e: int, dq: float, lo: float, hi: float) -> tuple[int, int, int]:
    kl = _gceil(lo, e)
    ku = _gfloor(hi, e)
    n = ku - kl
    dk = max(1, _gceil(dq, e))
    if n < 1 or n > MAX_INTERVALS or max(abs(kl), abs(ku)) >= MAX_INDEX:
        raise ValueError("grid law: no common grid fits these bounds; pass mode='continuous'")
    return kl, n, dk


def plan_bounded_gaussian(epsilon: float, sensitivity: float, lower: Any, upper: Any,
                          sigma_hint: float | None = None):
    """Grid bounded Gaussian for validated inputs; univariate (:class:`ExactPlan`) for scalar
    bounds, :class:`ProductPlan` for length-m bounds; target loss ``eps``."""
    if sigma_hint is None:
        from ..calibrate import bounded_gaussian_sigma
        sigma_hint = float(bounded_gaussian_sigma(epsilon, sensitivity, lower, upper))
    if np.ndim(lower) == 0 and np.ndim(upper) == 0:
        from .window import plan_row
        return plan_row(GAUSSIAN, float(epsilon), float(sensitivity), float(lower),
                        float(upper), float(sigma_hint))
    lo = tuple(float(x) for x in np.ravel(lower))
    hi = tuple(float(x) for x in np.ravel(upper))
    return _plan_product(float(epsilon), float(sigma_hint), float(sensitivity), lo, hi)


# --- allowed sets with gaps (ConstrainedLaplace) ------------------------------------------

GD_INF = 1 << 62           # an unbounded span end (the kernel's sentinel)
TAIL_BITS = 24             # unbounded sets: the table reaches offsets where W/W(0) ~ 2^-24
LAW_TAIL = 45              # law functions sum a geometric tail over 45 * 2^s points


@dataclass(frozen=True, eq=False)
class ConstrainedPlan(ExactPlan):
    r"""The grid Laplace on an allowed set :math:`A = [l, u] \setminus \bigcup_k (a_k, b_k)`
    (:class:`~bndp.ConstrainedLaplace`), :math:`l` and :math:`u` finite or infinite.

    The outputs are the grid points of :math:`A`: the grid points of each span
    :math:`[L_s, R_s]` of :math:`A` (indices ``span_lo[s]..span_hi[s]`` above ``kl``;
    ``±2^62`` marks an unbounded end). For grid input ``i``,
    :math:`P(j \mid i) = W_{j-i}/S_i` over those points only, with the offset table of
    :class:`ExactPlan` (half-width ``n``). On an unbounded set the weights go on beyond the
    table as the geometric tail :math:`W_{\pm(n+k)} = W_n p^k`, :math:`p = 1 - 2^{-s}`
    (``tail_bits`` = s, chosen so that :math:`p \ge e^{-1/t}`: the tail decays no faster than
    the kernel), of integer mass ``tail_weight`` :math:`= W_n(2^s - 1)` per side; the table
    is wide enough (``n`` = the core of finite span ends plus :math:`M_0` with
    :math:`e^{-M_0/t} \le 2^{-24}`) that a tail draw has probability below about
    :math:`2^{-20}`. Inputs within :math:`M_0` of the core (indices ``0..L``) are drawn
    exactly from integer masses; inputs farther out draw from the whole table and tails and
    redraw the (even rarer) outputs that are not allowed: rejection sampling of the same
    conditional law. A draw picks the span by selects over all spans, then searches the
    table: the same work for every input and output, except a tail draw, which then draws
    its geometric offset (a time that depends on the released offset only).

    Rounding of a true value :math:`\mu \in A` (in span ``s``):

    * ``guarantee="dp"``: the nearest grid point (ties up), clipped to the span's grid
      points. The map is monotone, and :math:`|r(\mu) - \mu| < \gamma` because every span
      holds a grid point. Plain rounding moves neighbours at most :math:`d_k` steps apart
      (as for :class:`ExactPlan`); the clip into a span adds one step, and only when the
      lower point ends a span before a gap or the upper point starts one after a gap (a
      clip at ``l`` or ``u`` is 1-Lipschitz). The certificate bounds the loss over every
      pair of allowed inputs in ``0..L`` at most :math:`d_k` apart, and over the pairs
      :math:`d_k + 1` apart that meet a gap whose end is off the grid, both directions, in
      :math:`O(N + L m)` (``gd_set_bound`` in ``_core_exact.pxi``, where the proof is): the
      loss of a pair :math:`\delta` apart is at most :math:`\kappa_\delta + |\ln S_{i'} -
      \ln S_i|`, with :math:`\kappa_\delta \le \delta\tau + c` (:math:`\tau \ge 1/t`,
      ``c`` the largest deviation of the table's log-weights from that slope over windows of
      at most :math:`d_k` offsets, computed on the table), so the maximum over pairs is a
      sliding-window maximum of :math:`\ln S_k \pm k\tau`. For the Laplace kernel the
      worst output of a pair is an input itself, so the bound is within about
      :math:`10^{-9}` of the exhaustive maximum (``gd_set_losses``, kept as the tests'
      oracle). A pair with an input beyond ``0..L`` (unbounded sets) is bounded by
      :math:`\kappa_\delta + \rho/(1-\rho)`: :math:`\kappa_\delta` the largest
      :math:`|\ln W_d - \ln W_{d-\delta}|` over all offsets (tails included, computed
      exactly on the table), and :math:`\rho` the mass, relative to the whole law, of the
      offsets beyond :math:`M_0 - d_k`, where every output that such an input cannot
      reach lies (so :math:`|\ln S_i - \ln S_{i'}| \le -\ln(1-\rho)`).
    * ``guarantee="metric"`` (:math:`\ell(\mu, \mu') \le \epsilon|\mu-\mu'|/\Delta` for
      all pairs): deterministic rounding cannot satisfy it (two values on either side of a
      rounding boundary are arbitrarily close), so the value is rounded at random: to
      :math:`\lfloor\mu/\gamma\rfloor` or the next grid point with probability the
      fractional part (an exact Bernoulli from random bits), clipped to the span. The law of
      the output is then :math:`(1-f)K_P + fK_{P+1}` inside a span, constant between a span
      end and the nearest grid point. Its log-likelihood is Lipschitz in :math:`\mu` inside
      a span with constant :math:`(e^{\lambda_1} - 1)/\gamma` (:math:`\lambda_1` the
      largest loss between adjacent grid points of one span), and it jumps across gap
      ``k`` by at most the loss :math:`J_k` between the span end points (``gd_set_pair_loss``:
      tail log-weight differences are computed as :math:`(k_1 - k_2)\ln p`, so a gap of
      any width in noise scales is handled). Along any path,
      :math:`\ell(\mu,\mu') \le \epsilon'|\mu - \mu'|/\Delta` with
      :math:`\epsilon' = \Delta\max((e^{\lambda_1} - 1)/\gamma, \max_k J_k/(b_k - a_k))`,
      evaluated in exact rationals from the certified losses and rounded up.

    On an unbounded set, true values beyond :math:`\pm 2^{52}\gamma` are clipped to it (the
    released double :math:`(k_l + j)\gamma` must be exact), and outputs beyond
    :math:`\pm 2^{53}\gamma` are redrawn (a geometric tail of that length has probability
    below :math:`e^{-2^{30}}`). The law functions (:meth:`pmf`, ``cdf``, the moments) sum a
    geometric tail over :math:`45 \cdot 2^s` points: the mass left out is below
    :math:`e^{-45}` of the tail's.

    Attributes
    ----------
    span_lo, span_hi : ndarray of int64
        Grid indices (above ``kl``) of the first and last grid point of each span.
    gap_hi : ndarray of float64
        Upper ends :math:`b_k` of the gaps (the span of a value is the number of them
        :math:`\le` the value).
    guarantee : str
        ``"dp"`` or ``"metric"``.
    metric_epsilon : float
        For ``"metric"``, :math:`\epsilon'` above (also the certified loss); ``inf`` for
        ``"dp"`` (deterministic rounding gives no metric guarantee at small distances).
    inputs : int
        ``L``: inputs ``0..L`` are drawn and certified exactly (``n`` on a finite set).
    tail_weight, tail_bits : int
        The geometric tails (0 on a finite set).
    core : tuple of int
        Lowest and highest finite span end (grid indices above ``kl``).
    """

    span_lo: Any = field(repr=False, default=None)
    span_hi: Any = field(repr=False, default=None)
    gap_hi: Any = field(repr=False, default=None)
    guarantee: str = "dp"
    metric_epsilon: float = math.inf
    inputs: int = 0
    tail_weight: int = 0
    tail_bits: int = 0
    core: tuple = (0, 0)

    @property
    def randomised(self) -> bool:
        """Whether the true value is rounded at random (the metric guarantee)."""
        return self.guarantee == "metric"

    @property
    def bounded(self) -> bool:
        """Whether the allowed set is bounded (finitely many outputs)."""
        return self.tail_weight == 0

    def _clip(self, v: np.ndarray) -> np.ndarray:
        if self.bounded:
            return v
        lim = math.ldexp(1.0, 52 + self.exponent)
        return np.clip(v, -lim, lim)

    def allowed(self, lo: int | None = None, hi: int | None = None) -> np.ndarray:
        """Grid indices (above ``kl``) of the attainable outputs (those in ``[lo, hi]``;
        both needed on an unbounded set)."""
        lo = -GD_INF if lo is None else lo
        hi = GD_INF if hi is None else hi
        parts = []
        for a, b in zip(self.span_lo, self.span_hi):
            a, b = max(int(a), lo), min(int(b), hi)
            if a <= b:
                if b - a > MAX_INTERVALS * 64:
                    raise ValueError("the allowed set is unbounded: give a window")
                parts.append(np.arange(a, b + 1, dtype=np.int64))
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)

    def grid(self, lo: int | None = None, hi: int | None = None) -> np.ndarray:
        """The attainable outputs (grid points of the allowed set; in the index window
        ``[lo, hi]`` on an unbounded set)."""
        return np.ldexp((self.kl + self.allowed(lo, hi)).astype(np.float64), self.exponent)

    def index(self, value: Any) -> np.ndarray:
        """Grid index (int64, above ``kl``) of allowed true values by nearest-point
        rounding (the ``"dp"`` rounding; the ``"metric"`` one is random, see
        :meth:`components`)."""
        v = self._clip(np.ascontiguousarray(np.ravel(np.asarray(value, dtype=np.float64))))
        return _core.gd_span_index(v, self.exponent, self.kl, self.span_lo, self.span_hi,
                                   self.gap_hi).reshape(np.shape(value))

    def components(self, value: float) -> list[tuple[float, int]]:
        """The law for one true value as a mixture ``[(weight, grid index), ...]`` of the
        laws of grid inputs (one component unless rounding is random)."""
        if not self.randomised:
            return [(1.0, int(self.index(float(value))))]
        v = float(self._clip(np.float64(value)))
        z = math.ldexp(v, -self.exponent)
        f = math.floor(z)
        frac = z - f
        s = int(np.sum(v >= self.gap_hi))
        lo, hi = int(self.span_lo[s]), int(self.span_hi[s])
        k0 = min(max(int(f) - self.kl, lo), hi)
        k1 = min(max(int(f) + 1 - self.kl, lo), hi)
        if k0 == k1 or frac == 0.0:
            return [(1.0, k0)]
        return [(1.0 - frac, k0), (frac, k1)]

    def _window(self, comps: list[tuple[float, int]]) -> tuple[int | None, int | None]:
        if self.bounded:
            return None, None
        x = LAW_TAIL << self.tail_bits
        return (min(i for _, i in comps) - self.n - x, max(i for _, i in comps) + self.n + x)

    def _weights(self, idx: np.ndarray, i: int) -> np.ndarray:
        """Weights W(j - i) of the outputs ``idx`` (ints inside the table, floats beyond)."""
        d = idx - i
        inside = np.abs(d) <= self.n
        w = np.empty(len(idx), dtype=object if self.bounded else np.float64)
        w[inside] = self.weights[d[inside] + self.n]
        if not inside.all():
            lnp = math.log1p(-math.ldexp(1.0, -self.tail_bits))
            w[~inside] = float(self.cum[1]) * np.exp((np.abs(d[~inside]) - self.n) * lnp)
        return w

    def weights_at(self, i: int) -> tuple[np.ndarray, int]:
        """Integer weights over :meth:`grid` for grid input ``i``, and their total
        (bounded sets)."""
        if not self.bounded:
            raise ValueError("weights_at: the allowed set is unbounded; use pmf")
        w = self.weights[self.allowed() - i + self.n]
        return w, int(sum(int(x) for x in w))

    def weights_for(self, value: Any) -> tuple[np.ndarray, int]:
        comps = self.components(float(value))
        if len(comps) != 1 or not self.bounded:
            raise ValueError("weights_for: the law of this value is a mixture (random "
                             "rounding) or unbounded; use pmf")
        return self.weights_at(comps[0][1])

    def support(self, value: Any) -> tuple[np.ndarray, np.ndarray]:
        """Outputs and their probabilities for one true value (on an unbounded set, the
        outputs within the summed tails)."""
        comps = self.components(float(value))
        lo, hi = self._window(comps)
        idx = self.allowed(lo, hi)
        p = np.zeros(len(idx))
        for wt, i in comps:
            if self.bounded:
                w, tot = self.weights_at(i)
                p += wt * (w.astype(np.float64) / float(tot))
            else:
                w = self._weights(idx, i)
                p += wt * (w / math.fsum(w))
        g = np.ldexp((self.kl + idx).astype(np.float64), self.exponent)
        return g, p

    def pmf(self, value: Any) -> np.ndarray:
        """Output probabilities over :meth:`grid` for one true value (bounded sets; see
        :meth:`support`)."""
        return self.support(value)[1]

    def _sides(self, value: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(outputs, P(Y <= output), P(Y > output)) for one true value, each side summed
        from its own end: exact uint64 partial sums of the integer weights on a bounded
        set, mixed over the rounding's components; float sums of the support otherwise."""
        comps = self.components(float(value))
        if self.bounded:
            g = self.grid()
            upto = np.zeros(len(g))
            above = np.zeros(len(g))
            for wt, i in comps:
                w, tot = self.weights_at(i)
                cu = np.cumsum(np.asarray(w, dtype=np.uint64), dtype=np.uint64)
                upto += wt * (cu / float(tot))
                above += wt * ((np.uint64(tot) - cu) / float(tot))
            return g, upto, above
        g, p = self.support(value)
        upto = np.cumsum(p)
        above = np.concatenate((np.cumsum(p[::-1])[::-1][1:], [0.0]))
        return g, upto, above

    def law(self, x: Any, value: Any, what: str):
        if what in ("mean", "var", "pmf"):
            g, p = self.support(value)
            return _law_from(g, p, x, what)
        g, upto, above = self._sides(value)
        xa = np.asarray(x, dtype=np.float64)
        if what in ("ppf", "isf"):
            if what == "ppf":         # the smallest grid point with cdf >= p
                c = upto.copy()
                c[-1] = 1.0
                k = np.searchsorted(c, xa, side="left")
            else:                     # the smallest grid point with sf <= p
                k = np.searchsorted(-above, -xa, side="left")
            out = g[np.clip(k, 0, len(g) - 1)]
            return float(out) if out.ndim == 0 else out
        k = np.searchsorted(g, xa, side="right") - 1        # last grid point <= x
        kc = np.clip(k, 0, len(g) - 1)
        cdf = np.where(k < 0, 0.0, upto[kc])
        sf = np.where(k < 0, 1.0, above[kc])
        with np.errstate(divide="ignore"):
            if what == "cdf":
                out = np.where(k >= len(g) - 1, 1.0, cdf)
            elif what == "sf":
                out = sf
            elif what == "logsf":     # log1p of the small side keeps the relative accuracy
                out = np.where(cdf < 0.5, np.log1p(-cdf), np.log(sf))
            else:                     # logcdf
                out = np.where(sf < 0.5, np.log1p(-sf), np.log(cdf))
        return float(out) if np.ndim(out) == 0 else out

    def sample(self, value: np.ndarray, size: Any, gen: np.random.Generator, workers: Any = 1):
        """Draws for allowed true values ``value`` (NumPy's size rule)."""
        (tree, levels), n, e, kl = self.search_tree, self.n, self.exponent, self.kl
        sa, sb, gh, rnd = self.span_lo, self.span_hi, self.gap_hi, self.randomised
        tw, tb, (c0, c1) = self.tail_weight, self.tail_bits, self.core

        def rows(gen, q, out):
            _core.gd_set_fill_rows(gen, tree, levels, n, e, kl, sa, sb, gh, tw, tb, c0, c1, rnd,
                                   q, out)

        def fill(gen, q, out):
            # one value for the whole output: a stride-0 row (the kernel reads q[0, b])
            rows(gen, np.broadcast_to(np.float64(q), (1, out.size)), out.reshape(1, -1))

        def one(gen, q):
            out = np.empty((1, 1))
            rows(gen, np.full((1, 1), q), out)
            return float(out[0, 0])

        v = self._clip(np.asarray(value, dtype=np.float64))
        return _dispatch.sample(one, fill, rows, [v], size, gen, workers)


def _up(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _add_up(a: float, b: float) -> float:
    return _up(Fraction(a) + Fraction(b))


def _metric_bound(lam1: float, jumps: list[float], e: int, dq: float, gaps: tuple) -> float:
    """Delta * max((e^lam1 - 1)/gamma, J_k / w_k), in exact rationals of the certified
    float inputs, rounded up (expm1 is taken 2^-50 relatively high: it errs by < 1 ulp)."""
    g = Fraction(2) ** e
    terms = [Fraction(math.expm1(lam1)) * (1 + Fraction(1, 1 << 50)) / g]
    for jk, (a, b) in zip(jumps, gaps):
        terms.append(Fraction(jk) / (Fraction(b) - Fraction(a)))
    return _up(Fraction(dq) * max(terms))


def _tail_bits(u: float) -> int:
    """s with 2^-s <= 1 - e^(-1/u): the tail ratio p = 1 - 2^-s is >= e^(-1/u)."""
    s = max(1, math.ceil(-math.log2(-math.expm1(-1.0 / u))))
    while math.ldexp(1.0, -s) > -math.expm1(-1.0 / u):
        s += 1
    return s


def _set_table(u: float, n: int, tails: bool) -> tuple[np.ndarray, int, int, int]:
    """(cum, kexp, tail_weight, tail_bits) for kernel scale u (grid steps)."""
    k = _kexp(LAPLACE, u, n)
    sbits = _tail_bits(u) if tails else 0
    if sbits > 62:
        raise ValueError("grid law: the scale is too large for the geometric tail; pass "
                         "mode='continuous'")
    for _ in range(64):
        cum = _core.gd_table(LAPLACE, u, n, k, 1 << FLOOR_BITS)
        tw = int(cum[1]) * ((1 << sbits) - 1) if tails else 0
        if int(cum[-1]) + 2 * tw <= (1 << TOTAL_BITS):
            cum.setflags(write=False)
            return cum, k, tw, sbits
        k -= 1
    raise ValueError("grid law: no weight table with geometric tails fits 2^58 at this "
                     "scale; pass mode='continuous'")


def _set_grid(hint: float, dq: float, lo: float, hi: float, gaps: tuple, metric: bool):
    """(e, kl, n, dk, L, spans, core) of the grid law on the allowed set."""
    ends_lo = [lo] + [b for _, b in gaps]
    ends_hi = [a for a, _ in gaps] + [hi]
    lengths = [h - l for l, h in zip(ends_lo, ends_hi) if math.isfinite(h - l)]
    cap = min(lengths) if lengths else math.inf        # a grid point in every span
    if metric:
        cap = min(cap, hint / METRIC_STEPS)
        if gaps:
            cap = min(cap, min(b - a for a, b in gaps) / GAP_STEPS)
    if math.isfinite(lo) and math.isfinite(hi):
        e, kl, n, dk = _choose_grid(hint, dq, lo, hi, None, LAPLACE, cap=cap)
        if math.ldexp(hint, -e) < 1.0 / 64:
            raise ValueError("grid law: the allowed set is so wide that its grid is much "
                             "coarser than the noise scale; pass mode='continuous'")
        sp = _spans(e, kl, lo, hi, gaps)
        return e, kl, n, dk, n, sp, (0, n)
    base = min(min(hint, dq) / GRID_STEPS, cap)
    if not (base > 0 and math.isfinite(base)):
        raise ValueError("grid law: the scale and sensitivity give no usable grid; pass "
                         "mode='continuous'")
    e = math.frexp(base)[1] - 1
    if not metric:
        for _ in range(8):
            r = math.ldexp(dq, -e)
            if r == math.floor(r) or r >= SENS_STEPS:
                break
            e -= 1
    finite = [x for x in (lo, hi) if math.isfinite(x)] + [x for ab in gaps for x in ab]
    for _ in range(2200):
        if e < -1022 or e > 1022:
            break
        dk = max(1, _gceil(dq, e))
        first = [_gceil(x, e) for x in ends_lo if math.isfinite(x)]
        last = [_gfloor(x, e) for x in ends_hi if math.isfinite(x)]
        ends = first + last
        c_lo, c_hi = (min(ends), max(ends)) if finite else (0, 0)
        t_max = 2.0 * math.ldexp(hint, -e)
        m0 = math.ceil(t_max * TAIL_BITS * math.log(2.0)) + dk + 2
        n = (c_hi - c_lo) + m0
        big = n + m0
        if (n <= MAX_INTERVALS and big * (dk + 1) <= MAX_PAIRS
                and _kexp(LAPLACE, t_max * 2.0, n) >= MIN_PEAK_BITS):
            kl = c_lo - m0
            if e > 1023 - 54 or math.ldexp(1.0, e) > dq or math.ldexp(hint, -e) < 1.0 / 64:
                # outputs up to 2^53 grid steps must stay finite doubles; a grid coarser
                # than the sensitivity, or than the noise, cannot certify the target
                raise ValueError(
                    "grid law: on an unbounded set the table must reach about 33 noise scales "
                    f"with at most {MAX_INTERVALS} grid steps; with this epsilon, sensitivity "
                    "and scale the grid would be coarser than the sensitivity (or its values "
                    "not representable); pass mode='continuous'")
            if max(abs(kl), abs(kl + big)) >= (1 << 52):
                raise ValueError(
                    "grid law: the allowed set is too far from 0 for the grid granularity "
                    f"2^{e}; shift the data towards 0 or pass mode='continuous'")
            sp = _spans(e, kl, lo, hi, gaps)
            return e, kl, n, dk, big, sp, (c_lo - kl, c_hi - kl)
        e += 1
    raise ValueError("grid law: no grid fits this allowed set, sensitivity and scale; pass "
                     "mode='continuous'")


def _spans(e: int, kl: int, lo: float, hi: float, gaps: tuple):
    """Grid indices (above kl) of the first and last grid point of each span (±2^62 for an
    unbounded end); None if a span holds no grid point."""
    ends_lo = [lo] + [b for _, b in gaps]
    ends_hi = [a for a, _ in gaps] + [hi]
    sa = [_gceil(x, e) - kl if math.isfinite(x) else -GD_INF for x in ends_lo]
    sb = [_gfloor(x, e) - kl if math.isfinite(x) else GD_INF for x in ends_hi]
    if any(a > b for a, b in zip(sa, sb)):
        return None
    sa_, sb_ = np.array(sa, dtype=np.int64), np.array(sb, dtype=np.int64)
    sa_.setflags(write=False)
    sb_.setflags(write=False)
    return sa_, sb_


@lru_cache(maxsize=128)
def _plan_constrained(target: float, hint: float, dq: float, lo: float, hi: float,
                      gaps: tuple, guarantee: str) -> ConstrainedPlan:
    metric = guarantee == "metric"
    e, kl, n, dk, big, sp, core = _set_grid(hint, dq, lo, hi, gaps, metric)
    if sp is None:
        raise ValueError("grid law: a span of the allowed set holds no grid point at the "
                         "finest usable granularity; pass mode='continuous'")
    sa, sb = sp
    tails = not (math.isfinite(lo) and math.isfinite(hi))
    on_grid = all(_gceil(x, e) == _gfloor(x, e) for ab in gaps for x in ab)
    gamma = math.ldexp(1.0, e)
    m0 = n - (core[1] - core[0])

    def far(cum, tw, kap, reach):
        # pairs with an input beyond 0..L: kappa + rho / (1 - rho), rho the mass of the
        # offsets at or beyond M0 + 1 - reach over the whole law
        if not tails:
            return -math.inf
        num = int(cum[n - m0 + reach]) + tw
        z = int(cum[-1]) + 2 * tw
        b = _up(Fraction(num, z - num))
        return max(_add_up(float(k), b) for k in kap)

    def cert(u):
        try:
            return _cert(u)
        except ValueError:
            # a table or tail this scale cannot have, or losses beyond the rounding
            # argument's range: not certified (the bisection moves on)
            return math.inf, None, None, None, None, None, math.inf

    def _cert(u):
        cum, k, tw, sbits = _set_table(u, n, tails)
        if metric:
            lam1, kap1 = _core.gd_set_bound(cum, n, big, sa, sb, tw, sbits, u, 1, 2)
            lam1 = max(lam1, far(cum, tw, [kap1], 1))
            jumps = [_core.gd_set_pair_loss(cum, n, sa, sb, tw, sbits, int(sb[s]),
                                            int(sa[s + 1]))
                     for s in range(len(gaps))]
            c = _metric_bound(lam1, jumps, e, dq, gaps)
            return c, cum, k, tw, sbits, np.array([lam1]), c
        lam, kap = _core.gd_set_bound(cum, n, big, sa, sb, tw, sbits, u, dk, 0)
        c = max(lam, 0.0, far(cum, tw, [kap], dk))
        if gaps and not on_grid:
            c = max(c, _core.gd_set_bound(cum, n, big, sa, sb, tw, sbits, u, dk + 1, 1)[0])
        # one bound for every shift up to dk (the fast certificate does not split by shift)
        return c, cum, k, tw, sbits, np.full(dk, c), math.inf

    u, (c, cum, k, tw, sbits, lam, me) = _search(cert, hint / gamma, target)
    lam.setflags(write=False)
    gh = np.array([b for _, b in gaps], dtype=np.float64)
    gh.setflags(write=False)
    return ConstrainedPlan("laplace", e, kl, n, dk, u, k, 1 << FLOOR_BITS, cum, target, c, lam,
                           span_lo=sa, span_hi=sb, gap_hi=gh, guarantee=guarantee,
                           metric_epsilon=me, inputs=big, tail_weight=tw, tail_bits=sbits,
                           core=core)


def plan_constrained_laplace(epsilon: float, sensitivity: float, lower: float, upper: float,
                             forbidden: tuple, guarantee: str, scale_hint: float
                             ) -> ConstrainedPlan:
    """Grid Laplace on an allowed set, certified for ``guarantee`` at ``epsilon``."""
    gaps = tuple((float(a), float(b)) for a, b in forbidden)
    try:
        return _plan_constrained(float(epsilon), float(scale_hint), float(sensitivity),
                                 float(lower), float(upper), gaps, guarantee)
    except OverflowError as exc:
        raise ValueError("grid law: the bounds, sensitivity or scale overflow the grid "
                         f"arithmetic ({exc}); pass mode='continuous'") from None
