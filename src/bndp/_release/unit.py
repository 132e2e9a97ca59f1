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

import numpy as np

from .. import _core
from .._laws.constrained import ConstrainedPlan
from .._laws.window import LAPLACE, GAUSSIAN, RowPlan, plan_wide
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

#: Slack added to a computed loss: far above the rounding of every term (logarithms of
#: integers below 2^58 and of doubles, products and sums, each within a few ulps).
_SLACK = math.ldexp(1.0, -40)


def _row_log_weights(plan: RowPlan, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``ln w(d)`` of the windowed law's kernel for offsets ``|d| <= N`` (from the integer
    table), the tail steps ``|d| - N - 1`` of the others (their ``ln w`` is
    ``ln w1 + steps ln p``), and ``ln p``."""
    k = plan.kernel
    N = k.N
    a = np.abs(d)
    inside = a <= N
    w = np.diff(k.cum)
    lw = np.where(inside, np.log(w[np.where(inside, d, 0) + N].astype(np.float64)), 0.0)
    steps = np.where(inside, 0, a - N - 1)
    lnp = math.log1p(-math.ldexp(k.tm, -k.sbits)) if k.tailw else -math.inf
    return lw, steps, lnp


def grid_ends_loss(plan: RowPlan) -> float:
    r"""Certified loss between the grid inputs ``0`` and ``n`` (the row's two ends) of the
    windowed grid law: an upper bound on
    :math:`\max_j |\ln P(j \mid 0) - \ln P(j \mid n)|` over the row's outputs.

    With :math:`P(j \mid i) = w(j - i)/S(i)` and a symmetric kernel (checked bit for bit on
    the table), :math:`S(0) = S(n)` and the log ratio at output ``j`` is
    :math:`g(j) = \ln w(j) - \ln w(n - j)`. Where both offsets lie in the geometric tails
    (:math:`w(N + 1 + k) = w_1 p^k`), :math:`g(j) = (2j - n)\ln p` is linear, so
    :math:`|g|` there is largest at that stretch's ends; every other ``j`` has an offset
    in the table. The maximum is taken over the outputs ``0..N+1`` and ``n-N-1..n``
    (at most ``2N + 4``), the tail differences computed as (step difference) times
    :math:`\ln p` (no cancellation), and raised by :math:`2^{-40}(1 + M)`, ``M`` the
    largest magnitude met."""
    k = plan.kernel
    N, n = k.N, plan.n
    w = np.diff(k.cum)
    if not np.array_equal(w, w[::-1]):    # pragma: no cover - the tables are symmetric
        raise ValueError("grid law: the kernel table is not symmetric")
    if n > N and not k.tailw:             # pragma: no cover - a served row is covered
        return math.inf
    j = np.unique(np.concatenate((np.arange(0, min(N + 1, n) + 1),
                                  np.arange(max(n - N - 1, 0), n + 1)))).astype(np.int64)
    lw_a, st_a, lnp = _row_log_weights(plan, j)
    lw_b, st_b, _ = _row_log_weights(plan, n - j)
    in_a, in_b = j <= N, (n - j) <= N
    if k.tailw:
        lw1 = math.log(k.tailw) + math.log(k.tm) - k.sbits * math.log(2.0)
    else:
        lw1 = 0.0
    g = np.empty(j.shape)
    both = in_a & in_b
    g[both] = lw_a[both] - lw_b[both]
    m = in_a & ~in_b
    g[m] = (lw_a[m] - lw1) - st_b[m] * lnp
    m = ~in_a & in_b
    g[m] = (lw1 - lw_b[m]) + st_a[m] * lnp
    m = ~in_a & ~in_b
    g[m] = (st_a[m] - st_b[m]) * lnp
    best = float(np.max(np.abs(g)))
    steps = float(max(np.max(st_a), np.max(st_b)))
    mag = best + 64.0 + (steps * -lnp if k.tailw else 0.0)
    return best + _SLACK * (1.0 + mag)


def _set_ends_loss(plan: ConstrainedPlan, lower: float, upper: float) -> float:
    """Certified loss between the true values ``lower`` and ``upper`` of the grid law on an
    allowed set (``gd_set_pair_loss`` for each pair of their grid inputs: a mixture's log
    ratio is at most the largest of its components' pairs)."""
    a = plan.components(lower)
    b = plan.components(upper)
    return max(float(_core.gd_set_pair_loss(plan.cum, plan.n, plan.span_lo, plan.span_hi,
                                            plan.tail_weight, plan.tail_bits, i, k))
               for _, i in a for _, k in b)


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
        if isinstance(ep, RowPlan):
            loss = grid_ends_loss(ep)
        elif isinstance(ep, ConstrainedPlan):
            if not ep.bounded:
                return None, "unbounded allowed set: the loss is unbounded"
            loss = _set_ends_loss(ep, lo, hi)
        elif ep is None and plan.mechanism == "laplace":
            loss = bounded_laplace_loss(m.scale, hi - lo, lo, hi)
        elif ep is None and plan.mechanism == "gaussian" and getattr(m, "dim", None) is None:
            loss = bounded_gaussian_loss(m.sigma, hi - lo, lo, hi)
        elif ep is None and plan.mechanism == "constrained_laplace":
            loss = float(_core.cl_loss(m._L, m._R, m._Lr, m._Rr, m.scale, hi - lo, False)) \
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
    sd = _noise_sd(plan)
    if sd is None:
        return None
    unit = float(plan.sensitivity)
    lo, hi = plan.lower, plan.upper
    if not plan.per_row and lo is not None and hi is not None:
        width = float(hi) - float(lo)
        if math.isfinite(width):
            unit = min(unit, width)
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
