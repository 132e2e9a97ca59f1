r"""The unit of privacy of a per-record release: what the guarantee of a column covers, what
a change of one person's whole value costs, and when the noise is too small to matter.

A column released with sensitivity :math:`s` and :math:`\epsilon` is :math:`\epsilon`-DP for
a change of at most :math:`s` in one value. When every record's value is noised on its own
(a per-record, or local, release), what protects one person's record is the loss between
the two ends of the column's range: the worst-case log ratio of the output laws for the
true values ``lower`` and ``upper``, since a record can hold any value of the range.
:func:`whole_range_loss` computes that loss, certified (an upper bound), from the numbers
the sampler uses; :func:`negligible_noise` tells when the noise's standard deviation is
below :data:`NEGLIGIBLE_FRACTION` of the sensitivity, and :func:`warn_negligible_noise`
warns about such columns (:class:`bndp.NegligibleNoiseWarning`).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Iterable


from .._core import certify as _certify
from .._laws.ends import grid_ends_loss
from .._laws.window import LAPLACE, GAUSSIAN, plan_wide
from .._loss import bounded_gaussian_loss, bounded_laplace_loss
from ..exceptions import NegligibleNoiseWarning

__all__ = ["whole_range_loss", "grid_ends_loss", "negligible_noise", "warn_negligible_noise",
           "unit_text", "NEGLIGIBLE_FRACTION"]

#: The noise of a column is negligible when its standard deviation (at the range's centre,
#: or at its finite end) is below this fraction of the sensitivity (capped at the range's
#: width): the release then moves a value by less than a hundredth of the change its
#: guarantee is stated for. On [0, 120] with sensitivity 1 this is epsilon above about 140
#: for the bounded Laplace (sd about sqrt(2) / epsilon) and above about 580 for the bounded
#: Gaussian.
NEGLIGIBLE_FRACTION = 0.01


def whole_range_loss(plan: Any) -> tuple[float | None, str | None]:
    """The certified loss for a change of one record across its column's whole range (true
    value ``lower`` against ``upper``), and ``None`` in its place where there is none, with
    the reason: per-row bounds (it depends on each row's range), a half-line or unbounded
    range (a record can move arbitrarily far: the loss is unbounded), a mechanism without
    a law to certify it from. ``plan``: a :class:`~bndp._release.ColumnPlan`."""
    if plan.per_row:
        return None, ("per-row bounds: the loss depends on each row's range (each row's is "
                      "that of its own bounds)")
    m = plan.mech
    lo, hi = plan.lower, plan.upper
    if lo is None or hi is None or not (math.isfinite(float(lo)) and math.isfinite(float(hi))):
        return None, ("unbounded range (a half-line): a record can move arbitrarily far, so "
                      "its loss is unbounded")
    lo, hi = float(lo), float(hi)
    ep = getattr(m, "exact_plan", None)
    try:
        if ep is not None and not ep.bounded:
            return None, "unbounded allowed set: the loss is unbounded"
        ends = None if ep is None else ep.ends_loss(lo, hi)
        if ends is not None:
            loss = ends
        elif ep is None and plan.mechanism == "laplace":
            loss = bounded_laplace_loss(m.scale, hi - lo, lo, hi)
        elif ep is None and plan.mechanism == "gaussian" and getattr(m, "dim", None) is None:
            loss = bounded_gaussian_loss(m.sigma, hi - lo, lo, hi)
        elif ep is None and plan.mechanism == "constrained_laplace":
            loss = float(_certify.cl_loss(m._L, m._R, m._Lr, m._Rr, m.scale, hi - lo, False)) \
                if m.scale_rule == "constant" else math.inf
        else:
            return None, "no certified law for this mechanism"
    except (ValueError, TypeError, OverflowError, MemoryError) as exc:
        return None, f"not computed: {exc}"
    if not math.isfinite(loss):
        return None, "unbounded: the law's loss between the range's ends is infinite"
    return float(loss), None


def _noise_sd(plan: Any) -> float | None:
    """Standard deviation of the column's noise: the law's at the range's centre (or at
    its finite end); for per-row bounds, the kernel of every wide row's (``sqrt(2)`` times
    the Laplace scale, the Gaussian's sigma). None where there is no law to ask."""
    m = plan.mech
    try:
        if plan.per_row:
            if plan.options.get("mode", "exact") not in ("exact", None):
                return None
            fam = LAPLACE if plan.mechanism == "laplace" else GAUSSIAN
            target = plan.epsilon - (math.log1p(-plan.delta) if plan.delta else 0.0)
            scale = plan_wide(fam, target, plan.sensitivity).scale
            return scale * math.sqrt(2.0) if fam == LAPLACE else scale
        if m is None or not hasattr(m, "variance"):
            return None
        lo = -math.inf if plan.lower is None else float(plan.lower)
        hi = math.inf if plan.upper is None else float(plan.upper)
        at = (0.5 * (lo + hi) if math.isfinite(lo) and math.isfinite(hi)
              else lo if math.isfinite(lo) else hi if math.isfinite(hi) else 0.0)
        return math.sqrt(max(float(m.variance(at)), 0.0))
    except (TypeError, ValueError, NotImplementedError, MemoryError, AttributeError):
        return None


