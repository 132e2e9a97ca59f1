r"""The windowed grid law: the default release of :class:`~bndp.BoundedLaplace` and the
univariate :class:`~bndp.BoundedGaussian`, one kernel table for every row it serves.

A row :math:`[l, u]` has the grid points :math:`\mathrm{fl}(l + j\gamma)`; the output index
is drawn from an integer kernel table with geometric tails, and the loss of every pair of
inputs at most :math:`d_k` grid steps apart is certified in :math:`O(n)` (``_gw_eval`` in
``_core/certify_grid.pyx``). The law, the certificate and its proof, the calibration and the
choice of the grid are in the documentation's page "The grid laws: design and proofs"
(``docs/grid_laws.rst``).
"""

from __future__ import annotations

import math
import threading
import warnings
from collections import OrderedDict
from functools import cached_property
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from .. import _dispatch, _random
from .._core import calibrate as _calibrate, fill as _fill, rows as _rows, window as _window
from .._values import WideValues, grid_round, snap
from .constants import (FAMILY_NAMES, GAUSSIAN, LAPLACE, MAX_ROW_INTERVALS, REL_TOL,
                        SCALE_STEPS, SENS_STEPS, WINDOW_WIDTH_STEPS)
from .messages import check_row_exponents, no_kernel_message
from .search_start import _search_start
from .serving import _first_drawn_from, _served_map, _surely_narrow, on_row, tried
from .ends import grid_ends_loss
from .lattice import Step, _pass_steps, check_lattice
from .step import plan_step_row, sample_step_rows
from .whole_range import ExactPlan, GridScale, _law_from, cached_search_tree

__all__ = ["WindowLaw", "RowPlan", "plan_row", "sample_rows", "grid_exponent"]

MAX_LAWS = 2048          # kernels kept (LRU; a narrow kernel holds about 50 KB with its search table)
STEPS_LOG2 = 21          # a kernel has at most 2^21 grid steps per sensitivity (dk <= 2^21)


def serving_target(target: float, sensitivity: float) -> float:
    r"""The loss a kernel is calibrated for: ``target``, or, where the grid of ``target``
    would hold more than :math:`2^{21}` steps per sensitivity, the largest target whose grid
    holds at most that many (a number in :math:`(2^{16}, 2^{17}]`, whatever the
    sensitivity).

    The certificate's work and memory grow with :math:`d_k = \lceil\Delta/\gamma\rceil`,
    about :math:`16\,\epsilon` at the default granularity; a larger ``target`` is served by
    this law, whose certified loss is at most the returned value (a law certified for a
    smaller loss satisfies the larger one). Every target at or below it keeps its own law.
    """
    dq = float(sensitivity)
    if not (math.isfinite(target) and dq > 0.0 and math.isfinite(dq)):
        return target            # left to the callers' checks
    m, ex = math.frexp(dq)
    top = (ex if m > 0.5 else ex - 1) - STEPS_LOG2      # 2^top >= dq / 2^21
    cap = math.ldexp(dq, -(top + 4))      # dq / cap / SCALE_STEPS = 2^top exactly
    return cap if target > cap else target


@dataclass(frozen=True, eq=False)
class WindowLaw(GridScale):
    """One calibrated kernel of the windowed grid law (see the module docstring).

    Attributes
    ----------
    family : str
    exponent : int
        The granularity is ``2**exponent``.
    dk : int
        Grid steps between neighbouring inputs (at most).
    scale_grid : float
        Kernel scale ``t`` in grid steps.
    N : int
        Table half-width (offsets ``-N..N``).
    kexp, tailw, sbits, tm : int
        ``W = rint(2^kexp kernel)``; tail total ``B = tailw`` per side, success probability
        ``tm 2^-sbits`` (``tailw = 0``: no tail; the table covers the row).
    n_min, n_max : int or None
        The rows served: ``n_min <= n <= n_max`` intervals (``n_max`` None: unbounded).
    cum : ndarray of uint64
        Cumulative weights of offsets ``-N..N`` (read-only).
    target, certified_epsilon : float
    """

    family: str
    exponent: int
    dk: int
    scale_grid: float
    N: int
    kexp: int
    tailw: int
    sbits: int
    tm: int
    n_min: int
    n_max: int | None
    cum: np.ndarray = field(repr=False)
    target: float
    certified_epsilon: float

    @property
    def tail_ratio(self) -> float:
        return 1.0 - math.ldexp(self.tm, -self.sbits) if self.tailw else 0.0

    @property
    def search_tree(self) -> tuple[np.ndarray, int]:
        """The cumulative table as the sampler searches it: (padded array, levels)."""
        return cached_search_tree(self)

    @cached_property
    def fill_args(self) -> tuple:
        """``(tree, levels, N, tailw, sbits, tm, exponent)``: the kernel as
        ``_core.rows.gw_fill_groups`` takes it."""
        tree, levels = self.search_tree
        return (tree, levels, self.N, self.tailw, self.sbits, self.tm, self.exponent)

    def serves(self, n: int) -> bool:
        return n >= self.n_min and (self.n_max is None or n <= self.n_max)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_serve_scan", None)    # its narrow rows' certificates: recomputed
        return state

    def weights(self, i: int, n: int, reach: int | None = None) -> tuple[np.ndarray, int, float]:
        """Weights (float64) of the outputs ``lo..hi`` of a row of ``n`` intervals for input
        ``i``, their first index ``lo`` and the exact normaliser ``S_i`` (tails summed in
        closed form). ``reach`` limits the tail offsets listed (their mass beyond is
        included in ``S_i``)."""
        N = self.N
        w_tab = np.diff(self.cum).astype(np.float64)       # offsets -N..N
        a, b = max(-i, -N), min(n - i, N)
        s = float(int(self.cum[b + N + 1]) - int(self.cum[a + N]))
        lnp = math.log1p(-math.ldexp(self.tm, -self.sbits)) if self.tailw else 0.0
        left = i - N if i > N else 0                        # tail offsets below the table
        right = n - i - N if n - i > N else 0
        if self.tailw:
            s += self.tailw * (-math.expm1(left * lnp)) + self.tailw * (-math.expm1(right * lnp))
        if reach is None:
            reach = max(left, right)
        kl, kr = min(left, reach), min(right, reach)
        w1 = self.tailw * math.ldexp(self.tm, -self.sbits)
        tl = w1 * np.exp(np.arange(kl - 1, -1, -1, dtype=np.float64) * lnp) if kl else np.empty(0)
        tr = w1 * np.exp(np.arange(0, kr, dtype=np.float64) * lnp) if kr else np.empty(0)
        w = np.concatenate((tl, w_tab[a + N: b + N + 1], tr))
        return w, i + a - kl, s


