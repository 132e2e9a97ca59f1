r"""The default release law: a table of integer weights on a power-of-two grid, sampled by an
integer inverse CDF, with its privacy loss certified from the same table.

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

Calibration. The scale in grid steps is the bisection point (relative width :math:`10^{-7}`)
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

__all__ = ["ExactPlan", "ProductPlan", "plan_bounded_laplace", "plan_bounded_gaussian",
           "check_mode", "grid_law", "MODES"]

LAPLACE, GAUSSIAN = 0, 1
_FAMILY = {LAPLACE: "laplace", GAUSSIAN: "gaussian"}
MODES = ("exact", "continuous")

GRID_STEPS = 16            # gamma <= min(scale, sensitivity) / 16
SENS_STEPS = 256           # ... refined until sensitivity / gamma is an integer or >= 256
MULTI_STEPS = 64           # multivariate: gamma <= sensitivity / (64 sqrt(m))
WIDTH_STEPS = 1024         # gamma <= (upper - lower) / 1024
MAX_INTERVALS = 1 << 22    # n: grid intervals in [l, u] (table memory: 16 (n + 1) bytes)
MAX_PAIRS = 1 << 28        # n * d_k: work of the certificate
MAX_INDEX = 1 << 53        # |grid index|: (k_l + j) * gamma is then an exact double
FLOOR_BITS = 12            # F = 2^12
TOTAL_BITS = 58            # table total <= 2^58 (a bounded-integer rejection < 2^-6)
MIN_PEAK_BITS = 32         # 2^K >= 2^32: peak / F >= 2^20
REL_TOL = 1e-7             # bisection width of the calibrated scale


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
                k = next((k for k in range(self.n + 1) if above[k] <= xv * s), self.n)
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
        """Evaluate ``what`` in pmf/cdf/ppf/mean/var for one value (x broadcast)."""
        p = self.pmf(value)
        g = self.grid()
        if what in ("sf", "logsf", "logcdf", "isf"):
            return self._tail(x, value, what)
        if what == "mean":
            return float(np.dot(p, g))
        if what == "var":
            mu = float(np.dot(p, g))
            return float(np.dot(p, (g - mu) ** 2))
        xa = np.asarray(x, dtype=np.float64)
        if what == "pmf":
            idx = np.searchsorted(g, xa)
            idc = np.clip(idx, 0, self.n)
            out = np.where(g[idc] == xa, p[idc], 0.0)
        elif what == "cdf":
            c = np.cumsum(p)
            c[-1] = 1.0
            k = np.searchsorted(g, xa, side="right") - 1
            out = np.where(k < 0, 0.0, c[np.clip(k, 0, self.n)])
        else:  # ppf: the smallest grid point with cdf >= p
            c = np.cumsum(p)
            c[-1] = 1.0
            k = np.clip(np.searchsorted(c, xa, side="left"), 0, self.n)
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
                 fam: int) -> tuple[int, int, int, int]:
    """(e, kl, n, dk) for the grid of [lo, hi]."""
    width = hi - lo
    dq_eff = min(dq, width) if dim is None else dq
    if dim is None:
        base = min(scale, dq_eff) / GRID_STEPS
    else:
        base = min(scale / GRID_STEPS, dq / (MULTI_STEPS * math.sqrt(dim)))
    # at least WIDTH_STEPS intervals: a nearly flat law on n + 1 points has variance
    # (1 + 2/n) times the continuous one
    base = min(base, width / WIDTH_STEPS)
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
        kl = math.ceil(math.ldexp(lo, -e))
        ku = math.floor(math.ldexp(hi, -e))
        n = ku - kl
        dk = max(1, math.ceil(math.ldexp(dq_eff if dim is None else dq, -e)))
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
                         delta: float = 0.0, scale_hint: float | None = None) -> ExactPlan:
    """Grid bounded Laplace for validated inputs; target loss ``eps - ln(1 - delta)``."""
    if scale_hint is None:
        from ..calibrate import bounded_laplace_scale
        scale_hint = float(bounded_laplace_scale(epsilon, sensitivity, lower, upper, delta))
    target = epsilon - math.log1p(-delta)
    return _plan_1d(LAPLACE, float(target), float(scale_hint), float(sensitivity),
                    float(lower), float(upper))


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
    kl = math.ceil(math.ldexp(lo, -e))
    ku = math.floor(math.ldexp(hi, -e))
    n = ku - kl
    dk = max(1, math.ceil(math.ldexp(dq, -e)))
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
        return _plan_1d(GAUSSIAN, float(epsilon), float(sigma_hint), float(sensitivity),
                        float(lower), float(upper))
    lo = tuple(float(x) for x in np.ravel(lower))
    hi = tuple(float(x) for x in np.ravel(upper))
    return _plan_product(float(epsilon), float(sigma_hint), float(sensitivity), lo, hi)
