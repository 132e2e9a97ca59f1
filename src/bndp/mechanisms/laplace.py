r"""The bounded Laplace mechanism (Holohan et al. [HABM20]_).

.. [HABM20] N. Holohan, S. Antonatos, S. Braghin, P. Mac Aonghusa. "The Bounded Laplace
   Mechanism in Differential Privacy". Journal of Privacy and Confidentiality 10(1), 2020.
.. [Mir12] I. Mironov. "On Significance of the Least Significant Bits for Differential
   Privacy". ACM CCS 2012.
"""

from __future__ import annotations

import math
from functools import partialmethod
from typing import Any

import numpy as np
from scipy import special

from .. import _dispatch
from .._core import calibrate as _calibrate, fill as _fill
from .._random import RNGLike
from .._validation import check_bounds, check_continuous_resolution, fast_real
from ..calibrate.bounded import bounded_laplace_scale, check_bounded_laplace
from ..distributions import bounded_laplace_eval
from . import exact
from .._laws.window import serving_target
from .._laws.lattice import check_integral, integer_step
from .._columns import Nulls, columnar
from ._law import GridLawMechanism, examples, sample_doc

__all__ = ["BoundedLaplace"]


def _bounds(lower: Any, upper: Any, line: bool = False) -> tuple[float, float]:
    """An interval or a half-line: ``lower`` finite or -inf, ``upper`` finite or +inf, not
    both infinite (unless ``line``), ``lower < upper``."""
    lo = fast_real(lower, "lower")
    hi = fast_real(upper, "upper")
    check_bounds(lo, hi, ends="line" if line else "half")
    return lo, hi


def _plan_half_line(target: float, dq: float, lo: float, hi: float,
                    scale: float) -> "exact.ConstrainedPlan":
    """The grid law of a half-line for the loss ``target`` (search started from the
    continuous ``scale``). A target too large for any grid that reaches the tail (noise far
    below the finest grid within the table's size) is served by the law of
    :func:`bndp._laws.window.serving_target`'s cap, whose certified loss is smaller;
    a ValueError naming ``epsilon`` when that fails too."""
    try:
        return exact.plan_constrained_laplace(target, dq, lo, hi, (), "dp", scale_hint=scale)
    except ValueError:
        capped = serving_target(target, dq)
        if capped >= target:
            raise
    try:
        hint = float(bounded_laplace_scale(capped, dq, lo, hi, delta=0.0))
        return exact.plan_constrained_laplace(capped, dq, lo, hi, (), "dp", scale_hint=hint)
    except ValueError as exc:
        raise ValueError(
            f"grid law: `epsilon` = {target:g} is too large for the default release on "
            f"[{lo!r}, {hi!r}] with sensitivity {dq!r}, and its law at epsilon = {capped:g} "
            f"is refused too ({exc}); pass mode='continuous'") from None