_LAWS: "OrderedDict[tuple, WindowLaw]" = OrderedDict()
_LAWS_LOCK = threading.Lock()     # threads (Dask, Spark, workers) share the cache


def _wide_on_row(fam: int, target: float, dk: int, e: int,
                 n: int) -> tuple[WindowLaw | None, float, bool]:
    """The wide kernel of ``(fam, target, dk, e)``, its certificate on a row of ``n``
    intervals and whether it serves that row (:func:`~bndp._laws.serving.on_row`);
    ``(None, NaN, False)`` where no wide kernel is tried for the row
    (:func:`~bndp._laws.serving.tried`) or none can be planned."""
    if not tried(fam, target, dk, n):
        return None, math.nan, False
    try:
        wide = _law(fam, target, dk, e, None)
    except ValueError:
        return None, math.nan, False
    return (wide, *on_row(wide, fam, target, dk, n))


def _law(fam: int, target: float, dk: int, e: int, n: int | None) -> WindowLaw:
    """The kernel for rows of ``n`` intervals (``None``: the wide kernel), cached. A narrow
    row is served by the wide kernel where that kernel is calibrated for the row too
    (:func:`_wide_on_row`), else by its own kernel. A kernel's search starts at
    :func:`_search_start`'s scale: a function of the cache key, so the kernel is too."""
    key = (fam, target, dk, e, n)
    with _LAWS_LOCK:
        law = _LAWS.get(key)
        if law is not None:
            _LAWS.move_to_end(key)
            return law
    wide = n is None
    nn = 1 << 40 if n is None else n
    if wide:
        t0 = _search_start(fam, target, dk, None)
    else:
        served, c, serves = _wide_on_row(fam, target, dk, e, nn)
        if served is not None and serves:
            # the wide kernel's table and search tree, certified for this row
            law = replace(served, n_min=nn, n_max=nn, certified_epsilon=c)
            object.__setattr__(law, "_tree", served.search_tree)
            with _LAWS_LOCK:
                _LAWS[key] = law
                while len(_LAWS) > MAX_LAWS:
                    _LAWS.popitem(last=False)
            return law
        t0 = _search_start(fam, target, dk, nn, None if served is None else
                           (served.scale_grid, c))
    # a starting scale the kernel can represent (the search moves from there)
    t0 = min(max(t0, 1e-3), 1e7 if wide else 1e3 * nn)
    try:
        t, cert, shape, cum = _calibrate.gw_calibrate(fam, target, t0, nn, dk, wide, REL_TOL)
    except ValueError:
        raise ValueError(no_kernel_message(fam, target, dk, n)) from None
    N, tail, kexp, tailw, sbits, tm, n_wide = shape
    n_min = n_wide if n is None else n
    law = WindowLaw(FAMILY_NAMES[fam], e, dk, t, N, kexp, tailw if tail else 0, sbits, tm,
                    n_min, n, cum, target, float(cert))
    with _LAWS_LOCK:
        _LAWS[key] = law
        while len(_LAWS) > MAX_LAWS:
            _LAWS.popitem(last=False)
    return law


