r"""Certified worst-case privacy loss of the bounded mechanisms, from their closed densities,
and the tight calibration of the bounded Gaussian mechanism built on it.

Public through :mod:`bndp.verify` (:func:`bndp.verify.bounded_gaussian_loss`,
:func:`bndp.verify.bounded_laplace_loss`, :func:`bndp.verify.bounded_gaussian_tight_sigma`,
:class:`bndp.verify.LossCertificate`); this module sits below the mechanisms so that
:class:`bndp.BoundedGaussian` can calibrate and certify itself without importing
:mod:`bndp.verify`, which imports the mechanisms.

The references cited here ([CH24], [HABM20]) are listed in :mod:`bndp.verify`, where these
functions are documented.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ._core import certify as _certify
from ._validation import box_widths, check_box, positive_real
from .calibrate import bounded_gaussian_sigma

__all__ = ["LossCertificate", "bounded_gaussian_loss", "bounded_laplace_loss",
           "bounded_gaussian_tight_sigma"]


class LossCertificate(NamedTuple):
    """Result of a worst-case loss evaluation with ``details=True``.

    Attributes
    ----------
    upper : float
        Certified upper bound on the worst-case loss (what :func:`verify` reports).
    lower : float
        The loss of a configuration that is actually attained (a lower bound).
    shift : ndarray
        The worst shift :math:`c = q' - q` (per coordinate), attained with
        :math:`q' = u`, :math:`q = u - c` and the output at :math:`l`.

    Examples
    --------
    >>> from bndp.verify import bounded_gaussian_loss
    >>> cert = bounded_gaussian_loss(3.0, 1.0, 0.0, 10.0, details=True)
    >>> bool(cert.lower <= cert.upper), cert.shift.shape
    (True, (1,))
    """

    upper: float
    lower: float
    shift: np.ndarray


def _widths(lower: Any, upper: Any) -> np.ndarray:
    return box_widths(*check_box(lower, upper))


_pos = positive_real


def _unit_exponent(w: np.ndarray, dq: float) -> int:
    """Exponent j of the power of two 2**j ~ min(dq, max(w)) in whose units the bounded
    Gaussian problem is solved. The loss is invariant under scaling (sigma, dq, w) by one
    factor, and by a power of two the scaling is exact. In units of dq (when dq < max(w))
    the Lagrange multiplier of the multivariate problem is of moderate size whatever dq/w (in
    absolute units it left the searched range for dq/w ~ 1e-300 and the bound degraded to
    sqrt(m) times the loss); in units of max(w) (when dq >= max(w)) the terms w^2/sigma^2 do
    not underflow. Falls back to units of max(w) if w/dq would overflow."""
    wmax = float(np.max(w))
    j = math.frexp(min(dq, wmax))[1]
    if math.frexp(wmax)[1] - j > 1023:          # ldexp(wmax, -j) would overflow (and raise)
        j = math.frexp(wmax)[1]
    return j


def _tangent_regime(s: float, dq: float, w: np.ndarray) -> bool:
    """Whether the compiled evaluation's units (:func:`_unit_exponent`) cannot hold the
    problem and the tangent bound of :func:`_far_sigma_loss` is (nearly) exact instead:
    sigma above 2**508 times min(dq, max(w)) (sigma^2 leaves the float range in those
    units; every shift is below 2**-508 sigma), or max(w)/dq beyond the float range (dq
    underflows in units of max(w); then c w / sigma^2 >= 128 and the tangent bound is
    within about 1 % of the loss)."""
    ew, ed = math.frexp(float(np.max(w)))[1], math.frexp(dq)[1]
    return math.frexp(s)[1] - min(ew, ed) > 508 or ew - ed > 1023


def _far_sigma_loss(s: float, dq: float, w: np.ndarray, details: bool):
    """The loss in the regime of :func:`_tangent_regime`, in log space.

    h is concave with h(0) = 0 and h'(0) = Lambda'(w) = E[X]/sigma^2 <= w/sigma^2 (X the
    output on [0, w] with q' = u), so h(c) <= c w / sigma^2 and the loss is at most
    max sum_i c_i w_i / sigma^2 = min(dq ||w||, ||w||^2) / sigma^2 (Cauchy-Schwarz, c_i <=
    w_i). For the lower bound, the shift c = k w with k = min(1/2, dq/||w||) is allowed,
    and h(c_i) >= c_i h'(c_i) = c_i E_{w - c_i}[X]/sigma^2 >= c_i w_i/(2 sigma^2) (the
    mean of the law truncated to [0, w_i] is at least w_i/2 when its centre is), so the
    two bounds are within a factor 4 (within 2 once w >> sigma). A bound below the smallest
    positive double is reported as that double (an upper bound)."""
    wm = float(np.max(w))
    lw2 = 2.0 * math.log(wm) + math.log(float(np.sum((w / wm) ** 2)))     # ln ||w||^2
    lk = min(0.0, math.log(dq) - 0.5 * lw2)                                # ln min(1, dq/||w||)
    lup = lk + lw2 - 2.0 * math.log(s)
    if lup > 709.0:
        raise ValueError(f"bounded_gaussian_loss: the loss of `sigma` = {s!r} exceeds the float "
                         "range for this `sensitivity` and width `upper - lower`")
    up = math.exp(lup) * (1.0 + 1e-12) + _SMALLEST
    if not details:
        return up
    lk = min(math.log(0.5), lk)
    low = math.exp(min(709.0, lk + lw2 - math.log(2.0) - 2.0 * math.log(s))) * (1.0 - 1e-12)
    nw = float(np.sqrt(np.sum((w / wm) ** 2)))                            # ||w|| / wm
    c = 0.5 * w if lk == math.log(0.5) else dq * ((w / wm) / nw)           # k w, no underflow
    return LossCertificate(up, low, np.minimum(c, w))


_SMALLEST = math.ulp(0.0)


def bounded_gaussian_loss(sigma: Any, sensitivity: Any, lower: Any, upper: Any, *,
                          details: bool = False):
    r"""Certified worst-case privacy loss of the bounded Gaussian mechanism [CH24]_.

    For :math:`N(q, \sigma^2)` truncated to :math:`[l, u]` (or to a box, one common
    :math:`\sigma`, :math:`\ell_2` sensitivity :math:`\Delta Q`), returns an upper bound on

    .. math:: \epsilon^\star(\sigma) = \sup_{\lVert q - q'\rVert_2 \le \Delta Q}\;
              \sup_x\; \ln\frac{p_q(x)}{p_{q'}(x)}.

    **Reduction.** On :math:`[0, w]` (shift by :math:`l`) the density is an exponential
    family in :math:`q`, :math:`p_q(x) \propto \exp(xq/\sigma^2 - x^2/2\sigma^2 -
    \Lambda(q))` with the convex, increasing log-partition :math:`\Lambda(q) = \ln\int_0^w
    e^{yq/\sigma^2 - y^2/2\sigma^2}\,dy`. For :math:`q' = q + c`, :math:`c > 0`, the log
    ratio :math:`-xc/\sigma^2 + \Lambda(q+c) - \Lambda(q)` is linear in :math:`x`, so the
    supremum over outputs is at :math:`x = l`; the remaining :math:`\Lambda(q+c) -
    \Lambda(q)` increases in :math:`q` (convexity) and in :math:`c` (monotonicity), so it is
    largest at :math:`q' = u`:

    .. math:: h(c) = \Lambda(w) - \Lambda(w - c) = \frac{c(2w - c)}{2\sigma^2} - \rho(c),
              \qquad \rho(c) = \ln\frac{\Phi((w-c)/\sigma) - \Phi(-c/\sigma)}
              {\Phi(w/\sigma) - 1/2},

    (:math:`\rho` is the normaliser ratio of Lemma 2.3). Univariate:
    :math:`\epsilon^\star = h(\min(\Delta Q, w))`, a closed form. Multivariate: the loss
    separates over coordinates, :math:`\epsilon^\star = \max \sum_i h_i(c_i)` over
    :math:`0 \le c_i \le w_i`, :math:`\lVert c\rVert_2 \le \Delta Q`, where each :math:`h_i`
    is increasing and concave (:math:`h'' = -\Lambda''(w - c) \le 0`).

    So no grid over :math:`(q, c)` and no Lipschitz margin is needed: the suprema over the
    output and over the position are attained in closed form, and what remains (the shift
    vector) is handled exactly below.

    **Why the returned value is an upper bound.** The multivariate problem is a concave
    maximisation over a convex set. For every multiplier :math:`\lambda \ge 0` weak duality
    gives :math:`\epsilon^\star \le \lambda\Delta Q^2 + \sum_i \max_{c}[h_i(c) - \lambda
    c^2]`; each inner maximum of a concave function is bounded by the maximum of the
    pointwise minimum of two tangent lines at the ends of a bisection bracket of its
    maximiser (a concave function lies below its tangents), valid over the whole interval
    whatever the bracket. The multiplier is found by bisection; any value gives a valid
    bound, the optimal one a tight bound (Slater's condition holds). A relative rounding
    margin of :math:`8u` on the magnitude of the terms (:math:`u` the unit roundoff; the
    terms are evaluated to a few ulps, :math:`\rho` without cancellation) is added. The
    attained loss of the final configuration is the lower bound; the two agree to about
    :math:`10^{-13}` relative on the paper's Table 1.

    Parameters
    ----------
    sigma : float
        Scale of the parent Gaussian, finite and > 0.
    sensitivity : float
        :math:`\ell_2` sensitivity :math:`\Delta Q`, finite and > 0 (per coordinate the
        shift is capped at the width).
    lower, upper : float or 1-D array_like
        Finite bounds, ``lower < upper``; length-m arrays for the multivariate mechanism.
    details : bool, default False
        Return a :class:`LossCertificate` (upper, lower, shift) instead of the float.

    Returns
    -------
    float or LossCertificate

    Notes
    -----
    Departures from the paper: Theorems 2.4/3.4 bound the loss by adding the Gaussian-ratio
    bound at :math:`|x - q| = w` and :math:`|c| = \Delta Q` to the normaliser bound at
    :math:`q = l` (Lemma 2.2), two worst cases that cannot occur together; here the
    supremum is taken jointly. At the paper's :math:`\sigma^*` the exact loss is
    0.336, 0.357 and 0.404 :math:`\epsilon` on Table 1 at :math:`\epsilon` = 0.1, 1, 3.

    Examples
    --------
    >>> import numpy as np
    >>> from bndp.verify import bounded_gaussian_loss
    >>> round(bounded_gaussian_loss(1.0, 1.0, 0.0, 10.0), 12)    # h(1) = 19/2 - rho(1)
    8.979606598464
    """
    s = _pos(sigma, "sigma")
    dq = _pos(sensitivity, "sensitivity")
    w = _widths(lower, upper)
    j = _unit_exponent(w, dq)
    if _tangent_regime(s, dq, w):
        return _far_sigma_loss(s, dq, w, details)
    up, low, c = _certify.vf_bg_loss(math.ldexp(s, -j), math.ldexp(dq, -j),
                                  np.ascontiguousarray(np.ldexp(w, -j)))
    if details:
        return LossCertificate(float(up), float(low), np.ldexp(c, j))
    return float(up)


def bounded_laplace_loss(scale: Any, sensitivity: Any, lower: Any, upper: Any) -> float:
    r"""Exact worst-case privacy loss of the bounded Laplace mechanism [HABM20]_.

    .. math:: \epsilon^\star(b) = \frac{\Delta Q}{b} + \ln\Delta C(b),\qquad
              \Delta C(b) = \frac{C_{l+\Delta Q}}{C_l}

    (:math:`\Delta Q` capped at :math:`u - l`). For :math:`q' = q + c`, :math:`c > 0`, the
    log ratio is :math:`(|x - q'| - |x - q|)/b + \ln C_{q'} - \ln C_q`, largest
    (:math:`= c/b + \ldots`) for :math:`x \le q`; :math:`\ln C` is concave, so the
    normaliser term is largest at :math:`q = l`, and the total increases in :math:`c`
    (Lemma 3.3, Lemma A.4). So Theorem 3.5's condition is tight for :math:`\delta = 0`: the
    scale :math:`b^*` has loss exactly :math:`\epsilon` (up to rounding), and no smaller
    scale is :math:`\epsilon`-DP. A relative margin of :math:`8u` covers rounding.

    Parameters
    ----------
    scale : float
        :math:`b`, finite and > 0.
    sensitivity : float
        :math:`\Delta Q`, finite and > 0.
    lower, upper : float
        Finite, ``lower < upper``.

    Returns
    -------
    float
        The certified worst-case loss :math:`\epsilon^\star(b)`.

    Examples
    --------
    At the calibrated scale the loss is the target :math:`\epsilon`:

    >>> from bndp.calibrate import bounded_laplace_scale
    >>> from bndp.verify import bounded_laplace_loss
    >>> b = bounded_laplace_scale(1.0, 1.0, 0.0, 10.0)
    >>> round(bounded_laplace_loss(b, 1.0, 0.0, 10.0), 6)
    1.0
    """
    b = _pos(scale, "scale")
    dq = _pos(sensitivity, "sensitivity")
    w = _widths(lower, upper)
    if w.size != 1:
        raise ValueError("`lower` and `upper` must be scalars for the bounded Laplace mechanism")
    return float(_certify.vf_bl_loss(b, dq, float(w[0])))


def bounded_gaussian_tight_sigma(epsilon: Any, sensitivity: Any, lower: Any, upper: Any,
                                 *, sigma_paper: float | None = None) -> float:
    r"""Smallest :math:`\sigma` whose certified worst-case loss
    (:func:`bounded_gaussian_loss`) is at most :math:`\epsilon`.

    The search brackets the root of :math:`g(\sigma) = \epsilon -
    \bar\epsilon(\sigma)` (:math:`\bar\epsilon` the certified bound) between a feasible
    upper end, the paper's :math:`\sigma^*` (Theorems 2.4/3.4), and an infeasible lower end
    found by halving, then shrinks it with the library's single bracketing root finder to
    floating-point resolution and returns the feasible end: the returned :math:`\sigma`
    satisfies :math:`\bar\epsilon(\sigma) \le \epsilon` as evaluated, and
    :math:`\bar\epsilon` itself is an upper bound on the true loss. The loss decreases as
    :math:`\sigma` grows (checked numerically; the search does not rely on it for privacy,
    only for minimality). The result is at most the paper's :math:`\sigma^*` and the
    certified loss lies within a few ulps of :math:`\epsilon`.

    Departures from the paper: this is not the paper's calibration. Theorems 2.4/3.4 give a
    sufficient condition; this calibration uses the exact worst-case loss instead, which is
    0.34-0.40 :math:`\epsilon` at the paper's :math:`\sigma^*` on Table 1, so
    :math:`\sigma^2` drops by 55-66 % there with the same pure :math:`\epsilon`-DP
    guarantee.

    Parameters
    ----------
    epsilon : float
        The target worst-case privacy loss, finite and > 0.
    sensitivity : float
        :math:`\ell_2` sensitivity, finite and > 0.
    lower, upper : float or 1-D array_like
        As for :class:`bndp.BoundedGaussian`.
    sigma_paper : float, optional
        The paper's :math:`\sigma^*` if already known (saves one calibration).

    Returns
    -------
    float
        The smallest certified :math:`\sigma` (never above the paper's :math:`\sigma^*`).

    Examples
    --------
    >>> from bndp.calibrate import bounded_gaussian_sigma
    >>> from bndp.verify import bounded_gaussian_loss, bounded_gaussian_tight_sigma
    >>> s = bounded_gaussian_tight_sigma(1.0, 1.0, 0.0, 10.0)
    >>> bool(s < bounded_gaussian_sigma(1.0, 1.0, 0.0, 10.0))
    True
    >>> bool(bounded_gaussian_loss(s, 1.0, 0.0, 10.0) <= 1.0)
    True
    """
    eps = _pos(epsilon, "epsilon")
    dq = _pos(sensitivity, "sensitivity")
    w = _widths(lower, upper)
    if sigma_paper is None:
        sigma_paper = float(bounded_gaussian_sigma(eps, dq, lower, upper))
    return _tight_sigma(eps, dq, w, float(sigma_paper))


def _tight_sigma(eps: float, dq: float, w: np.ndarray, sigma_paper: float) -> float:
    """:func:`bounded_gaussian_tight_sigma` of checked inputs: ``eps`` and ``dq`` finite and
    > 0, ``w`` the box's widths (:func:`bndp._validation.box_widths`)."""
    j = _unit_exponent(w, dq)
    s, _ = _certify.vf_bg_tight_sigma(eps, math.ldexp(dq, -j),
                                   np.ascontiguousarray(np.ldexp(w, -j)),
                                   math.ldexp(float(sigma_paper), -j))
    s = math.ldexp(s, j)
    if not math.isfinite(s) or s > sigma_paper:
        return float(sigma_paper)   # the paper's condition already certifies sigma_paper
    return float(s)
