r"""Laplace noise truncated to an allowed set and renormalised (Croft, Sack and Shi [CSS22]_).

The allowed set is :math:`A = [l, u] \setminus \bigcup_k (a_k, b_k)`: the real line, a
half-line or an interval, minus finitely many forbidden open intervals. For a true value
:math:`\mu \in A` the output has density

.. math:: p_\mu(y) = \frac{e^{-|y-\mu|/\sigma}}{2\sigma\,N(\mu)},\quad y \in A,\qquad
          N(\mu) = \int_A \frac{e^{-|y-\mu|/\sigma}}{2\sigma}\,dy .

.. [CSS22] W. L. Croft, J.-R. Sack, W. Shi. "Differential privacy via a truncated and
   normalized Laplace mechanism". J. Comput. Sci. Technol. 37(2), 369-388, 2022. Proofs:
   appendix to Ch. 5 Sec. 1 of W. L. Croft, "Design and Applications of Differentially
   Private Mechanisms" (equation, lemma and theorem numbers here are the appendix's).
"""

from __future__ import annotations

import math
import sys
from functools import partialmethod
from typing import Any

import numpy as np

from .. import _dispatch
from .._core import calibrate as _calibrate, certify as _certify, fill as _fill, laws as _laws
from .._random import RNGLike, as_generator
from .._validation import (_at_index, as_float_array, check_continuous_resolution,
                           check_finite, check_forbidden, check_on_outside, positive_real)
from .._columns import Nulls, columnar
from . import exact
from .laplace import _bounds
from ._law import GridLawMechanism, sample_doc

__all__ = ["ConstrainedLaplace"]



def _delta_distance_dependent(eps: float) -> float:
    """Hockey-stick delta of the Theorem 1 mechanism for neighbours at distance <= dF.

    By scale invariance (sigma(ell) = (dF/eps) g(eps ell/dF)) it depends on eps only; in
    units of dF/eps the true values are u = eps ell/dF >= 0 and neighbours are <= eps apart.
    Numerical maximum over pairs (u, u + t), both directions: t on a grid of 20 fractions
    of eps in (0, eps], u on a grid of [0, max(60, 60 eps)], then a local 41 x 41 grid
    around the best pair. Not a certified bound (the maximiser, at u = 0 in every case
    examined, is smooth in t, so the grid maximum is accurate to a few digits).
    """
    umax = max(60.0, 60.0 * eps)
    u = np.concatenate([np.linspace(0.0, 2.0 + 2.0 * eps, 401)[:-1],
                        np.linspace(2.0 + 2.0 * eps, umax, 400)])
    fracs = np.linspace(0.05, 1.0, 20)
    best, arg = 0.0, None
    for fi, frac in enumerate(fracs):
        for rev in (False, True):
            d = _dd_hockey_u(u, u + frac * eps, eps, rev)
            k = int(np.argmax(d))
            if d[k] > best:
                best, arg = float(d[k]), (k, fi, rev)
    if arg is not None:
        k, fi, rev = arg
        uu = np.linspace(u[max(k - 1, 0)], u[min(k + 1, len(u) - 1)], 41)
        ff = np.linspace(fracs[max(fi - 1, 0)], fracs[min(fi + 1, len(fracs) - 1)], 41)
        U2, F2 = np.meshgrid(uu, ff)
        U1 = U2.ravel()
        best = max(best, float(np.max(_dd_hockey_u(U1, U1 + F2.ravel() * eps, eps, rev))))
    return best


def _dd_g(u: np.ndarray) -> np.ndarray:
    u = np.ascontiguousarray(u, dtype=np.float64).reshape(-1)
    out = np.empty_like(u)
    _calibrate.dd_g_fill(u, out)
    return out


def _dd_hockey_u(u1: np.ndarray, u2: np.ndarray, eps: float, rev: bool) -> np.ndarray:
    s1, s2 = _dd_g(u1), _dd_g(u2)
    u1 = np.ascontiguousarray(u1, dtype=np.float64)
    u2 = np.ascontiguousarray(u2, dtype=np.float64)
    out = np.empty_like(u1)
    if rev:
        _certify.dd_hockey_fill(u2, s2, u1, s1, eps, out)
    else:
        _certify.dd_hockey_fill(u1, s1, u2, s2, eps, out)
    return out


