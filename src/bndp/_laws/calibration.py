"""Calibration of the grid law: the grid choice, the scale search (a bracketed secant) and
the bounded Laplace entry point.

The grid constants are read from :mod:`bndp._laws.constants` at call time (tests coarsen
them there)."""

from __future__ import annotations

import math
from typing import Any

from .._scale_search import smallest_certified
from . import constants
from .constants import (LAPLACE, MAX_INDEX, MAX_INTERVALS, MAX_PAIRS, MIN_PEAK_BITS, MULTI_STEPS,
                        REL_TOL, SENS_STEPS)
from .lattice import Step
from .whole_range import _gceil, _gfloor, _kexp


def _choose_grid(scale: float, dq: float, lo: float, hi: float, dim: int | None,
                 fam: int, cap: float = math.inf) -> tuple[int, int, int, int]:
    """(e, kl, n, dk) for the grid of [lo, hi]; ``cap``: a further upper bound on gamma
    (before the grid is coarsened to fit the size limits)."""
    width = hi - lo
    dq_eff = min(dq, width) if dim is None else dq
    if dim is None:
        base = min(scale, dq_eff) / constants.GRID_STEPS
    else:
        base = min(scale / constants.GRID_STEPS, dq / (MULTI_STEPS * math.sqrt(dim)))
    # at least WHOLE_RANGE_WIDTH_STEPS intervals: a nearly flat law on n + 1 points has variance
    # (1 + 2/n) times the continuous one
    base = min(base, width / constants.WHOLE_RANGE_WIDTH_STEPS, cap)
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


def _none_certifies(target: float) -> str:
    """The refusal when no scale on the chosen grid is certified for ``target``: the
    certificate only grows as the scale shrinks, and at large scales the rounding of the
    integer weights (and, on a bounded set, the flat law's own loss) sets a floor."""
    return (f"grid law: `epsilon` is too small for this grid law: no scale on its grid is "
            f"certified for the loss {target:.6g} (the rounding of the integer weights alone "
            "costs more); use a larger `epsilon` or pass mode='continuous'")


def _too_large(target: float, u: float) -> str:
    return (f"grid law: `epsilon` is too large for this grid law: every scale down to "
            f"{u:.3g} grid steps is certified for the loss {target:.6g}, so the search "
            "finds no smallest one; use a smaller `epsilon` (the noise is already far "
            "below the grid step) or pass mode='continuous'")


def _search(cert, u0: float, target: float, rel: float = REL_TOL):
    """Smallest scale in grid steps (to ``rel``) whose table's certificate ``cert(u)[0]`` is
    at most ``target``: :func:`bndp._scale_search.smallest_certified` with the grid law's
    refusals."""
    return smallest_certified(cert, u0, target, rel,
                              none_certifies=lambda: _none_certifies(target),
                              all_certify=lambda u: _too_large(target, u))


def plan_bounded_laplace(epsilon: float, sensitivity: float, lower: float, upper: float,
                         delta: float = 0.0, lattice: "int | Step | None" = None) -> Any:
    """Grid bounded Laplace for validated inputs (a :class:`~bndp._laws.window.RowPlan`
    of the windowed grid law); target loss ``eps - ln(1 - delta)``. The law calibrates its
    own scale (its search starts at the ideal discrete Laplace's): the continuous
    :math:`b^*` is not computed. ``lattice``: the exponent of the integer law's step
    (:mod:`bndp._laws.lattice`; a :class:`~bndp._laws.lattice.Step` for a step that is not a
    power of two), None for the default grid."""
    target = epsilon - math.log1p(-delta)
    from .window import plan_row
    return plan_row(LAPLACE, float(target), float(sensitivity), float(lower), float(upper),
                    lattice)

