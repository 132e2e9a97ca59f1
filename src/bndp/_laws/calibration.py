"""Calibration of the grid law: the grid choice and the scale searches (bisection and
bracketed secant), the univariate whole-range plan and the bounded Laplace entry point.

The grid constants are read from :mod:`bndp._laws.constants` at call time (tests coarsen
them there)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from . import constants
from .constants import (FAMILY_NAMES, FLOOR_BITS, LAPLACE, MAX_INDEX, MAX_INTERVALS, MAX_PAIRS,
                        MIN_PEAK_BITS, MULTI_STEPS, REL_TOL, SENS_STEPS)
from .whole_range import ExactPlan, _certify, _gceil, _gfloor, _kexp, _table


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
        else:
            raise ValueError(
                f"grid law: `epsilon` is too large for this grid law: every scale down to "
                f"{bad:.3g} grid steps is certified for the loss {target:.6g}, so the search "
                "finds no smallest one; use a smaller `epsilon` (the noise is already far "
                "below the grid step) or pass mode='continuous'")
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
            raise ValueError(_none_certifies(target))
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
            bad = (u, (r[0],))                  # a refused scale: its loss only
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
        raise ValueError(_none_certifies(target))
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
    return ExactPlan(FAMILY_NAMES[fam], e, kl, n, dk, u, k, 1 << FLOOR_BITS, cum, target, c, lam)


def plan_bounded_laplace(epsilon: float, sensitivity: float, lower: float, upper: float,
                         delta: float = 0.0) -> Any:
    """Grid bounded Laplace for validated inputs (a :class:`~bndp._laws.window.RowPlan`
    of the windowed grid law); target loss ``eps - ln(1 - delta)``. The law calibrates its
    own scale (its search starts at the ideal discrete Laplace's): the continuous
    :math:`b^*` is not computed."""
    target = epsilon - math.log1p(-delta)
    from .window import plan_row
    return plan_row(LAPLACE, float(target), float(sensitivity), float(lower), float(upper))

