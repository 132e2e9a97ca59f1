r"""The integer law on a lattice step that is not a power of two: the law of step 1 in
lattice units, mapped affinely.

A row :math:`[l, u]` (integral bounds below :math:`2^{52}` in magnitude) on the lattice
:math:`l + jk` (:class:`~bndp._laws.lattice.Step` ``k``) has :math:`n = \lfloor (u-l)/k
\rfloor` intervals. A true value :math:`q`, clipped into :math:`[l, u]`, has the lattice
index :math:`i = \min(n, \lfloor (q - l)/k + 1/2 \rfloor)` (the nearest point, ties up),
computed exactly (:func:`step_index`: integer arithmetic on the value's integral and
fractional parts, both exact). The output is :math:`l + jk`, ``j`` drawn from the windowed
grid law of step 1 on the row :math:`[0, n]` (:class:`~bndp._laws.window.RowPlan`) for the
true value ``i``, calibrated for the sensitivity :math:`d = \lceil\Delta/k\rceil` steps.

Why the certificate carries over: for neighbouring true values, :math:`|q - q'| \le \Delta`,
the exact quotients differ by at most :math:`\Delta/k`, and rounding to the nearest integer
(ties up) is monotone with :math:`\lfloor a + D\rfloor - \lfloor a\rfloor \le \lceil D\rceil`;
clipping is 1-Lipschitz. So :math:`|i - i'| \le d`, and the inner law's certificate (every
pair of integral inputs at most ``d`` apart, from its own integer table) bounds the loss of
``j``; the map :math:`j \mapsto l + jk` is exact (every term an integer below
:math:`2^{53}`) and one to one, so the released values have the same loss. No rounding of a
double enters the index: that is the point of computing it in integers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .. import _dispatch
from .._core import fill as _fill, window as _window
from .lattice import Step

__all__ = ["StepPlan", "StepCoord", "plan_step_row", "plan_step_product", "sample_step_rows",
           "step_index", "step_floor", "step_intervals"]


def _parts(x: np.ndarray, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(F, frac)``: ``x - lo = F + frac`` exactly, ``F`` int64 and ``frac`` in [0, 1)
    (``x`` finite doubles and ``lo`` integral doubles, both at most :math:`2^{53}` in
    magnitude: ``floor(x)`` and ``x - floor(x)`` are exact doubles)."""
    f = np.floor(x)
    return f.astype(np.int64) - lo.astype(np.int64), x - f


def step_intervals(lo: Any, hi: Any, k: int) -> np.ndarray:
    r""":math:`n = \lfloor (u - l)/k \rfloor` of integral bounds, exactly (int64)."""
    a = np.asarray(lo, dtype=np.float64).astype(np.int64)
    b = np.asarray(hi, dtype=np.float64).astype(np.int64)
    return (b - a) // k


def _nearest(q: np.ndarray, anchor: Any, k: int) -> np.ndarray:
    r""":math:`\lfloor (q - a)/k + 1/2 \rfloor` exactly (int64): the nearest point of
    :math:`a + k\mathbb{Z}`, ties up, of finite doubles ``q`` (an integral ``anchor``; both
    at most :math:`2^{53}` in magnitude)."""
    a_b, q = np.broadcast_arrays(np.asarray(anchor, dtype=np.float64), q)
    F, frac = _parts(q, a_b)
    # floor((2F + 2 frac + k) / 2k): with 2F + k = 2k a + r (0 <= r < 2k) and 2 frac < 2,
    # the quotient is a, plus one exactly where r = 2k - 1 and 2 frac >= 1
    a, r = np.divmod(2 * F + k, 2 * k)
    return a + ((r == 2 * k - 1) & (frac >= 0.5))


def _exact_nearest(v: Fraction, anchor: float, k: int) -> int:
    """:func:`_nearest` of an exact value, in rational arithmetic."""
    return math.floor((Fraction(v) - Fraction(anchor)) / k + Fraction(1, 2))


def step_index(value: Any, lo: Any, hi: Any, k: int, n: Any) -> np.ndarray:
    r"""The lattice index of true values (int64, ``value``'s broadcast shape): clipped into
    ``[lo, hi]``, :math:`\lfloor (q - l)/k + 1/2 \rfloor` exactly (ties up), at most
    ``n`` (the compiled ``gs_index``; :func:`_nearest` is the same rule in NumPy). NaN is
    refused by the callers before."""
    q = np.asarray(value, dtype=np.float64)
    shape = np.broadcast_shapes(q.shape, np.shape(lo), np.shape(hi), np.shape(n))
    args = [np.broadcast_to(np.asarray(a, dtype=dt), shape).reshape(-1)
            for a, dt in ((q, np.float64), (lo, np.float64), (hi, np.float64),
                          (n, np.int64))]
    return _window.gs_index(args[0], args[1], args[2], int(k), args[3]).reshape(shape)