#: the continuous sampler's largest scale, in units of the allowed set's width: its quantile
#: ``mu + s ln(2 r + a)`` resolves outputs near the true value ``mu`` to about
#: ``s 2^-53``, 2^-27 (about 1e-8) of the width here; beyond, the outputs would gather on
#: a lattice around ``mu`` (at ``s`` near ``2^53`` widths, on ``mu`` itself)
CONTINUOUS_MAX_SCALE_WIDTHS = 2.0 ** 26


def _check_continuous_scale(scale: float, lo: float, hi: float) -> None:
    """Refuse a continuous ConstrainedLaplace whose scale its sampler cannot draw faithfully:
    not a normal double, or more than :data:`CONTINUOUS_MAX_SCALE_WIDTHS` times a finite
    ``upper - lower`` (a tiny epsilon or a huge sensitivity for the range), or noise the
    doubles of its range cannot carry (:func:`check_continuous_resolution`)."""
    width = hi - lo
    if not (sys.float_info.min <= scale < math.inf) or (
            math.isfinite(width) and scale > CONTINUOUS_MAX_SCALE_WIDTHS * width):
        raise ValueError(
            f"ConstrainedLaplace: the calibrated scale {scale!r} cannot be sampled in "
            "mode='continuous': the scale must be a normal double, at most 2^26 times "
            f"upper - lower ({width!r}), for the double-precision quantile to resolve "
            "outputs near the true value (epsilon too small or sensitivity too large for "
            "the range)")
    check_continuous_resolution(scale, lo, hi)


