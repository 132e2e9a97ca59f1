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
from scipy.special import log_ndtr, ndtr

from .._core import fill as _fill, laws as _laws
from .._dispatch import _shape2, as_2d
from .._random import RNGLike, as_generator
from .._validation import as_float_array, check_bounds, check_finite, fast_real
from .._columns import Nulls, columnar
from . import _torch_noise
from ._law import ClippedLaw, LawMechanism, TruncatedNormalLaw
from .unbounded import GaussianNoise

__all__ = ["RectifiedGaussian", "TruncatedGaussian", "StochasticSign"]

_RECT, _TRUNC, _SIGN = 0, 1, 2
_FAR = 40.0     # noise scales outside the box beyond which the rectified law is one atom


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


class _GradientMechanism(LawMechanism):
    """Shared parts of the gradient mechanisms: ``sigma`` (alias ``scale``), the true value
    (any finite real, not clipped into the box), the draw."""

    __slots__ = ()
    _mech = -1
    sigma: float
    lower: Any
    upper: Any
    _value_doc = " (finite, not clipped into the box; it broadcasts with the bounds)"

    @property
    def scale(self) -> float:
        """Alias of :attr:`sigma` (every mechanism's ``scale`` is its noise scale)."""
        return self.sigma

    _device_sample = _device_sample

    def _value(self, value: Any, on_outside: str = "clip") -> np.ndarray:
        th = as_float_array(value, "value")
        check_finite(th, "value")
        self._shape(th)
        return th

    def _shape(self, th: np.ndarray) -> tuple[int, ...]:
        try:
            return np.broadcast_shapes(th.shape, np.shape(self.lower), np.shape(self.upper))
        except ValueError:
            raise ValueError(
                f"`value` of shape {th.shape} does not broadcast with the bounds of shape "
                f"{np.broadcast_shapes(np.shape(self.lower), np.shape(self.upper))}"
            ) from None

    def _rows(self, th: np.ndarray):
        """``th``, the bounds and the output as 2-d row views of their broadcast shape."""
        shape = self._shape(th)
        out, out2 = _out(shape)
        lo = as_2d(np.asarray(self.lower, dtype=np.float64), shape)
        hi = as_2d(np.asarray(self.upper, dtype=np.float64), shape)
        return as_2d(th, shape), lo, hi, out, out2

    def _draw(self, value: Any, rng: RNGLike, device_rng: str):
        if device_rng not in ("bndp", "torch"):
            raise ValueError(f'`device_rng` must be "bndp" or "torch"; got {device_rng!r}')
        th, lo, hi, out, out2 = self._rows(self._value(value))
        gen = as_generator(rng)
        if out.size:
            _fill.gr_sample_rows(self._mech, gen, th, self.sigma, lo, hi, out2)
        return _ret(out)


class _BoxGaussian(_GradientMechanism):
    """Shared parts of the two bounded-support Gaussians: support on a box, ``sigma``."""

    _init_args = ("sigma", "lower", "upper")

    def __init__(self, sigma: float, *, lower: Any, upper: Any) -> None:
        s = _check_sigma(sigma)
        lo = as_float_array(lower, "lower")
        hi = as_float_array(upper, "upper")
        check_bounds(lo, hi)
        self._set(sigma=s, lower=_frozen(lo), upper=_frozen(hi))

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


#: ``_law_docs`` entries shared by the two bounded-support Gaussians
_BOX_DOCS = {
    "bias": r""":math:`E[M(\theta)] - \theta` per coordinate (the box shrinks outputs toward
S).""",
    "variance": "Variance of the output per coordinate.",
}


def _examples(make: str, **cases: tuple[str, str]) -> dict[str, str]:
    """``_law_examples``: for each method one doctest call and its expected output, after
    ``make`` (the constructor call)."""
    return {name: f">>> import bndp\n>>> {make}\n>>> {call}\n{result}"
            for name, (call, result) in cases.items()}