def negligible_noise(plan: Any) -> str | None:
    """Why the noise of a column is negligible (a sentence), or None: its standard
    deviation is below :data:`NEGLIGIBLE_FRACTION` of the sensitivity (capped at the
    range's width, the most a value can change)."""
    unit = float(plan.sensitivity)
    lo, hi = plan.lower, plan.upper
    if not plan.per_row and lo is not None and hi is not None:
        width = float(hi) - float(lo)
        if math.isfinite(width):
            unit = min(unit, width)
    # The law's variance is a pass over its grid: not needed where the noise's scale is at
    # least a tenth of the unit (the law at the range's centre then has a standard deviation
    # above min(scale, width / sqrt(12)) / 2 >= unit / 40, never negligible).
    m = plan.mech
    scale = None if m is None else getattr(m, "scale", None)
    if scale is None and m is not None:
        scale = getattr(m, "sigma", None)
    if isinstance(scale, float) and scale >= unit / 10:
        return None
    sd = _noise_sd(plan)
    if sd is None:
        return None
    if not sd < NEGLIGIBLE_FRACTION * unit:
        return None
    return (f"column {plan.name!r}: epsilon = {plan.cost()[0]:g} makes the noise negligible: "
            f"its standard deviation {sd:.3g} is below {NEGLIGIBLE_FRACTION:g} of the "
            f"{'sensitivity' if unit == float(plan.sensitivity) else 'range width'} "
            f"{unit:g}, so the released values are the true values up to that; a per-record "
            "release protects little at this epsilon (see the unit of privacy in the docs)")


def warn_negligible_noise(plans: Iterable[Any], stacklevel: int = 3) -> None:
    """One :class:`bndp.NegligibleNoiseWarning` per column whose noise is negligible
    (:func:`negligible_noise`)."""
    for p in plans:
        why = negligible_noise(p)
        if why is not None:
            warnings.warn(why, NegligibleNoiseWarning, stacklevel=stacklevel)


def unit_text(col: dict[str, Any]) -> str:
    """The unit of privacy of a released column in one sentence, from its record
    (:func:`bndp._release.column_details`): what epsilon covers, and the certified loss of
    a change of one record across the whole range (or why there is none)."""
    eps, dq = col["epsilon_per_sensitivity"], col["sensitivity"]
    head = (f"unit of privacy: epsilon = {eps:g} covers a change of at most {dq:g} (the "
            "sensitivity) in one value; ")
    whole = col.get("whole_range_loss")
    if whole is None:
        return head + f"no certified loss for a change across the whole range: " \
            f"{col.get('whole_range_loss_note')}"
    lo, hi = col["bounds"]
    return (head + f"a change of one record across its whole range [{lo:g}, {hi:g}] costs "
            f"a certified loss of {whole:.6g} (what protects a person's record in a "
            "per-record release)")