class ConstrainedLaplace(GridLawMechanism):
    r"""Truncated and normalised Laplace mechanism on an allowed set with gaps [CSS22]_.

    Releases :math:`Y \sim \mathrm{Laplace}(\mu, \sigma)` conditioned on :math:`Y \in A`,
    :math:`A = [\text{lower}, \text{upper}] \setminus \bigcup_k (a_k, b_k)`, with density

    .. math:: p_\mu(y) = \frac{e^{-|y-\mu|/\sigma}}{2\sigma\,N(\mu)},\quad y \in A,
              \qquad N(\mu) = L_c(\mu) + R_c(\mu),

    where :math:`L_c` (:math:`R_c`) is the Laplace mass of :math:`A` left (right) of
    :math:`\mu`. For a constant :math:`\sigma` the privacy loss of a pair of true values is
    exactly (the supremum over outputs is attained at :math:`y = \mu`)

    .. math:: \ell(\mu, \mu') = \frac{|\mu - \mu'|}{\sigma} + \ln N(\mu') - \ln N(\mu).

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    sensitivity : float
        :math:`\Delta F`, finite and > 0: neighbouring databases have true values at most
        this far apart.
    forbidden : sequence of (a, b) pairs, optional
        Forbidden open intervals, finite, non-empty, sorted, separated
        (:math:`b_k < a_{k+1}`) and strictly inside ``(lower, upper)``.
    lower, upper : float, default -inf, inf
        Outer bounds of the allowed set (either may be infinite), ``lower < upper``.
    guarantee : {"dp", "metric"}, default "dp"
        ``"dp"``: standard :math:`\epsilon`-DP, :math:`\ell(\mu,\mu') \le \epsilon` whenever
        :math:`|\mu - \mu'| \le \Delta F`. ``"metric"``: the paper's guarantee,
        :math:`\ell(\mu,\mu') \le \epsilon|\mu-\mu'|/\Delta F` for all :math:`\mu, \mu'`
        (implies ``"dp"``; may need more noise). Used by the constant scale only.
    scale_rule : {"constant", "distance_dependent"}, default "constant"
        ``"constant"``: one calibrated :math:`\sigma` (below). ``"distance_dependent"``: the
        scale of Theorem 1 for a single infinitely spanning constraint (exactly one of
        ``lower``/``upper`` finite, no ``forbidden``),
        :math:`\sigma(\ell) = (\Delta F/\epsilon)\,g(\epsilon\ell/\Delta F)` with
        :math:`\ell` the distance of the true value from the bound and
        :math:`g(u) = u/(-W_Z(-2te^{-t}) - t)`, :math:`t = a u e^{1-u}`,
        :math:`a = -W_0(-1/(2e))`, :math:`Z = 0` for :math:`u \le 1`, :math:`-1` above
        (:math:`g(0) = 1/(ae) = 1.585954\ldots`, :math:`g(1) = 1/(1-a) = 1.302017\ldots`).
        **This mechanism is not** :math:`\epsilon` **-DP**: the paper checks the density
        ratio only at the boundary output, and since :math:`\sigma` differs between true
        values the ratio grows without bound in the tail. It satisfies
        :math:`(\epsilon, \delta)`-DP with the hockey-stick :math:`\delta` reported in
        :attr:`delta` (about :math:`1.6\cdot 10^{-4}` at :math:`\epsilon = 1`);
        :meth:`privacy_loss` returns ``inf``. Offered to reproduce the paper only.
    mode : {"exact", "continuous"}, default "exact"
        ``"exact"`` (the default; ``None`` means the same): the value is rounded to a
        power-of-two grid and the output drawn by an integer inverse CDF from the integer
        weights of the discrete Laplace law on the grid points of the allowed set; the
        privacy loss (and for ``guarantee="metric"`` the metric loss) is certified from that
        very table (:class:`bndp.mechanisms.exact.ConstrainedPlan`), so publishing the raw
        doubles is safe against floating-point attacks. Half-lines and the real line are
        covered (geometric tails beyond the table). It needs the constant scale.
        :meth:`pmf`, :meth:`cdf`, :meth:`ppf` and the moments are those of the discrete law;
        :meth:`pdf` does not exist for it. ``"continuous"``: the continuous law sampled in
        doubles (explicit opt-in; raw outputs are attackable), also for
        ``scale_rule="distance_dependent"``; it refuses (``ValueError``) a scale above
        ``2**26`` times ``upper - lower`` or below the smallest normal double, where its
        quantile would no longer resolve the outputs near the true value (an epsilon too
        small, or a sensitivity too large, for the range).

    Attributes
    ----------
    scale : float
        The Laplace scale :math:`\sigma` of the formulas here, a number as for every other
        mechanism: the calibrated constant scale for the constant rule (variance of the
        parent Laplace: :math:`2\sigma^2`); for ``"distance_dependent"`` the largest scale
        used, :math:`\sigma(0) = g(0)\,\Delta F/\epsilon` at the bound (:meth:`scale_at`
        gives the scale :math:`\sigma(\ell)` for each true value).
    scale_rule : str
        ``"constant"`` or ``"distance_dependent"``: how the scale is chosen.
    delta : float
        0 for the constant scale; the numerically computed hockey-stick :math:`\delta` at
        level :math:`e^\epsilon` for ``"distance_dependent"``.
    exact_plan : ConstrainedPlan or None
        Exact mode: grid, allowed grid points, weight table and certified losses (``None``
        in continuous mode). In exact mode :attr:`scale` is the
        certified scale of the discrete kernel (``exact_plan.scale``).

    Notes
    -----
    **Calibration** (constant scale; all in compiled code, conservative: the returned
    :math:`\sigma` satisfies the condition as evaluated with an explicit rounding margin).

    * ``"metric"``: :math:`\ln N` must be :math:`(\epsilon/\Delta F - 1/\sigma)`-Lipschitz
      on :math:`A`; since :math:`d\ln N/d\mu = (R_c - L_c)/(\sigma N)` is monotone on each
      span and each gap, this is the condition at the :math:`2n` endpoints,
      :math:`(2\Delta F/\sigma)\max(L_c, R_c)/N \le \epsilon`, equivalent to the
      :math:`3n + 2` lower bounds of Theorem 2 (Lemma 7 regular at each :math:`a_k`,
      symmetric at each :math:`b_k`, :math:`\Delta F/\epsilon` for the two outer spans; the
      :math:`n` Lemma 9 bounds are implied) and evaluated in :math:`O(n)` per
      :math:`\sigma` by a positive recursion. :math:`\sigma^*` is found by a bracketing
      root finder on :math:`[\Delta F/\epsilon, 2\Delta F/\epsilon]` (Theorem 3, Lemma 10).
      One forbidden interval of width :math:`w` has the closed form
      :math:`\sigma^* = w/(\kappa + W_0(\kappa e^{-\kappa}))`,
      :math:`\kappa = \epsilon w/(2\Delta F)`. A finite ``lower`` or ``upper`` forces
      :math:`\sigma^* = 2\Delta F/\epsilon` (nothing is allowed beyond it, so the slope
      condition reads :math:`2\Delta F/\sigma \le \epsilon` there).
    * ``"dp"``: :math:`\sigma^*` is the smallest :math:`\sigma` whose exact worst-case loss
      :meth:`privacy_loss` is :math:`\le \epsilon`, found by the same root finder. Closed
      forms: the real line, :math:`\Delta F/\epsilon`; a half-line,
      :math:`\Delta F/\ln((e^\epsilon + 1)/2)` (:math:`1.6126\,\Delta F` at
      :math:`\epsilon = 1`; the bounded Laplace with :math:`u = \infty`); a finite interval
      without gaps reproduces the bounded Laplace scale :math:`b^*`. Finite ``lower`` and
      ``upper`` together with gaps go beyond the paper and are calibrated by this bisection
      on the exact loss (no closed criterion is claimed).
    * Either way :math:`\sigma \le 2\Delta F/\epsilon`: every constant scale is private at
      :math:`2\Delta F/\sigma` (the densities' ratio and the normalisers' are each at most
      :math:`e^{\Delta F/\sigma}`), so that bound needs no evaluation; it is the scale
      where the root finder finds none within twice it (an :math:`\epsilon` near the
      evaluations' rounding margin, about :math:`10^{-13}`).

    **Sampling** is by inverse CDF across the allowed pieces: one uniform :math:`U`; with
    :math:`t = UN`, if :math:`t < L_c` the output is the point with
    :math:`\mathrm{mass}(A \cap (-\infty, y]) = t` (piece found by a fixed-depth binary
    search over cumulative masses, then a closed-form Laplace inverse inside it), otherwise
    the mirror image with :math:`(1-U)N`; exact in the far tails, constant work per draw.

    **True values** must lie in :math:`A`. Values outside ``[lower, upper]`` are clipped
    onto it by default (1-Lipschitz); a value inside a forbidden interval always raises:
    projecting onto a set with gaps is not 1-Lipschitz (14.9 and 15.1 around a gap
    (10, 20) would land 10 apart), so it could void the guarantee.

    **Departures from the paper.**

    * The paper's guarantee is the metric one; ``guarantee="dp"`` (the default) calibrates
      standard :math:`\epsilon`-DP on the exact worst-case loss, which may need less noise.
    * Theorem 1 (distance-dependent scale) does not give pure :math:`\epsilon`-DP, nor the
      paper's own guarantee, over the full output range; it is offered only with its real
      :math:`(\epsilon, \delta)`.
    * Misprints corrected (checked numerically): (35)/(36) carry a spurious leading minus;
      (32) lacks an :math:`e` in the inner exponent; "i = 1/e" in Lemma 3 reads
      :math:`1/\epsilon`; the parentheses of (27)/(28) are misplaced; (46) needs
      :math:`e^{-i\epsilon}`; (49) lacks its minus sign; the exponents of (6), (7), (17),
      (22)-(25) are garbled. Lemma 7 does not say where :math:`L_1, R_1` are evaluated: the
      worst points are the span ends (regular form at the right end, symmetric at the left).
    * Theorem 3 bisects to :math:`d` absolute decimals in :math:`O(n^2)` per step; here the
      root is found to floating-point resolution with :math:`O(n)` per step.

    Examples
    --------
    >>> import bndp
    >>> m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=[(0.0, 1.0)],
    ...                             guarantee="metric", mode="continuous")
    >>> round(m.scale, 9)
    1.353482114
    >>> y = m.sample([-2.0, 3.0], rng=0)
    >>> bool(((y <= 0) | (y >= 1)).all())
    True

    The default grid law on a finite allowed set:

    >>> m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=[(10.0, 20.0)],
    ...                             lower=0.0, upper=100.0)
    >>> m.privacy_loss() <= 1.0
    True
    >>> y = m.sample([5.0, 25.0], rng=0)
    >>> bool(((y <= 10) | (y >= 20)).all())
    True
    >>> bool(((y * 2 ** -m.exact_plan.exponent) % 1 == 0).all())   # on the grid
    True
    """

    _init_args = ("epsilon", "sensitivity", "forbidden", "lower", "upper", "guarantee",
                  "scale_rule", "mode")
    _removed_attributes = {
        "sigma": ("ConstrainedLaplace.scale (or scale_at for the distance-dependent rule)",
                  "0.8.0"),
        "sigma_at": ("ConstrainedLaplace.scale_at", "0.8.0")}
    mode = "exact"
    exact_plan: "exact.ConstrainedPlan | None" = None

    def __init__(self, epsilon: float, *, sensitivity: float, forbidden: Any = (),
                 lower: float = -math.inf, upper: float = math.inf, guarantee: str = "dp",
                 scale_rule: str = "constant", mode: str | None = "exact") -> None:
        mode = exact.check_mode(mode)
        eps = positive_real(epsilon, "epsilon")
        dF = positive_real(sensitivity, "sensitivity")
        lo, hi = _bounds(lower, upper, line=True)
        if guarantee not in ("dp", "metric"):
            raise ValueError(f'`guarantee` must be "dp" or "metric"; got {guarantee!r}')
        if scale_rule not in ("constant", "distance_dependent"):
            raise ValueError(
                f'`scale_rule` must be "constant" or "distance_dependent"; got {scale_rule!r}')
        if mode == "exact" and scale_rule != "constant":
            raise ValueError(
                'scale_rule="distance_dependent" is not epsilon-DP and has no grid law; '
                "it is offered with mode='continuous' only (to reproduce the paper)")
        f = check_forbidden(forbidden, lo, hi)
        L = np.ascontiguousarray(np.concatenate([[lo], f[:, 1]]))
        R = np.ascontiguousarray(np.concatenate([f[:, 0], [hi]]))
        Lr = np.ascontiguousarray(-R[::-1])
        Rr = np.ascontiguousarray(-L[::-1])
        for a in (L, R, Lr, Rr):
            a.setflags(write=False)
        forb = tuple((float(a), float(b)) for a, b in f)
        if scale_rule == "distance_dependent":
            if len(forb) or math.isfinite(lo) == math.isfinite(hi):
                raise ValueError(
                    'scale_rule="distance_dependent" (Theorem 1) needs a single infinitely '
                    "spanning constraint: exactly one of `lower`/`upper` finite and no "
                    "`forbidden` intervals")
            delta = _delta_distance_dependent(eps)
            scale = float((dF / eps) * _dd_g(np.zeros(1))[0])   # sigma(0), the largest
            _check_continuous_scale(scale, lo, hi)
        else:
            scale = float(_calibrate.cl_scale(L, R, Lr, Rr, eps, dF, guarantee == "metric"))
            delta = 0.0
            if mode == "continuous":
                _check_continuous_scale(scale, lo, hi)
        plan: exact.ConstrainedPlan | None = None
        if mode == "exact":
            plan = exact.plan_constrained_laplace(eps, dF, lo, hi, forb, guarantee,
                                                  scale_hint=scale)
            scale = plan.scale
        self._set(epsilon=eps, sensitivity=dF, forbidden=forb, lower=lo, upper=hi,
                  guarantee=guarantee, scale_rule=scale_rule, scale=scale,
                  delta=delta, mode=mode, exact_plan=plan, _L=L, _R=R, _Lr=Lr, _Rr=Rr)

    # true values --------------------------------------------------------------------
    def _value(self, value: Any, on_outside: str = "clip") -> np.ndarray:
        check_on_outside(on_outside)
        v = self._true_values(value)
        check_finite(v, "value")
        outside = (v < self.lower) | (v > self.upper)
        # (messages name the index, never the value: it is data)
        if outside.any():
            if on_outside == "raise":
                side = "below `lower`" if bool(np.ravel(v < self.lower)[
                    int(np.argmax(np.ravel(outside)))]) else "above `upper`"
                raise ValueError(f"`value` must lie in [lower, upper] (on_outside='raise'); "
                                 f"got a value {side}{_at_index(outside)}")
            v = np.clip(v, self.lower, self.upper)
        for a, b in self.forbidden:
            inside = (v > a) & (v < b)
            if inside.any():
                raise ValueError(
                    f"`value`{_at_index(inside)} lies in the forbidden interval ({a!r}, {b!r}): "
                    "true values must lie in the allowed set. They are never projected onto "
                    "it: projection onto a set with gaps is not 1-Lipschitz and could void the "
                    "guarantee")
        return v

    def scale_at(self, value: Any):
        r"""Laplace scale :math:`\sigma(\ell)` used for true value ``value``: :attr:`scale`
        for the constant rule; for ``"distance_dependent"``
        :math:`(\Delta F/\epsilon)\,g(\epsilon\ell/\Delta F)`, :math:`\ell` the distance of
        ``value`` from the finite bound (Theorem 1 of [CSS22]_)."""
        v = self._value(value)
        if self.scale_rule == "constant":
            out = np.full(v.shape, self.scale)
        else:
            c = self.lower if math.isfinite(self.lower) else self.upper
            u = self.epsilon * np.abs(v - c) / self.sensitivity
            out = (self.sensitivity / self.epsilon) * _dd_g(u).reshape(v.shape)
        return float(out) if out.ndim == 0 else out

    def _sig(self, v: np.ndarray) -> np.ndarray:
        if self.scale_rule == "constant":
            return np.float64(self.scale)
        return np.asarray(self.scale_at(v), dtype=np.float64)

    # sampling ------------------------------------------------------------------------
    @columnar
    @sample_doc("Release ``value`` (scalar or array; one independent draw per element). "
                "Every output lies in the allowed set.",
                value="True values in the allowed set (see the class notes on clipping).")
    def sample(self, value: Any, size: Any = None, rng: RNGLike = None, on_outside: str = "clip",
               *, nulls: Nulls = "raise"):
        v = self._value(value, on_outside)
        gen = as_generator(rng)
        if self.exact_plan is not None:
            return self.exact_plan.sample(v, size, gen)
        s = self._sig(v)
        L, R = self._L, self._R

        def one(g, mu, sig):
            return _fill.cl_one(g, mu, sig, L, R)

        def fill(g, mu, sig, out):
            _fill.cl_fill(g, mu, sig, L, R, out)

        def rows(g, mu, sig, out):
            _fill.cl_fill_rows(g, mu, sig, L, R, out)

        return _dispatch.sample(one, fill, rows, [v, s], size, gen)

    # law hooks (the public methods are in LawMechanism) ---------------------------------
    _law_docs = {
        "pmf": "Probability that the grid law releases ``x`` for true value ``value`` (0 off "
               "the allowed grid points). Exact mode only.",
        "logpdf": "Log density of the output at ``x`` (``-inf`` outside the allowed set).",
        "pdf": "Density of the output at ``x`` (0 outside the allowed set).",
        "cdf": r"CDF of the output: :math:`\mathrm{mass}(A \cap (-\infty, x])/N(\mu)`.",
        "sf": r""":math:`P(Y > x) = \mathrm{mass}(A \cap (x, \infty))/N(\mu)`, computed from
the upper end (the CDF of the reflected mechanism), not as ``1 - cdf``.""",
        "logsf": r":math:`\log P(Y > x)` (from :meth:`sf`).",
        "logcdf": r""":math:`\log P(Y \le x)` (from :meth:`cdf`, which is computed from the
lower end).""",
        "isf": "Inverse survival function: the reflected mechanism's quantile, negated "
               "(accurate for tiny ``p``).",
        "mean": r":math:`E[Y]`, summing the closed-form exponential moments of the pieces.",
        "bias": r":math:`E[Y] - \mu` for the (clipped) true value.",
        "variance": "Variance of the released value (closed-form piece moments).",
    }
    _value_doc = " (in the allowed set; clipped into [lower, upper])"

    def _kernel(self, what: int, x: np.ndarray, v: np.ndarray, mirror: bool = False):
        """The compiled law (0 logpdf, 1 cdf, 2 ppf, 3 bias, 4 variance) of this mechanism
        or, ``mirror``, of its reflection through 0 (allowed set -A, value -mu, same scale):
        the reflection's CDF at -x is the survival function here, computed from the far end
        (no 1 - cdf)."""
        s = np.asarray(self._sig(v))
        L, R = (self._Lr, self._Rr) if mirror else (self._L, self._R)

        def kern(w, xx, mu, sig, out):
            _laws.cl_eval_rows(w, xx, mu, sig, L, R, out)

        if mirror:
            x, v = (x if what == 2 else -x), -v          # a probability is not reflected
        return _dispatch.evaluate(kern, what, x, [v, s])

    _logpdf = partialmethod(_kernel, 0)
    _ppf = partialmethod(_kernel, 2)

    def _cdf(self, x: np.ndarray, v: np.ndarray):
        """The compiled CDF, in [0, 1]: exactly 0 at and below ``lower`` and 1 at and
        above ``upper`` (the ratio of the compiled sums is off by some ulps there)."""
        c = np.clip(self._kernel(1, x, v), 0.0, 1.0)
        return np.where(x <= self.lower, 0.0, np.where(x >= self.upper, 1.0, c))

    def _sf(self, x: np.ndarray, v: np.ndarray):
        """The survival function from the upper end (:meth:`_kernel` mirrored), in
        [0, 1]: exactly 1 at and below ``lower`` and 0 at and above ``upper``."""
        s = np.clip(self._kernel(1, x, v, mirror=True), 0.0, 1.0)
        return np.where(x >= self.upper, 0.0, np.where(x <= self.lower, 1.0, s))

    def _isf(self, p: np.ndarray, v: np.ndarray):
        return -np.asarray(self._kernel(2, p, v, mirror=True))

    def _bias(self, x: None, v: np.ndarray):
        return self._kernel(3, np.zeros(()), v)

    def _variance(self, x: None, v: np.ndarray):
        return self._kernel(4, np.zeros(()), v)

    # privacy -------------------------------------------------------------------------
    def privacy_loss(self) -> float:
        r"""Certified upper bound on the worst-case privacy loss over neighbouring true
        values (:math:`|\mu - \mu'| \le \Delta F`, both in :math:`A`) and all outputs.

        For the constant scale the loss of a pair is
        :math:`|\mu-\mu'|/\sigma + \ln N(\mu') - \ln N(\mu)` (exact: the supremum over
        outputs is attained at :math:`y = \mu`). With :math:`G(x) = x/\sigma - \ln N(x)`,
        the worst pair maximises :math:`G(\mu) - G(\mu')`; :math:`G` is increasing, and
        convex on every span (:math:`N'' = (N - 1)/\sigma^2 < 0` there). Hence the maximum
        over the pair polygons is attained at a vertex, :math:`(m(e), e)` or
        :math:`(e, M(e))` for a span end :math:`e` (:math:`m`, :math:`M` the farthest allowed
        points within :math:`\Delta F`), or in the limit :math:`\Delta F/\sigma` of an
        unbounded end: on an edge :math:`\mu - \mu' = \Delta F` joining two spans, a local
        maximum has :math:`F'' = (1/N(\mu) - 1/N(\mu'))/\sigma^2 \le 0`, hence loss
        :math:`\le \Delta F/\sigma`, while the same two points in the other order have loss
        :math:`2\Delta F/\sigma - F \ge \Delta F/\sigma`. The maximum over these
        :math:`O(n)` candidates, in both directions, is the exact supremum; each candidate
        is evaluated from positive sums (no cancellation), and a rounding margin of a few
        hundred ulps (plus the rounding of :math:`|\mu|/\sigma`) is added, so the returned
        value bounds the exact loss from above. It is :math:`\le \epsilon` for both
        guarantees (``"metric"`` implies ``"dp"``).
        ``inf`` for the distance-dependent scale (its loss is unbounded in the tail).
        In exact mode, the exhaustively certified loss of the grid law
        (:class:`~bndp.mechanisms.exact.ConstrainedPlan`).
        """
        if self.exact_plan is not None:
            return self.exact_plan.certified_epsilon
        return self._continuous_loss(metric=False)

    def _continuous_loss(self, metric: bool) -> float:
        if self.scale_rule != "constant":
            return math.inf
        return _certify.cl_loss(self._L, self._R, self._Lr, self._Rr, self.scale,
                             self.sensitivity, metric)

    def metric_loss(self) -> float:
        r""":math:`\Delta F` times the Lipschitz constant of :math:`\ell(\mu,\mu')` in
        :math:`|\mu - \mu'|`: the smallest :math:`\epsilon'` such that the metric guarantee
        :math:`\ell(\mu,\mu') \le \epsilon'|\mu-\mu'|/\Delta F` holds (certified upper
        bound; at most ``epsilon`` when ``guarantee="metric"``). In exact mode the certified
        metric loss of the randomly rounded grid law for ``guarantee="metric"``, and ``inf``
        for ``"dp"`` (its rounding is deterministic: two true values on either side of a
        rounding boundary are arbitrarily close but released from different laws)."""
        if self.exact_plan is not None:
            return self.exact_plan.metric_epsilon
        return self._continuous_loss(metric=True)
