r"""The baselines the bounded mechanisms are compared against in their papers.

* :class:`ClampedLaplace`: Laplace noise, then the release clamped into :math:`[l, u]`
  (the "truncated" Laplace of Holohan et al. [HABM20b]_, Def. A.3, Example 1.3 and
  Figure 2). It is :math:`\epsilon`-DP with the ordinary scale :math:`b = \Delta/\epsilon`
  (clamping is post-processing) but puts point masses on the bounds.
* :class:`GeneralizedGaussian`: Liu's generalized Gaussian mechanism with :math:`p = 2` on
  a bounded domain [Liu19b]_, the comparator of Chen and Hale's Table 1 and Figure 1
  [CH24b]_: a Gaussian kernel truncated to the box, calibrated per coordinate at
  :math:`\epsilon/2` for the kernel and :math:`\epsilon/2` for the normaliser.

They exist so that users can see what bounded sampling with an exact calibration buys:
compare ``mse``/``variance`` with :class:`bndp.BoundedLaplace` and
:class:`bndp.BoundedGaussian`.

.. [HABM20b] N. Holohan, S. Antonatos, S. Braghin, P. Mac Aonghusa. "The Bounded Laplace
   Mechanism in Differential Privacy". Journal of Privacy and Confidentiality 10(1), 2020.
.. [Liu19b] F. Liu. "Generalized Gaussian Mechanism for Differential Privacy". IEEE TKDE
   31(4), 2019.
.. [CH24b] B. Chen, M. Hale. "The Bounded Gaussian Mechanism for Differential Privacy".
   Journal of Privacy and Confidentiality, 2024.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._random import RNGLike, as_generator
from .._validation import check_bounds, fast_real, positive_real
from ..calibrate.bounded import _generalized_gaussian
from ..distributions import truncated_normal
from ._law import ClippedLaw, TruncatedNormalLaw, out
from .unbounded import Laplace, LaplaceNoise

__all__ = ["ClampedLaplace", "GeneralizedGaussian"]


def _doc(summary: str, value: str = "", returns: str = "float or ndarray"):
    """Decorator: a method's numpydoc docstring, ``summary`` then the one ``value``
    parameter (``value``: its description) and the ``returns`` type."""
    desc = f"\n    {value}" if value else ""
    text = (f"{summary}\n\nParameters\n----------\nvalue : float or array_like{desc}\n\n"
            f"Returns\n-------\n{returns}\n")

    def deco(func):
        func.__doc__ = text
        return func
    return deco


def _sample_doc(summary: str, value: str):
    """Decorator: the docstring of a baseline's ``sample``."""
    text = (f"{summary}\n\nParameters\n----------\nvalue : float or array_like\n    {value}\n"
            "size : None, int or tuple of int\n    Output shape, to which ``value`` must "
            "broadcast.\nrng : None, int, SeedSequence, BitGenerator or Generator\n"
            "    Source of randomness.\n\nReturns\n-------\nfloat or ndarray\n")

    def deco(func):
        func.__doc__ = text
        return func
    return deco


def _loss_doc(summary: str, call: str, result: str):
    """Decorator: the docstring of a baseline's ``privacy_loss``, with its example ``call``
    (after ``bndp.``) and ``result``."""
    text = (f"{summary}\n\nReturns\n-------\nfloat\n\nExamples\n--------\n"
            f">>> import bndp\n>>> bndp.{call}.privacy_loss()\n{result}\n")

    def deco(func):
        func.__doc__ = text
        return func
    return deco


