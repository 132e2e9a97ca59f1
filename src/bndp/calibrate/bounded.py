r"""Calibration of the bounded mechanisms: the bounded Laplace [HABM20]_, the bounded
Gaussian [CH24]_ and Liu's generalized Gaussian on a bounded domain [Liu19]_.

Every function validates its inputs, then calls a C loop in ``bndp._core`` that brackets the
root and returns the bracket end that *satisfies* the paper's inequality (never a midpoint
that may sit one rounding step on the unsafe side). Scalars take a fast path; arrays
broadcast. Import the functions from :mod:`bndp.calibrate`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core import calibrate as _calibrate
from .._validation import (
    as_float_array,
    box_widths,
    check_bounds,
    check_box,
    check_epsilon,
    check_epsilon_delta,
    check_positive,
    checked_arrays,
    scalar_or_none,
)

__all__ = [
    "bounded_laplace_scale",
    "bounded_laplace_epsilon",
    "bounded_laplace_delta_bound",
    "bounded_laplace_log_delta_c",
    "bounded_gaussian_sigma",
    "bounded_gaussian_log_delta_c",
    "generalized_gaussian_sigma",
]


# Bounded Laplace
# ---------------------------------------------------------------------------------------

#: Representable range of the calibrated scales: a scale (and the privacy budget it is
#: computed from) must stay a normal double with room for the calibration's relative
#: rounding bounds, and must not overflow.
_SCALE_MIN = 2.0 ** -1000      # about 9.3e-302
_SCALE_MAX = 2.0 ** 1020       # about 1.1e307
_B0_MAX = _SCALE_MAX / 2.0     # the largest b0 = sensitivity/L accepted (b* <= 2 b0)
_V0_MIN, _V0_MAX = 2.0 ** -1000, 2.0 ** 1000   # the bounded Gaussian's v0, in units of 2**j
_S1_MIN = 2.0 ** -500          # its sigma* in those units, at least


def _bl_check_range(eps: Any, delta: Any, dq: Any, lo: Any, hi: Any) -> None:
    r"""Refuse budgets whose scale is not representable (ValueError naming the arguments).

    With :math:`L = \epsilon - \ln(1-\delta)` and :math:`\Delta Q' = \min(\Delta Q, u - l)`,
    :math:`b^* \in [\Delta Q'/L, 2\Delta Q'/L]` (Theorem 4.4 of [HABM20]_); both :math:`L` and
    :math:`\Delta Q'/L` must lie in ``[_SCALE_MIN, _SCALE_MAX]``.
    """
    with np.errstate(all="ignore"):
        L = np.asarray(eps, dtype=np.float64) - np.log1p(-np.asarray(delta, dtype=np.float64))
        dqe = np.minimum(np.asarray(dq, dtype=np.float64),
                         np.asarray(hi, dtype=np.float64) - np.asarray(lo, dtype=np.float64))
        b0 = dqe / L
    bad_l = ~(L >= _SCALE_MIN)
    if bad_l.any():
        e = np.broadcast_to(np.asarray(eps, dtype=np.float64), bad_l.shape)
        raise ValueError(
            f"`epsilon` = {float(e[bad_l].flat[0])!r} is too small to calibrate: "
            f"epsilon - ln(1 - delta) must be at least {_SCALE_MIN!r} (2**-1000)")
    bad = ~((b0 >= _SCALE_MIN) & (b0 <= _SCALE_MAX / 2.0))
    if bad.any():
        i = np.argmax(bad.reshape(-1))
        e_i = float(np.broadcast_to(np.asarray(eps, dtype=np.float64), bad.shape).flat[i])
        s_i = float(np.broadcast_to(np.asarray(dq, dtype=np.float64), bad.shape).flat[i])
        raise ValueError(
            f"`epsilon` = {e_i!r} and `sensitivity` = {s_i!r} give a scale of about "
            f"{float(b0.reshape(-1)[i])!r} (sensitivity/(epsilon - ln(1 - delta))), outside "
            f"the representable range [{_SCALE_MIN!r}, {_SCALE_MAX / 2.0!r}]: rescale the "
            "data (sensitivity and bounds) or choose a less extreme epsilon")


def _bl_checked(b: float, eps: float, dq: float) -> float:
    if not (math.isfinite(b) and b > 0.0):      # never observed; refuse rather than release
        raise ValueError(f"`epsilon` = {eps!r} with `sensitivity` = {dq!r}: no scale could be "
                         "certified in floating point; choose a less extreme epsilon")
    return b


def bounded_laplace_scale(epsilon: Any, sensitivity: Any, lower: Any, upper: Any, *,
                          delta: Any = 0.0):
    r"""Optimal scale :math:`b^*` of the bounded Laplace mechanism [HABM20]_.

    The bounded Laplace mechanism releases :math:`W_q \sim \mathrm{Laplace}(q, b)`
    restricted to :math:`D = [l, u]` and renormalised. It is :math:`(\epsilon,\delta)`-DP
    whenever (Theorem 3.5)

    .. math:: b \ge \frac{\Delta Q}{\epsilon - \ln \Delta C(b) - \ln(1-\delta)},\qquad
              \Delta C(b) = \frac{C_{l+\Delta Q}(b)}{C_l(b)},\quad
              C_q(b) = 1 - \tfrac12\left(e^{-(q-l)/b} + e^{-(u-q)/b}\right).

    The right-hand side :math:`f(b)` is non-increasing (Lemma 4.3), so the admissible scales
    are exactly :math:`[b^*, \infty)` with :math:`b^* = f(b^*)` in
    :math:`[b_0, f(b_0)]`, :math:`b_0 = \Delta Q/(\epsilon - \ln(1-\delta))` (Theorem 4.4).
    For :math:`\delta = 0` the bound is tight: :math:`\Delta Q/b + \ln\Delta C(b)` is the
    exact worst-case privacy loss, so any :math:`b < b^*` violates :math:`\epsilon`-DP.

    Parameters
    ----------
    epsilon : float or array_like
        Must be finite and :math:`\ge 0`; 0 only together with :math:`\delta > 0`.
    sensitivity : float or array_like
        :math:`\Delta Q`, finite and > 0. A value above :math:`u - l` is replaced by
        :math:`u - l` (no query into :math:`[l, u]` can change by more).
    lower, upper : float or array_like
        The output domain, ``lower < upper``. One end may be infinite (a half-line such as
        counts :math:`[0, \infty)`; then :math:`b^* = \Delta Q/\ln((1+e^{L})/2)`).
    delta : float or array_like, default 0
        Must be in :math:`[0, 1)`. Keyword-only.

    Returns
    -------
    float or ndarray
        :math:`b^*`: a float when every argument is a scalar, otherwise an array of the
        broadcast shape.

    Raises
    ------
    ValueError
        Out-of-domain inputs; or a budget whose scale is not representable:
        :math:`L = \epsilon - \ln(1-\delta)` below :math:`2^{-1000}`, or
        :math:`\min(\Delta Q, u-l)/L` outside :math:`[2^{-1000}, 2^{1019}]` (the scale
        would underflow, overflow or lose the precision its certificate needs).

    Notes
    -----
    Departures from the paper (each provably on the safe side):

    * Algorithm 1 returns the last midpoint, which can violate (3.1) by one rounding step;
      bndp returns the end of the final bracket that satisfies (3.1) and re-checks it.
    * :math:`\ln\Delta C` is evaluated from the exact identity
      :math:`\Delta C - 1 = (1-e^{-\Delta Q/b})(1-e^{-(W-\Delta Q)/b})/(1-e^{-W/b})`
      with ``expm1``/``log1p``; the textbook form cancels for small :math:`\epsilon` and
      under-noises (12 % too little noise at :math:`\epsilon = 10^{-8}`).
    * Root finding uses Illinois steps with a bisection fallback instead of pure bisection
      (about 10 evaluations instead of ~55); the stopping rule (adjacent doubles) and the
      returned end are the same.

    Examples
    --------
    >>> round(bounded_laplace_scale(1.0, 1.0, 0.0, 10.0), 12)
    1.611560104418
    """
    args, scalar = _bl_validated(epsilon, sensitivity, lower, upper, delta)
    if scalar:
        b = _calibrate.bl_scale(*args)
        return b if 0.0 < b < math.inf else _bl_checked(b, args[0], args[2])
    eps, dl, dq, lo_a, hi_a = args
    arrs = np.broadcast_arrays(eps, dl, dq, lo_a, hi_a)
    shape = arrs[0].shape
    if shape == ():
        return _bl_checked(_calibrate.bl_scale(*(float(a) for a in arrs)), float(arrs[0]),
                           float(arrs[2]))
    out = np.empty(shape)
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrs]
    _calibrate.bl_scale_array(flat[0], flat[1], flat[2], flat[3], flat[4], out.reshape(-1))
    bad = ~(np.isfinite(out) & (out > 0))
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        _bl_checked(float(out.reshape(-1)[i]), float(flat[0][i]), float(flat[2][i]))
    return out


def _bl_validated(epsilon: Any, sensitivity: Any, lower: Any, upper: Any,
                  delta: Any) -> tuple[tuple, bool]:
    """The input checks of :func:`bounded_laplace_scale` (without its root find): ValueError
    for out-of-domain inputs and for budgets whose scale is not representable. Returns the
    validated ``(epsilon, delta, sensitivity, lower, upper)`` and True when they are plain
    floats (the scalar fast path), else arrays and False."""
    # Plain floats (the common call) are taken as they are and checked by comparisons (NaN
    # fails every one): this path runs before each scalar calibration and costs about as
    # much as the compiled root find itself.
    e = epsilon if type(epsilon) is float else scalar_or_none(epsilon)
    d = delta if type(delta) is float else scalar_or_none(delta)
    s = sensitivity if type(sensitivity) is float else scalar_or_none(sensitivity)
    lo = lower if type(lower) is float else scalar_or_none(lower)
    hi = upper if type(upper) is float else scalar_or_none(upper)
    if (e is not None and d is not None and s is not None and lo is not None and hi is not None
            and 0.0 <= e < math.inf and 0.0 <= d < 1.0 and (e > 0.0 or d > 0.0)
            and 0.0 < s < math.inf and lo < hi and (lo > -math.inf or hi < math.inf)):
        # lo < hi excludes lo = +inf and hi = -inf; the last test refuses (-inf, inf)
        L = e - math.log1p(-d) if d else e
        w = hi - lo
        b0 = (s if s <= w else w) / L if L > 0.0 else math.inf
        if not (L >= _SCALE_MIN and _SCALE_MIN <= b0 <= _B0_MAX):
            _bl_check_range(e, d, s, lo, hi)
        return (e, d, s, lo, hi), True
    eps = as_float_array(epsilon, "epsilon")
    dl = as_float_array(delta, "delta")
    dq = as_float_array(sensitivity, "sensitivity")
    lo_a = as_float_array(lower, "lower")
    hi_a = as_float_array(upper, "upper")
    check_epsilon_delta(eps, dl)
    check_positive(dq, "sensitivity")
    check_bounds(lo_a, hi_a, ends="half")
    _bl_check_range(eps, dl, dq, lo_a, hi_a)
    return (eps, dl, dq, lo_a, hi_a), False


def check_bounded_laplace(epsilon: Any, sensitivity: Any, lower: Any, upper: Any, *,
                          delta: Any = 0.0) -> None:
    """Refuse (ValueError) exactly the inputs :func:`bounded_laplace_scale` refuses before
    its root find: out-of-domain arguments, and budgets whose scale is not representable.
    For callers that need the validation but not :math:`b^*` (the default grid law of
    :class:`bndp.BoundedLaplace` calibrates its own scale)."""
    _bl_validated(epsilon, sensitivity, lower, upper, delta)


def bounded_laplace_log_delta_c(scale: Any, sensitivity: Any, lower: Any, upper: Any):
    r""":math:`\ln\Delta C(b)` of [HABM20]_ (Definition 3.4), free of cancellation.

    :math:`\Delta C(b) = \max_q C_{q+\Delta Q}(b)/C_q(b)` is the worst-case ratio of the
    normalisers of the bounded Laplace densities of two neighbouring true values.

    Parameters
    ----------
    scale : float or array_like
        Laplace scale :math:`b`, > 0.
    sensitivity : float or array_like
        :math:`\Delta Q`, > 0 (values above ``upper - lower`` act as ``upper - lower``).
    lower, upper : float or array_like
        Output domain, ``lower < upper`` (one of them may be infinite).

    Returns
    -------
    float or ndarray
        :math:`\ln\Delta C(b) \ge 0`; a float for scalar input.

    Examples
    --------
    >>> from bndp.calibrate import bounded_laplace_log_delta_c
    >>> round(bounded_laplace_log_delta_c(1.0, 1.0, 0.0, 10.0), 6)
    0.48985
    """
    b, dq, lo, hi = checked_arrays((scale, "scale", check_positive),
                                   (sensitivity, "sensitivity", check_positive),
                                   (lower, "lower", None), (upper, "upper", None))
    check_bounds(lo, hi, ends="half")
    w = hi - lo
    dqe = np.minimum(dq, w)
    out = np.vectorize(_calibrate.bl_log_dc, otypes=[float])(b, dqe, w)
    return float(out) if np.ndim(out) == 0 else out


def bounded_laplace_epsilon(scale: Any, sensitivity: Any, lower: Any, upper: Any,
                            delta: Any = 0.0):
    r"""Smallest :math:`\epsilon` that (3.1) of [HABM20]_ certifies for a given scale:
    :math:`\max(0, \Delta Q/b + \ln\Delta C(b) + \ln(1-\delta))`. For :math:`\delta = 0` this
    is the exact worst-case privacy loss of the bounded Laplace mechanism.

    Parameters
    ----------
    scale : float or array_like
        Laplace scale :math:`b`, > 0.
    sensitivity : float or array_like
        :math:`\Delta Q`, > 0.
    lower, upper : float or array_like
        Output domain, ``lower < upper``.
    delta : float or array_like, default 0
        In :math:`[0, 1)`.

    Returns
    -------
    float or ndarray
        The certified :math:`\epsilon \ge 0`; a float for scalar input.

    Examples
    --------
    The inverse of :func:`bounded_laplace_scale`:

    >>> from bndp.calibrate import bounded_laplace_epsilon, bounded_laplace_scale
    >>> b = bounded_laplace_scale(1.0, 1.0, 0.0, 10.0)
    >>> round(bounded_laplace_epsilon(b, 1.0, 0.0, 10.0), 6)
    1.0
    >>> round(bounded_laplace_epsilon(1.0, 1.0, 0.0, 10.0), 6)
    1.48985
    """
    ldc = bounded_laplace_log_delta_c(scale, sensitivity, lower, upper)
    b = as_float_array(scale, "scale")
    dq = np.minimum(as_float_array(sensitivity, "sensitivity"),
                    as_float_array(upper, "upper") - as_float_array(lower, "lower"))
    dl = as_float_array(delta, "delta")
    bad = ~((dl >= 0) & (dl < 1))
    if bad.any():
        raise ValueError(f"`delta` must be in [0, 1); got {dl!r}")
    out = np.maximum(0.0, dq / b + ldc + np.log1p(-dl))
    return float(out) if np.ndim(out) == 0 else out


def bounded_laplace_delta_bound(scale: Any, epsilon: Any, sensitivity: Any, lower: Any,
                                upper: Any):
    r"""Theorem 3.5's sufficient :math:`\delta` of the bounded Laplace mechanism [HABM20]_
    at a given scale and :math:`\epsilon`: the smallest :math:`\delta` that condition (A.4)
    of its proof certifies,

    .. math:: \delta_{3.5}(\epsilon) = \max\bigl(0,\ 1 - e^{\epsilon - \Delta Q/b}/\Delta C(b)
              \bigr).

    An upper bound on the mechanism's exact privacy profile :math:`\delta(\epsilon)`
    (:func:`bndp.verify.bounded_laplace_profile`, the hockey-stick divergence maximised over
    neighbouring true values), usually a loose one: it bounds the density ratio by its worst
    case over all outputs and pairs at once. Use it to reproduce the paper's calibration
    (:func:`bounded_laplace_scale` inverts it); use the profile for the guarantee a scale
    actually gives.

    Parameters
    ----------
    scale : float or array_like
        Laplace scale :math:`b`, > 0.
    epsilon : float or array_like
        Finite, :math:`\ge 0`.
    sensitivity : float or array_like
        :math:`\Delta Q`, > 0.
    lower, upper : float or array_like
        Output domain, ``lower < upper``.

    Returns
    -------
    float or ndarray
        The certified :math:`\delta \in [0, 1)`; a float for scalar input.

    Examples
    --------
    >>> from bndp.calibrate import bounded_laplace_delta_bound
    >>> round(bounded_laplace_delta_bound(1.0, 1.0, 1.0, 0.0, 10.0), 6)
    0.387282
    >>> bounded_laplace_delta_bound(2.0, 1.0, 1.0, 0.0, 10.0)  # b large enough: pure 1-DP
    0.0
    """
    ldc = bounded_laplace_log_delta_c(scale, sensitivity, lower, upper)
    b = as_float_array(scale, "scale")
    eps = as_float_array(epsilon, "epsilon")
    bad = ~(np.isfinite(eps) & (eps >= 0))
    if bad.any():
        raise ValueError(f"`epsilon` must be finite and >= 0; got {eps!r}")
    dq = np.minimum(as_float_array(sensitivity, "sensitivity"),
                    as_float_array(upper, "upper") - as_float_array(lower, "lower"))
    out = np.maximum(0.0, -np.expm1(eps - dq / b - ldc))
    return float(out) if np.ndim(out) == 0 else out


# ---------------------------------------------------------------------------------------
# Bounded Gaussian
# ---------------------------------------------------------------------------------------

def _pow2_unit(w: np.ndarray, dq: float) -> int:
    """Exponent j with max(max(w), dq) in [2**(j-1), 2**j): scaling the bounded Gaussian
    problem by 2**-j is exact in binary floating point and leaves its privacy loss unchanged
    (the condition is homogeneous in (sigma, dq, w))."""
    return math.frexp(max(float(np.max(w)), dq))[1]


def _bg_units(eps: float, dq: float, w: np.ndarray) -> tuple[int, np.ndarray, float, float]:
    """``(j, w 2**-j, dq 2**-j, v0)`` with ``v0 = (W + dq/2) dq / eps`` in those units (a
    lower bound on sigma*^2); refuses (ValueError) a width/sensitivity ratio beyond 2**1000."""
    j = _pow2_unit(w, dq)
    ws = np.ascontiguousarray(np.ldexp(w, -j))
    ds = math.ldexp(dq, -j)
    if not (ds >= _SCALE_MIN and float(np.min(ws)) >= _SCALE_MIN):
        raise ValueError(
            f"`sensitivity` = {dq!r} and the widths upper - lower (from {float(np.min(w))!r} to "
            f"{float(np.max(w))!r}) differ by a factor above 2**1000: their ratio is outside "
            "the representable range of the calibration")
    # sigma*^2 >= v0 = (W + dq/2) dq / eps (in these units); v0 must be a normal double
    v0 = (float(np.sqrt(np.sum(ws * ws))) + 0.5 * ds) * ds / eps
    return j, ws, ds, v0


def _bg_range_error(eps: float, dq: float, v0: float, j: int) -> ValueError:
    try:
        approx = math.ldexp(math.sqrt(v0), j) if math.isfinite(v0) else math.inf
    except OverflowError:
        approx = math.inf
    return ValueError(
        f"`epsilon` = {eps!r} with `sensitivity` = {dq!r} gives a scale sigma of about "
        f"{approx!r} or more, outside the representable range [{_SCALE_MIN!r}, "
        f"{_SCALE_MAX!r}] (sigma must also be at least 2**-500 * max(upper - lower, "
        "sensitivity)): choose a less extreme epsilon")


def _bg_sigma_width(eps: float, dq: float, w0: float) -> float | None:
    """Univariate sigma* for validated floats (width ``w0`` finite and > 0), computed in
    units of 2**j ~ max(w0, dq); None where the inputs or sigma* leave the range this plain
    float path certifies (:func:`_bg_sigma_one` then refuses with the reason)."""
    j = math.frexp(dq if dq > w0 else w0)[1]
    ws0, ds = math.ldexp(w0, -j), math.ldexp(dq, -j)
    v0 = (ws0 + 0.5 * ds) * ds / eps
    if ds >= _SCALE_MIN and ws0 >= _SCALE_MIN and _V0_MIN <= v0 <= _V0_MAX:
        s1 = _calibrate.bg_sigma_scalar(eps, ds, ws0)
        s = math.ldexp(s1, j)
        # s1 < inf and s1 >= 2**-500: finite, and NaN fails
        if _S1_MIN <= s1 < math.inf and _SCALE_MIN <= s <= _SCALE_MAX:
            return s
    return None


def _bg_sigma_one(eps: float, dq: float, w: np.ndarray) -> float:
    """sigma* for validated scalars and widths ``w`` (1-D float64), computed in units of
    2**j ~ max(w, dq) so that no square overflows or underflows; refuses (ValueError) what
    cannot be represented."""
    if w.shape[0] == 1:     # the univariate case in plain floats (a few microseconds)
        s = _bg_sigma_width(eps, dq, float(w[0]))
        if s is not None:
            return s
        # otherwise the general path below refuses with the reason
    j, ws, ds, v0 = _bg_units(eps, dq, w)
    s1 = math.nan
    if 2.0 ** -1000 <= v0 <= 2.0 ** 1000:
        s1 = _calibrate.bg_sigma_scalar(eps, ds, float(ws[0])) if ws.shape[0] == 1 else \
            _calibrate.bg_sigma(eps, ds, ws)
    s = math.ldexp(s1, j)
    if not (math.isfinite(s1) and s1 >= 2.0 ** -500 and _SCALE_MIN <= s <= _SCALE_MAX):
        raise _bg_range_error(eps, dq, v0, j)
    return s


def check_bounded_gaussian(epsilon: float, sensitivity: float, lower: Any, upper: Any) -> None:
    r"""The checks of :func:`bounded_gaussian_sigma` that need no root find, for validated
    ``epsilon`` and ``sensitivity`` (finite, > 0) and a box ``lower < upper``: the widths
    must not overflow, their ratio to the sensitivity must stay within 2**1000, and the
    lower bound :math:`(W + \Delta Q/2)\Delta Q/\epsilon` on :math:`\sigma^{*2}` must be
    representable (ValueError otherwise, with the messages of
    :func:`bounded_gaussian_sigma`), and so must the lower bound
    :math:`\sqrt{v_0}` on :math:`\sigma^*`. :math:`\sigma^*` itself can still fall
    outside the representable range near its ends; only :func:`bounded_gaussian_sigma`
    tells."""
    if np.ndim(lower) == 0 and np.ndim(upper) == 0:      # univariate, in plain floats
        w0 = float(upper) - float(lower)
        if math.isfinite(w0):
            eps, dq = float(epsilon), float(sensitivity)
            j = math.frexp(max(w0, dq))[1]
            ws0, ds = math.ldexp(w0, -j), math.ldexp(dq, -j)
            if (ds >= _SCALE_MIN and ws0 >= _SCALE_MIN and j <= 1000
                    and 2.0 ** -1000 <= (ws0 + 0.5 * ds) * ds / eps <= 2.0 ** 1000):
                return
        # otherwise the general path below refuses with the reason
    w = np.ascontiguousarray(np.atleast_1d(np.asarray(upper, dtype=np.float64)
                                           - np.asarray(lower, dtype=np.float64)),
                             dtype=np.float64)
    check_positive(w, "upper - lower")   # finite bounds can still overflow their difference
    j, _, _, v0 = _bg_units(float(epsilon), float(sensitivity), w)
    # sigma* >= sqrt(v0) 2**j: beyond _SCALE_MAX the calibration refuses whatever its root
    if not 2.0 ** -1000 <= v0 <= 2.0 ** 1000 or 0.5 * math.log2(v0) + j > math.log2(_SCALE_MAX):
        raise _bg_range_error(float(epsilon), float(sensitivity), v0, j)


def bounded_gaussian_sigma(epsilon: Any, sensitivity: Any, lower: Any, upper: Any):
    r"""Scale :math:`\sigma^*` of the bounded (truncated) Gaussian mechanism [CH24]_.

    The mechanism releases :math:`N(q, \sigma^2)` truncated to :math:`[l, u]` (or to the
    box :math:`\prod_i [l_i, u_i]` with one common :math:`\sigma`), and is
    :math:`\epsilon`-DP whenever (Theorem 2.4; Theorem 3.4 with
    :math:`W = \lVert u - l\rVert_2` and the :math:`\ell_2` sensitivity)

    .. math:: \sigma^2 \ge \frac{(W + \Delta Q/2)\,\Delta Q}{\epsilon - \ln\Delta C(\sigma)},

    where :math:`\ln\Delta C(\sigma) = \max_c \sum_i \rho_i(c_i)` over :math:`0 \le c_i \le
    u_i - l_i`, :math:`\lVert c\rVert_2 \le \Delta Q`, and
    :math:`\rho_i(c) = \ln\frac{\Phi((w_i-c)/\sigma) - \Phi(-c/\sigma)}{\Phi(w_i/\sigma) -
    1/2}` (Lemmas 2.3 and 3.2, problem (3.2)). In one dimension :math:`c^* =
    \min(\Delta Q, w/2)`. The right-hand side decreases in :math:`\sigma` (App. F), so the
    admissible set is :math:`[\sigma^*, \infty)`; :math:`\sigma^{*2}` is found in
    :math:`[A/\epsilon, T(A/\epsilon)]` (Algorithms 1 and 2, in variance units).

    ``sigma`` is the scale of the parent (untruncated) Gaussian, not the standard deviation
    of the released value (see :meth:`bndp.BoundedGaussian.variance`).

    Parameters
    ----------
    epsilon : float or array_like
        Finite and > 0. May be an array (one :math:`\sigma^*` per entry).
    sensitivity : float or array_like
        :math:`\ell_2` sensitivity :math:`\Delta Q` of the whole query, finite and > 0. May be
        an array broadcasting with ``epsilon``. The paper's value is kept even when it
        exceeds the width (the condition is then conservative).
    lower, upper : float or 1-D array_like
        Scalars: the univariate mechanism. 1-D arrays of length m (or one scalar and one
        length-m array): one m-dimensional box.

    Returns
    -------
    float or ndarray
        A float when ``epsilon`` and ``sensitivity`` are scalars, else an array of their
        broadcast shape.

    Notes
    -----
    Departures from the paper (each on the safe side, none changes Table 1):

    * The printed loop start ``intervalSize = (left+right)/2`` never enters the loop when
      ``right >= 3 left``; the bracket is shrunk until its ends are adjacent doubles.
    * The returned value is the end of the final bracket that satisfies (2.2)/(3.3), then
      :math:`\sigma = \sqrt{v}` is rounded up until :math:`\sigma^2` itself satisfies it;
      Algorithms 1/2 return the last midpoint, which can violate the condition by one ulp.
    * :math:`\rho` is computed without cancellation (a Gauss-Legendre integral of a positive
      integrand when :math:`c < \sigma`): the textbook difference of :math:`\Phi` values is
      wrong in the third digit at :math:`\sigma/w = 10^4` and returns 0 beyond.
    * Problem (3.2), which the paper calls concave (the objective is log-concave), is solved
      from its KKT conditions; the value used is the Lagrangian dual bound, an upper bound on
      the maximum, so solver round-off can only add noise.
    * Table 1 prints 84.3 at :math:`\epsilon = 1`; the condition gives 84.3844 (the other six
      rows agree to the printed digits).

    Examples
    --------
    >>> import numpy as np
    >>> s = bounded_gaussian_sigma(1.0, 2 * np.sqrt(5), [0, 1], [10, 9])
    >>> round(s * s, 4)
    84.3844
    """
    # plain floats (the common call) taken as they are, checked by comparisons (NaN fails
    # every one), and calibrated without an array
    e = epsilon if type(epsilon) is float else scalar_or_none(epsilon)
    s = sensitivity if type(sensitivity) is float else scalar_or_none(sensitivity)
    lo_s = lower if type(lower) is float else scalar_or_none(lower)
    hi_s = upper if type(upper) is float else scalar_or_none(upper)
    if (e is not None and s is not None and lo_s is not None and hi_s is not None
            and 0.0 < e < math.inf and 0.0 < s < math.inf
            and -math.inf < lo_s < hi_s < math.inf and hi_s - lo_s < math.inf):
        sigma = _bg_sigma_width(e, s, hi_s - lo_s)
        return sigma if sigma is not None else _bg_sigma_one(e, s, np.array([hi_s - lo_s]))
    w = box_widths(*check_box(lower, upper))
    if e is not None and s is not None:
        if not (math.isfinite(e) and e > 0):
            raise ValueError(f"`epsilon` must be finite and > 0; got {e!r}")
        if not (math.isfinite(s) and s > 0):
            raise ValueError(f"`sensitivity` must be finite and > 0; got {s!r}")
        return _bg_sigma_one(e, s, w)
    eps = as_float_array(epsilon, "epsilon")
    dq = as_float_array(sensitivity, "sensitivity")
    check_epsilon(eps)
    check_positive(dq, "sensitivity")
    eps_b, dq_b = np.broadcast_arrays(eps, dq)
    out = np.empty(eps_b.shape)
    fo = out.reshape(-1)
    for i, (ei, si) in enumerate(zip(eps_b.reshape(-1).tolist(), dq_b.reshape(-1).tolist())):
        fo[i] = _bg_sigma_one(ei, si, w)
    return float(out) if out.ndim == 0 else out


def bounded_gaussian_log_delta_c(sigma: float, sensitivity: float, lower: Any, upper: Any):
    r""":math:`(\ln\Delta C(\sigma), c^*)` of [CH24]_: the worst-case log ratio of the
    truncation normalisers and the shift that attains it (Lemma 2.3 / problem (3.2)).

    Parameters
    ----------
    sigma : float
        Gaussian scale :math:`\sigma`, > 0.
    sensitivity : float
        :math:`\Delta Q` (Euclidean for the multivariate mechanism), > 0.
    lower, upper : float or array_like
        Finite bounds of the box, one per coordinate.

    Returns
    -------
    log_delta_c : float
        :math:`\ln\Delta C(\sigma) \ge 0`.
    shift : ndarray
        The worst shift :math:`c^*` (one entry per coordinate).

    Examples
    --------
    >>> from bndp.calibrate import bounded_gaussian_log_delta_c
    >>> ldc, shift = bounded_gaussian_log_delta_c(3.0, 1.0, 0.0, 10.0)
    >>> bool(ldc >= 0), shift.shape
    (True, (1,))
    """
    lo = np.atleast_1d(as_float_array(lower, "lower"))
    hi = np.atleast_1d(as_float_array(upper, "upper"))
    check_bounds(lo, hi)
    sg, dq = checked_arrays((sigma, "sigma", check_positive),
                            (sensitivity, "sensitivity", check_positive))
    w = np.ascontiguousarray(np.broadcast_to(hi - lo, np.broadcast_shapes(lo.shape, hi.shape)),
                             dtype=np.float64)
    return _calibrate.bg_log_dc(float(sg), float(dq), w)


# ---------------------------------------------------------------------------------------
# The baseline [CH24]_ compares against: Liu's generalized Gaussian
# ---------------------------------------------------------------------------------------

def generalized_gaussian_sigma(epsilon: Any, sensitivity: Any, lower: Any, upper: Any) -> float:
    r"""Scale :math:`\sigma_{GG}` of Liu's generalized Gaussian mechanism with :math:`p = 2`
    on a bounded domain [Liu19]_, the baseline of Table 1 and Figure 1 of [CH24]_.

    .. math:: \sigma_{GG}^2 = \frac{1}{\epsilon}\sum_i \big(2\,(u_i - l_i)\,\Delta_i
              + \Delta_i^2\big)

    with **per-coordinate** sensitivities :math:`\Delta_i` and widths :math:`u_i - l_i`.
    With :math:`\sigma = \sigma_{GG}` the Gaussian kernel truncated to the box
    (:class:`bndp.GeneralizedGaussian`) is :math:`\epsilon`-DP: the log ratio of the kernels
    is at most :math:`\sum_i (2 w_i \Delta_i + \Delta_i^2)/(2\sigma^2) = \epsilon/2`, and so
    is the log ratio of their normalisers (an integral of the same pointwise ratio), which
    is Liu's "doubling" :math:`\epsilon = 2\epsilon'` that Holohan et al. [HABM20]_ (§5)
    call excessive.

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    sensitivity : float or 1-D array_like
        Per-coordinate sensitivities :math:`\Delta_i` (finite, > 0): a scalar (the same for
        every coordinate) or one per coordinate of the box. Not the :math:`\ell_2`
        sensitivity of :func:`bounded_gaussian_sigma`.
    lower, upper : float or 1-D array_like
        Finite bounds of the interval or box.

    Returns
    -------
    float
        :math:`\sigma_{GG}`, the scale of the parent Gaussian (its square is the "variance"
        column of [CH24]_ Table 1).

    Notes
    -----
    Chen and Hale do not print the formula; this is the only natural reading that gives
    their column exactly (:math:`132/\epsilon` for the box :math:`[0,10]\times[1,9]`, per
    coordinate sensitivities (4, 2)); the :math:`\ell_2` analogue gives :math:`134.5/\epsilon`.
    Liu's paper was not available to check which parameterisation of the density his
    Definition 5 uses: bndp reads :math:`\sigma_{GG}` as the standard deviation of the parent
    Gaussian :math:`\propto e^{-(x-\mu)^2/(2\sigma^2)}`, under which the mechanism above is
    :math:`\epsilon`-DP (proved in the paragraph above) and Table 1 compares like with like.

    Examples
    --------
    >>> s = generalized_gaussian_sigma(1.0, [4.0, 2.0], [0.0, 1.0], [10.0, 9.0])
    >>> round(s * s, 10)
    132.0
    """
    return _generalized_gaussian(epsilon, sensitivity, lower, upper)[0]


def _generalized_gaussian(epsilon: Any, sensitivity: Any, lower: Any, upper: Any
                          ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`generalized_gaussian_sigma` and the checked arguments it was computed from:
    ``(sigma, lower, upper, sensitivity)`` as float64 arrays (as :func:`check_box` and
    :func:`as_float_array` return them)."""
    e = as_float_array(epsilon, "epsilon")
    if e.ndim:
        raise ValueError("`epsilon` must be a scalar")
    check_epsilon(e)
    lo, hi = check_box(lower, upper)
    w = box_widths(lo, hi)
    d = as_float_array(sensitivity, "sensitivity")
    if d.ndim > 1 or (d.ndim == 1 and d.shape[0] != w.shape[0] and w.shape[0] != 1):
        raise ValueError("`sensitivity` must be a scalar or one value per coordinate; got "
                         f"shape {d.shape} for {w.shape[0]} coordinate(s)")
    check_positive(d, "sensitivity")
    wb, db = np.broadcast_arrays(w, np.atleast_1d(d))
    total = float(np.sum(2.0 * wb * db + db * db))
    return math.sqrt(total / float(e)), lo, hi, d