def grid_exponent(target: float, sensitivity: float, width: Any, lo: Any = 0.0,
                  hi: Any = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The granularity exponent per row (vectorised; see the module docstring), and the
    rows whose grid had to be coarsened for bounds far from 0 (a boolean array)."""
    dq = float(sensitivity)
    w = np.asarray(width, dtype=np.float64)
    base = np.minimum(np.minimum(dq / target / SCALE_STEPS, dq), w / WINDOW_WIDTH_STEPS)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.frexp(base)[1].astype(np.int64) - 1
    # sensitivity a multiple of gamma, or at least SENS_STEPS steps
    for _ in range(8):
        r = np.ldexp(np.minimum(dq, w), -e)
        refine = (r != np.floor(r)) & (r < SENS_STEPS)
        if not refine.any():
            break
        e = e - refine
    # outputs fl(lo + j gamma) distinct: gamma >= 2 ulp(max(|lo|, |hi|))
    # (or gamma >= ulp(max(|lo|, |hi|)) when lo is a multiple of gamma: the outputs are then
    # exact doubles)
    loa = np.asarray(lo, dtype=np.float64)
    m = np.maximum(np.abs(loa), np.abs(np.asarray(hi, dtype=np.float64)))
    eu = np.frexp(np.maximum(m, 1e-300))[1].astype(np.int64) - 53      # ulp(m) = 2^eu
    with np.errstate(invalid="ignore"):
        r = np.ldexp(loa, -np.maximum(eu, e))
    eu = eu + (r != np.floor(r))
    need = np.broadcast_to(eu, np.broadcast_shapes(e.shape, eu.shape))
    e = np.broadcast_to(e, need.shape)
    coarse = need > e
    return np.where(coarse, need, e), coarse


def _exponent1(target: float, dq: float, lo: float, hi: float) -> tuple[int, bool]:
    """:func:`grid_exponent` for one row (scalars, no NumPy)."""
    w = hi - lo
    base = min(dq / target / SCALE_STEPS, dq, w / WINDOW_WIDTH_STEPS)
    if not (base > 0.0 and math.isfinite(base)):
        return -2000, False
    e = math.frexp(base)[1] - 1
    for _ in range(8):
        r = math.ldexp(min(dq, w), -e)
        if r == math.floor(r) or r >= SENS_STEPS:
            break
        e -= 1
    m = max(abs(lo), abs(hi), 1e-300)
    eu = math.frexp(m)[1] - 53
    r = math.ldexp(lo, -max(eu, e))
    if r != math.floor(r):
        eu += 1
    return (eu, True) if eu > e else (e, False)


def _check_exponent(e: np.ndarray, coarse: np.ndarray, dq: float, rows: bool = False,
                    warn: bool = True) -> None:
    """Refuse granularity exponents out of range or coarsened beyond the sensitivity, and
    warn of coarsened grids (``warn``). ``rows``: per-row bounds (data), worded by the first
    row's index, without the exponents (which follow the bounds)."""
    if rows:
        check_row_exponents(e, coarse, dq, warn)
        return
    if e.size and (int(e.min()) < -1022 or int(e.max()) > 1000):
        raise ValueError(
            "grid law: the bounds' width or the sensitivity is outside the representable "
            f"range (granularity 2^{int(e.min())}..2^{int(e.max())}; widths and sensitivities "
            "from about 1e-290 to 1e290 are supported); pass mode='continuous'")
    if coarse.any():
        top = int(e[coarse].max())
        if math.ldexp(1.0, top) > dq:
            # a grid step beyond the sensitivity would multiply the noise by gamma / dq
            raise ValueError(
                f"grid law: bounds too far from 0 for sensitivity {dq!r}: doubles there are "
                f"spaced 2^{top - 1} apart, more than the sensitivity; the default release "
                "needs |lower|, |upper| below 2^51 * sensitivity (shift the data towards 0, "
                "or pass mode='continuous')")
        warnings.warn(
            "grid law: bounds far from 0 need a coarser grid than the sensitivity asks for "
            f"(granularity 2^{top} for sensitivity {dq!r}; doubles there are spaced "
            f"2^{top - 1} apart): the noise is calibrated on that grid, at most "
            f"{math.ceil(math.ldexp(dq, -top)) * math.ldexp(1.0, top) / dq:.3g} times the "
            "sensitivity", RuntimeWarning, stacklevel=4)


@dataclass(frozen=True, eq=False)
class RowPlan:
    """The grid law of one row ``[lower, upper]``: a :class:`WindowLaw` and the row.

    The interface of :class:`bndp._laws.whole_range.ExactPlan` (grid, index, pmf, law,
    sample, certified loss)."""

    kernel: WindowLaw
    lower: float
    upper: float
    n: int

    family = property(lambda self: self.kernel.family)
    exponent = property(lambda self: self.kernel.exponent)
    gamma = property(lambda self: self.kernel.gamma)
    scale = property(lambda self: self.kernel.scale)
    scale_grid = property(lambda self: self.kernel.scale_grid)
    dk = property(lambda self: self.kernel.dk)
    target = property(lambda self: self.kernel.target)
    certified_epsilon = property(lambda self: self.kernel.certified_epsilon)

    #: capabilities of the :class:`~bndp._laws.base.Plan` interface: finitely many outputs;
    #: the windowed law of one finite row, drawn by the compiled one-row sampler
    bounded = True
    supports_rows = True

    def grid(self) -> np.ndarray:
        """The ``n + 1`` attainable outputs ``fl(lower + j gamma)``."""
        return self.lower + np.arange(self.n + 1, dtype=np.float64) * self.gamma

    def index(self, value: Any) -> np.ndarray:
        v = np.ascontiguousarray(np.ravel(np.asarray(value, dtype=np.float64)))
        k = v.shape[0]
        out = _window.gw_index(v, np.full(k, self.lower), np.full(k, self.upper),
                             self.exponent, np.full(k, self.n, dtype=np.int64))
        return out.reshape(np.shape(value))

    def exact_index(self, value: Fraction) -> int:
        """:meth:`index` of an exact (rational) true value: clipped into the row, rounded to
        the nearest grid point (ties up) in rational arithmetic."""
        return row_exact_index(value, self.lower, self.upper, self.exponent, self.n)

    def _reach(self) -> int:
        if not self.kernel.tailw:
            return 0
        # tail offsets listed by the law functions: until p^k < 2^-60 (the rest of the
        # tail, below 2^-84 of the law, is in the normaliser only)
        q = self.kernel.tail_ratio
        return int(min(self.n, math.ceil(60 * math.log(2) / -math.log(q)) + 1))

    def _pmf_window(self, value: float) -> tuple[np.ndarray, np.ndarray]:
        i = int(self.index(float(value)))
        w, j0, s = self.kernel.weights(i, self.n, self._reach())
        j = np.arange(j0, j0 + len(w))
        return self.lower + j * self.gamma, w / s

    def _tail(self, x: Any, value: Any, what: str):
        return ExactPlan._tail(self, x, value, what)  # type: ignore[arg-type]

    @property
    def kl(self) -> float:
        """``lower / gamma`` (an integer when ``lower`` is on the grid gamma Z)."""
        return math.ldexp(self.lower, -self.exponent)

    def pmf(self, value: Any) -> np.ndarray:
        """Output probabilities over :meth:`grid` for one value."""
        if not self.kernel.tailw and self.kernel.N == self.n:
            w, s = self.weights_for(value)
            return w.astype(np.float64) / float(s)
        g, p = self._pmf_window(value)
        out = np.zeros(self.n + 1)
        j0 = int(round((g[0] - self.lower) / self.gamma)) if len(g) else 0
        out[j0: j0 + len(p)] = p
        return out

    def weights_for(self, value: Any) -> tuple[np.ndarray, int]:
        """Integer weights over the grid for one value and their total ``S_i`` (rows the
        table covers, ``n <= N``: every weight is a table entry)."""
        if self.kernel.tailw or self.kernel.N != self.n:
            raise NotImplementedError("integer weights: only for rows the table covers")
        i = int(self.index(float(value)))
        n = self.n
        w = np.diff(self.kernel.cum)[n - i: 2 * n - i + 1]
        return w, int(self.kernel.cum[2 * n - i + 1] - self.kernel.cum[n - i])

    def law(self, x: Any, value: Any, what: str):
        """pmf/cdf/ppf/mean/var or a tail function of the law for one value: exact integer
        sums when the table covers the row, float64 sums with the tails (summed to 2^-60 of
        their mass, the rest in the normaliser) otherwise."""
        if not self.kernel.tailw and self.kernel.N == self.n:
            return ExactPlan.law(self, x, value, what)  # type: ignore[arg-type]
        g, p = self._pmf_window(value)
        if what in ("sf", "logsf", "logcdf", "isf"):
            # P(X >= g_k); the rounded sums of the probabilities may pass 1 by an ulp
            c_up = np.minimum(np.cumsum(p[::-1])[::-1], 1.0)
            above = np.concatenate((c_up[1:], [0.0]))
            xa = np.asarray(x, dtype=np.float64)
            out = np.empty(xa.shape)
            for idx, xv in np.ndenumerate(xa):
                if what == "isf":
                    k = int(np.searchsorted(-above, -xv, side="left"))
                    out[idx] = g[min(k, len(g) - 1)]
                    continue
                k = int(np.searchsorted(g, xv, side="right")) - 1
                if what == "logcdf":
                    out[idx] = -math.inf if k < 0 else math.log1p(-min(above[k], 1.0)) \
                        if above[k] < 0.5 else math.log(max(1.0 - above[k], 0.0)) \
                        if 1.0 - above[k] > 0 else -math.inf
                else:
                    v = 1.0 if k < 0 else above[k]
                    out[idx] = (math.log(v) if v > 0 else -math.inf) if what == "logsf" else v
            return float(out) if out.ndim == 0 else out
        return _law_from(g, p, x, what)

    @cached_property
    def row(self) -> "_window.GwRow":
        """The row bound to its search table, checked once (:class:`bndp._core.window.GwRow`):
        the one-value and small-array draws of :meth:`sample` and the mechanisms' short
        path. Built on first use; not pickled (rebuilt from the plan)."""
        k = self.kernel
        tree, levels = k.search_tree
        return _window.GwRow(tree, levels, k.N, k.tailw, k.sbits, k.tm, k.exponent, self.lower,
                           self.upper, self.n)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("row", None)     # a compiled object: rebuilt on first use
        return state

    def sample_inside(self, value: Any, size: Any, rng: Any, on_outside: Any,
                      workers: Any) -> Any:
        """The short path of :meth:`sample` (:meth:`bndp._core.window.GwRow.sample`: one value or
        a small 1-D float64 array, every value inside the row, ``size=None``, ``workers=1``,
        a known ``on_outside``): the draws of the general path without its conversions and
        checks (there is nothing to clip or refuse). ``NotImplemented`` for any other call:
        the caller takes the general path, which validates everything and raises the usual
        errors."""
        return self.row.sample(value, size, rng, on_outside, workers, _random.as_generator)

    def ends_loss(self, lower: float, upper: float) -> float | None:
        """The certified loss between the row's two ends (grid inputs ``0`` and ``n``;
        :func:`~bndp._laws.ends.grid_ends_loss`): ``lower`` and ``upper`` are the row's."""
        return grid_ends_loss(self)

    def sample(self, value: np.ndarray, size: Any, gen: np.random.Generator, workers: Any = 1):
        """Draws for clipped true values (NumPy's size rule; ``workers`` as for
        :func:`bndp.sample`)."""
        row = self.row
        # one value or a small 1-D float64 array inside the row: the compiled row directly
        # (the same blocks of draws as gw_fill_row below)
        out = row.sample(value, size, gen, "clip", workers, _random.as_generator)
        if out is not NotImplemented:
            return out
        k = self.kernel
        (tree, levels) = k.search_tree
        args = (tree, levels, k.N, k.tailw, k.sbits, k.tm, k.exponent, self.lower, self.upper,
                self.n)

        def rows(gen, q, out):
            _fill.gw_fill_row(gen, *args, q, out)

        def fill(gen, q, out):
            rows(gen, np.broadcast_to(np.float64(q), (1, out.shape[0])), out.reshape(1, -1))

        def one(gen, q):
            return row.one(gen, q)

        return _dispatch.sample(one, fill, rows, [np.asarray(value, dtype=np.float64)], size,
                                gen, workers)


def row_exact_index(value: Fraction, lower: float, upper: float, e: int, n: int) -> int:
    """The grid index of an exact true value in the row ``[lower, upper]`` of ``n``
    intervals of ``2^e``: ``_gw_index``'s rounding (clip, nearest point ties up, clip to
    ``[0, n]``) in rational arithmetic."""
    k = grid_round(Fraction(value), lower, e, lower, upper)
    return min(max(k, 0), n)


def snap_rows(values: WideValues, lo: np.ndarray, hi: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Per-row bounds: doubles whose row grid indices are those of the exact values
    (:func:`bndp._values.snap`; 1-D arrays of one length, ``e`` the rows' exponents)."""
    ea = np.broadcast_to(np.asarray(e, dtype=np.int64), lo.shape)

    def index(d: np.ndarray, pos: np.ndarray) -> np.ndarray:
        out = np.empty(d.shape[0], dtype=np.int64)
        ep = ea[pos]
        for ev in np.unique(ep):
            s = np.flatnonzero(ep == ev)
            los, his = lo[pos[s]], hi[pos[s]]
            n = _window.gw_intervals(los, his, int(ev))
            out[s] = _window.gw_index(np.ascontiguousarray(d[s]), los, his, int(ev), n)
        return out

    def exact(v: Fraction, p: int) -> int:
        ev = int(ea[p])
        n = int(_window.gw_intervals(lo[p:p + 1], hi[p:p + 1], ev)[0])
        return row_exact_index(v, float(lo[p]), float(hi[p]), ev, n)

    return snap(values, index, exact)


def _sens_steps(dq: float, e: int) -> int:
    """The sensitivity ``dq`` in grid steps ``2^e``, rounded up (at least 1; ``2^62`` where
    it is more, or beyond the doubles: wider than any row, whose kernel then takes its
    ``n``, as two true values of one row are at most its width apart)."""
    try:
        return max(1, min(math.ceil(math.ldexp(dq, -e)), 1 << 62))
    except OverflowError:
        return 1 << 62


def _row_law(fam: int, target: float, dq: float, e: int, n: int) -> WindowLaw:
    dk = _sens_steps(dq, e)
    if _surely_narrow(fam, target, dk, n):
        return _law(fam, target, min(dk, n), e, n)
    wide = _law(fam, target, dk, e, None)
    if n >= wide.n_min:
        return wide
    return _law(fam, target, min(dk, n), e, n)


def _intervals1(lo: float, hi: float, e: int) -> int:
    """floor((hi - lo) / 2^e) exactly (``gw_intervals`` for one row): TwoSum of the exact
    scalings."""
    z, zl = math.ldexp(hi, -e), math.ldexp(lo, -e)
    d = z - zl
    bb = d - z
    err = (z - (d - bb)) + (-zl - bb)
    if not (0.0 <= d < 2.0 ** 52):
        return -1 if not d >= 0.0 else 1 << 52
    fd = math.floor(d)
    return int(fd) - int((d - fd) < -err)


def coarse_row(target: float, sensitivity: float, lower: float, upper: float) -> bool:
    """Whether the grid of the row ``[lower, upper]`` is coarsened for bounds far from 0
    (``target`` the loss its kernel serves): its planning warns."""
    return _exponent1(target, float(sensitivity), float(lower), float(upper))[1]


def plan_row(fam: int, target: float, sensitivity: float, lower: float,
             upper: float, lattice: "int | Step | None" = None) -> Any:
    """The grid law of one row (validated inputs; ``target`` the loss to certify, served as
    :func:`serving_target`). ``lattice``: the exponent ``s`` of the integer law's step
    :math:`2^s` (integral bounds below :math:`2^{52}`, validated by the caller), which
    replaces the default grid's granularity, or a :class:`~bndp._laws.lattice.Step` (any
    other step: a :class:`~bndp._laws.step.StepPlan`); None: the default grid."""
    if isinstance(lattice, Step):
        return plan_step_row(fam, target, sensitivity, lower, upper, lattice)
    dq = float(sensitivity)
    target = serving_target(target, dq)
    if lattice is None:
        ei, coarse = _exponent1(target, dq, float(lower), float(upper))
        if coarse or not -1022 <= ei <= 1000:
            _check_exponent(np.array([ei]), np.array([coarse]), dq)
    else:
        check_lattice(target, dq, lattice)
        ei = lattice
        dq = max(dq, math.ldexp(1.0, ei))      # (the same number of steps)
    n = _intervals1(float(lower), float(upper), ei)
    if n < 1:
        if lattice is not None:
            raise ValueError(f"integer law: [lower, upper] holds no lattice step of "
                             f"{1 << lattice}; pass a smaller step")
        raise ValueError("grid law: the interval holds no grid step; pass mode='continuous'")
    _check_row_intervals(n, dq, float(upper) - float(lower))
    return RowPlan(_row_law(fam, target, dq, ei, n), float(lower), float(upper), n)


def _check_row_intervals(n: int, dq: float, width: float, rows: bool = False) -> None:
    """Refuse a row of more grid intervals than a kernel serves (:data:`MAX_ROW_INTERVALS`):
    a range wider than about 2^44 sensitivities (its grid steps are at most a sixteenth of
    the sensitivity); it failed only when drawing. ``rows``: per-row bounds (data), the
    width not quoted."""
    if n > MAX_ROW_INTERVALS and rows:
        raise ValueError(
            "grid law: a row's upper - lower (per-row bounds) spans more grid steps than the "
            "default release serves (2^51); pass mode='continuous', or a coarser sensitivity")
    if n > MAX_ROW_INTERVALS:
        raise ValueError(
            f"grid law: upper - lower ({width!r}) is {width / dq:.3g} times the sensitivity, "
            f"more grid steps than the default release serves (2^51); pass "
            "mode='continuous', or a coarser sensitivity")


def _check_widest_row(nmax: np.ndarray, dq: float, lo: np.ndarray, hi: np.ndarray) -> None:
    """:func:`_check_row_intervals` of the widest row of a per-row pass (``nmax``: the
    exponents' largest interval counts)."""
    if nmax.size and int(nmax.max()) > MAX_ROW_INTERVALS:
        k = int(np.argmax((hi - lo) / dq))
        _check_row_intervals(int(nmax.max()), dq, float(hi[k] - lo[k]), rows=True)


def plan_wide(fam: int, target: float, sensitivity: float) -> WindowLaw:
    """The kernel of every wide row at bounds near 0 (planned and cached): checks before
    any data is seen that the privacy parameters have a default release (per-row bounds
    plan their narrow rows from the data)."""
    dq = float(sensitivity)
    target = serving_target(target, dq)
    e, coarse = _exponent1(target, dq, 0.0, math.inf)
    if not -1022 <= e <= 1000:
        _check_exponent(np.array([e]), np.array([coarse]), dq)
    dk = _sens_steps(dq, e)
    return _law(fam, target, dk, e, None)


def sample_rows(fam: int, target: float, sensitivity: float, q: np.ndarray, lo: np.ndarray,
                hi: np.ndarray, gen: np.random.Generator,
                exact: WideValues | None = None,
                lattice: "int | Step | None" = None) -> np.ndarray:
    """Per-row bounds: one draw per row (1-D float64 arrays of one length, values clipped
    into their rows), ``target`` served as :func:`serving_target`: the one per-row sampler
    (:func:`_sample_rows_compiled`). ``exact``: the exact true values when some are not
    doubles (``q`` then holds their approximations); each is first rounded onto its row's
    grid from its exact value (:func:`snap_rows`: doubles with the exact values' grid
    indices), and those doubles are drawn. ``lattice``: the exponent ``s`` of the integer
    law's step :math:`2^s` (integral bounds below :math:`2^{52}`, validated by the caller):
    every row on the lattice :math:`l_i + j 2^s`; a :class:`~bndp._laws.lattice.Step`:
    :func:`~bndp._laws.step.sample_step_rows`."""
    if isinstance(lattice, Step):
        return sample_step_rows(fam, target, sensitivity, q, lo, hi, gen, lattice, exact)
    dq = float(sensitivity)
    target = serving_target(target, dq)
    if lattice is not None:
        check_lattice(target, dq, lattice)
    if exact is not None:
        if lattice is None:
            with np.errstate(over="ignore"):    # an inf width: refused with its reason below
                width = hi - lo
            e, coarse = grid_exponent(target, dq, width, lo, hi)
            e = np.broadcast_to(e, q.shape)
            # refusals only: the draw's grid pass warns of coarse grids (once)
            _check_exponent(e, coarse, dq, rows=True, warn=False)
        else:
            e = np.full(q.shape, lattice, dtype=np.int64)
        q = np.clip(snap_rows(exact, lo, hi, e), lo, hi)
    return _sample_rows_compiled(fam, target, dq, q, lo, hi, gen, lattice)


def _sample_rows_compiled(fam: int, target: float, dq: float, q: np.ndarray, lo: np.ndarray,
                          hi: np.ndarray, gen: np.random.Generator,
                          lattice: int | None = None) -> np.ndarray:
    """:func:`sample_rows` for double true values: the wide kernel of the exponent of rows
    near 0 (:func:`plan_wide`'s) is drawn first, on its wide rows and the narrow rows it
    serves (:func:`~bndp._laws.serving._served_map`), in the pass that finds every row's grid
    (``gw_rows_first``: each row's exponent, as :func:`grid_exponent`, interval count and
    grid index, chunk by chunk in cache); the rows it leaves are then drawn kernel by kernel
    (:func:`_draw_kernels`). Where that kernel is drawn first in the order of
    :func:`_draw_kernels` (its exponent the smallest of the rows', the usual case), the
    draws and the stream are those of :func:`_draw_kernels` on every row; so too where no
    row may be drawn with that kernel, wide or served (it is then not planned).
    ``lattice``: every row's exponent is that of the integer lattice (:func:`_pass_steps`)."""
    q, lo, hi = (np.ascontiguousarray(a, dtype=np.float64) for a in (q, lo, hi))
    out = np.empty(q.shape[0])
    if q.shape[0] == 0:
        return out
    dq, ss, ws, sens = _pass_steps(target, dq, lattice)
    e0 = _exponent1(target, dq, 0.0, math.inf)[0] if lattice is None else lattice
    first = None
    if -1022 <= e0 <= 1000:
        # the kernel is planned only where a row may be wide at that grid (the widest
        # row's n, plus one for the rounding of hi - lo, not surely narrow), so the kernels
        # planned are a function of the rows, never of the cache; one already planned is
        # taken from the cache, with the same draws (no row of that grid is wide where it
        # would not be planned)
        dk0 = _sens_steps(dq, e0)
        key0 = (fam, target, dk0, e0, None)
        with _LAWS_LOCK:
            first = _LAWS.get(key0)
            if first is not None:
                _LAWS.move_to_end(key0)
        if first is None and _may_be_first(fam, target, dk0, e0, lo, hi):
            try:
                first = _law(fam, target, dk0, e0, None)
            except ValueError:  # no wide kernel: every row is drawn kernel by kernel
                first = None
    if first is None:
        e, coarse, n, evals, nmax, idx, summary = _rows.gw_rows_grid(
            target, dq, lo, hi, ss, ws, sens, q)
        _check_rows(summary, dq, lambda: (e, coarse))
        _check_widest_row(nmax, dq, lo, hi)
        _draw_kernels(fam, target, dq, None, e, n, idx, lo, evals, nmax, out, gen)
        return out
    pos, e, n, idx, evals, nmax, summary = _rows.gw_rows_first(
        gen, first.fill_args, e0, first.n_min, target, dq, lo, hi, q, ss, ws, sens, out,
        _served_map(first, fam, target, dk0))
    _check_rows(summary, dq, lambda: _rows.gw_rows_grid(target, dq, lo, hi, ss, ws, sens)[:2])
    _check_widest_row(nmax, dq, lo, hi)
    if pos.size:
        _draw_kernels(fam, target, dq, (e0, first), e, n, idx, lo, evals, nmax, out, gen,
                      pos)
    return out


def _may_be_first(fam: int, target: float, dk0: int, e0: int, lo: np.ndarray,
                  hi: np.ndarray) -> bool:
    """Whether some row may be drawn with the wide kernel of the grid ``e0``
    (:func:`~bndp._laws.serving._first_drawn` of the widest row's ``n``, estimated as
    ``floor((hi - lo) 2^-e0) + 1``): whether some row has ``hi - lo`` at least the width of
    the narrowest row admitted, less one interval, found in a pass that stops at the first
    block of rows that has one (``_core.rows.gw_any_width``). The threshold ``f 2^e0`` (``f``
    the smallest double >= that count) is exact, so the test is that of the estimate."""
    n0 = _first_drawn_from(fam, target, dk0)
    if n0 is None:
        return False
    if n0 > 1 << 62:                   # beyond the estimate's cap (an infinite width's)
        try:
            w = math.ldexp(float(np.max(hi - lo)), -e0)
        except OverflowError:
            return False
        return math.isfinite(w) and math.floor(w) + 1 >= n0
    f = float(n0 - 1)
    if f < n0 - 1:
        f = math.nextafter(f, math.inf)
    try:
        thr = math.ldexp(f, e0)
    except OverflowError:
        thr = math.inf
    return _rows.gw_any_width(lo, hi, thr)


def _check_rows(summary: tuple, dq: float,
                exponents: Callable[[], tuple[np.ndarray, np.ndarray]]) -> None:
    """The errors (and the coarse grids' warning) of :func:`_check_exponent` and a row
    without grid steps, from the grid pass's summary; ``exponents()`` gives the rows'
    exponents and coarse flags, asked for only to word them."""
    emin, emax, any_coarse, nmin_rows = summary
    if any_coarse or emin < -1022 or emax > 1000:
        _check_exponent(*exponents(), dq, rows=True)   # the messages (or the warning)
    if nmin_rows < 1:
        raise ValueError("grid law: a row holds no grid step; pass mode='continuous'")


def _draw_kernels(fam: int, target: float, dq: float, drawn: tuple | None, e: np.ndarray,
                  n: np.ndarray, idx: np.ndarray, lo: np.ndarray, evals: np.ndarray,
                  nmax: np.ndarray, out: np.ndarray, gen: np.random.Generator,
                  pos: np.ndarray | None = None) -> None:
    """Rows (exponent, interval count, grid index) drawn kernel by kernel in the order
    exponent, wide before narrow, n ascending, each kernel's rows in row order
    (``gw_rows_kernels``: every row's kernel; ``gw_fill_groups``: the draws of one
    ``gw_fill`` per kernel; the narrow rows a grid's wide kernel serves are drawn with the
    first of them, as one kernel), into ``out``: row a of them is the column's row ``pos[a]``
    (else a), with lower bound ``lo[pos[a]]``. ``evals`` and
    ``nmax``: the exponents (a superset of the rows') and their rows' largest ``n``.
    ``drawn``: ``(e0, law)``, the wide kernel already drawn, whose exponent's rows here
    are the narrow ones (and any it refused, refused again here)."""
    dks = [_sens_steps(dq, int(ev)) for ev in evals]
    wides: list[WindowLaw | None] = []
    for ev, nx, dk in zip(evals, nmax, dks):
        if drawn is not None and int(ev) == drawn[0]:
            wides.append(drawn[1])
        else:
            wides.append(None if _surely_narrow(fam, target, dk, int(nx))
                         else _law(fam, target, dk, int(ev), None))
    nmin = np.array([1 << 62 if w is None else w.n_min for w in wides], dtype=np.int64)
    group, keys, counts = _rows.gw_rows_kernels(e, n, evals, nmin)
    laws = []
    for k, nn in keys.tolist():
        law = wides[k] if nn == 0 else _law(fam, target, min(dks[k], nn), int(evals[k]), nn)
        assert law is not None
        laws.append(law.fill_args)
    # the groups of one table (narrow rows on their grid's wide kernel) are drawn as one
    # group, first of its exponent's (as the first pass draws a grid's wide and served
    # rows): one search guide for all their rows
    first: dict = {}
    for g, ((k, _), fa) in enumerate(zip(keys.tolist(), laws)):
        w = wides[k]
        first.setdefault((id(fa[0]), fa[6]),
                         (k, 0 if w is not None and w.fill_args[0] is fa[0] else 1, g))
    order = sorted(first, key=first.__getitem__)
    if len(order) == len(laws) and all(first[t][2] == g for g, t in enumerate(order)):
        _rows.gw_fill_groups(gen, laws, group, idx, lo, n, out, counts, pos)
        return
    at = {t: m for m, t in enumerate(order)}
    remap = np.array([at[(id(fa[0]), fa[6])] for fa in laws], dtype=np.int32)
    merged = np.bincount(remap, weights=counts, minlength=len(at)).astype(np.int64)
    laws = [laws[first[t][2]] for t in order]
    _rows.gw_fill_groups(gen, laws, group, idx, lo, n, out, merged, pos, remap)
