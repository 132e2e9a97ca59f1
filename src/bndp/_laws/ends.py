r"""The certified loss between the two ends of a grid law's range (true value ``lower``
against ``upper``): :func:`grid_ends_loss` for the windowed law of one row and
:func:`set_ends_loss` for the law on an allowed set, read by the plans' ``ends_loss``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .._core import certify_grid as _certify_grid

if TYPE_CHECKING:
    from .constrained import ConstrainedPlan
    from .window import RowPlan

__all__ = ["grid_ends_loss", "set_ends_loss"]

#: Slack added to a computed loss: far above the rounding of every term (logarithms of
#: integers below 2^58 and of doubles, products and sums, each within a few ulps).
_SLACK = math.ldexp(1.0, -40)


def _row_log_weights(plan: "RowPlan", d: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
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


def grid_ends_loss(plan: "RowPlan") -> float:
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


def set_ends_loss(plan: "ConstrainedPlan", lower: float, upper: float) -> float:
    """Certified loss between the true values ``lower`` and ``upper`` of the grid law on an
    allowed set (``gd_set_pair_loss`` for each pair of their grid inputs: a mixture's log
    ratio is at most the largest of its components' pairs)."""
    a = plan.components(lower)
    b = plan.components(upper)
    return max(float(_certify_grid.gd_set_pair_loss(plan.cum, plan.n, plan.span_lo, plan.span_hi,
                                            plan.tail_weight, plan.tail_bits, i, k))
               for _, i in a for _, k in b)