class ClampedLaplace(ClippedLaw, LaplaceNoise):
    r"""Laplace mechanism clamped into :math:`[l, u]`: :math:`M(q) = \min(u, \max(l, q + Z))`,
    :math:`Z \sim \mathrm{Laplace}(0, b)`, :math:`b = \Delta/\epsilon`.

    This is the "truncation" of Holohan et al. [HABM20b]_ (Def. A.3): :math:`\epsilon`-DP for
    a query of sensitivity :math:`\Delta` because clamping post-processes the Laplace
    mechanism, but the output has atoms :math:`P(M(q) = l) = \tfrac12 e^{-(q-l)/b}` and
    :math:`P(M(q) = u) = \tfrac12 e^{-(u-q)/b}`: at :math:`q = l` half of the releases are
    exactly :math:`l` (the singularity that spoils the naive Bayes variances of their
    Example 1.3 / Figure 2). :class:`bndp.BoundedLaplace` renormalises instead and needs the
    larger scale :math:`b^*`.

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    sensitivity : float
        :math:`\Delta`, finite and > 0.
    lower, upper : float
        Finite bounds, ``lower < upper``.

    Attributes
    ----------
    scale : float
        :math:`b = \Delta/\epsilon`.

    Examples
    --------
    >>> import bndp
    >>> m = bndp.ClampedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    >>> m.scale
    1.0
    >>> m.boundary_mass(0.0)
    (0.5, 2.2699964881242427e-05)
    >>> x = m.sample(0.0, size=1000, rng=1)
    >>> bool(((x >= 0) & (x <= 10)).all()), bool((x == 0).mean() > 0.4)
    (True, True)
    """

    __slots__ = ("epsilon", "sensitivity", "lower", "upper", "scale")
    _init_args = ("epsilon", "sensitivity", "lower", "upper")

    def __init__(self, epsilon: float, *, sensitivity: float, lower: float, upper: float) -> None:
        eps = positive_real(epsilon, "epsilon")
        dq = positive_real(sensitivity, "sensitivity")
        lo = fast_real(lower, "lower")
        hi = fast_real(upper, "upper")
        check_bounds(lo, hi)
        self._set(epsilon=eps, sensitivity=dq, lower=lo, upper=hi, scale=dq / eps)

    @_loss_doc("The worst-case privacy loss: ``epsilon`` (post-processing of the Laplace "
               "mechanism).",
               "ClampedLaplace(0.5, sensitivity=1.0, lower=0.0, upper=1.0)", "0.5")
    def privacy_loss(self) -> float:
        return self.epsilon

    @_sample_doc("""Release ``value`` (clamped into the bounds first): :class:`bndp.Laplace` noise
(compiled inverse CDF), then the result clamped into ``[lower, upper]``.""",
                 "True values.")
    def sample(self, value: Any, size: Any = None, rng: RNGLike = None):
        q = self._value(value)
        x = Laplace(self.epsilon, sensitivity=self.sensitivity).sample(q, size=size,
                    rng=as_generator(rng))
        return out(np.clip(x, self.lower, self.upper))

    @_doc(r"""The atoms :math:`(P(M(q) = l), P(M(q) = u)) = (\tfrac12 e^{-(q-l)/b},
\tfrac12 e^{-(u-q)/b})`.""", "True value(s) :math:`q`.", returns="tuple of float or ndarray")
    def boundary_mass(self, value: Any):
        return self._atoms(self._value(value))

    @_doc(r""":math:`E[(M(q) - q)^2] = b^2\,[2 - e^{-\alpha}(1+\alpha) - e^{-\gamma}(1+\gamma)]`,
:math:`\alpha = (q-l)/b`, :math:`\gamma = (u-q)/b`.""")
    def mse(self, value: Any):
        return out(self._mse(self._value(value)))

    def _ac(self, q: np.ndarray):
        return (q - self.lower) / self.scale, (self.upper - q) / self.scale

    def _mse(self, q: np.ndarray):
        a, c = self._ac(q)
        b2 = self.scale * self.scale
        return b2 * (2.0 - np.exp(-a) * (1.0 + a) - np.exp(-c) * (1.0 + c))

    def _bias(self, x: None, q: np.ndarray):
        a, c = self._ac(q)
        return 0.5 * self.scale * (np.exp(-a) - np.exp(-c))

    def _variance(self, x: None, q: np.ndarray):
        return self._mse(q) - self._bias(None, q) ** 2

    _law_docs = {
        "logpdf": r"""Log density w.r.t. Lebesgue measure on (l, u) plus unit masses at the
ends: :math:`-|x-q|/b - \log 2b` inside, the log of the atom's mass at ``lower`` and
``upper`` (:meth:`boundary_mass`), ``-inf`` outside [l, u].""",
        "pdf": r"""``exp(logpdf(x, value))``: the Laplace density on (l, u), the atom's mass
:math:`P(M(q) = x)` at ``lower`` and ``upper``, 0 outside.""",
        "cdf": r""":math:`P(M(q) \le x)`: 0 below ``lower``, the Laplace CDF
:math:`\tfrac12 e^{(x-q)/b}` (:math:`x \le q`), :math:`1 - \tfrac12 e^{-(x-q)/b}`
(:math:`x > q`) on [lower, upper) (at ``lower``: the atom there), 1 from ``upper`` on.""",
        "sf": r""":math:`P(M(q) > x)`: 1 below ``lower``, the Laplace survival function on
[lower, upper) (exact far in the upper tail), 0 from ``upper`` on.""",
        "logcdf": r":math:`\log P(M(q) \le x)`, without underflow.",
        "logsf": r":math:`\log P(M(q) > x)`, without underflow.",
        "ppf": r"""Smallest ``x`` with :math:`P(M(q) \le x) \ge p`: ``lower`` for ``p`` up to
the lower atom, ``upper`` above :math:`P(M(q) < u)`, the Laplace quantile between;
``p`` in [0, 1].""",
        "isf": r"""Smallest ``x`` with :math:`P(M(q) > x) \le p`: ``upper`` for ``p`` below the
upper atom, ``lower`` from :math:`P(M(q) > l)` on, the Laplace upper quantile between;
``p`` in [0, 1].""",
        "mean": r""":math:`E[M(q)] = q + \tfrac b2 (e^{-(q-l)/b} - e^{-(u-q)/b})`.""",
        "bias": r""":math:`E[M(q)] - q = \tfrac b2 (e^{-(q-l)/b} - e^{-(u-q)/b})`.""",
        "variance": """Variance of the release, ``mse - bias**2``.""",
    }
    _law_examples = {
        "cdf": ">>> import bndp\n>>> m = bndp.ClampedLaplace(1.0, sensitivity=1.0, lower=0.0, "
               "upper=10.0)\n>>> m.cdf(0.0, 0.0), m.cdf(-1e-9, 0.0)  # the atom at lower\n"
               "(0.5, 0.0)",
        "ppf": ">>> import bndp\n>>> m = bndp.ClampedLaplace(1.0, sensitivity=1.0, lower=0.0, "
               "upper=10.0)\n>>> m.ppf(0.5, 0.0), round(m.ppf(0.75, 0.0), 12)\n"
               "(0.0, 0.69314718056)",
    }