class RectifiedGaussian(ClippedLaw, GaussianNoise, _BoxGaussian):
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
    :meth:`cdf`, :meth:`sf`, :meth:`ppf` and :meth:`isf` are those of the mixed law, atoms
    included (:class:`bndp.mechanisms._law.ClippedLaw`).

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

    def atoms(self, value: Any):
        """``(P(X = lower), P(X = upper))`` per coordinate."""
        return self._atoms(self._value(value))

    def _moment(self, what: int, th: np.ndarray):
        th2, lo, hi, out, out2 = self._rows(th)
        if out.size:
            _laws.gr_rect_moments_rows(what, th2, self.sigma, lo, hi, out2)
            # more than _FAR noise scales outside the box the law is the atom at the nearer
            # bound up to a mass below exp(-800) (the compiled form cancels for |value|
            # beyond ~1e15 sigma): mean that bound, variance 0, both exact in double
            with np.errstate(over="ignore", invalid="ignore"):
                above = (th2 - hi) / self.sigma > _FAR
                below = (lo - th2) / self.sigma > _FAR
            if above.any() or below.any():
                if what == 0:
                    out2[above] = np.broadcast_to(hi, out2.shape)[above]
                    out2[below] = np.broadcast_to(lo, out2.shape)[below]
                else:
                    out2[above | below] = 0.0
        return out

    def _mean(self, x: None, q: np.ndarray):
        return self._moment(0, q)

    def _variance(self, x: None, q: np.ndarray):
        return self._moment(1, q)

    _law_docs = {
        "logpdf": r"""Log density w.r.t. Lebesgue measure on (lower, upper) plus unit masses at
the ends: :math:`\log\phi((x-\theta)/\sigma) - \log\sigma` inside, the log of the atom's
mass at ``lower`` and ``upper`` (:meth:`atoms`), ``-inf`` outside [lower, upper].""",
        "pdf": r"""``exp(logpdf(x, value))``: the Gaussian density on (lower, upper), the atom's
mass :math:`P(X = x)` at ``lower`` and ``upper``, 0 outside.""",
        "cdf": r""":math:`P(X \le x)`: 0 below ``lower``, :math:`\Phi((x-\theta)/\sigma)` on
[lower, upper) (at ``lower``: the atom there), 1 from ``upper`` on.""",
        "sf": r""":math:`P(X > x)`: 1 below ``lower``, :math:`\Phi((\theta - x)/\sigma)` on
[lower, upper) (exact far in the upper tail), 0 from ``upper`` on.""",
        "logsf": r":math:`\log P(X > x)`, without underflow.",
        "logcdf": r":math:`\log P(X \le x)`, without underflow.",
        "isf": r"""Smallest ``x`` with :math:`P(X > x) \le p`: ``upper`` for ``p`` below the
upper atom, ``lower`` from :math:`P(X > lower)` on, :math:`\theta - \sigma\Phi^{-1}(p)`
between; ``p`` in [0, 1].""",
        "ppf": r"""Smallest ``x`` with :math:`P(X \le x) \ge p` (the quantile function):
``lower`` for ``p`` up to the lower atom, ``upper`` above :math:`P(X < upper)`,
:math:`\theta + \sigma\Phi^{-1}(p)` between; ``p`` in [0, 1].""",
        "mean": r"""Expected output :math:`E[M(\theta)]` per coordinate (closed form of
:math:`E[\mathrm{clip}(Z, a, b)]`, compiled).""",
        **_BOX_DOCS,
    }
    _law_examples = _examples(
        "m = bndp.RectifiedGaussian(sigma=1.0, lower=-1.0, upper=1.0)",
        cdf=("m.cdf(-1.0, 0.0) == m.atoms(0.0)[0]  # the atom at lower", "True"),
        ppf=("m.ppf(0.1, 0.0), m.ppf(0.5, 0.0), m.ppf(0.9, 0.0)", "(-1.0, 0.0, 1.0)"),
        isf=("m.isf(0.1, 0.0), m.isf(0.5, 0.0)", "(1.0, 0.0)"),
    )


