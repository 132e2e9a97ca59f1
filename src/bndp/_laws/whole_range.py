"""The whole-range grid law: the mode check, :class:`ExactPlan` (grid, integer weight table,
search tree, law evaluation) and the table builder. The design and the certificate are in
the documentation's page "The grid laws: design and proofs" (``docs/grid_laws.rst``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .. import _dispatch
from .._core import certify_grid as _certify_grid, grid as _grid, window as _window
from .._values import grid_round
from .base import NoRowPath
from .constants import FLOOR_BITS, LAPLACE, MODES, TOTAL_BITS


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


class GridScale:
    """``gamma`` and ``scale`` of a grid law with fields ``exponent`` and ``scale_grid``."""

    exponent: int
    scale_grid: float

    @property
    def gamma(self) -> float:
        """Granularity of the grid (a power of two)."""
        return math.ldexp(1.0, self.exponent)

    @property
    def scale(self) -> float:
        """Kernel scale in value units (``scale_grid * gamma``)."""
        return self.scale_grid * self.gamma


@dataclass(frozen=True, eq=False)
class ExactPlan(GridScale, NoRowPath):
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

    #: not the windowed law of one row (no compiled one-row sampler)
    supports_rows = False

    @property
    def bounded(self) -> bool:
        """Finitely many outputs (a constrained plan on an unbounded set has not)."""
        return True

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
        return _grid.gd_index(v, self.exponent, self.kl, self.n).reshape(np.shape(value))

    def exact_index(self, value: Fraction) -> int:
        """:meth:`index` of an exact (rational) true value: the same rounding (nearest grid
        point, ties up, clipped to the grid) in rational arithmetic."""
        k = grid_round(Fraction(value), 0.0, self.exponent)
        return min(max(k, self.kl), self.kl + self.n) - self.kl

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
        return cached_search_tree(self)

    def sample(self, value: np.ndarray, size: Any, gen: np.random.Generator, workers: Any = 1):
        """Draws for clipped true values ``value`` (NumPy's size rule; ``workers`` as for
        :func:`bndp.sample`)."""
        (tree, levels), n, e, kl = self.search_tree, self.n, self.exponent, self.kl

        def one(gen, q):
            return _grid.gd_one(gen, tree, levels, n, e, kl, q)

        def fill(gen, q, out):
            _grid.gd_fill(gen, tree, levels, n, e, kl, q, out)

        def rows(gen, q, out):
            _grid.gd_fill_rows(gen, tree, levels, n, e, kl, q, out)

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
            if what == "isf":    # smallest grid point whose sf (as _tail returns it) is <= xv
                k = next((k for k in range(len(g)) if above[k] / s <= xv), len(g) - 1)
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
        # (the rounded running sum may pass 1 by an ulp before the last point)
        c = np.minimum(np.cumsum(p), 1.0) if c is None else c.copy()
        c[-1] = 1.0
        k = np.searchsorted(g, xa, side="right") - 1
        out = np.where(k < 0, 0.0, c[np.clip(k, 0, len(g) - 1)])
    else:  # ppf: the smallest grid point with cdf >= p
        c = np.minimum(np.cumsum(p), 1.0) if c is None else c.copy()
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
    total, offsets = _grid.gd_search_table_layout(levels)
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



def cached_search_tree(plan: Any) -> tuple[np.ndarray, int]:
    """``plan.cum`` as the sampler searches it (:func:`search_tree`, built by the kernel),
    cached read-only on the (frozen) object: shared by :class:`ExactPlan` and the windowed
    kernel of :mod:`bndp._laws.window`."""
    tree = plan.__dict__.get("_tree")
    if tree is None:
        tree = _window.gw_search_tree(plan.cum)
        tree[0].setflags(write=False)
        object.__setattr__(plan, "_tree", tree)
    return tree


def _certify(cum: np.ndarray, n: int, dk: int) -> np.ndarray:
    return np.maximum.accumulate(_certify_grid.gd_shift_losses(cum, n, dk))


def _kexp(fam: int, u: float, n: int) -> int:
    z = min(1.0 + 2.0 * u if fam == LAPLACE else 1.0 + math.sqrt(2.0 * math.pi) * u,
            2.0 * n + 1.0)
    avail = 2.0 ** TOTAL_BITS - (2.0 * n + 1.0) * (2.0 ** FLOOR_BITS + 1.0)
    return int(math.floor(math.log2(avail / (z * (1.0 + 1e-9)))))


def _table(fam: int, u: float, n: int) -> tuple[np.ndarray, int]:
    k = _kexp(fam, u, n)
    cum = _certify_grid.gd_table(fam, u, n, k, 1 << FLOOR_BITS)
    if int(cum[-1]) > (1 << TOTAL_BITS):  # pragma: no cover - guaranteed by _kexp
        raise RuntimeError("grid law: table total exceeds 2^58")
    cum.setflags(write=False)
    return cum, k


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

