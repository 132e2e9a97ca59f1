r"""General bounded samplers and their exact laws.

:func:`truncated_normal` draws from :math:`N(\mu, \sigma^2)` restricted to :math:`[l, u]`
by inverse CDF in the compiled core. The helpers ``truncnorm_*`` and ``bounded_laplace_*``
evaluate the corresponding densities, CDFs, quantiles and moments with the same kernels;
the mechanisms build on them.
"""

from __future__ import annotations

import math

from typing import Any

import numpy as np

from . import _dispatch
from ._core import fill as _fill, laws as _laws
from ._random import RNGLike, as_generator
from ._validation import as_float_array, check_bounds, check_finite, check_positive, checked_arrays

__all__ = ["truncated_normal"]


_NORMAL_MIN = float(np.finfo(np.float64).tiny)


def _tn_params(loc: Any, scale: Any, lower: Any, upper: Any) -> list[np.ndarray]:
    mu, sg, lo, hi = checked_arrays((loc, "loc", check_finite), (scale, "scale", check_positive),
                                    (lower, "lower", None), (upper, "upper", None))
    tiny = sg < _NORMAL_MIN
    if tiny.any():      # 1 / scale overflows: the standardised bounds are not representable
        raise ValueError(f"`scale` must be a normal double (at least {_NORMAL_MIN!r}); got "
                         f"{float(np.ravel(sg[tiny] if sg.ndim else sg)[0])!r}")
    check_bounds(lo, hi, ends="line")
    return [mu, sg, lo, hi]


def truncated_normal(loc: Any = 0.0, scale: Any = 1.0, lower: Any = -np.inf,
                     upper: Any = np.inf, size: Any = None, rng: RNGLike = None):
    r"""Draw from the normal law :math:`N(\mu, \sigma^2)` truncated to :math:`[l, u]`.

    .. math:: p(x) = \frac{\phi((x-\mu)/\sigma)}{\sigma\,[\Phi((u-\mu)/\sigma) -
              \Phi((l-\mu)/\sigma)]}, \qquad l \le x \le u.

    Sampling is by inverse CDF with one uniform per draw, computed on the side of the
    distribution where precision lives: around the parent median the central quantile is
    evaluated from :math:`U Z - m_L` directly (no cancellation even when
    :math:`\sigma \gg u - l`); intervals in a tail are handled in log space, so far tails
    such as :math:`[30, 31]\sigma` or :math:`[-1001, -1000]\sigma` are exact, never
    ``inf``/``nan``. ``loc`` may lie outside :math:`[l, u]`. Every draw lies in
    :math:`[l, u]`.

    Parameters
    ----------
    loc : float or array_like
        :math:`\mu`, finite.
    scale : float or array_like
        :math:`\sigma`, finite and at least the smallest normal double (about 2.2e-308).
    lower, upper : float or array_like
        Interval ends, ``lower < upper``; ``-inf``/``+inf`` allowed.
    size : int or tuple of ints, optional
        Output shape. Without it, the broadcast shape of the parameters (a Python ``float``
        when all are scalars). With it, the parameters must broadcast to ``size``.
    rng : None, int, SeedSequence, BitGenerator or Generator
        Source of randomness (see :func:`bndp.default_rng`).

    Returns
    -------
    float or ndarray of float64
        The draws, every one in ``[lower, upper]``.

    Examples
    --------
    >>> import bndp
    >>> x = bndp.truncated_normal(loc=0.0, scale=1.0, lower=-1.0, upper=2.0, size=1000, rng=0)
    >>> x.shape, bool(((x >= -1.0) & (x <= 2.0)).all())
    ((1000,), True)

    A far tail, where the naive inverse CDF returns ``inf`` or ``nan``:

    >>> y = bndp.truncated_normal(0.0, 1.0, 30.0, 31.0, size=3, rng=0)
    >>> bool(((y >= 30.0) & (y <= 31.0)).all())
    True
    """
    params = _tn_params(loc, scale, lower, upper)
    gen = as_generator(rng)
    return _dispatch.sample(_fill.tn_one, _fill.tn_fill, _fill.tn_fill_rows, params, size, gen)


# Evaluation helpers (what: 0 logpdf, 1 cdf, 2 ppf, 3 mean, 4 variance; 5 the sampler's
# quantile, ppf without its refined lower end: a draw from uniform u is its value at u)

