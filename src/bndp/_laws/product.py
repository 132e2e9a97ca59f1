"""The multivariate grid Gaussian: :class:`ProductPlan` (one whole-range law per
coordinate on a common grid), certified over the :math:`\\ell_2` ball by the Lagrangian
dual bound :func:`_dual_bound`; :func:`plan_bounded_gaussian`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from .._core import certify_grid as _certify_grid
from .base import NoRowPath
from .calibration import _choose_grid, _none_certifies, _search
from .constants import FLOOR_BITS, GAUSSIAN, MAX_INDEX, MAX_INTERVALS
from .lattice import Step
from .step import plan_step_product
from .whole_range import ExactPlan, _gceil, _gfloor, _table


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



@dataclass(frozen=True, eq=False)
class ProductPlan(NoRowPath):
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
    #: capabilities of the :class:`~bndp._laws.base.Plan` interface: finitely many outputs;
    #: not the windowed law of one row (no compiled one-row sampler)
    bounded = True
    supports_rows = False

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

    def grid(self) -> list[np.ndarray]:
        """Per-coordinate attainable outputs (the joint grid is their product)."""
        return [p.grid() for p in self.coords]

    def index(self, value: Any) -> np.ndarray:
        """Grid indices of clipped true values (trailing axis of length m), per coordinate
        as the sampler rounds them."""
        v = np.asarray(value, dtype=np.float64)
        return np.stack([p.index(v[..., c]) for c, p in enumerate(self.coords)], axis=-1)

    def exact_index(self, value: Any) -> tuple[int, ...]:
        """Per-coordinate :meth:`ExactPlan.exact_index` of an exact (rational) true value
        (a sequence of length m)."""
        return tuple(p.exact_index(v) for p, v in zip(self.coords, value))

    def law(self, x: Any, value: Any, what: str) -> list[Any]:
        """Per-coordinate :meth:`ExactPlan.law` for one true value (length m): coordinate
        ``c`` at ``x[..., c]`` (``x`` broadcast when it has no trailing axis of length m)."""
        v = np.asarray(value, dtype=np.float64)
        xa = np.asarray(x, dtype=np.float64)
        per = xa.ndim and xa.shape[-1] == self.dim
        return [p.law(xa[..., c] if per else xa, float(v[c]), what)
                for c, p in enumerate(self.coords)]

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


def _common_grid(hint: float, dq: float, los: tuple, his: tuple,
                 lattice: int | None) -> tuple[int, list, int]:
    r"""The coordinates' common grid exponent (the integer ``lattice``'s, else the coarsest
    each coordinate's grid asks for), each coordinate's ``(kl, n, dk)`` on it, and the budget
    :math:`\lfloor(\Delta/\gamma)^2\rfloor` of the index shifts a neighbour may make
    (:func:`_dual_bound`)."""
    m = len(los)
    e = lattice if lattice is not None else max(
        _choose_grid(hint, dq, lo, hi, m, GAUSSIAN)[0] for lo, hi in zip(los, his))
    grids = [_choose_grid_at(e, dq, lo, hi) for lo, hi in zip(los, his)]
    rr = Fraction(dq) / Fraction(2) ** e if e >= 0 else Fraction(dq) * Fraction(2) ** (-e)
    return e, grids, math.floor(rr * rr)


@lru_cache(maxsize=64)
def _plan_product(target: float, hint: float, dq: float, los: tuple, his: tuple,
                  lattice: int | None = None) -> ProductPlan:
    e, grids, budget = _common_grid(hint, dq, los, his, lattice)
    keys = sorted(set((kl, n) for kl, n, _ in grids))

    def cert(u):
        tabs = {}
        for kl, n in keys:
            dk = next(d for k2, n2, d in grids if (k2, n2) == (kl, n))
            cum, k = _table(GAUSSIAN, u, n)
            lam = _certify_grid.gd_shift_losses(cum, n, dk)
            tabs[(kl, n)] = (cum, k, np.maximum.accumulate(lam), dk)
        lams = [tabs[(kl, n)][2] for kl, n, _ in grids]
        return _dual_bound(lams, budget), tabs

    u0 = math.ldexp(hint, -e)
    first = cert(u0)
    if first[0] > target:
        # the scale search would grow the scale, and the certificate only falls as the scale
        # grows (see _none_certifies) towards that of the flat table (all weights equal: the
        # kernel at 2^60 table widths rounds to its peak); when the flat table's exceeds the
        # target the search cannot succeed: refuse after two evaluations, not four hundred
        flat = math.ldexp(float(max(n for _, n in keys)), 60)
        if cert(flat)[0] > target:
            raise ValueError(_none_certifies(target))
    u, (c, tabs) = _search(lambda v: first if v == u0 else cert(v), u0, target)
    coords = []
    for kl, n, dk in grids:
        cum, k, lam, _ = tabs[(kl, n)]
        lam.setflags(write=False)
        coords.append(ExactPlan("gaussian", e, kl, n, dk, u, k, 1 << FLOOR_BITS, cum, target,
                                float(lam[-1]), lam))
    return ProductPlan(tuple(coords), target, c)


def saturation_target(dim: int) -> float:
    r"""A loss that every multivariate grid Gaussian of ``dim`` coordinates satisfies,
    whatever its scale: a coordinate's shift loss is at most
    :math:`\ln(W_{max}/W_{min}) + \ln(S_{max}/S_{min}) \le \ln(2^{58}/F) = 46\ln 2 < 32`
    (weights at least the floor :math:`F = 2^{12}`, every normaliser at least the peak weight
    and at most the table's total :math:`2^{58}`), and the dual bound at multiplier 0 is the
    sum over the coordinates. For a target at or above it no scale is the smallest certified
    one: the plan takes the fixed scale :data:`SATURATED_SCALE` instead."""
    return 32.0 * dim


SATURATED_SCALE = 0.125    # grid steps: a draw leaves its grid point with probability ~1e-14


@lru_cache(maxsize=16)
def _plan_saturated(target: float, hint: float, dq: float, los: tuple, his: tuple,
                    lattice: int | None = None) -> ProductPlan:
    """The multivariate grid Gaussian of scale :data:`SATURATED_SCALE` grid steps on the grid
    of the continuous sigma ``hint`` (or the integer ``lattice``'s), certified (its
    certificate is computed as for every plan; :func:`saturation_target` says it is below
    ``target``)."""
    e, grids, budget = _common_grid(hint, dq, los, his, lattice)
    u = SATURATED_SCALE
    tabs = {}
    for kl, n, dk in grids:
        if (kl, n) not in tabs:
            cum, k = _table(GAUSSIAN, u, n)
            lam = np.maximum.accumulate(_certify_grid.gd_shift_losses(cum, n, dk))
            lam.setflags(write=False)
            tabs[(kl, n)] = (cum, k, lam)
    c = _dual_bound([tabs[(kl, n)][2] for kl, n, _ in grids], budget)
    if not c <= target:        # pragma: no cover - excluded by saturation_target
        raise ValueError(f"grid law: `epsilon` = {target:g}: the saturated law's certificate "
                         f"{c:g} exceeds it; pass mode='continuous'")
    coords = [ExactPlan("gaussian", e, kl, n, dk, u, tabs[(kl, n)][1], 1 << FLOOR_BITS,
                        tabs[(kl, n)][0], target, float(tabs[(kl, n)][2][-1]), tabs[(kl, n)][2])
              for kl, n, dk in grids]
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
                          sigma_hint: float | None = None, lattice: "int | Step | None" = None):
    """Grid bounded Gaussian for validated inputs; univariate (a
    :class:`~bndp._laws.window.RowPlan` of the windowed grid law, which starts its
    searches from closed forms and its own continuous sigma) for scalar bounds,
    :class:`ProductPlan` for length-m bounds; target loss ``eps``. ``sigma_hint`` (None:
    :func:`bndp.calibrate.bounded_gaussian_sigma`), multivariate only: the continuous sigma
    that chooses the grid and starts the search. ``lattice``: the exponent ``s`` of the
    integer law's step (:mod:`bndp._laws.lattice`), None for the default grid; multivariate,
    every coordinate's grid is then the multiples of :math:`2^s` in its interval (the
    certificate's budget of index shifts holds for any common grid); a
    :class:`~bndp._laws.lattice.Step`: the multiples of its step
    (:func:`~bndp._laws.step.plan_step_product`)."""
    if np.ndim(lower) == 0 and np.ndim(upper) == 0:
        from .window import plan_row
        return plan_row(GAUSSIAN, float(epsilon), float(sensitivity), float(lower),
                        float(upper), lattice)
    lo = tuple(float(x) for x in np.ravel(lower))
    hi = tuple(float(x) for x in np.ravel(upper))
    if isinstance(lattice, Step):
        return plan_step_product(epsilon, sensitivity, lo, hi, sigma_hint, lattice)
    cap = saturation_target(len(lo))
    if epsilon >= cap:
        # every scale is certified: the fixed-scale law on the grid of the cap's sigma
        from ..calibrate import bounded_gaussian_sigma
        hint = float(bounded_gaussian_sigma(cap, sensitivity, lower, upper))
        return _plan_saturated(float(epsilon), hint, float(sensitivity), lo, hi, lattice)
    if sigma_hint is None:
        from ..calibrate import bounded_gaussian_sigma
        sigma_hint = float(bounded_gaussian_sigma(epsilon, sensitivity, lower, upper))
    return _plan_product(float(epsilon), float(sigma_hint), float(sensitivity), lo, hi,
                         lattice)


