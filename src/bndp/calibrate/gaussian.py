r"""The unbounded Gaussian mechanism family reviewed in [ZWB19]_: the classical
calibrations, the optimal one [BW18]_, the closed forms and the probabilistic-DP (pDP)
ones, with the achieved delta and epsilon of a given sigma. Import the functions from
:mod:`bndp.calibrate`.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from .._core import gaussian as _gaussian
from .._validation import (
    as_float_array,
    check_open_unit,
    check_positive,
    checked_arrays,
    scalar_or_none,
)

__all__ = [
    "GAUSSIAN_METHODS",
    "gaussian_sigma",
    "gaussian_delta",
    "gaussian_epsilon",
    "classical_failure_threshold",
]


# ---------------------------------------------------------------------------------------
# The (unbounded) Gaussian mechanism family [ZWB19]
# ---------------------------------------------------------------------------------------

#: Calibration methods of :func:`gaussian_sigma` and the notion each one targets.
GAUSSIAN_METHODS = {
    "dwork2006": "DP",
    "dwork2014": "DP",
    "optimal": "DP",
    "zhao1": "DP",
    "zhao2": "DP",
    "pdp_optimal": "pDP",
    "zhao3": "pDP",
    "zhao4": "pDP",
}
_GF_CODE = {name: i for i, name in enumerate(GAUSSIAN_METHODS)}
_GF_CLASSICAL = ("dwork2006", "dwork2014")
_NOTIONS = {"dp": 0, "pdp": 1}


def _gf_method(method: Any) -> int:
    if not isinstance(method, str):
        raise TypeError(
            f"`calibration` must be a string; got {type(method).__name__} {method!r}")
    code = _GF_CODE.get(method)
    if code is None:
        raise ValueError(f"`calibration` must be one of "
                         f"{', '.join(repr(m) for m in GAUSSIAN_METHODS)}; got {method!r}")
    return code


def _notion(notion: Any) -> int:
    if not isinstance(notion, str):
        raise TypeError(f"`notion` must be 'dp' or 'pdp'; got {type(notion).__name__} {notion!r}")
    code = _NOTIONS.get(notion.lower())
    if code is None:
        raise ValueError(f"`notion` must be 'dp' or 'pdp'; got {notion!r}")
    return code


def _unproven_error(method: str, eps: float) -> ValueError:
    ref = "Dwork et al. 2006, p. 6" if method == "dwork2006" else "Dwork & Roth 2014, Thm A.1"
    return ValueError(
        f"calibration={method!r} is proved only for 0 < epsilon <= 1 ({ref}); got epsilon = "
        f"{eps!r}. "
        "Use calibration='optimal' (the exact, smallest Gaussian noise for every epsilon), or pass "
        "allow_unproven=True to use the classical formula where it happens to hold "
        "(it is still refused where it fails, epsilon > G(delta))"
    )


def _fails_error(method: str, eps: float, delta: float, where: str = "") -> ValueError:
    code = _GF_CODE[method]
    g = _gaussian.gf_threshold(code, delta)
    ach = _gaussian.gf_delta(0, _classical_sigma(code, eps, delta), eps, 1.0)
    return ValueError(
        f"calibration={method!r} is NOT (epsilon, delta)-DP at epsilon = {eps!r}, delta = {delta!r}"
        f"{where}: epsilon exceeds its failure threshold G(delta) = {g:.6f} (Theorem 1 of "
        f"Zhao et al. 2019); its noise achieves only delta = {ach:.4e}. Use calibration='optimal'"
    )


def _classical_sigma(code: int, eps: float, delta: float) -> float:
    return math.sqrt(2.0 * math.log((2.0 if code == 0 else 1.25) / delta)) / eps


def gaussian_sigma(epsilon: Any, sensitivity: Any, *, delta: Any, calibration: str = "optimal",
                   allow_unproven: bool = False):
    r"""Standard deviation :math:`\sigma` of Gaussian noise for :math:`(\epsilon,\delta)`-DP
    (or -pDP), by any of the calibrations reviewed in [ZWB19]_.

    The Gaussian mechanism releases :math:`Q(D) + N(0, \sigma^2 I)` for a query with
    :math:`\ell_2` sensitivity :math:`\Delta`. Every method except the classical two has the
    shape

    .. math:: \sigma = \frac{(x + \sqrt{x^2 + \epsilon})\,\Delta}{\epsilon\sqrt2}

    for a scalar :math:`x` that depends only on :math:`(\epsilon, \delta)`:

    * ``"dwork2006"``: :math:`\sigma = \sqrt{2\ln(2/\delta)}\,\Delta/\epsilon` (Eq. (1));
      DP, proved only for :math:`\epsilon \le 1`.
    * ``"dwork2014"``: :math:`\sigma = \sqrt{2\ln(1.25/\delta)}\,\Delta/\epsilon`
      (Eq. (2)); DP, proved only for :math:`\epsilon \le 1`.
    * ``"optimal"``: :math:`x = a` solving :math:`\mathrm{erfc}(a) -
      e^\epsilon\mathrm{erfc}(\sqrt{a^2+\epsilon}) = 2\delta` (Theorem 2, Eq. (5)); DP, the
      smallest Gaussian noise.
    * ``"zhao1"``: :math:`x = b` of Eq. (7a) (Theorem 4, Mechanism 1; erfc/inverfc); DP.
    * ``"zhao2"``: :math:`x = c = \sqrt{\ln(2/(\sqrt{16\delta+1}-1))}` (Theorem 5,
      Mechanism 2, Eq. (9)); DP, needs :math:`\delta < 1/2`.
    * ``"pdp_optimal"``: :math:`x = d` solving :math:`\mathrm{erfc}(d) +
      \mathrm{erfc}(\sqrt{d^2+\epsilon}) = 2\delta` (Theorem 6, Eq. (13a)); **pDP**, the
      smallest Gaussian noise for pDP.
    * ``"zhao3"``: :math:`x = f = \mathrm{inverfc}(\delta)` (Theorem 8, Mechanism 3,
      Eq. (14a)); **pDP**.
    * ``"zhao4"``: :math:`x = g = \sqrt{\ln(2/(\sqrt{8\delta+1}-1))}` (Theorem 9,
      Mechanism 4, Eq. (15a)); **pDP**.

    ``"optimal"`` is the exact (Balle-Wang [BW18]_) condition: any smaller :math:`\sigma`
    violates :math:`(\epsilon,\delta)`-DP. The closed forms are upper bounds on it:
    :math:`\sigma_{opt} < \sigma_{zhao1} < \sigma_{zhao2}` always, and
    :math:`\sigma_{zhao2} < \sigma_{dwork2014} < \sigma_{dwork2006}` for
    :math:`\epsilon \le 1`, :math:`\delta < 1/2` (Eq. (10)).

    The last three methods target **probabilistic DP** (pDP: the privacy loss lies in
    :math:`[-\epsilon, \epsilon]` except with probability :math:`\delta`), a strictly stronger
    notion: they imply DP but cost more noise (:math:`\sigma_{pdp\_optimal} \ge
    \sigma_{opt}`); use them only when pDP is required.

    Parameters
    ----------
    epsilon : float or array_like
        Finite and > 0.
    sensitivity : float or array_like
        :math:`\ell_2` sensitivity :math:`\Delta`, finite and > 0.
    delta : float or array_like
        In :math:`(0, 1)`; in :math:`(0, 1/2)` for ``"zhao2"``.
        Keyword-only.
    calibration : str, default "optimal"
        One of the keys of :data:`GAUSSIAN_METHODS`.
    allow_unproven : bool, default False
        The classical methods are proved only for :math:`0 < \epsilon \le 1` and refused
        above unless this is True. Even then they are refused where they are *not*
        :math:`(\epsilon,\delta)`-DP (:math:`\epsilon > G(\delta)`, see
        :func:`classical_failure_threshold`): the exact :math:`\delta` of the classical
        :math:`\sigma` is checked at every point.

    Returns
    -------
    float or ndarray
        :math:`\sigma` (a float when all three arguments are scalars, else an array of their
        broadcast shape). It satisfies its target condition exactly: the :math:`\delta` of
        :func:`gaussian_delta` (``notion="pdp"`` for pDP methods), including a bound on its
        own rounding error, is at most ``delta``.

    Raises
    ------
    ValueError
        Out-of-domain inputs (NaN included); a classical method outside its proven range
        without ``allow_unproven``, or where it fails DP.
    TypeError
        Non-numeric inputs, or a non-string ``calibration``.

    Notes
    -----
    ``"optimal"`` and ``"pdp_optimal"`` are solved for :math:`a` (resp. :math:`d`) with
    bndp's one bracketing root finder, on Lemma 14's bracket (Algorithm 1, Appendix O:
    :math:`[0, c]` when :math:`1 - e^\epsilon\mathrm{erfc}(\sqrt\epsilon) > 2\delta`, else
    :math:`[-\mathrm{inverfc}((2-2\delta)/(e^\epsilon+1)), 0]`) and Lemma 5's bracket
    :math:`[\mathrm{inverfc}(2\delta), \mathrm{inverfc}(\delta)]`, to floating-point
    resolution; the end that satisfies the condition is returned, :math:`\sigma` is rounded
    up and its exact :math:`\delta` re-checked. Cost: about 1 µs per value.

    Properties (tested): :math:`\sigma_{opt} < \Delta/(2\sqrt2\,\mathrm{inverf}(\delta))`
    for every :math:`\epsilon` (Theorem 3 ①), with equality in the limit
    :math:`\epsilon \to 0` (②); :math:`\sigma_{opt}\sqrt{2\epsilon}/\Delta \to 1` as
    :math:`\epsilon\to\infty` (③); :math:`\sigma_{pdp\_optimal} \sim
    \sqrt2\,\mathrm{inverfc}(\delta)\Delta/\epsilon` as :math:`\epsilon \to 0`.

    Departures from the paper:

    * Eq. (7a) is garbled as printed; ``"zhao1"`` uses the form rebuilt from Appendix G,
      Eq. (61): :math:`u_0 = \mathrm{inverfc}(2\delta + e^\epsilon\mathrm{erfc}(\sqrt\epsilon))`,
      :math:`b = \mathrm{inverfc}\big(2\delta / (1 - e^\epsilon\mathrm{erfc}(\sqrt{u_0^2+\epsilon})
      / (2\delta + e^\epsilon\mathrm{erfc}(\sqrt\epsilon)))\big)`.
    * :math:`e^\epsilon\mathrm{erfc}(\sqrt{u^2+\epsilon})` is evaluated as
      :math:`e^{-u^2}\mathrm{erfcx}(\sqrt{u^2+\epsilon})` and the condition in log space. The
      literal product overflows for :math:`\epsilon \ge 709.78`, where Algorithm 1 as printed
      returns :math:`\sigma = 0` and Mechanism 1 returns :math:`\Delta/\sqrt{2\epsilon}`, below
      the optimum. :math:`\sqrt{16\delta+1} - 1` (Eq. (9)) and :math:`\sqrt{8\delta+1} - 1`
      (Eq. (15a)) are rationalised (the literal forms divide by zero below
      :math:`\delta \approx 10^{-17}`), and :math:`x + \sqrt{x^2+\epsilon}` is computed as
      :math:`\epsilon/(\sqrt{x^2+\epsilon} - x)` for :math:`x < 0`.
    * Algorithm 1 never stops on exact equality and leaves :math:`a` unset when it runs out
      of iterations; here the bracket end that satisfies the condition is returned.
    * The classical formulas are not merely documented as unproven for :math:`\epsilon > 1`:
      their exact :math:`\delta` is checked.
    * Theorem 7 ①: the proof in Appendix L gives
      :math:`\sigma_{pdp\_optimal}/(\mathrm{inverfc}(\delta)\Delta/(\epsilon\sqrt2)) \to 1` as
      :math:`\epsilon \to 0`; the limit is 2 (:math:`d + \sqrt{d^2+\epsilon} \to 2d`), i.e.
      :math:`\sigma_{pdp\_optimal} \sim \sqrt2\,\mathrm{inverfc}(\delta)\Delta/\epsilon`.
    * Every condition is evaluated together with a bound on its own rounding error, and a
      :math:`\sigma` is accepted only if the condition holds with that margin; where
      :math:`\mathrm{erfcx}(a) - \mathrm{erfcx}(\sqrt{a^2+\epsilon})` cancels (tiny
      :math:`\epsilon`) it is bracketed by the mean value theorem instead. This costs at most
      a few units of 1e-15 in :math:`\sigma` on the usual range and keeps the result valid
      down to :math:`\epsilon = 10^{-300}` and :math:`\delta = 10^{-300}`.

    Examples
    --------
    >>> round(gaussian_sigma(1.0, 1.0, delta=1e-5), 6)
    3.730632
    >>> round(gaussian_sigma(1.0, 1.0, delta=1e-5, calibration="dwork2014"), 6)
    4.844805
    """
    method = calibration
    code = _gf_method(method)
    classical = code <= 1
    e = scalar_or_none(epsilon)
    d = scalar_or_none(delta)
    s = scalar_or_none(sensitivity)
    if (e is not None and d is not None and s is not None
            and 0.0 < e < math.inf and 0.0 < d < 1.0 and 0.0 < s < math.inf):
        if classical and e > 1.0 and not allow_unproven:
            raise _unproven_error(method, e)
        if code == 4 and not d < 0.5:
            raise ValueError(
                f"calibration='zhao2' (Theorem 5) needs delta < 0.5; got delta = {d!r}")
        out = _gaussian.gf_sigma(code, e, d, s)
        if out < 0.0:
            raise _fails_error(method, e, d)
        if not 0.0 < out < math.inf:
            raise _gf_range_error(method, e, d, s, out)
        return out
    eps, dl, dq = checked_arrays((epsilon, "epsilon", check_positive),
                                 (delta, "delta", check_open_unit),
                                 (sensitivity, "sensitivity", check_positive))
    if classical and not allow_unproven and (eps > 1.0).any():
        raise _unproven_error(method, float(eps.flat[int(np.argmax(eps > 1.0))]))
    if code == 4 and (dl >= 0.5).any():
        bad = float(np.broadcast_to(dl, dl.shape).flat[int(np.argmax(dl >= 0.5))])
        raise ValueError(f"calibration='zhao2' (Theorem 5) needs delta < 0.5; got {bad!r}")
    eb, db, sb = np.broadcast_arrays(eps, dl, dq)
    shape = eb.shape
    out = np.empty(shape)
    fe, fd, fs = (np.ascontiguousarray(a).reshape(-1) for a in (eb, db, sb))
    _gaussian.gf_sigma_array(code, fe, fd, fs, out.reshape(-1))
    if classical and (out < 0).any():
        i = int(np.argmax(out.reshape(-1) < 0))
        where = "" if out.ndim == 0 else f" (at flat index {i})"
        raise _fails_error(method, float(fe[i]), float(fd[i]), where)
    unrep = ~((out > 0) & (out < math.inf))
    if unrep.any():
        i = int(np.argmax(unrep.reshape(-1)))
        raise _gf_range_error(method, float(fe[i]), float(fd[i]), float(fs[i]),
                              float(out.reshape(-1)[i]))
    return float(out) if out.ndim == 0 else out


def _gf_range_error(method: str, e: float, d: float, s: float, out: float) -> ValueError:
    if out == math.inf:
        return ValueError(
            f"`epsilon` = {e!r}, `delta` = {d!r} and `sensitivity` = {s!r} need a sigma above "
            f"the largest double (about {sys.float_info.max!r}) with calibration={method!r}: "
            "rescale the data (a smaller sensitivity) or choose a larger epsilon or delta")
    return ValueError(
        f"calibration={method!r} cannot be evaluated in floating point at `epsilon` = {e!r}, "
        f"`delta` = {d!r}; use calibration='optimal' (valid down to epsilon = delta = 1e-300)")


def gaussian_delta(sigma: Any, epsilon: Any, sensitivity: Any, *, notion: str = "dp"):
    r""":math:`\delta` achieved by Gaussian noise :math:`N(0, \sigma^2)` at
    :math:`\epsilon` (the privacy profile; exact up to a certified upward rounding).

    ``notion="dp"`` (Balle-Wang [BW18]_, Theorem 8; Eq. (25) of [ZWB19]_):

    .. math:: \delta(\epsilon) = \Phi\Big(\frac{\Delta}{2\sigma}
              - \frac{\epsilon\sigma}{\Delta}\Big)
              - e^\epsilon\,\Phi\Big(-\frac{\Delta}{2\sigma} - \frac{\epsilon\sigma}{\Delta}\Big)
              = \tfrac12\big[\mathrm{erfc}(x) - e^\epsilon\mathrm{erfc}(\sqrt{x^2+\epsilon})\big],

    with :math:`x = (\epsilon\sigma/\Delta - \Delta/(2\sigma))/\sqrt2` (Eq. (26)); the noise is
    :math:`(\epsilon,\delta)`-DP iff :math:`\delta \ge \delta(\epsilon)`.

    ``notion="pdp"``: the probability that the privacy loss leaves
    :math:`[-\epsilon, \epsilon]`, :math:`\tfrac12[\mathrm{erfc}(x) +
    \mathrm{erfc}(\sqrt{x^2+\epsilon})]` (Eq. (86) of [ZWB19]_).

    Parameters
    ----------
    sigma : float or array_like
        Finite and > 0.
    epsilon : float or array_like
        Finite and >= 0.
    sensitivity : float or array_like
        :math:`\ell_2` sensitivity, finite and > 0.
    notion : {"dp", "pdp"}, default "dp"

    Returns
    -------
    float or ndarray
        :math:`\delta`, computed in log space with ``erfcx`` (no overflow for large
        :math:`\epsilon`, no underflow to 0 for :math:`\delta` down to about 1e-300), and
        returned as a certified upper bound: the value carries its own rounding-error bound,
        so it is never below the exact :math:`\delta` and exceeds it by at most about
        1e-11 relative (tested against 50-digit mpmath). Where
        :math:`\mathrm{erfcx}(x) - \mathrm{erfcx}(\sqrt{x^2+\epsilon})` cancels (small
        :math:`\epsilon`, :math:`\sigma/\Delta \sim 10^4`-:math:`10^6`) it is integrated as
        :math:`\int -\mathrm{erfcx}'` with Gauss-Legendre, the derivative taken from the
        Laplace continued fraction.

    Examples
    --------
    >>> round(gaussian_delta(3.730632, 1.0, 1.0) * 1e5, 5)
    1.0
    """
    nt = _notion(notion)
    sg, e, s = (scalar_or_none(v) for v in (sigma, epsilon, sensitivity))
    if (sg is not None and e is not None and s is not None
            and 0.0 < sg < math.inf and 0.0 <= e < math.inf and 0.0 < s < math.inf):
        return _gaussian.gf_delta(nt, sg, e, s)
    sa = as_float_array(sigma, "sigma")
    ea = as_float_array(epsilon, "epsilon")
    da = as_float_array(sensitivity, "sensitivity")
    check_positive(sa, "sigma")
    bad = ~(np.isfinite(ea) & (ea >= 0))
    if bad.any():
        raise ValueError(f"`epsilon` must be finite and >= 0; got {ea[bad].flat[0]!r}")
    check_positive(da, "sensitivity")
    arrs = np.broadcast_arrays(sa, ea, da)
    out = np.empty(arrs[0].shape)
    f1, f2, f3 = (np.ascontiguousarray(a).reshape(-1) for a in arrs)
    _gaussian.gf_delta_array(nt, f1, f2, f3, out.reshape(-1))
    return float(out) if out.ndim == 0 else out


def gaussian_epsilon(sigma: Any, sensitivity: Any, *, delta: Any, notion: str = "dp"):
    r"""Smallest :math:`\epsilon \ge 0` for which Gaussian noise :math:`N(0, \sigma^2)` is
    :math:`(\epsilon,\delta)`-DP (or -pDP): the inverse of :func:`gaussian_delta` in
    :math:`\epsilon`.

    :math:`\delta(\epsilon)` is strictly decreasing in :math:`\epsilon`, so the root is unique;
    it is bracketed by :math:`[0, \epsilon_1]` where :math:`\epsilon_1` solves
    :math:`x(\epsilon_1) = \mathrm{inverfc}(2\delta)` (Lemma 11 of [ZWB19]_; Lemma 5's
    :math:`\mathrm{inverfc}(\delta)` for pDP) and solved with the shared root finder. The
    returned end satisfies the condition (including the rounding margin), so it is never
    below the exact value.

    Parameters
    ----------
    sigma : float or array_like
        Finite and > 0.
    sensitivity : float or array_like
        Finite and > 0.
    delta : float or array_like
        In :math:`(0, 1)`.
        Keyword-only.
    notion : {"dp", "pdp"}, default "dp"

    Returns
    -------
    float or ndarray
        0 when :math:`\sigma` already gives :math:`(0, \delta)`-DP (:math:`\delta \ge
        \mathrm{erf}(\Delta/(2\sqrt2\sigma))`).

    Raises
    ------
    ValueError
        Where the epsilon is beyond the doubles (``sigma`` below about 1e-154 times the
        sensitivity).

    Examples
    --------
    >>> round(gaussian_epsilon(3.730632, 1.0, delta=1e-5), 5)
    1.0
    """
    nt = _notion(notion)
    sg, d, s = (scalar_or_none(v) for v in (sigma, delta, sensitivity))
    if (sg is not None and d is not None and s is not None
            and 0.0 < sg < math.inf and 0.0 < d < 1.0 and 0.0 < s < math.inf):
        return _finite_epsilon(_gaussian.gf_epsilon(nt, sg, d, s))
    sa, dl, da = checked_arrays((sigma, "sigma", check_positive), (delta, "delta", check_open_unit),
                                (sensitivity, "sensitivity", check_positive))
    arrs = np.broadcast_arrays(sa, dl, da)
    out = np.empty(arrs[0].shape)
    f1, f2, f3 = (np.ascontiguousarray(a).reshape(-1) for a in arrs)
    _gaussian.gf_epsilon_array(nt, f1, f2, f3, out.reshape(-1))
    _finite_epsilon(out)
    return float(out) if out.ndim == 0 else out


def _finite_epsilon(eps: Any) -> Any:
    """``eps``, refusing an epsilon the root finder could not represent: it grows like
    ``(sensitivity / sigma)^2 / 2``, beyond the doubles for a sigma below about 1e-154
    times the sensitivity (NaN from the compiled search)."""
    if not np.all(np.isfinite(eps)):
        raise ValueError("gaussian_epsilon: `sigma` is too small for `sensitivity`: the "
                         "epsilon, about (sensitivity / sigma)^2 / 2, is beyond the range of "
                         "doubles")
    return eps


_NORMAL_MIN = float(np.finfo(np.float64).tiny)


def classical_failure_threshold(delta: Any, calibration: str = "dwork2014"):
    r""":math:`G(\delta)`: the largest :math:`\epsilon` at which a classical Gaussian
    mechanism is still :math:`(\epsilon,\delta)`-DP (Theorem 1 and Remark 2 of [ZWB19]_).

    For :math:`\sigma = F(\delta)\Delta/\epsilon` with :math:`F = \sqrt{2\ln(1.25/\delta)}`
    (``"dwork2014"``) or :math:`\sqrt{2\ln(2/\delta)}` (``"dwork2006"``), :math:`G` solves
    :math:`\delta_{BW}(F\Delta/\epsilon, \epsilon) = \delta` (equivalently
    :math:`F/\epsilon = \sigma_{opt}(\epsilon,\delta)/\Delta`); above it the mechanism does
    not give the :math:`(\epsilon,\delta)` it claims. :math:`G > 1` for every :math:`\delta`,
    so the formulas hold in their proved range :math:`\epsilon \le 1`.

    Computed exactly: a scan upward from :math:`\epsilon = 1` by factors of 1.05 to the
    first failure, then the shared root finder on that bracket; the returned end is the one
    at which the classical noise still satisfies the condition. (One crossing was found for
    every :math:`\delta` examined; the scan is what makes this a numerical, not proved,
    property.)

    Parameters
    ----------
    delta : float or array_like
        In :math:`(0, 1)`, at least the smallest normal double (about 2.2e-308).
    calibration : {"dwork2014", "dwork2006"}

    Returns
    -------
    float or ndarray

    Notes
    -----
    Departure from the paper: §V (iii) prints :math:`G(10^{-3}) = 7.47`, :math:`G(10^{-4}) =
    8.00`, :math:`G(10^{-5}) = 8.43`, :math:`G(10^{-6}) = 8.79` for Dwork-2014 (read off
    Fig. 1); the exact values are 7.4635, 7.9910, 8.4198 and 8.7821, each about 0.01 lower,
    i.e. the printed thresholds are on the unsafe side (at :math:`\epsilon = 7.465`,
    :math:`\delta = 10^{-3}` Dwork-2014 already gives :math:`\delta = 1.0008\times10^{-3}`).
    The Dwork-2006 values 8.51, 8.99, 9.39 agree (exact 8.5124, 8.9927, 9.3913).

    Examples
    --------
    >>> round(classical_failure_threshold(1e-5), 4)
    8.4198
    """
    method = calibration
    if method not in _GF_CLASSICAL:
        if not isinstance(method, str):
            raise TypeError(
                f"`calibration` must be a string; got {type(method).__name__} {method!r}")
        raise ValueError(f"`calibration` must be 'dwork2014' or 'dwork2006'; got {method!r}")
    code = _GF_CODE[method]
    d = scalar_or_none(delta)
    if d is not None and _NORMAL_MIN <= d < 1.0:
        return _gaussian.gf_threshold(code, d)
    dl = as_float_array(delta, "delta")
    check_open_unit(dl, "delta")
    if np.any(dl < _NORMAL_MIN):    # the threshold's search works on ln delta of a normal
        raise ValueError(f"`delta` must be at least {_NORMAL_MIN!r} (a normal double); got "
                         f"{float(np.min(dl))!r}")
    out = np.empty(dl.shape)
    _gaussian.gf_threshold_array(code, np.ascontiguousarray(dl).reshape(-1), out.reshape(-1))
    return float(out) if out.ndim == 0 else out
