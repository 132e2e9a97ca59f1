r"""The default release law: a table of integer weights on a power-of-two grid, sampled by an
integer inverse CDF, with its privacy loss certified from the same table.

(The univariate bounded mechanisms and per-row bounds release the *windowed* grid
law of :mod:`bndp.mechanisms.window`: a table over the kernel's effective support with
geometric tails, anchored at the lower bound, certified in O(n). The whole-range law below
is the law of the multivariate Gaussian (:class:`ProductPlan`) and of
:class:`ConstrainedPlan`.)

Why. A floating-point sampler such as ``q + b * log(u)`` or an inverse CDF evaluated in
doubles does not release a sample of the continuous law: it releases one of finitely many
doubles, and which doubles can appear depends on ``q`` (Mironov [Mir12]_). An observer who
sees one output that input ``q`` can produce and its neighbour ``q'`` cannot learns which
was used: against an observer of the raw doubles the privacy loss is infinite. The grid law
removes that structure:

1. the true value ``q`` (clipped into :math:`[l, u]`) is rounded to the grid
   :math:`\gamma\mathbb{Z}` (nearest point, ties up), :math:`\gamma = 2^e`, then clipped to
   the grid points :math:`(k_l + j)\gamma`, ``j = 0..n``, of :math:`[l, u]`: index ``i``;
2. the output index ``j`` is drawn from the law defined by integer weights
   :math:`W_d = \operatorname{rint}(2^K \kappa(d)) + F`, :math:`d \in [-n, n]`, with the
   Laplace kernel :math:`\kappa(d) = e^{-|d|/t}` or the Gaussian kernel
   :math:`\kappa(d) = e^{-d^2/(2s^2)}` (scale ``t`` or ``s`` in grid steps):

   .. math:: P(j \mid i) = W_{j-i} / S_i, \qquad S_i = \sum_{j=0}^{n} W_{j-i};

   ``F = 2^12`` gives every grid point a positive weight under every input (the support
   does not depend on ``q``) and mixes in a uniform law of negligible mass
   (:math:`(n+1)F/S_i \le 2^{-32}(n+1)` here); ``K`` makes the total at most
   :math:`2^{58}`;
3. the draw is an integer inverse CDF: a uniform integer :math:`T` in
   :math:`[C_{n-i}, C_{2n-i+1})` of the cumulative table :math:`C` (Lemire's exact bounded
   integer; a rejection happens with probability below :math:`2^{-6}`, whatever ``q``), then
   the entry with :math:`C_k \le T < C_{k+1}` by a branch-free 4-ary search (three
   comparisons per step, the three keys of a node stored together: one vector comparison
   where the CPU has AVX2, the same result from the portable version) whose number of
   steps depends on the table size only; draws are made 32 at a time, interleaved. No
   floating-point operation decides a draw, no rejection depends on ``q``, and the released
   double :math:`(k_l + j)2^e` is exact.

Certificate. Rounding moves neighbouring inputs at most :math:`d_k = \lceil \Delta Q/\gamma
\rceil` grid steps apart (``floor(x + 1/2)`` is monotone and ``floor(x + D) - floor(x) <=
ceil(D)``; clipping is 1-Lipschitz). For every shift :math:`1 \le \delta \le d_k` the kernel
computes, from the very table the sampler reads,

.. math:: \lambda_\delta \ge \max_{i, j} \ln\frac{P(j \mid i)}{P(j \mid i + \delta)}

exactly over all ``i`` and ``j`` (a sliding-window maximum; the other direction is the
mirror image, since the table is symmetric bit for bit), plus :math:`2^{-40}`, which bounds
every rounding of its evaluation (the weights are integers below :math:`2^{58}`, rounded to
double with a relative error of at most :math:`2^{-53}`; ``log`` errs by at most one ulp;
see ``_gd_shift_losses`` in
``_core_certify_grid.pxi`` for the proof). The univariate loss is :math:`\max_\delta \lambda_\delta`.
For the multivariate Gaussian the law is the product of per-coordinate laws; a neighbour at
:math:`\ell_2` distance :math:`\le\Delta Q` shifts coordinate ``c`` by :math:`r_c` steps
with :math:`\sum_c (r_c - 1)_+^2 < (\Delta Q/\gamma)^2`, so the loss is at most
:math:`\max \sum_c \lambda^{(c)}_{r_c}` over that set, which is bounded by its Lagrangian
dual :math:`\min_{\mu \ge 0} \mu B + \sum_c \max_r [\lambda^{(c)}_r - \mu (r - 1)_+^2]`
(weak duality; :math:`B = \lfloor(\Delta Q/\gamma)^2\rfloor`).

Calibration. The scale in grid steps is the bisection point (relative width :math:`10^{-7}`;
for :class:`ConstrainedPlan` a bracketed secant search to the same width, ``_search``)
whose table is certified :math:`\le` the target: :math:`\epsilon`, or for the Laplace with
:math:`\delta > 0` the loss bound :math:`\epsilon - \ln(1 - \delta)` behind Theorem 3.5 of
[HABM20]_ (a loss bound :math:`L` implies :math:`(\epsilon, \delta)`-DP since
:math:`P(A) \le \min(1, e^{\epsilon}P'(A)/(1-\delta)) \le e^{\epsilon}P'(A) + \delta`).
Only the returned table is used; its certificate does not rely on any monotonicity.

Grid. :math:`\gamma` is the largest power of two :math:`\le \min(b, \Delta Q)/16` (b the
continuous scale) and :math:`\le (u - l)/1024`, refined until :math:`\Delta Q/\gamma` is an
integer or at least 256 (so that rounding inflates the sensitivity by at most 0.4 %); for
the multivariate Gaussian :math:`\gamma \le \Delta Q/(64\sqrt m)`. At most :math:`2^{22}` grid intervals (the grid is
coarsened beyond, at a cost in noise stated by :attr:`ExactPlan.scale`).

Departures from the papers. The scales are not those of [HABM20]_ Theorem 3.5 or of Chen and
Hale's sufficient condition: they are calibrated on the certificate of the discrete law
actually sampled. The Laplace scale comes out slightly below :math:`b^*`. The Gaussian
one is smaller than the continuous :math:`\sigma^*`, whose condition is sufficient, not
tight; on ranges much wider than the scale it is also below the tightest continuous
calibration, because the weight floor ``F`` caps the likelihood ratio in the far tail
(where the bounded Gaussian's loss grows with the distance): the released law is the
bounded discrete Gaussian mixed with a uniform law of mass at most :math:`2^{-32}(n+1)`, and
the certificate covers exactly that mixture.

.. [Mir12] I. Mironov. "On Significance of the Least Significant Bits for Differential
   Privacy". ACM CCS 2012.
.. [HABM20] N. Holohan, S. Antonatos, S. Braghin, P. Mac Aonghusa. "The Bounded Laplace
   Mechanism in Differential Privacy". J. Privacy and Confidentiality 10(1), 2020.

Layout. This module is the facade of the grid law and re-exports every name it has always
had; the code lives in modules by concern: :mod:`bndp.mechanisms._grid` (constants, the mode
check, :class:`ExactPlan` with its table, search tree and law evaluation),
:mod:`bndp.mechanisms._calibration` (grid choice, scale searches, the univariate plan),
:mod:`bndp.mechanisms.product` (:class:`ProductPlan`) and :mod:`bndp.mechanisms.constrained`
(:class:`ConstrainedPlan`). The grid constants are read from :mod:`bndp.mechanisms._grid` at
call time: patch them there, not here.
"""