def truncnorm_eval(what: int, x: Any, loc: Any, scale: Any, lower: Any, upper: Any):
    params = _tn_params(loc, scale, lower, upper)
    xa = as_float_array(0.0 if x is None else x, "x")
    out = _dispatch.evaluate(_laws.tn_eval_rows, what, xa, params)
    if what in (0, 1):
        out = _tn_far(what, xa, params, out)
    return out


#: standardised distance of ``loc`` beyond a bound from which the log-density and the cdf
#: are computed in the scaled form of :func:`_tn_far` (the compiled form's quadratic terms
#: cancel: off by 0.6 in the log-density at 1e8, inf or NaN from about 1e10)
_TN_FAR = 1e4


def _tn_far(what: int, x: np.ndarray, params: list, out: Any) -> Any:
    """The log-density (0) or cdf (1) of the normal law truncated to [l, u] where ``loc`` lies
    more than :data:`_TN_FAR` scales beyond a bound, in a form without cancellation: for
    loc above u, with a = (loc - u)/s and b = (loc - l)/s, Z e^{a^2/2} = S =
    (erfcx(a/sqrt2) - erfcx(b/sqrt2) e^{-(u - l)(2 loc - u - l)/(2 s^2)})/2, the density is
    exp(-(u - x)(2 loc - x - u)/(2 s^2)) / (s sqrt(2 pi) S) and the cdf the same
    difference at x over S; loc below l is the reflection."""
    mu, sg, lo, hi = (np.asarray(p, dtype=np.float64) for p in params)
    shape = np.shape(out)
    xs, mu, sg, lo, hi = np.broadcast_arrays(x, mu, sg, lo, hi)
    with np.errstate(over="ignore", invalid="ignore"):
        up = (mu - hi) > _TN_FAR * sg
        down = (lo - mu) > _TN_FAR * sg
    far = (up | down).reshape(shape) if shape else bool(up | down)
    if not np.any(far):
        return out
    from scipy.special import erfcx
    sel = (up | down)
    flip = np.where(down[sel], -1.0, 1.0)
    # reflected where loc is below: loc above the interval [l, u] either way
    m, s, xx = flip * mu[sel], sg[sel], flip * xs[sel]
    l_, u_ = np.where(flip > 0, lo[sel], -hi[sel]), np.where(flip > 0, hi[sel], -lo[sel])
    r2 = math.sqrt(2.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        a, b = (m - u_) / s, (m - l_) / s
        tail_b = np.where(np.isfinite(l_),
                          erfcx(b / r2) * np.exp(-(u_ - l_) * (2 * m - u_ - l_) / (2 * s * s)),
                          0.0)
        S = 0.5 * (erfcx(a / r2) - tail_b)
        inside = (xx >= l_) & (xx <= u_)
        xc = np.clip(xx, l_, u_)
        if what == 0:
            v = (-(u_ - xc) * (2 * m - xc - u_) / (2 * s * s) - np.log(s * math.sqrt(2 * math.pi))
                 - np.log(S))
            v = np.where(inside, v, -np.inf)
        else:
            ax = (m - xc) / s
            num = 0.5 * (erfcx(ax / r2) * np.exp(-(u_ - xc) * (2 * m - xc - u_) / (2 * s * s))
                         - tail_b)
            v = np.clip(num / S, 0.0, 1.0)
            v = np.where(xx < l_, 0.0, np.where(xx > u_, 1.0, v))
            v = np.where(flip > 0, v, 1.0 - v)     # the reflection's cdf is a survival
    res = np.array(out, dtype=np.float64, copy=True).reshape(sel.shape)
    res[sel] = v
    return float(res) if res.ndim == 0 else res.reshape(shape)


def truncnorm_tail_eval(what: int, x: Any, loc: Any, scale: Any, lower: Any, upper: Any):
    # what: 0 logcdf, 1 logsf, 2 sf, 3 isf (x holds upper-tail probabilities)
    params = _tn_params(loc, scale, lower, upper)
    return _dispatch.evaluate(_laws.tn_tail_eval_rows, what, as_float_array(x, "x"), params)


def bounded_laplace_eval(what: int, x: Any, q: np.ndarray, b: np.ndarray, lo: np.ndarray,
                         hi: np.ndarray):
    xa = as_float_array(x, "x")
    return _dispatch.evaluate(_laws.bl_eval_rows, what, xa, [q, b, lo, hi])
