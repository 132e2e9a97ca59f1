r"""Concentrated DP of the Gaussian mechanism: its zCDP [BS16]_ and mCDP [DR16]_, their
conversion to (epsilon, delta)-DP, the sigma calibrated through each ([ZWB19]_ §VII) and the
sigma of a composition. Import the functions from :mod:`bndp.calibrate` (the calibrations)
and :mod:`bndp.accounting` (the accounting).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._scale_search import smallest_certified
from .._validation import (
    as_float_array,
    check_epsilon,
    check_open_unit,
    check_positive,
    checked_arrays,
)

__all__ = [
    "zcdp_sigma",
    "mcdp_sigma",
    "gaussian_zcdp",
    "zcdp_to_dp",
    "gaussian_mcdp_delta",
    "gaussian_composition_sigma",
]


# ---------------------------------------------------------------------------------------
# Calibration through zCDP and mCDP ([ZWB19]_ §VII)
# ---------------------------------------------------------------------------------------

def _scalar_eps_delta_sens(epsilon: Any, delta: Any, sensitivity: Any) -> tuple:
    e = as_float_array(epsilon, "epsilon")
    d = as_float_array(delta, "delta")
    s = as_float_array(sensitivity, "sensitivity")
    check_epsilon(e)
    check_open_unit(d, "delta")
    check_positive(s, "sensitivity")
    return e, d, s


def zcdp_sigma(epsilon: Any, sensitivity: Any, *, delta: Any):
    r"""Gaussian :math:`\sigma` for :math:`(\epsilon,\delta)`-DP obtained through zCDP
    ([ZWB19]_ §VII; [BS16]_ Propositions 1.3 and 1.6).

    The Gaussian mechanism is :math:`\rho`-zCDP with :math:`\rho = \Delta^2/(2\sigma^2)`,
    and :math:`\rho`-zCDP implies :math:`(\rho + 2\sqrt{\rho\ln(1/\delta)}, \delta)`-DP.
    Solving for :math:`\sigma`:

    .. math:: \sigma_{zCDP} = \frac{\Delta\,\big(\sqrt{\ln(1/\delta)} +
              \sqrt{\ln(1/\delta) + \epsilon}\big)}{\sqrt2\,\epsilon}.

    RDP optimised over the order gives the same :math:`\sigma`, and tCDP reduces to these
    two (§VII). The result is always above ``gaussian_sigma(..., calibration="zhao4")`` (the
    paper's claim, checked on a grid) and so above the optimal DP calibration.

    Parameters
    ----------
    epsilon : float or array_like
        The :math:`\epsilon` of the :math:`(\epsilon,\delta)`-DP guarantee reached through
        zCDP; finite and > 0.
    sensitivity : float or array_like
        :math:`\ell_2` sensitivity :math:`\Delta` (so :math:`\rho = \Delta^2/(2\sigma^2)`),
        finite and > 0.
    delta : float or array_like
        The :math:`\delta` of the zCDP-to-DP conversion, in (0, 1); keyword-only.

    Returns
    -------
    float or ndarray

    Notes
    -----
    Departure from the paper: §VII prints the denominator as :math:`\sqrt{2\epsilon}`; the
    derivation it states (solve :math:`\rho = \Delta^2/(2\sigma^2)`,
    :math:`\epsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}`) and its RDP paragraph give
    :math:`\sqrt2\,\epsilon`, which is what is computed here.

    Examples
    --------
    >>> round(zcdp_sigma(1.0, 1.0, delta=1e-5), 4)
    4.9006
    """
    e, d, s = _scalar_eps_delta_sens(epsilon, delta, sensitivity)
    L = -np.log(d)
    out = s * (np.sqrt(L) + np.sqrt(L + e)) / (math.sqrt(2.0) * e)
    return float(out) if out.ndim == 0 else out


def _mcdp_log_delta(sigma: float, eps: float, sens: float) -> float:
    """ln delta of Lemma 7 for the Gaussian with standard deviation ``sigma`` (mu =
    x^2/2, tau = x, x = sens/sigma), or nan where epsilon <= mu (Lemma 7 says nothing).

    With a = eps sigma/sens and b = sens/(2 sigma), (eps -+ mu)/tau = a -+ b, so delta =
    exp(-(a-b)^2/2) + exp(-(a+b)^2/2). a - b = (2 eps sigma^2 - sens^2)/(2 sigma sens) is
    formed exactly (rationals), so neither the cancellation near the floor a = b nor an
    overflow or underflow of x^2 for extreme scales can corrupt the certificate."""
    e, s, d = Fraction(eps), Fraction(sigma), Fraction(sens)
    den = 2 * s * d
    lo = (2 * e * s * s - d * d) / den                 # a - b = (eps - mu) / tau
    if lo <= 0:
        return math.nan
    hi = lo + d / s                                     # a + b = (eps + mu) / tau

    def half_sq(v: Fraction) -> float:
        return math.inf if v > _HUGE else 0.5 * float(v) ** 2

    return float(np.logaddexp(-half_sq(lo), -half_sq(hi)))


_HUGE = Fraction(1e150)


def mcdp_sigma(epsilon: Any, sensitivity: Any, *, delta: Any) -> float:
    r"""Gaussian :math:`\sigma` for :math:`(\epsilon,\delta)`-pDP (hence DP) obtained through
    mean-concentrated DP ([ZWB19]_ §VII, Lemma 7; [DR16]_ Theorem 3.2).

    The Gaussian mechanism with standard deviation :math:`\sigma` is
    :math:`(\mu, \tau)`-mCDP with :math:`\mu = \Delta^2/(2\sigma^2)`,
    :math:`\tau = \Delta/\sigma`, and for :math:`\epsilon > \mu` that implies
    :math:`(\epsilon, \delta)`-pDP with

    .. math:: \delta = e^{-(\epsilon-\mu)^2/(2\tau^2)} + e^{-(\epsilon+\mu)^2/(2\tau^2)}.

    The returned :math:`\sigma` is the smallest with :math:`\sigma > \Delta/\sqrt{2\epsilon}`
    (so :math:`\epsilon > \mu`) whose :math:`\delta` is at most ``delta`` (a bracketing root
    solve in :math:`\ln\sigma`, to floating-point resolution, returning the end that
    satisfies the bound).

    Parameters
    ----------
    epsilon : float
        The pDP :math:`\epsilon` (a scalar: the root solve is per call); finite and > 0.
    sensitivity : float
        :math:`\ell_2` sensitivity :math:`\Delta` (so :math:`\mu = \Delta^2/(2\sigma^2)`,
        :math:`\tau = \Delta/\sigma`), finite and > 0.
    delta : float
        The bound on the mCDP tail :math:`\delta` above, in (0, 1); keyword-only.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Where the :math:`\sigma` would leave the normal float range (``epsilon`` so small,
        or ``sensitivity`` so large or small, that it exceeds about 1e307 or falls below
        about 2.2e-308).

    Notes
    -----
    At the root :math:`(\epsilon - \mu)/\tau = \sqrt{2(\ln(1/\delta) + \ln(1 +
    e^{-\epsilon}))}` in closed form (the two exponents differ by :math:`2\epsilon`); the
    search starts there and evaluates :math:`\delta` with :math:`(\epsilon - \mu)/\tau`
    formed exactly, so extreme :math:`\epsilon` (1e-300 or 1e300) and :math:`\delta`
    (1e-300) are calibrated to the same precision.

    Departure from the paper: §VII says that expressing :math:`\sigma` from this
    :math:`\delta` "gives :math:`\sigma_{pDP-OPT}`" of Theorem 6. It does not: the
    sub-Gaussian tail :math:`e^{-x^2}` stands where Theorem 6 has the exact
    :math:`\tfrac12\mathrm{erfc}(x)`, so the mCDP route needs more noise (at
    :math:`(\epsilon,\delta) = (1, 10^{-5})`: 4.9641 against
    ``gaussian_sigma(1, 1, delta=1e-5, calibration="pdp_optimal")`` = 4.4441).

    Examples
    --------
    >>> round(mcdp_sigma(1.0, 1.0, delta=1e-5), 4)
    4.9641
    """
    e, d, s = _scalar_eps_delta_sens(epsilon, delta, sensitivity)
    if e.ndim or d.ndim or s.ndim:
        raise ValueError("`epsilon`, `delta` and `sensitivity` must be scalars")
    eps, dl, sens = float(e), float(d), float(s)
    target = math.log(dl)
    # delta = exp(-(a-b)^2/2) (1 + exp(-2ab)) with a - b = (eps - mu)/tau and 2ab = eps, so
    # the root has a - b = sqrt(2 L), L = ln(1/dl) + ln(1 + e^-eps): in u = sigma/Delta,
    # eps u - 1/(2u) = sqrt(2 L), u = r + hypot(r, sqrt(1/(2 eps))), r = sqrt(L/2)/eps. The
    # search starts there and certifies the returned sigma itself (no rounding of u * Delta)
    lg = -target + math.log1p(math.exp(-eps))
    r = math.sqrt(0.5 * lg) / eps
    sigma0 = (r + math.hypot(r, math.sqrt(0.5 / eps))) * sens
    if not (math.isfinite(sigma0) and sigma0 < _SIGMA_MAX):
        raise ValueError(f"mcdp_sigma: `epsilon` = {eps!r} is too small for `sensitivity` = "
                         f"{sens!r} and `delta` = {dl!r}: sigma would be about {sigma0:.3g}, "
                         "beyond the float range")
    if not sigma0 > _SIGMA_MIN:
        raise ValueError(f"mcdp_sigma: `sensitivity` = {sens!r} is too small for `epsilon` = "
                         f"{eps!r}: sigma would be about {sigma0:.3g}, below the normal float "
                         "range")

    def excess(sigma: float) -> tuple[float]:
        """delta / dl at sigma, the certificate of the search (target 1), kept within
        [e^-700, e^700] (the search works on its log; only <= 1 or not matters)."""
        if not 0.0 < sigma < math.inf:
            return (math.inf,)
        ld = _mcdp_log_delta(sigma, eps, sens)
        if math.isnan(ld):                              # at or below the floor: refused
            return (math.inf,)
        return (math.exp(min(700.0, max(-700.0, ld - target))),)

    sigma, _ = smallest_certified(
        excess, sigma0, 1.0, 1e-13,
        none_certifies=lambda: f"mcdp_sigma: no sigma reaches delta = {dl!r}",
        all_certify=lambda u: f"mcdp_sigma: every sigma down to {u!r} reaches delta")
    return sigma


_SIGMA_MAX = 1e307          # room above the start for the search's probes
_SIGMA_MIN = 2.2250738585072014e-308     # the smallest normal double


# ---------------------------------------------------------------------------------------
# zCDP / mCDP of the Gaussian mechanism and composition ([ZWB19a]_ §VII and Lemma 15)
# ---------------------------------------------------------------------------------------

def gaussian_zcdp(sigma: Any, sensitivity: Any):
    r""":math:`\rho` of the Gaussian mechanism under zero-concentrated DP [BS16a]_:
    :math:`\rho = \Delta^2/(2\sigma^2)` (quoted in [ZWB19a]_ §VII).

    zCDP composes by adding :math:`\rho`; convert the total with :func:`zcdp_to_dp`.

    Parameters
    ----------
    sigma : float or array_like
        Standard deviation of the noise, finite and > 0.
    sensitivity : float or array_like
        :math:`\ell_2` sensitivity, finite and > 0.

    Returns
    -------
    float or ndarray
        :math:`\rho`, the mechanism's zCDP parameter.

    Examples
    --------
    >>> from bndp.accounting import gaussian_zcdp
    >>> gaussian_zcdp(2.0, 1.0)
    0.125
    """
    s, c = checked_arrays((sigma, "sigma", check_positive),
                          (sensitivity, "sensitivity", check_positive))
    r = c / s
    out = 0.5 * r * r
    return float(out) if out.ndim == 0 else out


def zcdp_to_dp(rho: Any, delta: Any):
    r""":math:`\epsilon` of :math:`(\epsilon, \delta)`-DP implied by :math:`\rho`-zCDP
    ([BS16a]_ Proposition 1.3, as used in [ZWB19a]_ §VII):
    :math:`\epsilon = \rho + 2\sqrt{\rho\ln(1/\delta)}`.

    Solving this for the Gaussian's :math:`\rho` gives :func:`bndp.calibrate.zcdp_sigma`.

    Parameters
    ----------
    rho : float or array_like
        Finite and >= 0.
    delta : float or array_like
        In (0, 1).

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> from bndp.accounting import gaussian_zcdp, zcdp_to_dp
    >>> round(zcdp_to_dp(gaussian_zcdp(4.900555168628416, 1.0), 1e-5), 12)
    1.0
    """
    r = as_float_array(rho, "rho")
    d = as_float_array(delta, "delta")
    bad = ~(np.isfinite(r) & (r >= 0))
    if bad.any():
        raise ValueError("`rho` must be finite and >= 0")
    if not ((d > 0) & (d < 1)).all():
        raise ValueError("`delta` must be in (0, 1)")
    out = r + 2.0 * np.sqrt(r * -np.log(d))
    return float(out) if out.ndim == 0 else out


def gaussian_mcdp_delta(sigma: Any, epsilon: Any, sensitivity: Any):
    r""":math:`\delta` of :math:`(\epsilon,\delta)`-pDP (hence DP) that mean-concentrated
    DP gives the Gaussian mechanism ([ZWB19a]_ §VII, Lemma 7): with
    :math:`\mu = \Delta^2/(2\sigma^2)`, :math:`\tau = \Delta/\sigma` and
    :math:`\epsilon > \mu`,

    .. math:: \delta = e^{-(\epsilon-\mu)^2/(2\tau^2)} + e^{-(\epsilon+\mu)^2/(2\tau^2)}.

    Parameters
    ----------
    sigma, epsilon, sensitivity : float or array_like
        Finite and > 0; every point must have :math:`\epsilon > \mu`.

    Returns
    -------
    float or ndarray
        :math:`\delta` (may exceed 1, when the bound says nothing).

    Notes
    -----
    This is a sub-Gaussian tail bound on the privacy loss; the exact pDP :math:`\delta` of
    the Gaussian (``bndp.calibrate.gaussian_delta(..., notion="pdp")``) is smaller. The
    paper's claim that this route gives :math:`\sigma_{pDP-OPT}` is wrong (see
    :func:`bndp.calibrate.mcdp_sigma`).

    Examples
    --------
    >>> from bndp.accounting import gaussian_mcdp_delta
    >>> round(gaussian_mcdp_delta(4.9640939877172245, 1.0, 1.0) * 1e5, 6)
    1.0
    """
    s, e, c = checked_arrays((sigma, "sigma", check_positive), (epsilon, "epsilon", check_positive),
                             (sensitivity, "sensitivity", check_positive))
    x = c / s
    mu = 0.5 * x * x
    if not (e > mu).all():
        raise ValueError("Lemma 7 needs epsilon > mu = sensitivity**2 / (2 sigma**2)")
    t2 = 2.0 * x * x
    out = np.exp(-(e - mu) ** 2 / t2) + np.exp(-(e + mu) ** 2 / t2)
    return float(out) if out.ndim == 0 else out


def gaussian_composition_sigma(sigmas: Any, sensitivities: Any) -> float:
    r"""Standard deviation of the single Gaussian mechanism (sensitivity 1) whose privacy
    profile equals that of :math:`m` composed Gaussian answers ([ZWB19a]_ Lemma 15,
    Eq. (92)):

    .. math:: \sigma^* = \Big(\sum_{i=1}^m \Delta_i^2/\sigma_i^2\Big)^{-1/2}.

    The composition is :math:`(\epsilon,\delta)`-DP (resp. -pDP) exactly when
    ``sigma_star >= bndp.calibrate.gaussian_sigma(epsilon, 1.0, delta=delta)`` (resp. with
    ``calibration="pdp_optimal"``); any upper-bound calibration gives a sufficient condition.

    Parameters
    ----------
    sigmas : 1-D array_like
        Noise standard deviations, finite and > 0.
    sensitivities : float or 1-D array_like
        :math:`\ell_2` sensitivities, finite and > 0 (a scalar applies to every answer).

    Returns
    -------
    float

    Examples
    --------
    >>> from bndp.accounting import gaussian_composition_sigma
    >>> round(gaussian_composition_sigma([3.0, 4.0], [1.0, 2.0]), 6)
    1.664101
    """
    s = np.atleast_1d(as_float_array(sigmas, "sigmas"))
    c = np.atleast_1d(as_float_array(sensitivities, "sensitivities"))
    if s.ndim != 1 or c.ndim != 1 or s.size == 0:
        raise ValueError("`sigmas` and `sensitivities` must be non-empty 1-D")
    check_positive(s, "sigmas")
    check_positive(c, "sensitivities")
    s, c = np.broadcast_arrays(s, c)
    with np.errstate(over="ignore", under="ignore"):
        r = c / s
        if np.all(np.isfinite(r) & (r >= _TINY_NORMAL)):
            m = float(np.max(r))                            # scaled: no r*r under/overflow
            q = r / m
            out = (1.0 / m) / math.sqrt(float(np.sum(q * q)))
        else:                                               # a ratio out of range: logs
            lr = np.log(c) - np.log(s)
            m = float(np.max(lr))
            z = -m - 0.5 * math.log(float(np.sum(np.exp(2.0 * (lr - m)))))
            out = math.exp(z) if z < 709.0 else math.inf
    if not (math.isfinite(out) and out >= _TINY_NORMAL):
        where = "above" if out >= 1.0 else "below"
        raise ValueError("gaussian_composition_sigma: the composed sigma of these `sigmas` and "
                         "`sensitivities` (sum(sensitivities**2 / sigmas**2)**-0.5) is "
                         f"{where} the normal float range")
    return float(out)


_TINY_NORMAL = 2.2250738585072014e-308