from __future__ import annotations

from ._grid import (  # noqa: F401 - re-exported
    LAPLACE, GAUSSIAN, _FAMILY, MODES, GRID_STEPS, SENS_STEPS, MULTI_STEPS, WIDTH_STEPS,
    METRIC_STEPS, GAP_STEPS, MAX_INTERVALS, MAX_PAIRS, MAX_INDEX, FLOOR_BITS, TOTAL_BITS,
    MIN_PEAK_BITS, REL_TOL, _gceil, _gfloor, check_mode, ExactPlan, _exact_cdf, _law_from,
    _tail_sums, search_tree, _log_ratio, _certify, _kexp, _table, grid_law)
from ._calibration import (  # noqa: F401 - re-exported
    _choose_grid, _bisect, _search, _plan_1d, plan_bounded_laplace)
from .product import (  # noqa: F401 - re-exported
    _dual_bound, ProductPlan, _plan_product, _choose_grid_at, plan_bounded_gaussian)
from .constrained import (  # noqa: F401 - re-exported
    GD_INF, TAIL_BITS, LAW_TAIL, ConstrainedPlan, _up, _add_up, _metric_bound, _tail_bits,
    _set_table, _set_grid, _spans, _plan_constrained, plan_constrained_laplace)

__all__ = ["ExactPlan", "ProductPlan", "ConstrainedPlan", "plan_bounded_laplace",
           "plan_bounded_gaussian", "plan_constrained_laplace", "check_mode", "grid_law",
           "MODES"]
