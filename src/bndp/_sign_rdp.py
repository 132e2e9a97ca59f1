"""The stochastic sign's Renyi divergences in a form stable for any finite input: the
per-instance RDP of :class:`bndp.StochasticSign` where the compiled form
(:func:`bndp.accounting.per_instance_rdp`) leaves the float range."""

from __future__ import annotations

import numpy as np

__all__ = ["sign_rdp"]


def _sign_forward(t: np.ndarray, c: np.ndarray, sigma: float, alf: np.ndarray) -> np.ndarray:
    r""":math:`D_\alpha(\theta \Vert \theta + c)` of the stochastic sign, shape
    ``alf.shape + t.shape``, for any finite inputs: with :math:`r_i = \log(p_i/q_i)` and
    :math:`M = \max_i r_i` over the outcomes with :math:`p_i > 0`,
    :math:`D = M + \log(\sum_i p_i e^{(\alpha-1)(r_i-M)})/(\alpha-1)` (exponents <= 0, the
    sum through log1p/expm1 while it is near 1), ``inf`` where some :math:`q_i` underflows
    to 0 with :math:`p_i > 0` (the divergence exceeds the float range)."""
    from scipy.special import log_ndtr
    with np.errstate(over="ignore", invalid="ignore"):
        a = t / sigma
        b = (t + c) / sigma
    lp = np.stack([log_ndtr(a), log_ndtr(-a)])
    lq = np.stack([log_ndtr(b), log_ndtr(-b)])
    present = lp > -np.inf
    with np.errstate(invalid="ignore"):
        r = np.where(present, lp - lq, -np.inf)
    m = r.max(axis=0)
    am1 = (alf - 1.0).reshape((-1,) + (1,) * (t.ndim + 1))
    with np.errstate(invalid="ignore", over="ignore"):
        x = np.where(present, am1 * (r - m), -np.inf)       # <= 0
        p = np.exp(lp)
        near = np.sum(p * np.expm1(x), axis=1)              # sum p_i e^x_i - 1
        far = np.logaddexp(lp[0] + x[:, 0], lp[1] + x[:, 1])
        ls = np.where(near > -0.5, np.log1p(near), far)
        out = m + ls / am1[:, 0]
    return np.where(np.isinf(m), np.inf, out)


def sign_rdp(md: int, th: np.ndarray, c: np.ndarray, sigma: float,
             alf: np.ndarray) -> np.ndarray:
    """Per-coordinate RDP of the stochastic sign for the (already mirrored) convention code
    ``md`` of :func:`per_instance_rdp`: the forward divergence ("alg1"), with the reverse
    direction (D(t + c || t) is the mirrored forward one at -(t + c)) for "text", and both
    shifts as well for "sup"."""
    out = _sign_forward(th, c, sigma, alf)
    if md >= 1:
        out = np.maximum(out, _sign_forward(-(th + c), c, sigma, alf))
    if md == 2:
        out = np.maximum(out, _sign_forward(-th, c, sigma, alf))
        out = np.maximum(out, _sign_forward(th - c, c, sigma, alf))
    return out