class BoundedLaplace(GridLawMechanism):
    r"""Bounded Laplace mechanism: Laplace noise restricted to :math:`[l, u]`, renormalised.

    For a true value :math:`q \in [l, u]` the output has density

    .. math:: f_q(x) = \frac{1}{C_q}\,\frac{1}{2b}\,e^{-|x-q|/b},\quad l \le x \le u,\qquad
              C_q = 1 - \tfrac12\left(e^{-(q-l)/b} + e^{-(u-q)/b}\right)

    (Definition 3.1 and Lemma 3.2 of [HABM20]_), with the scale :math:`b = b^*` of
    :func:`bndp.calibrate.bounded_laplace_scale` (Theorem 3.5). Unlike clamping, no mass
    piles up on the bounds; unlike plain rejection with :math:`b = \Delta Q/\epsilon`, the
    guarantee holds (that shortcut violates :math:`\epsilon`-DP whenever
    :math:`\Delta Q < u - l`).

    Parameters
    ----------
    epsilon : float
        Finite, :math:`\ge 0`; 0 only with ``delta > 0``.
    sensitivity : float
        :math:`\Delta Q`, finite and > 0 (values above ``upper - lower`` act as
        ``upper - lower``).
    lower, upper : float
        Output domain, ``lower < upper``: an interval, or a half-line with ``lower = -inf``
        or ``upper = inf`` (e.g. counts on :math:`[0, \infty)`; in the default mode the grid
        law of :class:`~bndp.mechanisms.exact.ConstrainedPlan`, with geometric tails beyond
        its table), where the continuous density is :math:`e^{-|x-q|/b}/(2bC_q)` on the half-line with
        :math:`C_q = 1 - \tfrac12 e^{-(q-l)/b}` and the calibrated scale is
        :math:`b^* = \Delta Q/\ln((1 + e^{L})/2)`, :math:`L = \epsilon - \ln(1-\delta)`
        (the :math:`u \to \infty` limit of [HABM20]_, Thm 3.5).
    delta : float, default 0
        In :math:`[0, 1)`. For ``delta = 0`` the mechanism is :math:`\epsilon`-DP and the
        calibrated scale is the smallest that is.
    integer : bool or int, default False
        ``True`` (or a lattice step ``k``, an integer >= 1): the integer law, the bounded
        discrete Laplace on the lattice :math:`l + jk` (:doc:`/integer`): the grid law below
        with the grid's step fixed to :math:`k` instead of :math:`\le \Delta Q/(16\epsilon)`
        (a step that is not a power of two: the law of step 1 on the lattice's indices, for
        the sensitivity :math:`\lceil\Delta/k\rceil` steps, mapped exactly),
        calibrated and certified by the same machinery; outputs are integers (an integer
        NumPy input gives an array of its own dtype). Needs integral ``lower`` and
        ``upper`` (magnitude at most :math:`2^{52}`), an integral ``sensitivity`` and the
        default mode. :func:`bndp.sample` and the frame API choose it for integer-typed
        columns; a mechanism built directly uses the law it is given.
    mode : {"exact", "continuous"}, default "exact"
        ``"exact"`` (the default; ``None`` means the same): the value is rounded to a
        power-of-two grid and the output drawn by an integer inverse CDF from a table of
        integer weights of the bounded discrete Laplace law on the grid points of
        :math:`[l, u]`; the privacy loss is certified from that very table
        (:doc:`/grid_laws`), so publishing the raw doubles is safe against
        floating-point attacks [Mir12]_. :meth:`pmf`, :meth:`cdf`, :meth:`ppf` and the
        moments are those of this discrete law; :meth:`pdf` does not exist for it.
        ``"continuous"``: the continuous law sampled in doubles (explicit opt-in; the set
        of doubles it can output depends on the true value, so raw outputs are attackable).

    Attributes
    ----------
    scale : float
        :math:`b^*`, the scale of the parent Laplace (its variance is :math:`2b^2`; the
        released value's variance is :meth:`variance`). In exact mode, the certified
        scale of the discrete kernel (``exact_plan.scale``).
    exact_plan : ExactPlan or None
        Exact mode: grid, weight table and certified loss (``None`` in continuous mode).

    Notes
    -----
    True values outside :math:`[l, u]` are clipped into it by default (clipping is
    1-Lipschitz, so it does not increase the sensitivity); pass ``on_outside="raise"`` to
    refuse them. Sampling is by inverse CDF (an integer one on the grid): constant work per
    draw, so the running time does not depend on the true value (rejection sampling would
    leak :math:`C_q` through timing).

    Examples
    --------
    >>> import bndp
    >>> m = bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    >>> m
    BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0, delta=0.0, mode='exact')
    >>> m.privacy_loss() <= 1.0
    True
    >>> x = m.sample([0.0, 5.0, 10.0], rng=0)
    >>> bool(((x >= 0) & (x <= 10)).all())
    True
    >>> bool(((x * 2 ** -m.exact_plan.exponent) % 1 == 0).all())   # on the grid
    True
    >>> m = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0, mode="continuous")
    >>> round(m.scale, 10)
    1.6115601044
    """

    _init_args = ("epsilon", "sensitivity", "lower", "upper", "delta", "mode", "integer")
    _repr_defaults = {"integer": 0}
    mode = "exact"
    integer = 0
    exact_plan: "exact.ExactPlan | None" = None

    def __init__(self, epsilon: float, *, sensitivity: float, lower: float, upper: float,
                 delta: float = 0.0, mode: str | None = "exact", integer: Any = False) -> None:
        mode = exact.check_mode(mode)
        eps = fast_real(epsilon, "epsilon")
        dq = fast_real(sensitivity, "sensitivity")
        dl = fast_real(delta, "delta")
        lo, hi = _bounds(lower, upper)
        step = integer_step(integer)
        lattice = check_integral(step, dq, lo, hi, mode) if step else None
        plan: exact.ExactPlan | None = None
        if mode == "exact" and not math.isinf(hi - lo):
            # the windowed grid law calibrates its own scale (from the ideal discrete
            # Laplace): b* is not computed, only its input checks run, for the loss the
            # kernel is calibrated for (a large epsilon is served by the law of a smaller
            # one, see serving_target)
            try:
                check_bounded_laplace(serving_target(eps, dq), dq, lo, hi, delta=dl)
            except ValueError:
                check_bounded_laplace(eps, dq, lo, hi, delta=dl)  # the epsilon given's message
                raise
            try:
                plan = exact.plan_bounded_laplace(eps, dq, lo, hi, dl, lattice)
            except (ValueError, OverflowError):
                if lattice is not None:
                    raise
                # parameters the continuous calibration refuses keep its message
                bounded_laplace_scale(eps, dq, lo, hi, delta=dl)
                raise
            scale = plan.scale
        else:
            # validates epsilon, delta, dq
            scale = bounded_laplace_scale(eps, dq, lo, hi, delta=dl)
            if mode == "exact":
                # a half-line: the grid law of the allowed set [lo, hi] (geometric tail),
                # whose grid and search start are chosen from b*
                plan = _plan_half_line(eps - math.log1p(-dl), dq, lo, hi, float(scale))
                scale = plan.scale
            else:
                check_continuous_resolution(scale, lo, hi)
        self._set(epsilon=eps, sensitivity=dq, lower=lo, upper=hi, delta=dl, scale=float(scale),
                  mode=mode, exact_plan=plan, integer=step)

    # sampling ------------------------------------------------------------------------
    @columnar
    @sample_doc(returns=" (see :mod:`bndp._columns`)")
    def sample(self, value: Any, size: Any = None, rng: RNGLike = None,
               on_outside: str = "clip", workers: int = 1, *, nulls: Nulls = "raise"):
        return self._sample(value, size, rng, on_outside, workers)

    def _continuous_sample(self, q: Any, size: Any, gen: Any, workers: int):
        params = [q, np.float64(self.scale), np.float64(self.lower), np.float64(self.upper)]
        return _dispatch.sample(_fill.bl_one, _fill.bl_fill, _fill.bl_fill_rows, params, size, gen, workers)

    # law hooks (the public methods are in LawMechanism) ---------------------------------
    _rows_family = "laplace"     # per-row bounds: :meth:`sample_rows`
    _law_docs = {
        "cdf": r"""CDF of the output: for :math:`x \le q`,
:math:`-\tfrac12 e^{-(q-x)/b}\,\mathrm{expm1}(-(x-l)/b)/C_q`; for :math:`x \ge q`,
:math:`(m_L - \tfrac12\mathrm{expm1}(-(x-q)/b))/C_q`.""",
        "pdf": "Density of the output at ``x`` for true value ``value`` (0 outside [l, u]).",
        "sf": r"""Survival function :math:`P(W_q > x)`, computed directly (not as ``1 - cdf``):
for :math:`x \ge q`, :math:`\tfrac12 e^{-(x-q)/b}(1 - e^{-(u-x)/b})/C_q`. In exact
mode, an exact sum of the grid law's integer weights (far below 1e-16 where it is).""",
        "logsf": r":math:`\log P(W_q > x)`, in log space (no underflow).",
        "logcdf": r":math:`\log P(W_q \le x)`, in log space (no underflow).",
        "isf": r"""Inverse survival function: the ``x`` with :math:`P(W_q > x) = p`, solved in
closed form from the upper tail (accurate where ``ppf(1 - p)`` cannot be formed).
In exact mode, the smallest grid point whose survival probability is at most ``p``.""",
        "mean": r""":math:`E[W_q] = q + \tfrac{b}{2}\,[P(2,c) - P(2,a)]/C_q` with
:math:`a = (q-l)/b`, :math:`c = (u-q)/b` and :math:`P` the regularised lower incomplete
gamma function (continuous mode); in exact mode the mean of the grid law, summed over its
PMF.""",
        "variance": r"""Variance of the released value:
:math:`b^2[P(3,a) + P(3,c)]/C_q - (E[W_q] - q)^2` (continuous mode); in exact mode
the variance of the grid law, summed over its PMF.""",
    }
    _law_examples = examples(
        'm = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper={}, mode="continuous")',
        sf=("100.0", "0 < m.sf(99.0, 0.0) < 1e-20", "True"),
        logsf=("2000.0", "bool(m.logsf(1900.0, 0.0) < -1000)", "True"),
        logcdf=("2000.0", "bool(m.logcdf(100.0, 2000.0) < -1000)", "True"),
        isf=("100.0", "x = m.isf(1e-30, 0.0)",
             "bool(abs(m.sf(x, 0.0) / 1e-30 - 1) < 1e-10)", "True"),
    )

    def _continuous(self, what: int, x: np.ndarray, q: np.ndarray):
        return bounded_laplace_eval(what, x, q, np.float64(self.scale),
                                    np.float64(self.lower), np.float64(self.upper))

    _logpdf = partialmethod(_continuous, 0)
    _cdf = partialmethod(_continuous, 1)
    _ppf = partialmethod(_continuous, 2)

    # upper and lower tails without 1 - cdf ---------------------------------------------
    def _isf(self, p: np.ndarray, q: np.ndarray):
        pb, qb = np.broadcast_arrays(p, q)
        b, lo, hi = self.scale, self.lower, self.upper
        c = (hi - qb) / b
        half_c = -0.5 * (np.expm1(-(qb - lo) / b) + np.expm1(-c))    # C_q, cancellation-free
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            upper_mass = -0.5 * np.expm1(-c) / half_c         # sf(q)
            up = q - b * np.log(2.0 * pb * half_c + np.exp(-c))          # x >= q
            down = qb + b * np.log(2.0 - np.exp(-c) - 2.0 * pb * half_c)  # x < q
            return np.clip(np.where(pb <= upper_mass, up, down), lo, hi)

    def _log_tail(self, upper: bool, x: np.ndarray, q: np.ndarray):
        """log sf (``upper``) or log cdf: the mirror images of one closed form."""
        x, q = np.broadcast_arrays(x, q)
        b, lo, hi = self.scale, self.lower, self.upper
        xb, qb = (x, q) if upper else (-x, -q)   # reflect: [l, u] -> [-u, -l]
        if not upper:
            lo, hi = -hi, -lo
        c = (hi - qb) / b
        half_c = -0.5 * (np.expm1(-(qb - lo) / b) + np.expm1(-c))    # C_q
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            xc = np.clip(xb, lo, hi)
            # x >= q: (1/2) e^{-(x-q)/b} (1 - e^{-(u-x)/b}) / C_q;
            # x < q: (1/2) (1 - e^{-(q-x)/b} + 1 - e^{-c}) / C_q
            right = (np.log(0.5) - (xc - qb) / b + np.log(-np.expm1(-(hi - xc) / b))
                     - np.log(half_c))
            left = np.log(0.5 * (-np.expm1(-(qb - xc) / b) - np.expm1(-c))) - np.log(half_c)
            lg = np.where(xc >= qb, right, left)
        if upper:
            return np.where(x >= self.upper, -np.inf, np.where(x < self.lower, 0.0, lg))
        return np.where(x < self.lower, -np.inf, np.where(x >= self.upper, 0.0, lg))

    def _logsf(self, x: np.ndarray, q: np.ndarray):
        return self._log_tail(True, x, q)

    def _logcdf(self, x: np.ndarray, q: np.ndarray):
        return self._log_tail(False, x, q)

    def _sf(self, x: np.ndarray, q: np.ndarray):
        with np.errstate(over="ignore"):
            return np.exp(self._log_tail(True, x, q))

    def _incomplete_gamma(self, s: int, q: np.ndarray):
        """``(C_q, P(s, a), P(s, c))`` with ``a = (q-l)/b``, ``c = (u-q)/b`` (incomplete-gamma
        forms, no cancellation: P(1,t) = -expm1(-t), P(s,t) = gammainc)."""
        a = (q - self.lower) / self.scale
        c = (self.upper - q) / self.scale
        return -0.5 * (np.expm1(-a) + np.expm1(-c)), special.gammainc(s, a), special.gammainc(s, c)

    def _uniform(self) -> bool:
        """Whether the law is the uniform one on [lower, upper] to within 1e-30 relative (a
        scale above 1e30 widths), where the incomplete gamma functions of the moments
        underflow (a mean of 0 and a variance of 0 at epsilon 1e-300)."""
        return (self.upper - self.lower) < 1e-30 * self.scale

    def _bias(self, x: None, q: np.ndarray):
        if self._uniform():
            return 0.5 * (self.lower + self.upper) - q
        C, pa, pc = self._incomplete_gamma(2, q)
        return 0.5 * self.scale * (pc - pa) / C

    def _variance(self, x: None, q: np.ndarray):
        if self._uniform():
            w = self.upper - self.lower
            return np.broadcast_to(w * w / 12.0, np.shape(q)).astype(np.float64)
        C, pa, pc = self._incomplete_gamma(3, q)
        shift = self._bias(x, q)
        # scale^2 (pa + pc) / C, multiplied from the inside out: at a huge scale (the law
        # nearly uniform) scale^2 overflows while the product is about a width squared
        return (self.scale * ((pa + pc) / C)) * self.scale - shift * shift

    def privacy_loss(self) -> float:
        r"""Exact worst-case privacy loss :math:`\Delta Q/b + \ln\Delta C(b)` of the
        mechanism over neighbouring true values and all outputs (attained at
        :math:`q = l`, :math:`q' = l + \Delta Q`, :math:`x = l`; [HABM20]_ §3). For
        ``delta = 0`` it is at most ``epsilon`` (equal up to rounding). In exact mode, the
        exhaustively certified loss of the discrete mechanism (at most
        ``epsilon - ln(1 - delta)``)."""
        if self.exact_plan is not None:
            return self.exact_plan.certified_epsilon
        w = self.upper - self.lower
        dq = min(self.sensitivity, w)
        return dq / self.scale + _calibrate.bl_log_dc(self.scale, dq, w)
