r"""The unbounded Gaussian and Laplace mechanisms.

They add noise on the whole real line (no output domain), with the same interface as the
bounded mechanisms, so that the cost of boundedness can be measured against them.

.. [ZWB19] J. Zhao, T. Wang, T. Bai, M. Yang, K.-Y. Lam, Z. Xu, S. Shi, H. Yu. "Reviewing
   and Improving the Gaussian Mechanism for Differential Privacy". arXiv:1911.12060, 2019.
.. [DR14] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential Privacy".
   Foundations and Trends in Theoretical Computer Science 9(3-4), 2014.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from .. import _dispatch
from .._core import fill as _fill
from .._random import RNGLike, as_generator
from .._validation import as_float_array, check_finite, fast_real, positive_real
from ..calibrate import GAUSSIAN_METHODS, gaussian_delta, gaussian_sigma
from .._columns import Nulls, columnar
from ._law import LawMechanism, sample_doc

__all__ = ["Gaussian", "Laplace"]


class GaussianNoise(LawMechanism):
    """Hooks of the law :math:`N(q, \\sigma^2)` (``self.sigma``): :class:`Gaussian`'s law,
    and the noise that :class:`bndp.RectifiedGaussian` clips."""

    __slots__ = ()
    sigma: float

    def _logpdf(self, x: np.ndarray, q: np.ndarray):
        z = (x - q) / self.sigma
        return -0.5 * z * z - math.log(self.sigma) - 0.5 * math.log(2 * math.pi)

    def _cdf(self, x: np.ndarray, q: np.ndarray):
        return special.ndtr((x - q) / self.sigma)

    def _sf(self, x: np.ndarray, q: np.ndarray):
        return special.ndtr(-((x - q) / self.sigma))

    def _logsf(self, x: np.ndarray, q: np.ndarray):
        return special.log_ndtr(-((x - q) / self.sigma))

    def _logcdf(self, x: np.ndarray, q: np.ndarray):
        return special.log_ndtr((x - q) / self.sigma)

    def _isf(self, p: np.ndarray, q: np.ndarray):
        return q - self.sigma * special.ndtri(p)

    def _ppf(self, p: np.ndarray, q: np.ndarray):
        return q + self.sigma * special.ndtri(p)


class LaplaceNoise(LawMechanism):
    """Hooks of the law :math:`q + \\mathrm{Laplace}(0, b)` (``self.scale``): :class:`Laplace`'s
    law, and the noise that :class:`bndp.ClampedLaplace` clamps."""

    __slots__ = ()
    scale: float

    def _logpdf(self, x: np.ndarray, q: np.ndarray):
        return -np.abs((x - q) / self.scale) - math.log(2.0 * self.scale)

    def _lower_tail(self, z: np.ndarray, log: bool):
        """P(Z <= z) (or its log) of the standard Laplace; the upper tail is that at -z."""
        if log:
            return np.where(z <= 0, math.log(0.5) + np.minimum(z, 0),
                            np.log1p(-0.5 * np.exp(-np.maximum(z, 0))))
        return np.where(z <= 0, 0.5 * np.exp(np.minimum(z, 0)),
                        -0.5 * np.expm1(-np.maximum(z, 0)) + 0.5)

    def _cdf(self, x: np.ndarray, q: np.ndarray):
        return self._lower_tail((x - q) / self.scale, False)

    def _sf(self, x: np.ndarray, q: np.ndarray):
        return self._lower_tail(-((x - q) / self.scale), False)

    def _logcdf(self, x: np.ndarray, q: np.ndarray):
        return self._lower_tail((x - q) / self.scale, True)

    def _logsf(self, x: np.ndarray, q: np.ndarray):
        return self._lower_tail(-((x - q) / self.scale), True)

    def _ppf(self, p: np.ndarray, q: np.ndarray):
        with np.errstate(divide="ignore"):
            z = np.where(p < 0.5, np.log(2.0 * p), -np.log(2.0 * (1.0 - p)))
        return q + self.scale * z

    def _isf(self, p: np.ndarray, q: np.ndarray):
        with np.errstate(divide="ignore"):
            z = np.where(p < 0.5, -np.log(2.0 * p), np.log(2.0 * (1.0 - p)))
        return q + self.scale * z


class _Unbounded(LawMechanism):
    """Location-scale noise ``value + scale * Z`` on the real line."""

    __slots__ = ()
    _value_doc = " (finite)"
    _law_defaults = {"variance": (0.0,)}

    def _value(self, value: Any, on_outside: str = "clip") -> np.ndarray:
        q = as_float_array(value, "value")
        check_finite(q, "value")
        return q

    def _sample(self, one, fill, fill_rows, value: Any, size: Any, rng: RNGLike):
        q = self._value(value)
        gen = as_generator(rng)
        return _dispatch.sample(one, fill, fill_rows, [q, np.float64(self.scale)], size, gen)

    def _mean(self, x: None, q: np.ndarray):
        return q

    def _bias(self, x: None, q: np.ndarray):
        return np.zeros_like(q)

    def _variance(self, x: None, q: np.ndarray):
        return np.full(np.shape(q), self._noise_var())


class Gaussian(GaussianNoise, _Unbounded):
    r"""Gaussian mechanism: :math:`M(q) = q + N(0, \sigma^2)` per coordinate.

    :math:`\sigma` comes from :func:`bndp.calibrate.gaussian_sigma` with the chosen
    ``calibration`` (default ``"optimal"``: the least Gaussian noise for
    :math:`(\epsilon,\delta)`-DP, Theorem 2 of [ZWB19]_). Calibrations ``"pdp_optimal"``,
    ``"zhao3"`` and ``"zhao4"`` target probabilistic DP (pDP), a stronger notion that costs
    more noise; the classical ``"dwork2006"``/``"dwork2014"`` are proved only for
    :math:`\epsilon \le 1` (see ``allow_unproven``).

    .. math:: p_q(x) = \frac{1}{\sigma\sqrt{2\pi}}\, e^{-(x-q)^2/(2\sigma^2)}

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    delta : float
        In (0, 1) (in (0, 1/2) for ``"zhao2"``).
    sensitivity : float
        :math:`\ell_2` sensitivity of the query, finite and > 0. For a vector query, every
        coordinate gets independent noise of the same :math:`\sigma`.
    calibration : str, default "optimal"
        A key of :data:`bndp.calibrate.GAUSSIAN_METHODS`.
    allow_unproven : bool, default False
        Passed to :func:`~bndp.calibrate.gaussian_sigma`.

    Attributes
    ----------
    sigma : float
        The noise standard deviation (``scale`` is an alias).
    notion : str
        ``"DP"`` or ``"pDP"``: what the calibration guarantees.

    Examples
    --------
    >>> import bndp
    >>> m = bndp.Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    >>> round(m.sigma, 6)
    3.730632
    """

    __slots__ = ("epsilon", "delta", "sensitivity", "calibration", "allow_unproven", "sigma",
                 "notion")
    _init_args = ("epsilon", "delta", "sensitivity", "calibration", "allow_unproven")
    _removed_attributes = {"privacy_delta": ("Gaussian.privacy_profile", "0.8.0")}

    def __init__(self, epsilon: float, *, delta: float, sensitivity: float,
                 calibration: str = "optimal", allow_unproven: bool = False) -> None:
        eps = fast_real(epsilon, "epsilon")
        dl = fast_real(delta, "delta")
        dq = fast_real(sensitivity, "sensitivity")
        if not isinstance(allow_unproven, (bool, np.bool_)):
            raise TypeError(f"`allow_unproven` must be a bool; got {allow_unproven!r}")
        sigma = gaussian_sigma(eps, dq, delta=dl, calibration=calibration,
                               allow_unproven=bool(allow_unproven))
        self._set(epsilon=eps, delta=dl, sensitivity=dq, calibration=calibration,
                  allow_unproven=bool(allow_unproven), sigma=float(sigma),
                  notion=GAUSSIAN_METHODS[calibration])

    @property
    def scale(self) -> float:
        """Alias of :attr:`sigma`."""
        return self.sigma

    def _noise_var(self) -> float:
        return self.sigma * self.sigma

    @columnar
    @sample_doc(value="True values, finite.")
    def sample(self, value: Any, size: Any = None, rng: RNGLike = None, *,
               nulls: Nulls = "raise"):
        return self._sample(_fill.gn_one, _fill.gn_fill, _fill.gn_fill_rows, value, size, rng)

    _law_docs = {
        "cdf": r":math:`\Phi((x - q)/\sigma)`.",
        "sf": r""":math:`P(X > x) = \Phi(-(x - q)/\sigma)` (not ``1 - cdf``: exact far in the
upper tail).""",
        "logsf": r":math:`\log\Phi(-(x - q)/\sigma)`, without underflow.",
        "logcdf": r":math:`\log\Phi((x - q)/\sigma)`, without underflow.",
        "isf": r"""Inverse survival function :math:`q - \sigma\Phi^{-1}(p)` (accurate for tiny
``p``, where ``ppf(1 - p)`` cannot be formed).""",
        "ppf": r":math:`q + \sigma\Phi^{-1}(p)` for ``p`` in [0, 1] (infinite at 0 and 1).",
        "mean": ":math:`E[M(q)] = q` (the noise is centred).",
        "bias": "0: the mechanism is unbiased.",
        "variance": r"Variance of the released value, :math:`\sigma^2` (independent of "
                    "``value``).",
    }

    def privacy_profile(self, epsilon: Any):
        """Exact delta of this mechanism at ``epsilon``, its privacy profile (the pDP
        profile for the pDP methods), from :func:`bndp.calibrate.gaussian_delta`; what
        :func:`bndp.verify.privacy_profile` returns for it. Exact, not a bound (the bounded
        Laplace's counterparts: :func:`bndp.verify.bounded_laplace_profile`, exact, and
        :func:`bndp.calibrate.bounded_laplace_delta_bound`, Theorem 3.5's upper bound)."""
        return gaussian_delta(self.sigma, epsilon, self.sensitivity,
                              notion=self.notion.lower())


class Laplace(LaplaceNoise, _Unbounded):
    r"""Laplace mechanism: :math:`M(q) = q + \mathrm{Laplace}(0, b)`, :math:`b = \Delta/\epsilon`,
    which is :math:`\epsilon`-DP for a query with :math:`\ell_1` sensitivity :math:`\Delta`
    ([DR14]_, Theorem 3.6).

    .. math:: p_q(x) = \frac{1}{2b}\, e^{-|x-q|/b}

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    sensitivity : float
        :math:`\ell_1` sensitivity, finite and > 0.

    Attributes
    ----------
    scale : float
        :math:`b = \Delta/\epsilon` (variance :math:`2b^2`).

    Examples
    --------
    >>> import bndp
    >>> bndp.Laplace(epsilon=0.5, sensitivity=1.0).scale
    2.0
    """

    __slots__ = ("epsilon", "sensitivity", "scale")
    _init_args = ("epsilon", "sensitivity")

    def __init__(self, epsilon: float, *, sensitivity: float) -> None:
        eps = positive_real(epsilon, "epsilon")
        dq = positive_real(sensitivity, "sensitivity")
        self._set(epsilon=eps, sensitivity=dq, scale=dq / eps)

    def _noise_var(self) -> float:
        return 2.0 * self.scale * self.scale

    @columnar
    @sample_doc("Release ``value`` (scalar or array; one independent draw per element), "
                "by the closed-form inverse CDF of one open-interval uniform.",
                value="True values, finite.")
    def sample(self, value: Any, size: Any = None, rng: RNGLike = None, *,
               nulls: Nulls = "raise"):
        return self._sample(_fill.lp_one, _fill.lp_fill, _fill.lp_fill_rows, value, size, rng)

    _law_docs = {
        "cdf": r""":math:`\tfrac12 e^{z}` for :math:`z = (x-q)/b \le 0`,
:math:`1 - \tfrac12 e^{-z}` otherwise.""",
        "sf": r""":math:`P(X > x)`: :math:`\tfrac12 e^{-z}` for :math:`z = (x-q)/b \ge 0`
(exact far in the upper tail), :math:`1 - \tfrac12 e^{z}` otherwise.""",
        "logsf": r":math:`\log P(X > x)`: :math:`\log\tfrac12 - z` for :math:`z \ge 0`.",
        "logcdf": r":math:`\log P(X \le x)`: :math:`\log\tfrac12 + z` for :math:`z \le 0`.",
        "isf": r"""Inverse survival function :math:`q - b\log(2p)` for p < 1/2 (accurate for
tiny ``p``), :math:`q + b\log(2(1-p))` otherwise.""",
        "ppf": r"""Quantile :math:`q + b\log(2p)` for p < 1/2, :math:`q - b\log(2(1-p))`
otherwise.""",
        "mean": ":math:`E[M(q)] = q` (the noise is centred).",
        "bias": "0: the mechanism is unbiased.",
        "variance": "Variance of the released value, :math:`2b^2` (independent of ``value``).",
    }