class GeneralizedGaussian(TruncatedNormalLaw):
    r"""Liu's generalized Gaussian mechanism (:math:`p = 2`) on an interval or a box
    [Liu19b]_, the comparator of [CH24b]_ Table 1 and Figure 1.

    Releases :math:`N(q, \sigma_{GG}^2 I)` truncated to :math:`\prod_i [l_i, u_i]`, with
    :math:`\sigma_{GG}` of :func:`bndp.calibrate.generalized_gaussian_sigma`:

    .. math:: \sigma_{GG}^2 = \frac1\epsilon \sum_i (2 (u_i - l_i) \Delta_i + \Delta_i^2).

    It is :math:`\epsilon`-DP: the kernels' log ratio is at most :math:`\epsilon/2`, and so
    is their normalisers'. :class:`bndp.BoundedGaussian` uses the same output law with the
    smaller scale of Chen and Hale (about 35-38 % less :math:`\sigma^2` in their setting).

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    sensitivity : float or 1-D array_like
        Per-coordinate sensitivities :math:`\Delta_i` (not the :math:`\ell_2` sensitivity).
    lower, upper : float or 1-D array_like
        Finite bounds of the interval or box.

    Attributes
    ----------
    scale : float
        :math:`\sigma_{GG}`, the parent Gaussian's standard deviation.

    Notes
    -----
    The paper-level ambiguity (whether Liu's :math:`\sigma` parameterises
    :math:`e^{-|x|^2/\sigma^2}` or :math:`e^{-x^2/(2\sigma^2)}`) is discussed in
    :func:`bndp.calibrate.generalized_gaussian_sigma`; this class uses the latter, under
    which the guarantee above is proved.

    Examples
    --------
    >>> import bndp
    >>> m = bndp.GeneralizedGaussian(1.0, sensitivity=[4.0, 2.0], lower=[0.0, 1.0],
    ...                              upper=[10.0, 9.0])
    >>> round(m.scale ** 2, 6)
    132.0
    >>> x = m.sample([5.0, 5.0], size=(100, 2), rng=0)
    >>> bool(((x >= [0, 1]) & (x <= [10, 9])).all())
    True
    """

    __slots__ = ("epsilon", "sensitivity", "lower", "upper", "scale")
    _init_args = ("epsilon", "sensitivity", "lower", "upper")

    def __init__(self, epsilon: float, *, sensitivity: Any, lower: Any, upper: Any) -> None:
        sigma, lo, hi, sens = _generalized_gaussian(epsilon, sensitivity, lower, upper)
        lo, hi = np.broadcast_arrays(lo, hi)
        lo = np.array(lo, dtype=np.float64)
        hi = np.array(hi, dtype=np.float64)
        sens = sens.copy()
        for a in (lo, hi, sens):
            a.setflags(write=False)
        self._set(epsilon=float(epsilon), sensitivity=sens if sens.ndim else float(sens),
                  lower=float(lo) if lo.ndim == 0 else lo,
                  upper=float(hi) if hi.ndim == 0 else hi, scale=sigma)

    @_loss_doc("The guaranteed privacy loss, ``epsilon``.",
               "GeneralizedGaussian(2.0, sensitivity=1.0, lower=0.0, upper=1.0)", "2.0")
    def privacy_loss(self) -> float:
        return self.epsilon

    @_sample_doc("""Release ``value`` (clamped into the box first) by inverse CDF
(:func:`bndp.truncated_normal`).""",
                 "True values (the last axis is the box's coordinates).")
    def sample(self, value: Any, size: Any = None, rng: RNGLike = None):
        q = self._value(value)
        shape = np.broadcast_shapes(np.shape(q), np.shape(self.lower)) if size is None else size
        return truncated_normal(q, self.scale, self.lower, self.upper, size=shape, rng=rng)

    def _params(self, q: np.ndarray) -> list[Any]:
        return [q, self.scale, self.lower, self.upper]

    _law_docs = {
        "logpdf": "Log density per coordinate; ``-inf`` outside the box.",
        "pdf": r""":math:`\phi((x-q)/\sigma)/(\sigma Z)` per coordinate, :math:`a = (l-q)/\sigma`,
:math:`b = (u-q)/\sigma`, :math:`Z = \Phi(b) - \Phi(a)`; 0 outside the box.""",
        "cdf": r""":math:`(\Phi((x-q)/\sigma) - \Phi(a))/Z` per coordinate (the coordinates are
independent).""",
        "sf": r""":math:`P(X > x)` per coordinate, in log space (not ``1 - cdf``).""",
        "logcdf": r":math:`\log P(X \le x)` per coordinate, without underflow.",
        "logsf": r":math:`\log P(X > x)` per coordinate, without underflow.",
        "ppf": "Quantile function per coordinate; ``p`` in [0, 1] (0 gives ``lower``, 1 gives "
               "``upper``).",
        "isf": r"""Inverse survival function per coordinate: the ``x`` with :math:`P(X > x) = p`,
from the upper tail in log space.""",
        "mean": r":math:`E[M(q)] = q + \sigma(\phi(a) - \phi(b))/Z` per coordinate.",
        "bias": r""":math:`E[M(q)] - q = \sigma(\phi(a) - \phi(b))/Z` per coordinate.""",
        "variance": r"""Per-coordinate variance of the release,
:math:`\sigma^2[1 + (a\phi(a) - b\phi(b))/Z - ((\phi(a) - \phi(b))/Z)^2]`.""",
    }
    _law_examples = {
        "cdf": ">>> import bndp\n>>> m = bndp.GeneralizedGaussian(2.0, sensitivity=1.0, "
               "lower=0.0, upper=3.0)\n>>> m.cdf(1.5, 1.5)\n0.5",
    }
