r"""Bounded-support Gaussian mechanisms for private training (Hu et al. [HMSCG24]_).

:class:`RectifiedGaussian` releases :math:`\mathrm{clip}(\theta + \sigma Z, l, u)`,
:class:`TruncatedGaussian` releases :math:`N(\theta, \sigma^2)` conditioned on
:math:`[l, u]`, coordinate by coordinate on a box :math:`S = \prod_j [l_j, u_j]` fixed in
advance (never centred at the data). :class:`StochasticSign` releases
:math:`\mathrm{sign}(\theta + \sigma Z)`, the paper's comparison baseline. Their
per-instance Renyi DP and Fisher information loss are in :mod:`bndp.accounting`.

The true value :math:`\theta` of the formulas (the paper's notation) is the ``value``
argument of every method.

.. [HMSCG24] S. Hu, S. Mahloujifar, V. Smith, K. Chaudhuri, C. Guo. "Privacy Amplification
   for the Gaussian Mechanism via Bounded Support". arXiv:2403.05598, 2024.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri

from .. import _core
from .._dispatch import _shape2, as_2d
from .._deprecate import renamed_parameter
from .._random import RNGLike, as_generator
from .._validation import as_float_array, as_probability, check_bounds, check_finite, fast_real
from ..distributions import truncnorm_eval, truncnorm_tail_eval
from .._columns import Nulls, columnar
from . import _torch_noise
from ._base import Mechanism

__all__ = ["RectifiedGaussian", "TruncatedGaussian", "StochasticSign"]

_RECT, _TRUNC, _SIGN = 0, 1, 2


def _check_sigma(sigma: Any) -> float:
    s = fast_real(sigma, "sigma")
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"`sigma` must be finite and > 0; got {s!r}")
    return s


def _frozen(a: np.ndarray) -> Any:
    if a.ndim == 0:
        return float(a)
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _as_value(value: Any) -> np.ndarray:
    th = as_float_array(value, "value")
    check_finite(th, "value")
    return th


def _out(shape: tuple[int, ...]):
    out = np.empty(shape)
    return out, out.reshape(_shape2(shape))


def _ret(out: np.ndarray):
    return float(out) if out.ndim == 0 else out


def _device_sample(self: Any, value: Any, rng: RNGLike = None, device_rng: str = "bndp"):
    # A torch tensor on a GPU (or any non-CPU device): the draw runs there with torch
    # elementwise operations (bndp.mechanisms._torch_noise), the tensor never leaves it.
    import torch

    _torch_noise.check_device_rng(device_rng)
    th = value.detach()
    if th.is_complex() or th.dtype == torch.bool:
        raise TypeError(f"`value` must hold real numbers; got a tensor of dtype {th.dtype}")
    if not bool(torch.isfinite(th).all()):
        raise ValueError("`value` must be finite")
    lo = torch.tensor(np.asarray(self.lower, dtype=np.float64), device=th.device)
    hi = torch.tensor(np.asarray(self.upper, dtype=np.float64), device=th.device)
    try:
        torch.broadcast_shapes(th.shape, lo.shape, hi.shape)
    except RuntimeError:
        raise ValueError(f"`value` of shape {tuple(th.shape)} does not broadcast with the "
                         f"bounds of shape {np.broadcast_shapes(lo.shape, hi.shape)}") from None
    out = _torch_noise.sample_box(self._mech, th, self.sigma, lo, hi, as_generator(rng),
                                  device_rng)
    return out.to(th.dtype if th.is_floating_point() else torch.float64)


_SAMPLE_DOC = """{summary}

Parameters
----------
value : float, array_like, Series, pyarrow (Chunked)Array, masked array or tensor
    {value}
rng : None, int, SeedSequence, BitGenerator or Generator
    Source of randomness (see :func:`bndp.default_rng`).
device_rng : {{"bndp", "torch"}}
    Source of the uniforms for a tensor on a GPU{device_rng}.
nulls : {{"raise", "keep"}}, default "raise"
    Missing values (NaN, None, pd.NA, Arrow nulls, masked entries): ``"raise"``
    refuses them; ``"keep"`` leaves them missing in the result, drawing no noise
    for them{nulls}.
