r"""Noise calibration: the smallest scale that satisfies each paper's privacy condition.

Every function validates its inputs, then calls a C loop in ``bndp._core`` that brackets the
root and returns the bracket end that *satisfies* the paper's inequality (never a midpoint
that may sit one rounding step on the unsafe side). Scalars take a fast path; arrays
broadcast.

References
----------
.. [HABM20] N. Holohan, S. Antonatos, S. Braghin, P. Mac Aonghusa. "The Bounded Laplace
   Mechanism in Differential Privacy". Journal of Privacy and Confidentiality 10(1), 2020.
.. [CH24] B. Chen, M. Hale. "The Bounded Gaussian Mechanism for Differential Privacy".
   Journal of Privacy and Confidentiality, 2024.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _core
from ._validation import (
    as_float_array,
    check_bounds,
    check_epsilon,
    check_epsilon_delta,
    check_positive,
    scalar_or_none,
)

__all__ = [
    "bounded_laplace_scale",
    "bounded_laplace_epsilon",
    "bounded_laplace_delta",
    "bounded_laplace_log_delta_c",
    "bounded_gaussian_sigma",
    "bounded_gaussian_log_delta_c",
]


# ---------------------------------------------------------------------------------------
# Bounded Laplace
# ---------------------------------------------------------------------------------------

def _bl_scalar_ok(eps: float, delta: float, dq: float, lo: float, hi: float) -> bool:
    """Pure-float validation for the fast path; False means 'use the array checks'
    (which raise the precise message)."""
    return (
        math.isfinite(eps) and eps >= 0.0 and 0.0 <= delta < 1.0 and (eps > 0.0 or delta > 0.0)
        and math.isfinite(dq) and dq > 0.0
        and not math.isnan(lo) and not math.isnan(hi) and lo < hi
        and lo != math.inf and hi != -math.inf and not (math.isinf(lo) and math.isinf(hi))
    )


def bounded_laplace_scale(epsilon: Any, sensitivity: Any, lower: Any, upper: Any,
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
        Must be in :math:`[0, 1)`.

    Returns
    -------
    float or ndarray
        :math:`b^*`: a float when every argument is a scalar, otherwise an array of the
        broadcast shape.

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
    e, d, s, lo, hi = (scalar_or_none(v) for v in (epsilon, delta, sensitivity, lower, upper))
    if (e is not None and d is not None and s is not None and lo is not None and hi is not None
            and _bl_scalar_ok(e, d, s, lo, hi)):
        return _core.bl_scale(e, d, s, lo, hi)
    eps = as_float_array(epsilon, "epsilon")
    dl = as_float_array(delta, "delta")
    dq = as_float_array(sensitivity, "sensitivity")
    lo_a = as_float_array(lower, "lower")
    hi_a = as_float_array(upper, "upper")
    check_epsilon_delta(eps, dl)
    check_positive(dq, "sensitivity")
    check_bounds(lo_a, hi_a, allow_half_infinite=True)
    arrs = np.broadcast_arrays(eps, dl, dq, lo_a, hi_a)
    shape = arrs[0].shape
    if shape == ():
        return _core.bl_scale(*(float(a) for a in arrs))
    out = np.empty(shape)
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrs]
    _core.bl_scale_array(flat[0], flat[1], flat[2], flat[3], flat[4], out.reshape(-1))
    return out


def bounded_laplace_log_delta_c(scale: Any, sensitivity: Any, lower: Any, upper: Any):
    r""":math:`\ln\Delta C(b)` of [HABM20]_ (Definition 3.4), free of cancellation."""
    b = as_float_array(scale, "scale")
    dq = as_float_array(sensitivity, "sensitivity")
    lo = as_float_array(lower, "lower")
    hi = as_float_array(upper, "upper")
    check_positive(b, "scale")
    check_positive(dq, "sensitivity")
    check_bounds(lo, hi, allow_half_infinite=True)
    w = hi - lo
    dqe = np.minimum(dq, w)
    out = np.vectorize(_core.bl_log_dc, otypes=[float])(b, dqe, w)
    return float(out) if np.ndim(out) == 0 else out


def bounded_laplace_epsilon(scale: Any, sensitivity: Any, lower: Any, upper: Any,
                            delta: Any = 0.0):
    r"""Smallest :math:`\epsilon` that (3.1) of [HABM20]_ certifies for a given scale:
    :math:`\max(0, \Delta Q/b + \ln\Delta C(b) + \ln(1-\delta))`. For :math:`\delta = 0` this
    is the exact worst-case privacy loss of the bounded Laplace mechanism."""
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


def bounded_laplace_delta(scale: Any, epsilon: Any, sensitivity: Any, lower: Any, upper: Any):
    r"""Smallest :math:`\delta` that (A.4) of [HABM20]_ certifies at a given scale and
    :math:`\epsilon`: :math:`\max(0, -\mathrm{expm1}(\epsilon - \Delta Q/b - \ln\Delta C(b)))`."""
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
    e = scalar_or_none(epsilon)
    s = scalar_or_none(sensitivity)
    lo_s = scalar_or_none(lower)
    hi_s = scalar_or_none(upper)
    if (e is not None and s is not None and lo_s is not None and hi_s is not None
            and math.isfinite(e) and e > 0
            and math.isfinite(s) and s > 0 and math.isfinite(lo_s) and math.isfinite(hi_s)
            and lo_s < hi_s):
        return _core.bg_sigma_scalar(e, s, hi_s - lo_s)
    lo = as_float_array(lower, "lower")
    hi = as_float_array(upper, "upper")
    check_bounds(lo, hi)
    if lo.ndim > 1 or hi.ndim > 1:
        raise ValueError(
            f"`lower` and `upper` must be scalars or 1-D arrays; got shapes {lo.shape} and {hi.shape}"
        )
    if lo.ndim == 1 and hi.ndim == 1 and lo.shape != hi.shape:
        raise ValueError(
            f"`lower` and `upper` must have the same length; got {lo.shape[0]} and {hi.shape[0]}"
        )
    w = np.ascontiguousarray(np.atleast_1d(hi - lo), dtype=np.float64)
    if w.size == 0:
        raise ValueError("`lower` and `upper` must not be empty")
    if e is not None and s is not None:
        if not (math.isfinite(e) and e > 0):
            raise ValueError(f"`epsilon` must be finite and > 0; got {e!r}")
        if not (math.isfinite(s) and s > 0):
            raise ValueError(f"`sensitivity` must be finite and > 0; got {s!r}")
        return _core.bg_sigma(e, s, w)
    eps = as_float_array(epsilon, "epsilon")
    dq = as_float_array(sensitivity, "sensitivity")
    check_epsilon(eps)
    check_positive(dq, "sensitivity")
    eps_b, dq_b = np.broadcast_arrays(eps, dq)
    out = np.empty(eps_b.shape)
    _core.bg_sigma_array(np.ascontiguousarray(eps_b).reshape(-1),
                         np.ascontiguousarray(dq_b).reshape(-1), w, out.reshape(-1))
    return float(out) if out.ndim == 0 else out


def bounded_gaussian_log_delta_c(sigma: float, sensitivity: float, lower: Any, upper: Any):
    r""":math:`(\ln\Delta C(\sigma), c^*)` of [CH24]_: the worst-case log ratio of the
    truncation normalisers and the shift that attains it (Lemma 2.3 / problem (3.2))."""
    lo = np.atleast_1d(as_float_array(lower, "lower"))
    hi = np.atleast_1d(as_float_array(upper, "upper"))
    check_bounds(lo, hi)
    sg = as_float_array(sigma, "sigma")
    dq = as_float_array(sensitivity, "sensitivity")
    check_positive(sg, "sigma")
    check_positive(dq, "sensitivity")
    w = np.ascontiguousarray(np.broadcast_to(hi - lo, np.broadcast_shapes(lo.shape, hi.shape)),
                             dtype=np.float64)
    return _core.bg_log_dc(float(sg), float(dq), w)