def step_floor(x: Any, anchor: float, lo: float, hi: float,
               k: int) -> tuple[np.ndarray, np.ndarray]:
    r"""``(j, on)``: the largest ``j`` with :math:`a + jk \le x` (exact; ``x`` clipped into
    :math:`[l - k - 1/2, u + k + 1/2]` first, so that ``j`` stays near the lattice's indices of the
    row) and whether ``x`` is that lattice point. NaN gives ``on`` False."""
    xa = np.asarray(x, dtype=np.float64)
    nan = np.isnan(xa)
    # (half a unit beyond: a value clipped there is no lattice point)
    c = np.clip(np.where(nan, lo, xa), lo - k - 0.5, hi + k + 0.5)
    F, frac = _parts(c, np.full(c.shape, anchor))
    j, r = np.divmod(F, k)
    return j, (r == 0) & (frac == 0.0) & ~nan


def _law_at(unit: Any, x: Any, u: Any, what: str, anchor: float, lo: float, hi: float,
            k: int) -> Any:
    r"""``what`` of the unit law ``unit`` (whose output ``j`` stands for the value
    :math:`a + jk`) for its input ``u``, at the values ``x`` (their
    lattice coordinates, exact): quantiles and the mean mapped to values, the variance
    scaled by :math:`k^2`."""
    def out(j: Any) -> Any:
        v = anchor + np.asarray(j, dtype=np.float64) * k
        return float(v) if np.ndim(v) == 0 else v

    if what == "mean":
        return out(unit.law(None, u, "mean"))
    if what == "var":
        return float(unit.law(None, u, "var")) * k * k
    if what in ("ppf", "isf"):
        return out(unit.law(x, u, what))
    j, on = step_floor(x, anchor, lo, hi, k)
    ux = j.astype(np.float64)
    ux = np.where(np.isnan(np.asarray(x, dtype=np.float64)), np.nan, ux)
    if what == "pmf":
        ux = np.where(on, ux, ux + 0.5)           # (off the lattice: probability 0)
    return unit.law(float(ux) if ux.ndim == 0 else ux, u, what)


class _Mapped:
    """What a law on the lattice of a step ``k`` reads from its unit law ``unit`` (the law of
    step 1 on the lattice's indices): the family, the loss, the index range, and the
    granularity ``gamma = k`` with the scale in value units."""

    unit: Any
    k: int

    bounded = True
    family = property(lambda self: self.unit.family)
    n = property(lambda self: self.unit.n)
    dk = property(lambda self: self.unit.dk)
    target = property(lambda self: self.unit.target)
    certified_epsilon = property(lambda self: self.unit.certified_epsilon)

    @property
    def exponent(self) -> int:
        """The unit law's exponent (0): the lattice step is ``gamma``, not a power of two."""
        return int(self.unit.exponent)

    @property
    def gamma(self) -> float:
        """The lattice step ``k``."""
        return float(self.k)

    @property
    def scale(self) -> float:
        """The kernel's scale in value units (``k`` times its scale in lattice steps)."""
        return float(self.unit.scale) * self.k