"""


def _sample_doc(summary: str, value: str, device_rng: str, nulls: str = "",
                rest: str = ""):
    """Decorator: the docstring of a gradient mechanism's ``sample`` (``rest``: the sections
    after Parameters, indented as in a method)."""
    def deco(func):
        func.__doc__ = (_SAMPLE_DOC.format(summary=summary, value=value, device_rng=device_rng,
                                           nulls=nulls) + "\n" + inspect.cleandoc(rest) + "\n")
        return func
    return deco


def _tail_doc(summary: str, returns: str, example: str, result: str, arg: str = "x",
              arg_doc: str = "Points at which to evaluate."):
    """Decorator: the docstring of a :class:`TruncatedGaussian` tail method, its example
    ``example`` on ``m = TruncatedGaussian(sigma=1.0, lower=-50.0, upper=50.0)``."""
    def deco(func):
        func.__doc__ = (f"{summary}\n\nParameters\n----------\n{arg} : float or array_like\n"
                        f"    {arg_doc}\nvalue : float or array_like\n    True value, finite, "
                        f"broadcasting with ``{arg}`` and the bounds.\n\nReturns\n-------\n"
                        f"float or ndarray\n    {returns}\n\nExamples\n--------\n"
                        ">>> import bndp\n>>> m = bndp.TruncatedGaussian(sigma=1.0, "
                        f"lower=-50.0, upper=50.0)\n>>> {example}\n{result}\n")
        return func
    return deco


class _GradientMechanism(Mechanism):
    """Shared parts of the gradient mechanisms: ``sigma`` (alias ``scale``), the draw, ``var``."""

    __slots__ = ()
    _mech = -1
    sigma: float

    @property
    def scale(self) -> float:
        """Alias of :attr:`sigma` (every mechanism's ``scale`` is its noise scale)."""
        return self.sigma

    _device_sample = _device_sample

    def _draw(self, value: Any, rng: RNGLike, device_rng: str):
        if device_rng not in ("bndp", "torch"):
            raise ValueError(f'`device_rng` must be "bndp" or "torch"; got {device_rng!r}')
        th, lo, hi, shape = self._params(value)
        gen = as_generator(rng)
        out, out2 = _out(shape)
        if out.size:
            _core.gr_sample_rows(self._mech, gen, as_2d(th, shape), self.sigma,
                                 as_2d(lo, shape), as_2d(hi, shape), out2)
        return _ret(out)

    def _bias(self, value: Any):
        th = _as_value(value)
        return _ret(np.asarray(self.mean(th)) - th)


class _BoxGaussian(_GradientMechanism):
    """Shared parts of the two bounded-support Gaussians: support on a box, ``sigma``."""

    _init_args = ("sigma", "lower", "upper")
    lower: Any
    upper: Any

    def __init__(self, sigma: float, *, lower: Any, upper: Any) -> None:
        s = _check_sigma(sigma)
        lo = as_float_array(lower, "lower")
        hi = as_float_array(upper, "upper")
        check_bounds(lo, hi)
        self._set(sigma=s, lower=_frozen(lo), upper=_frozen(hi))

    # shapes ---------------------------------------------------------------------------
    def _params(self, value: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
        th = _as_value(value)
        lo = np.asarray(self.lower, dtype=np.float64)
        hi = np.asarray(self.upper, dtype=np.float64)
        try:
            shape = np.broadcast_shapes(th.shape, lo.shape, hi.shape)
        except ValueError:
            raise ValueError(
                f"`value` of shape {th.shape} does not broadcast with the bounds of shape "
                f"{np.broadcast_shapes(lo.shape, hi.shape)}"
            ) from None
        return th, lo, hi, shape

    @columnar
    @_sample_doc("Release the mechanism's output at the true value ``value``.",
                 "True query value (:math:`\\theta` in [HMSCG24]_; in DP-SGD: the summed,\n"
                 "    L-infinity-clipped gradient), finite, any shape broadcasting with the\n"
                 "    bounds; each coordinate is released independently.", " (see Notes)", " (scalar bounds only)", """
        Returns
        -------
        float, ndarray of float64, Series, pyarrow array, masked array or tensor
            Shape: the broadcast shape of ``value`` and the bounds (a float when all are
            scalars), of the kind of ``value``. Every value lies in ``[lower, upper]``.

        Notes
        -----
        Tensors: ``value`` may be a torch tensor or an array-API array (``tensor`` above);
        the result has its type, device, shape and floating dtype (float64 for integer
        input), rounded from the float64 draw at the end. On the CPU the compiled kernels
        draw through a NumPy view; on a GPU the draw runs on the device (inverse CDF in
        torch, float64, log-space tails; see :mod:`bndp.mechanisms._torch_noise`), and
        ``device_rng`` says where its uniforms come from: ``"bndp"`` (default) from
        ``rng``'s stream (the secure default stream unless you pass another), ``"torch"``
        from torch's generator on the device seeded with 64 bits of that stream (faster,
        not cryptographically secure). ``device_rng`` has no effect on the CPU, nor for a
        GPU tensor with missing values (NaN), which is drawn on the host.
        """)
    def sample(self, value: Any, rng: RNGLike = None, *, device_rng: str = "bndp",
               nulls: Nulls = "raise"):
        return self._draw(value, rng, device_rng)

    def _moment(self, value: Any, what: int):
        raise NotImplementedError

    def mean(self, value: Any):
        """Expected output :math:`E[M(\\theta)]` per coordinate."""
        return self._moment(value, 0)

    def variance(self, value: Any):
        """Variance of the output per coordinate."""
        return self._moment(value, 1)

    def bias(self, value: Any):
        """:math:`E[M(\\theta)] - \\theta` per coordinate (the box shrinks outputs toward S)."""
        return self._bias(value)

    def logpdf(self, x: Any, value: Any):
        raise NotImplementedError

    def pdf(self, x: Any, value: Any):
        """``exp(logpdf(x, value))``."""
        return _ret(np.exp(np.asarray(self.logpdf(x, value))))


class RectifiedGaussian(_BoxGaussian):
    r"""Rectified Gaussian mechanism :math:`N^R(\theta, \sigma^2, S)` (Def. 3.1 of
    [HMSCG24]_): the Gaussian mechanism followed by clipping to a fixed box.

    .. math:: M(\theta) = \mathrm{clip}(\theta + \sigma Z,\; l,\; u), \qquad Z \sim N(0, I).

    Per coordinate the law is mixed: density :math:`\phi((x-\theta)/\sigma)/\sigma` on
    :math:`(l, u)` and two atoms,
    :math:`P(X = l) = \Phi((l-\theta)/\sigma)`, :math:`P(X = u) = \Phi((\theta-u)/\sigma)`.
    As post-processing of the Gaussian mechanism it is never less private than it (Prop.
    4.6), and much more private for coordinates whose true value lies outside or near the
    edge of S (Lemma 4.4; see :func:`bndp.accounting.per_instance_rdp`).

    Parameters
    ----------
    sigma : float
        Absolute noise standard deviation (not a multiplier), finite and > 0. In DP-SGD
        with summed gradients: noise multiplier times the L-infinity clipping bound.
    lower, upper : float or array_like
        The support S, fixed independently of the data: finite, ``lower < upper``
        elementwise; scalars (the same interval for every coordinate, the paper's
        :math:`[-a, a]`) or arrays broadcasting with ``value`` (per-coordinate bounds).

    Notes
    -----
    :meth:`logpdf` is the density with respect to Lebesgue measure plus unit point masses at
    ``lower`` and ``upper``: at those two points it returns the log of the atom's mass.

    Departures from the paper: Def. 3.1 asks :math:`\mu > 0`; any real :math:`\theta` is
    allowed here (the definition does not need it).

    Examples
    --------
    >>> import bndp
    >>> m = bndp.RectifiedGaussian(sigma=1.0, lower=-1.0, upper=1.0)
    >>> x = m.sample([0.3, 5.0, -2.0], rng=0)
    >>> bool(((x >= -1) & (x <= 1)).all())
    True
    """

    _mech = _RECT

    def _moment(self, value: Any, what: int):
        th, lo, hi, shape = self._params(value)
        out, out2 = _out(shape)
        if out.size:
            _core.gr_rect_moments_rows(what, as_2d(th, shape), self.sigma, as_2d(lo, shape),
                                       as_2d(hi, shape), out2)
        return _ret(out)

    def atoms(self, value: Any):
        """``(P(X = lower), P(X = upper))`` per coordinate."""
        th, lo, hi, shape = self._params(value)
        s = self.sigma
        return (_ret(np.broadcast_to(ndtr((lo - th) / s), shape).copy()),
                _ret(np.broadcast_to(ndtr((th - hi) / s), shape).copy()))

    def logpdf(self, x: Any, value: Any):
        """Log density w.r.t. Lebesgue measure on (lower, upper) plus unit masses at the ends
        (there: log of the atom's mass); ``-inf`` outside [lower, upper]."""
        xa = as_float_array(x, "x")
        th, lo, hi, shape = self._params(value)
        s = self.sigma
        xa, th, lo, hi = np.broadcast_arrays(xa, th, lo, hi)
        z = (xa - th) / s
        out = np.where((xa > lo) & (xa < hi), -0.5 * z * z - 0.5 * math.log(2 * math.pi)
                       - math.log(s), -np.inf)
        out = np.where(xa == lo, log_ndtr((lo - th) / s), out)
        out = np.where(xa == hi, log_ndtr((th - hi) / s), out)
        return _ret(np.asarray(out, dtype=np.float64))

    def cdf(self, x: Any, value: Any):
        """:math:`P(X \\le x)`: 0 below ``lower``, :math:`\\Phi((x-\\theta)/\\sigma)` on
        [lower, upper), 1 from ``upper`` on."""
        xa = as_float_array(x, "x")
        th, lo, hi, shape = self._params(value)
        xa, th, lo, hi = np.broadcast_arrays(xa, th, lo, hi)
        out = np.where(xa < lo, 0.0, np.where(xa >= hi, 1.0, ndtr((xa - th) / self.sigma)))
        return _ret(np.asarray(out, dtype=np.float64))

    def _tail(self, what: str, x: Any, value: Any):
        xa = as_probability(x) if what in ("isf", "ppf") else as_float_array(x, "x")
        th, lo, hi, shape = self._params(value)
        xa, th, lo, hi = np.broadcast_arrays(xa, th, lo, hi)
        s = self.sigma
        with np.errstate(divide="ignore"):
            if what == "isf":
                out = np.clip(th - s * ndtri(xa), lo, hi)
            elif what == "ppf":
                out = np.clip(th + s * ndtri(xa), lo, hi)
            elif what == "sf":
                out = np.where(xa < lo, 1.0, np.where(xa >= hi, 0.0, ndtr((th - xa) / s)))
            elif what == "logsf":
                out = np.where(xa < lo, 0.0,
                               np.where(xa >= hi, -np.inf, log_ndtr((th - xa) / s)))
            else:
                out = np.where(xa < lo, -np.inf,
                               np.where(xa >= hi, 0.0, log_ndtr((xa - th) / s)))
        return _ret(np.asarray(out, dtype=np.float64))

    def sf(self, x: Any, value: Any):
        """:math:`P(X > x)`: 1 below ``lower``, :math:`\\Phi((\\theta - x)/\\sigma)` on
        [lower, upper) (exact far in the upper tail), 0 from ``upper`` on."""
        return self._tail("sf", x, value)

    def logsf(self, x: Any, value: Any):
        """:math:`\\log P(X > x)`, without underflow."""
        return self._tail("logsf", x, value)

    def logcdf(self, x: Any, value: Any):
        """:math:`\\log P(X \\le x)`, without underflow."""
        return self._tail("logcdf", x, value)

    def isf(self, p: Any, value: Any):
        """Smallest ``x`` with :math:`P(X > x) \\le p`: :math:`\\theta - \\sigma\\Phi^{-1}(p)`
        clipped into [lower, upper] (the atoms at the bounds)."""
        return self._tail("isf", p, value)

    def ppf(self, p: Any, value: Any):
        """Smallest ``x`` with :math:`P(X \\le x) \\ge p` (the quantile function):
        :math:`\\theta + \\sigma\\Phi^{-1}(p)` clipped into [lower, upper] (the atoms at
        the bounds)."""
        return self._tail("ppf", p, value)


class TruncatedGaussian(_BoxGaussian):
    r"""Truncated Gaussian mechanism :math:`N^T(\theta, \sigma^2, S)` (Def. 3.2 of
    [HMSCG24]_): the Gaussian law conditioned on a fixed box.

    .. math:: p_\theta(x) = \frac{\phi((x-\theta)/\sigma)}{\sigma\,[\Phi((u-\theta)/\sigma)
              - \Phi((l-\theta)/\sigma)]}, \qquad l \le x \le u,

    independently per coordinate. It is not post-processing of the Gaussian mechanism;
    Theorem 4.9 shows it is nonetheless never less private than it.

    Sampling is by inverse CDF in log space with one uniform per coordinate (no rejection),
    exact even when :math:`\theta` lies hundreds of :math:`\sigma` outside S, where the
    acceptance rate of rejection sampling would be :math:`10^{-300}` or less.

    Parameters
    ----------
    sigma : float
        Absolute scale of the parent Gaussian, finite and > 0.
    lower, upper : float or array_like
        The support S, fixed independently of the data: finite, ``lower < upper``
        elementwise, scalars or arrays broadcasting with ``value``.

    Notes
    -----
    For :math:`\theta` far above S the law concentrates near ``upper`` with an exponential
    tail of rate :math:`(\theta - u)/\sigma^2` (the paper's remark that it is "about uniform"
    there is inaccurate; the privacy conclusion is unchanged).

    Examples
    --------
    >>> import bndp
    >>> m = bndp.TruncatedGaussian(sigma=1.0, lower=-1.0, upper=1.0)
    >>> round(m.variance(0.0), 6)
    0.291125
    """

    _mech = _TRUNC

    def _moment(self, value: Any, what: int):
        th, lo, hi, shape = self._params(value)
        out = truncnorm_eval(3 + what, None, th, self.sigma, lo, hi)
        return _ret(np.broadcast_to(np.asarray(out, dtype=np.float64), shape).copy())

    def logpdf(self, x: Any, value: Any):
        """Log density; ``-inf`` outside [lower, upper]."""
        th, lo, hi, shape = self._params(value)
        return truncnorm_eval(0, as_float_array(x, "x"), th, self.sigma, lo, hi)

    def cdf(self, x: Any, value: Any):
        """:math:`P(X \\le x)`."""
        th, lo, hi, shape = self._params(value)
        return truncnorm_eval(1, as_float_array(x, "x"), th, self.sigma, lo, hi)

    @_tail_doc(r""":math:`P(X > x)`, computed directly (not as ``1 - cdf``): upper-tail
probabilities far below 1e-16 keep their relative precision.""",
               """Survival function, in [0, 1].""",
               "float(m.sf(30.0, 0.0))  # 1 - cdf would give 0.0", "4.90671392714...e-198")
    def sf(self, x: Any, value: Any):
        th, lo, hi, shape = self._params(value)
        return truncnorm_tail_eval(2, as_float_array(x, "x"), th, self.sigma, lo, hi)

    @_tail_doc(r"""Inverse survival function: the ``x`` with :math:`P(X > x) = p`, from the
upper tail in log space (accurate for ``p`` far below 1e-16, where ``ppf(1 - p)``
cannot be formed).""",
               """Quantiles, in [lower, upper].""",
               "round(float(m.isf(1e-30, 0.0)), 10)", "11.4640246884",
               arg="p", arg_doc="Upper-tail probabilities in [0, 1] (0 gives ``upper``, 1 gives ``lower``).")
    @renamed_parameter("q", "p", removed_in="0.8.0")
    def isf(self, p: Any, value: Any):
        th, lo, hi, shape = self._params(value)
        return truncnorm_tail_eval(3, as_float_array(p, "p"), th, self.sigma, lo, hi)

    @_tail_doc(r"""Quantile function: the ``x`` with :math:`P(X \\le x) = p`, from the lower
tail in log space (the mirror image of :meth:`isf`: accurate for ``p`` far below
1e-16).""",
               """Quantiles, in [lower, upper].""",
               "round(float(m.ppf(1e-30, 0.0)), 10)", "-11.4640246884",
               arg="p", arg_doc="Probabilities in [0, 1] (0 gives ``lower``, 1 gives ``upper``).")
    def ppf(self, p: Any, value: Any):
        th, lo, hi, shape = self._params(value)
        # X ~ TN(theta; lower, upper) is -Y with Y ~ TN(-theta; -upper, -lower), and
        # P(X <= x) = P(Y >= -x): the quantile of X is minus the upper-tail quantile of Y
        return -truncnorm_tail_eval(3, as_float_array(p, "p"), -th, self.sigma, -hi, -lo)

    @_tail_doc(r""":math:`\\log P(X \\le x)`, in log space throughout (no underflow).""",
               """Log CDF, ``-inf`` at or below ``lower``, 0 at or above ``upper``.""",
               "round(float(m.logcdf(-40.0, 0.0)), 6)", "-804.608442")
    def logcdf(self, x: Any, value: Any):
        th, lo, hi, shape = self._params(value)
        return truncnorm_tail_eval(0, as_float_array(x, "x"), th, self.sigma, lo, hi)

    @_tail_doc(r""":math:`\\log P(X > x)`, in log space throughout (no underflow, no
``1 - cdf``).""",
               """Log survival function, 0 at or below ``lower``, ``-inf`` at or
    above ``upper``.""",
               "round(float(m.logsf(40.0, 0.0)), 6)", "-804.608442")
    def logsf(self, x: Any, value: Any):
        th, lo, hi, shape = self._params(value)
        return truncnorm_tail_eval(1, as_float_array(x, "x"), th, self.sigma, lo, hi)


class StochasticSign(_GradientMechanism):
    r"""Stochastic sign :math:`\mathrm{sign}(\theta + \sigma Z) \in \{-1, +1\}` (Jin et al.
    2020), the baseline of Section 4.1 of [HMSCG24]_.

    :math:`P(+1) = \Phi(\theta/\sigma)`. Post-processing of the Gaussian mechanism (1-bit
    quantisation), with the FIL :math:`\eta^{Sgn} = \phi(\theta/\sigma) / (\sigma
    \sqrt{\Phi(\theta/\sigma)\Phi(-\theta/\sigma)})`.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, finite and > 0.

    Notes
    -----
    Departures from the paper: the paper gives only the FIL of this mechanism. Its Renyi
    divergence in :func:`bndp.accounting.per_instance_rdp` is the standard one between the
    two Bernoulli output laws.

    Examples
    --------
    >>> import bndp
    >>> m = bndp.StochasticSign(sigma=1.0)
    >>> s = m.sample([0.5, -0.5, 2.0], rng=0)
    >>> sorted(set(s.tolist()) | {-1.0, 1.0})
    [-1.0, 1.0]
    >>> m.mean(0.0), m.variance(0.0)
    (0.0, 1.0)
    """

    _init_args = ("sigma",)
    _mech = _SIGN
    sigma: float
    lower = 0.0
    upper = 0.0

    def __init__(self, sigma: float) -> None:
        self._set(sigma=_check_sigma(sigma))

    def _params(self, value: Any):
        th = _as_value(value)
        z = np.zeros(())
        return th, z, z, th.shape

    @columnar
    @_sample_doc("Release :math:`\\mathrm{sign}(\\theta + \\sigma Z)` per coordinate (values "
                 "-1.0\nor +1.0, float64, shape and kind of ``value``).",
                 "True query value, finite.", ": as :meth:`TruncatedGaussian.sample`")
    def sample(self, value: Any, rng: RNGLike = None, *, device_rng: str = "bndp",
               nulls: Nulls = "raise"):
        return self._draw(value, rng, device_rng)

    def mean(self, value: Any):
        """:math:`2\\Phi(\\theta/\\sigma) - 1`."""
        th = _as_value(value)
        return _ret(np.asarray(2.0 * ndtr(th / self.sigma) - 1.0, dtype=np.float64))

    def variance(self, value: Any):
        """Variance of the output, :math:`4\\Phi(\\theta/\\sigma)\\Phi(-\\theta/\\sigma)`."""
        th = _as_value(value)
        return _ret(np.asarray(4.0 * ndtr(th / self.sigma) * ndtr(-th / self.sigma),
                               dtype=np.float64))

    def bias(self, value: Any):
        """:math:`E[M(\\theta)] - \\theta = 2\\Phi(\\theta/\\sigma) - 1 - \\theta`."""
        return self._bias(value)

    def logpmf(self, x: Any, value: Any):
        """log P(X = x) for x in {-1, +1}; ``-inf`` elsewhere."""
        xa = as_float_array(x, "x")
        th = _as_value(value)
        xa, th = np.broadcast_arrays(xa, th)
        out = np.where(xa == 1.0, log_ndtr(th / self.sigma),
                       np.where(xa == -1.0, log_ndtr(-th / self.sigma), -np.inf))
        return _ret(np.asarray(out, dtype=np.float64))