class TruncatedGaussian(TruncatedNormalLaw, _BoxGaussian):
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
    _law_removed = {"isf": ("q", "0.8.0")}

    def _params(self, q: np.ndarray) -> list[Any]:
        return [q, self.sigma, self.lower, self.upper]

    _law_docs = {
        "logpdf": "Log density; ``-inf`` outside [lower, upper].",
        "pdf": "Density (the formula above); 0 outside [lower, upper].",
        "cdf": r":math:`P(X \le x)`.",
        "sf": r""":math:`P(X > x)`, computed directly (not as ``1 - cdf``): upper-tail
probabilities far below 1e-16 keep their relative precision.""",
        "isf": r"""Inverse survival function: the ``x`` with :math:`P(X > x) = p`, from the
upper tail in log space (accurate for ``p`` far below 1e-16, where ``ppf(1 - p)``
cannot be formed); ``p`` in [0, 1] (0 gives ``upper``, 1 gives ``lower``).""",
        "ppf": r"""Quantile function: the ``x`` with :math:`P(X \le x) = p`, from the lower
tail in log space (the mirror image of :meth:`isf`: accurate for ``p`` far below
1e-16); ``p`` in [0, 1] (0 gives ``lower``, 1 gives ``upper``).""",
        "logcdf": r""":math:`\log P(X \le x)`, in log space throughout (no underflow); ``-inf``
at or below ``lower``, 0 at or above ``upper``.""",
        "logsf": r""":math:`\log P(X > x)`, in log space throughout (no underflow, no
``1 - cdf``); 0 at or below ``lower``, ``-inf`` at or above ``upper``.""",
        "mean": r"Expected output :math:`E[M(\theta)]` per coordinate.",
        **_BOX_DOCS,
    }
    _law_examples = _examples(
        "m = bndp.TruncatedGaussian(sigma=1.0, lower=-50.0, upper=50.0)",
        sf=("float(m.sf(30.0, 0.0))  # 1 - cdf would give 0.0", "4.90671392714...e-198"),
        isf=("round(float(m.isf(1e-30, 0.0)), 10)", "11.4640246884"),
        ppf=("round(float(m.ppf(1e-30, 0.0)), 10)", "-11.4640246884"),
        logcdf=("round(float(m.logcdf(-40.0, 0.0)), 6)", "-804.608442"),
        logsf=("round(float(m.logsf(40.0, 0.0)), 6)", "-804.608442"),
    )


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
    The law is discrete: :meth:`logpdf` and :meth:`pdf` are its density with respect to
    the counting measure on {-1, +1} (the convention of the atoms of
    :class:`RectifiedGaussian`), equal to :meth:`logpmf` and its exponential.

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
    _law_methods = ("logpmf",) + _GradientMechanism._law_methods
    _value_doc = " (finite)"

    def __init__(self, sigma: float) -> None:
        self._set(sigma=_check_sigma(sigma))

    @columnar
    @_sample_doc("Release :math:`\\mathrm{sign}(\\theta + \\sigma Z)` per coordinate (values "
                 "-1.0\nor +1.0, float64, shape and kind of ``value``).",
                 "True query value, finite.", ": as :meth:`TruncatedGaussian.sample`")
    def sample(self, value: Any, rng: RNGLike = None, *, device_rng: str = "bndp",
               nulls: Nulls = "raise"):
        return self._draw(value, rng, device_rng)

    def _logpmf(self, x: np.ndarray, q: np.ndarray):
        s = self.sigma
        return np.where(x == 1.0, log_ndtr(q / s), np.where(x == -1.0, log_ndtr(-q / s), -np.inf))

    _logpdf = _logpmf

    def _cdf(self, x: np.ndarray, q: np.ndarray):
        return np.where(x < -1.0, 0.0, np.where(x >= 1.0, 1.0, ndtr(-q / self.sigma)))

    def _sf(self, x: np.ndarray, q: np.ndarray):
        return np.where(x < -1.0, 1.0, np.where(x >= 1.0, 0.0, ndtr(q / self.sigma)))

    def _logcdf(self, x: np.ndarray, q: np.ndarray):
        return np.where(x < -1.0, -np.inf, np.where(x >= 1.0, 0.0, log_ndtr(-q / self.sigma)))

    def _logsf(self, x: np.ndarray, q: np.ndarray):
        return np.where(x < -1.0, 0.0, np.where(x >= 1.0, -np.inf, log_ndtr(q / self.sigma)))

    def _ppf(self, p: np.ndarray, q: np.ndarray):
        return np.where(p <= ndtr(-q / self.sigma), -1.0, 1.0)

    def _isf(self, p: np.ndarray, q: np.ndarray):
        return np.where(p >= ndtr(q / self.sigma), -1.0, 1.0)

    def _mean(self, x: None, q: np.ndarray):
        return 2.0 * ndtr(q / self.sigma) - 1.0

    def _variance(self, x: None, q: np.ndarray):
        return 4.0 * ndtr(q / self.sigma) * ndtr(-q / self.sigma)

    _law_docs = {
        "logpmf": r""":math:`\log P(X = x)`: :math:`\log\Phi(\theta/\sigma)` at +1,
:math:`\log\Phi(-\theta/\sigma)` at -1, ``-inf`` elsewhere.""",
        "logpdf": "``logpmf`` (the density with respect to the counting measure on {-1, +1}).",
        "pdf": ":math:`P(X = x)` (the density with respect to the counting measure on {-1, +1}).",
        "cdf": r""":math:`P(X \le x)`: 0 below -1, :math:`\Phi(-\theta/\sigma)` on [-1, 1), 1
from 1 on.""",
        "sf": r""":math:`P(X > x)`: 1 below -1, :math:`\Phi(\theta/\sigma)` on [-1, 1), 0 from 1
on.""",
        "ppf": r"""Smallest ``x`` with :math:`P(X \le x) \ge p`: -1 for
:math:`p \le \Phi(-\theta/\sigma)`, else +1; ``p`` in [0, 1].""",
        "isf": r"""Smallest ``x`` with :math:`P(X > x) \le p`: -1 for
:math:`p \ge \Phi(\theta/\sigma)`, else +1; ``p`` in [0, 1].""",
        "mean": r":math:`2\Phi(\theta/\sigma) - 1`.",
        "bias": r":math:`E[M(\theta)] - \theta = 2\Phi(\theta/\sigma) - 1 - \theta`.",
        "variance": r"""Variance of the output,
:math:`4\Phi(\theta/\sigma)\Phi(-\theta/\sigma)`.""",
    }
    _law_examples = _examples(
        "m = bndp.StochasticSign(sigma=1.0)",
        logpmf=("round(m.logpmf(1.0, 1.0), 6), m.logpmf(0.0, 1.0)", "(-0.172754, -inf)"),
        ppf=("m.ppf(0.1, 1.0), m.ppf(0.2, 1.0)", "(-1.0, 1.0)"),
    )