@dataclass(frozen=True, eq=False)
class StepPlan(_Mapped):
    """The integer law of one row ``[lower, upper]`` on the lattice ``lower + j k`` (``k``
    not a power of two): the windowed law ``unit`` of step 1 on ``[0, n]``, mapped (see the
    module docstring). The :class:`~bndp._laws.base.Plan` interface, with ``gamma`` the
    step ``k``; ``kernel`` is the unit law's (its scale in lattice steps)."""

    unit: Any           # window.RowPlan on [0, n], step 1
    lower: float
    upper: float
    k: int

    supports_rows = True
    kernel = property(lambda self: self.unit.kernel)
    scale_grid = property(lambda self: self.unit.scale_grid)

    @property
    def lattice(self) -> Step:
        return Step(self.k)

    def _out(self, j: Any) -> Any:
        """Lattice indices to values ``lower + j k`` (exact; a float64 array in place)."""
        if isinstance(j, np.ndarray) and j.dtype == np.float64 and j.flags.writeable:
            j *= self.k
            j += self.lower
            return j
        out = self.lower + np.asarray(j, dtype=np.float64) * self.k
        return float(out) if np.ndim(out) == 0 else out

    def grid(self) -> np.ndarray:
        """The ``n + 1`` attainable outputs ``lower + j k``."""
        return self.lower + np.arange(self.n + 1, dtype=np.float64) * self.k

    def index(self, value: Any) -> np.ndarray:
        """The lattice index of clipped true values (:func:`step_index`)."""
        return step_index(value, self.lower, self.upper, self.k, self.n)

    def exact_index(self, value: Fraction) -> int:
        """:meth:`index` of an exact (rational) true value, in rational arithmetic."""
        v = min(max(Fraction(value), Fraction(self.lower)), Fraction(self.upper))
        return min(max(_exact_nearest(v, self.lower, self.k), 0), self.n)

    def _unit_value(self, value: Any) -> Any:
        """True values as the unit law's inputs: their lattice indices, as doubles (the
        compiled ``gs_index_row``)."""
        q = np.asarray(value, dtype=np.float64)
        out = _window.gs_index_row(np.ascontiguousarray(q).reshape(-1), self.lower, self.upper,
                                 self.k, self.n).reshape(q.shape)
        return float(out) if out.ndim == 0 else out

    def pmf(self, value: Any) -> np.ndarray:
        """Output probabilities over :meth:`grid` for one value."""
        return self.unit.pmf(self._unit_value(float(value)))

    def law(self, x: Any, value: Any, what: str):
        """pmf/cdf/ppf/mean/var or a tail function of the law for one value: the unit law's
        at the lattice coordinates of ``x`` (exact), its outputs mapped."""
        return _law_at(self.unit, x, self._unit_value(float(value)), what, self.lower,
                       self.lower, self.upper, self.k)

    def sample(self, value: Any, size: Any, gen: np.random.Generator, workers: Any = 1):
        """Draws for clipped true values (NumPy's size rule; ``workers`` as for
        :func:`bndp.sample`): the compiled row sampler with the lattice's exact rounding
        (``gw_fill_row`` with ``k``), the draws of the unit law for the values' lattice
        indices, mapped."""
        unit = self.unit
        ker = unit.kernel
        tree, levels = ker.search_tree
        args = (tree, levels, ker.N, ker.tailw, ker.sbits, ker.tm, 0, self.lower, self.upper,
                self.n)
        k = self.k

        def rows(gen, q, out):
            _fill.gw_fill_row(gen, *args, q, out, k)

        def fill(gen, q, out):
            rows(gen, np.broadcast_to(np.float64(q), (1, out.shape[0])), out.reshape(1, -1))

        def one(gen, q):
            return self._out(unit.row.one(gen, self._unit_value(q)))

        return _dispatch.sample(one, fill, rows, [np.asarray(value, dtype=np.float64)], size,
                                gen, workers)

    def sample_inside(self, value: Any, size: Any, rng: Any, on_outside: Any,
                      workers: Any) -> Any:
        """The unit law's short path (one value or a small 1-D float64 array inside the
        bounds); ``NotImplemented`` where it declines."""
        if size is not None or workers != 1:
            return NotImplemented
        if type(value) is float:
            if not self.lower <= value <= self.upper:
                return NotImplemented
        elif not (isinstance(value, np.ndarray) and value.dtype == np.float64
                  and value.ndim == 1 and bool(np.all((value >= self.lower)
                                                      & (value <= self.upper)))):
            return NotImplemented
        out = self.unit.sample_inside(self._unit_value(value), size, rng, on_outside,
                                      workers)
        return out if out is NotImplemented else self._out(out)

    def ends_loss(self, lower: float, upper: float) -> float | None:
        """The certified loss between the row's two ends (lattice inputs ``0`` and the index
        of ``upper``, which is ``n``)."""
        return self.unit.ends_loss(0.0, float(self.n))


def plan_step_row(fam: int, target: float, sensitivity: float, lower: float, upper: float,
                  step: Step) -> StepPlan:
    """The integer law of one row on the lattice of ``step`` (validated integral inputs)."""
    from .window import plan_row
    k = step.k
    n = int(step_intervals(lower, upper, k))
    if n < 1:
        raise ValueError(f"integer law: [lower, upper] holds no lattice step of {k}; pass a "
                         "smaller step")
    unit = plan_row(fam, target, float(step.units(sensitivity)), 0.0, float(n), 0)
    return StepPlan(unit, float(lower), float(upper), k)


def sample_step_rows(fam: int, target: float, sensitivity: float, q: np.ndarray,
                     lo: np.ndarray, hi: np.ndarray, gen: np.random.Generator, step: Step,
                     exact: Any = None) -> np.ndarray:
    """Per-row bounds on the lattice of ``step``: every row's lattice index (of the exact
    value where ``exact`` holds values that are not doubles), drawn by the per-row windowed
    law of step 1 on the rows ``[0, n_i]``, mapped to ``lo_i + j k``."""
    from .window import sample_rows
    k = step.k
    i, n = _window.gs_rows(q, lo, hi, k)          # (exact integers, as doubles)
    if n.size and float(n.min()) < 1:
        raise ValueError(f"integer law: some row's [lower, upper] holds no lattice step of "
                         f"{k}; pass a smaller step")
    if exact is not None:
        for p in exact.candidates().tolist():
            v = exact.exact_at(np.array([p]))[0]
            v = min(max(Fraction(v), Fraction(float(lo[p]))), Fraction(float(hi[p])))
            i[p] = min(_exact_nearest(v, float(lo[p]), k), int(n[p]))
    j = sample_rows(fam, target, float(step.units(sensitivity)), i, np.zeros(n.shape), n,
                    gen, lattice=0)
    j *= k
    j += lo
    return j


