"""The scale search of every Python calibration: the smallest scale whose certificate is at
most a target, by a bracketed secant on (ln scale, ln certificate).

The whole-range, product and constrained grid laws (:mod:`bndp._laws`) and the mCDP
calibration (:mod:`bndp.calibrate`) use it. The windowed law's kernels are calibrated in the
compiled core (``gw_calibrate``): it builds each trial table in buffers it reuses and never
leaves ``nogil``, and once it has a bracket it shrinks it with the core's one root finder,
the continuous calibrations' (``_bisect_feasible``). Only the returned scale's certificate
is used: soundness does not depend on the search. Nothing here imports the rest of bndp.
"""

from __future__ import annotations

import math
from typing import Callable

__all__ = ["smallest_certified"]


def smallest_certified(cert: Callable[[float], tuple], u0: float, target: float,
                       rel: float, *, none_certifies: Callable[[], str],
                       all_certify: Callable[[float], str]) -> tuple[float, tuple]:
    """Smallest scale ``u > 0`` (to a relative ``rel``) whose certificate ``cert(u)[0]`` is
    at most ``target``; returns ``(u, cert(u))``. The certificate must fall as the scale
    grows (a privacy loss, a delta), be positive and be about a power of ``u``.
    Raises ``ValueError(none_certifies())`` where no scale tried is certified and
    ``ValueError(all_certify(u))`` where every scale down to ``u`` is.

    Secant steps on (ln u, ln cert) with a bracket: the certificate is smooth in the
    scale (about proportional to 1/u), so a handful of evaluations suffice; each proposal
    is followed by the probe just below it, which closes the bracket once the secant is
    accurate. Falls back to geometric bisection when a step does not shrink the bracket.
    Only the returned scale's certificate counts: soundness does not depend on the search."""
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
                u = _exp(x1 + (lt - y1) * (x2 - x1) / (y2 - y1))
            else:
                u = _exp(x1 - (lt - y1))
        elif pts:
            x1, y1 = pts[-1]
            u = _exp(x1 + (y1 - lt))                        # certificate ~ 1/u
        else:                               # no positive finite certificate yet: halve
            u = u * 0.5 if good is not None else u * 2.0
        u *= 1.0 + 0.25 * rel                               # aim just above the root
        if good is not None and bad is not None:
            lo_u, hi_u = bad[0], good[0]
            if not (lo_u < u < hi_u) or (hi_u - lo_u) > 0.5 * hi_u:
                u = math.sqrt(lo_u * hi_u) if not (lo_u < u < hi_u) else u
        elif good is not None:
            # a proposal at or above the smallest certified scale: the root lies within rel
            # of it when its certificate is that close to the target (probe just below),
            # else step down
            near = good[1][0] >= target * (1.0 - rel)
            u = (min(u, good[0] * (1.0 - 0.5 * rel)) if u < good[0] or near
                 else good[0] * 0.8)
        elif bad is not None:
            near = bad[1][0] <= target * (1.0 + rel)
            u = (max(u, bad[0] * (1.0 + 0.5 * rel)) if u > bad[0] or near
                 else bad[0] * 1.25)
        if not (u > 0 and math.isfinite(u)):
            # a proposal off the float range (only with one end of the bracket): step from
            # that end instead, unless it is at the end of the range itself
            u = (good[0] * 0.5 if u <= 0 and good is not None else
                 bad[0] * 2.0 if u > 0 and bad is not None else math.nan)
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
        raise ValueError(none_certifies())
    if bad is None:
        raise ValueError(all_certify(good[0]))
    return good


def _exp(x: float) -> float:
    """``math.exp`` that overflows to inf (a proposal off the float range, which the search
    replaces by a step from its bracket) instead of raising ``OverflowError``."""
    return math.exp(x) if x < 709.0 else math.inf