@dataclass(frozen=True, eq=False)
class StepCoord(_Mapped):
    """One coordinate of the multivariate integer law on a step ``k`` that is not a power of
    two: the multiples of ``k`` in ``[lower, upper]``, the unit law ``unit`` (a coordinate
    of a :class:`~bndp._laws.product.ProductPlan` of step 1 on ``[kl, ku]``, the
    multiples' indices) mapped. A true value's index is that of the nearest multiple of
    ``k`` (ties up, exact) of its clipped value, kept in ``[kl, ku]``; the coordinate's
    interface is the whole-range law's (values in, values out)."""

    unit: Any
    lower: float
    upper: float
    k: int

    kl = property(lambda self: self.unit.kl)

    def _units(self, value: Any) -> np.ndarray:
        """True values to the unit law's inputs (the multiples' indices, as doubles)."""
        q = np.clip(np.asarray(value, dtype=np.float64), self.lower, self.upper)
        i = np.clip(_nearest(q, 0.0, self.k), self.kl, self.kl + self.n)
        return i.astype(np.float64)

    def grid(self) -> np.ndarray:
        return np.arange(self.kl, self.kl + self.n + 1, dtype=np.float64) * self.k

    def index(self, value: Any) -> np.ndarray:
        """Grid indices (``0..n``) of clipped true values."""
        return (self._units(value) - self.kl).astype(np.int64)

    def exact_index(self, value: Fraction) -> int:
        v = min(max(Fraction(value), Fraction(self.lower)), Fraction(self.upper))
        return min(max(_exact_nearest(v, 0.0, self.k), self.kl), self.kl + self.n) - self.kl

    def pmf(self, value: Any) -> np.ndarray:
        return self.unit.pmf(float(self._units(float(value))))

    def law(self, x: Any, value: Any, what: str):
        return _law_at(self.unit, x, float(self._units(float(value))), what, 0.0,
                       self.lower, self.upper, self.k)

    def sample(self, value: Any, size: Any, gen: np.random.Generator, workers: Any = 1):
        out = np.asarray(self.unit.sample(self._units(value), size, gen, workers),
                         dtype=np.float64) * self.k
        return float(out) if out.ndim == 0 else out


def plan_step_product(epsilon: float, sensitivity: float, lower: tuple, upper: tuple,
                      sigma_hint: float | None, step: Step) -> Any:
    r"""The multivariate integer law on the multiples of ``step`` in each interval: the
    product law of step 1 on the multiples' indices :math:`[\lceil l_c/k
ceil, \lfloor
    u_c/k
floor]`, for the :math:`\ell_2` sensitivity :math:`\Delta/k` (rounded up to a
    double: the certificate's budget :math:`\lfloor(\Delta/k)^2
floor` of index shifts
    is then at least the exact one), each coordinate a :class:`StepCoord`. Rounding each
    coordinate to its nearest multiple moves a neighbour's index by at most
    :math:`\lceil\delta_c
ceil` where its exact quotient moves by :math:`\delta_c`, which
    the certificate's budget of shifts :math:`\sum_c (r_c - 1)_+^2` allows for, as on
    every grid."""
    from .product import ProductPlan, plan_bounded_gaussian
    k = step.k
    kl = [-(-int(a) // k) for a in lower]
    ku = [int(b) // k for b in upper]
    if min(b - a for a, b in zip(kl, ku)) < 1:
        raise ValueError(f"integer law: some coordinate's [lower, upper] holds no lattice step "
                         f"of {k}; pass a smaller step")
    dq = Fraction(int(sensitivity), k)
    du = float(dq)
    if Fraction(du) < dq:
        du = math.nextafter(du, math.inf)
    hint = None if sigma_hint is None else float(sigma_hint) / k
    unit = plan_bounded_gaussian(float(epsilon), du, np.array(kl, dtype=np.float64),
                                 np.array(ku, dtype=np.float64), sigma_hint=hint, lattice=0)
    coords = tuple(StepCoord(c, float(a), float(b), k)
                   for c, a, b in zip(unit.coords, lower, upper))
    return ProductPlan(coords, unit.target, unit.certified_epsilon)
