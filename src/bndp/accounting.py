r"""Per-instance privacy accounting for the bounded-support Gaussian mechanisms
(Hu et al. [HMSCG24]_): per-instance Renyi DP, Fisher information loss (FIL), RDP to
(epsilon, delta) conversion and a full-batch accountant (Algorithm 1).

All quantities are per coordinate and add up over the coordinates of a box support with
L-infinity sensitivity (tensorization, Prop. 5.1 of [HMSCG24]_).

Vocabulary. ``value`` is the true query value (:math:`\theta` in [HMSCG24]_ and in the
formulas below; in DP-SGD: the summed, L-infinity-clipped gradient); ``sensitivity`` is the per-coordinate shift :math:`C` between neighbouring
datasets (the L-infinity clipping bound, *not* an L2 bound); ``alpha`` is the Renyi order.
FIL follows the convention :math:`\eta = \sqrt{\lVert I \rVert_2}` (Gaussian:
:math:`\eta = 1/\sigma`); functions and attributes returning :math:`\eta^2` say so in their
names.

Per-instance guarantees depend on the data: the number released is itself a function of
the private data (Redberg and Wang 2021), and composing per-step values along the realised
training trajectory is what the paper does; it is not a worst-case DP guarantee.

.. [HMSCG24] S. Hu, S. Mahloujifar, V. Smith, K. Chaudhuri, C. Guo. "Privacy Amplification
   for the Gaussian Mechanism via Bounded Support". arXiv:2403.05598, 2024.
.. [M17] I. Mironov. "Renyi Differential Privacy". IEEE CSF 2017.
.. [ZWB19a] J. Zhao, T. Wang, T. Bai, M. Yang, K.-Y. Lam, Z. Xu, S. Shi, H. Yu. "Reviewing
   and Improving the Gaussian Mechanism for Differential Privacy". arXiv:1911.12060, 2019.
.. [BS16a] M. Bun, T. Steinke. "Concentrated Differential Privacy: Simplifications,
   Extensions, and Lower Bounds". TCC 2016.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ._core import gradients as _gradients
from ._deprecate import removed_parameter
from ._dispatch import _shape2, as_2d
from ._sign_rdp import sign_rdp
from ._validation import as_float_array, check_finite, check_positive
from .calibrate.concentrated import (
    gaussian_composition_sigma,
    gaussian_mcdp_delta,
    gaussian_zcdp,
    zcdp_to_dp,
)
from .mechanisms.gradients import RectifiedGaussian, StochasticSign, TruncatedGaussian

__all__ = [
    "RDP_CONVENTIONS",
    "DEFAULT_ALPHAS",
    "per_instance_rdp",
    "fisher_information_loss",
    "fisher_information_loss_squared",
    "gaussian_rdp",
    "rdp_to_dp",
    "PerInstanceAccountant",
    "gaussian_zcdp",
    "zcdp_to_dp",
    "gaussian_mcdp_delta",
    "gaussian_composition_sigma",
]

#: Conventions for the per-instance Renyi divergence (the values of ``convention`` in
#: :func:`per_instance_rdp`).
RDP_CONVENTIONS = ("alg1", "text", "sup", "rev")
_CONVENTION_CODE = {"alg1": 0, "text": 1, "sup": 2, "rev": 3}

#: Default Renyi orders of :class:`PerInstanceAccountant`.
DEFAULT_ALPHAS = (1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0,
                  20.0, 32.0, 64.0)

_MECHS = (RectifiedGaussian, TruncatedGaussian, StochasticSign)


def _mech_code(mechanism: Any) -> int:
    if isinstance(mechanism, RectifiedGaussian):
        return 0
    if isinstance(mechanism, TruncatedGaussian):
        return 1
    if isinstance(mechanism, StochasticSign):
        return 2
    raise TypeError(
        "`mechanism` must be a bndp.RectifiedGaussian, bndp.TruncatedGaussian or "
        f"bndp.StochasticSign; got {type(mechanism).__name__} (for the plain Gaussian "
        "mechanism use bndp.accounting.gaussian_rdp)"
    )


def _check_alpha(alpha: Any, name: str = "alpha") -> np.ndarray:
    a = as_float_array(alpha, name)
    bad = ~(np.isfinite(a) & (a > 1.0))
    if bad.any():
        v = float(a) if a.ndim == 0 else float(a[tuple(np.argwhere(bad)[0])])
        raise ValueError(
            f"`{name}` must be finite and > 1 (alpha = 1, the KL divergence, is not covered "
            f"by the closed forms); got {v!r}"
        )
    return a


def _check_convention(convention: str) -> int:
    if convention not in _CONVENTION_CODE:
        raise ValueError(f"`convention` must be one of {RDP_CONVENTIONS}; got {convention!r}")
    return _CONVENTION_CODE[convention]


def _value(value: Any, name: str = "value") -> np.ndarray:
    th = as_float_array(value, name)
    check_finite(th, name)
    return th


def _broadcast(mech: Any, th: np.ndarray, extra: Sequence[np.ndarray] = (),
               name: str = "value"):
    lo = np.asarray(mech.lower, dtype=np.float64)
    hi = np.asarray(mech.upper, dtype=np.float64)
    try:
        shape = np.broadcast_shapes(th.shape, lo.shape, hi.shape, *(e.shape for e in extra))
    except ValueError:
        raise ValueError(
            f"`{name}` of shape {th.shape} does not broadcast with the bounds "
            f"{np.broadcast_shapes(lo.shape, hi.shape)} and `sensitivity` "
            f"{[e.shape for e in extra]}"
        ) from None
    return lo, hi, shape


@removed_parameter("mode", "convention", removed_in="0.7.0")
def per_instance_rdp(mechanism: Any, value: Any, sensitivity: Any, alpha: Any,
                     convention: str = "sup", *, per_coordinate: bool = False,
                     negative_shift: bool = False):
    r"""Per-instance Renyi DP of a bounded-support mechanism at the true value ``value``.

    Per coordinate, with :math:`\Delta(x) = \Phi((u-x)/\sigma) - \Phi((l-x)/\sigma)`:

    rectified (Lemma 4.4, Eq. (5) of [HMSCG24]_),

    .. math:: D_\alpha(N^R(\theta)\Vert N^R(\theta+c)) = \tfrac{1}{\alpha-1}\log\Big(
              e^{\alpha(\alpha-1)c^2/2\sigma^2}\Delta(\theta+(1-\alpha)c)
              + \Phi(\tfrac{l-\theta}{\sigma})^\alpha\Phi(\tfrac{l-\theta-c}{\sigma})^{1-\alpha}
              + \Phi(\tfrac{\theta-u}{\sigma})^\alpha\Phi(\tfrac{\theta+c-u}{\sigma})^{1-\alpha}
              \Big),

    truncated (Lemma 4.7 in the form derived in Appendix B),

    .. math:: D_\alpha(N^T(\theta)\Vert N^T(\theta+c)) = \frac{\alpha c^2}{2\sigma^2}
              + \log\frac{\Delta(\theta+c)}{\Delta(\theta)}
              + \frac{1}{\alpha-1}\log\frac{\Delta(\theta+(1-\alpha)c)}{\Delta(\theta)},

    stochastic sign: the Renyi divergence of the two Bernoulli output laws,
    :math:`\frac{1}{\alpha-1}\log(p_1^\alpha q_1^{1-\alpha} + p_0^\alpha q_0^{1-\alpha})`
    with :math:`p_1 = \Phi(\theta/\sigma)`, :math:`q_1 = \Phi((\theta+c)/\sigma)`.

    The box support makes the mechanism a product measure, so the d-dimensional divergence
    is the sum over coordinates (Prop. 5.1).

    Parameters
    ----------
    mechanism : RectifiedGaussian, TruncatedGaussian or StochasticSign
    value : float or array_like
        True value (:math:`\theta` in the formulas), finite; any shape broadcasting with the
        mechanism's bounds.
    sensitivity : float or array_like
        Per-coordinate (L-infinity) sensitivity :math:`C`, finite and > 0, scalar or
        broadcasting with ``value``.
    alpha : float or array_like
        Renyi order(s), finite and > 1. An array gives an RDP curve.
    convention : {"sup", "text", "alg1", "rev"}
        Which divergence is bounded, per coordinate (``mode=`` is refused with a
        ``TypeError`` naming ``convention``):

        * ``"alg1"``: :math:`D_\alpha(\theta \Vert \theta + C)`, verbatim Algorithm 1 of the
          paper (paper-faithful; one direction and a +C shift only, so not a bound over
          all neighbours: at :math:`\theta=-3`, S=[-1,1], :math:`\sigma=0.5`,
          :math:`\alpha=2` it gives 0.0229 where the worst neighbour gives 3.34);
        * ``"text"``: :math:`\max\{D(\theta\Vert\theta+C), D(\theta+C\Vert\theta)\}`, the
          recipe of the text after Theorem 4.9;
        * ``"sup"`` (default, the safe bound): the maximum over both directions and both
          shifts :math:`\pm C`, which covers Def. 2.2 (two-sided pDP) and Def. 2.3 (all
          neighbours :math:`g(z) \in [-C, C]^d`). The endpoints :math:`\pm C` suffice by
          monotonicity of the divergence in the shift (Lemma 4.8 for the truncated
          mechanism; checked numerically for the rectified one);
        * ``"rev"``: the reverse direction :math:`D_\alpha(\theta + C \Vert \theta)` alone
          (the "rev" curves of the paper's Figure 1; one direction, not a bound).

        The paper does not say which of these its figures use; its Algorithm 1 is "alg1".
    per_coordinate : bool
        If True, return the per-coordinate values (shape ``alpha.shape + broadcast shape``)
        instead of their sum.
    negative_shift : bool
        Shift by :math:`-C` instead of :math:`+C`: ``"alg1"`` gives
        :math:`D_\alpha(\theta \Vert \theta - C)`, ``"rev"``
        :math:`D_\alpha(\theta - C \Vert \theta)`, ``"text"`` the larger of the two.
        Refused with ``"sup"``, which already covers both shifts.

    Returns
    -------
    float or ndarray
        The sum over all coordinates (a float for scalar ``alpha``, else shaped like
        ``alpha``), or the per-coordinate values.

    Notes
    -----
    Computed in the compiled core in log space (log Phi, log of differences of Phi with
    tail flipping, log1mexp, pivoted log-sum-exp; for the truncated mechanism far outside S
    a representation without the Gaussian factor, whose quadratic terms cancel exactly),
    with a linear-space fast path near S whose sums are at least 1. Absolute error per
    coordinate is a few units of 1e-16 times (1 + D); relative precision is therefore lost
    only when D itself is below ~1e-12, i.e. for C/sigma below ~1e-5 (where D is about
    :math:`\alpha C^2 \eta_B(\theta)^2 / 2`).

    The reverse direction and the negative shift are computed from the forward formula by
    two exact identities: :math:`D_\alpha(P_{\theta+c} \Vert P_\theta)` is the forward
    divergence at :math:`\theta + c` with shift :math:`-c`, and mirroring
    :math:`x \mapsto -x` maps the mechanism at :math:`\theta` on :math:`[l, u]` to the
    mechanism at :math:`-\theta` on :math:`[-u, -l]` (for all three mechanisms), so
    :math:`D_\alpha(\theta \Vert \theta - c)` on :math:`[l, u]` equals
    :math:`D_\alpha(-\theta \Vert -\theta + c)` on :math:`[-u, -l]`.

    Departures from the paper: the printed Eq. (6) (truncated) has
    :math:`\Delta((1-\alpha)(c+\theta))` with exponent :math:`1-\alpha`; it is wrong (it gives
    1.0 instead of 0.274312 at :math:`\alpha=2`, :math:`\theta=0.5`, c = sigma = a = 1, which
    quadrature confirms); the Appendix-B form above is used. The default convention "sup" is
    stricter than the paper's Algorithm 1.

    Examples
    --------
    >>> import bndp
    >>> from bndp.accounting import per_instance_rdp
    >>> m = bndp.TruncatedGaussian(sigma=1.0, lower=-1.0, upper=1.0)
    >>> round(per_instance_rdp(m, 0.5, 1.0, 2.0, convention="alg1"), 6)
    0.274312
    """
    code = _mech_code(mechanism)
    md = _check_convention(convention)
    al = _check_alpha(alpha)
    th = _value(value)
    c = as_float_array(sensitivity, "sensitivity")
    check_positive(c, "sensitivity")
    if not isinstance(negative_shift, (bool, np.bool_)):
        raise TypeError(f"`negative_shift` must be a bool; got {negative_shift!r}")
    if negative_shift and convention == "sup":
        raise ValueError('`negative_shift` does not apply to convention="sup", which already '
                         "bounds both shifts +C and -C")
    lo, hi, shape = _broadcast(mechanism, th, (c,))
    # Reverse direction: D(theta + s || theta) is the forward divergence at theta + s with
    # shift -s. A shift -C (C > 0) is a shift +C on the mirrored problem (x -> -x maps
    # theta to -theta and [l, u] to [-u, -l]).
    mirror = False
    if md == 3:
        md = 0
        if negative_shift:
            th = th - c                    # D(t - C || t) = forward at t - C, shift +C
        else:
            th = -(th + c)                 # D(t + C || t) = mirrored forward at -t - C
            mirror = True
    elif negative_shift:                   # alg1 / text with -C: mirrored at -t
        th = -th
        mirror = True
    if mirror:
        lo, hi = -hi, -lo
    alf = np.ascontiguousarray(al.reshape(-1))
    _check_rdp_range(code, c / mechanism.sigma, alf)
    total = np.empty(alf.shape[0])
    if per_coordinate:
        each = np.empty((alf.shape[0],) + shape)
        each3 = each.reshape((alf.shape[0],) + _shape2(shape))
    else:
        each3 = np.empty((0, 0, 0))
    if math.prod(shape):
        _gradients.gr_rdp(code, md, as_2d(th, shape), as_2d(c, shape), mechanism.sigma,
                     as_2d(lo, shape), as_2d(hi, shape), alf, each3, total)
        if code == 2 and not np.isfinite(total).all():
            # a shift or order beyond the compiled form's range (a NaN there): the stable
            # form below, which is exact there too (inf only past the float range)
            sign = sign_rdp(md, np.broadcast_to(th, shape), np.broadcast_to(c, shape),
                            mechanism.sigma, alf)
            total[:] = sign.reshape(alf.shape[0], -1).sum(axis=1)
            if per_coordinate:
                each[...] = sign
    else:
        total[:] = 0.0
    if per_coordinate:
        out = each.reshape(al.shape + shape)
        return float(out) if out.ndim == 0 else out
    return float(total[0]) if al.ndim == 0 else total.reshape(al.shape)


#: the compiled per-instance RDP's range, as the largest ``alpha (C/sigma)^2``: the
#: truncated mechanism's quadratic term ``alpha C^2/(2 sigma^2)`` cancels against its log
#: ratio, leaving an absolute error of about 1e-16 times that term (measured: 3e-4 at
#: ``alpha`` = 1e13 and C = sigma, and 0, understating the cost, from about 1e16); the
#: rectified one's exponent ``alpha (alpha - 1) C^2/(2 sigma^2)`` must stay a double (it
#: returned 0 from C = 1e155 sigma)
RDP_MAX_QUADRATIC = {0: 1e300, 1: 2.0 ** 33}


def _check_rdp_range(code: int, c_over_sigma: np.ndarray, alf: np.ndarray) -> None:
    """Refuse a per-instance RDP of the rectified (0) or truncated (1) mechanism beyond
    :data:`RDP_MAX_QUADRATIC` (the stochastic sign (2) has a stable fallback)."""
    if code not in RDP_MAX_QUADRATIC or c_over_sigma.size == 0:
        return
    a, r = float(np.max(alf)), float(np.max(c_over_sigma))
    q = (a if code == 1 else a * a) * r * r       # float products: inf past the range
    if not q <= RDP_MAX_QUADRATIC[code]:
        what = "`alpha`^2" if code == 0 else "`alpha`"
        raise ValueError(
            f"per_instance_rdp: {what} * (`sensitivity` / sigma)^2 = {q:.3g} is beyond the "
            "range where this mechanism's divergence is computed accurately (at most "
            f"{RDP_MAX_QUADRATIC[code]:.3g}); such orders or sensitivities are outside any "
            "useful accounting")


def _fil_doc(returns: str, result: str):
    """Decorator: the Parameters, Returns and Examples sections of a Fisher information
    loss function's docstring, at its ``@PARAMETERS@`` and ``@EXAMPLES@`` lines."""
    def deco(func):
        name = func.__name__
        func.__doc__ = func.__doc__.replace(
            "    @PARAMETERS@\n",
            "    Parameters\n    ----------\n    mechanism : RectifiedGaussian, TruncatedGaussian or "
            "StochasticSign\n    value : float or array_like\n        True value, finite, "
            "broadcasting with the mechanism's bounds.\n\n    Returns\n    -------\n    float or "
            f"ndarray\n        {returns}\n").replace(
            "    @EXAMPLES@\n",
            f"    Examples\n    --------\n    >>> import bndp\n    >>> from bndp.accounting import "
            f"{name}\n    >>> m = bndp.RectifiedGaussian(sigma=1.0, lower=-1.0, upper=1.0)\n"
            f"    >>> round({name}(m, 0.0), 6)\n    {result}\n")
        return func
    return deco


@_fil_doc(r":math:`\eta^2`, in units of 1/(units of value)^2.", "0.936824")
def fisher_information_loss_squared(mechanism: Any, value: Any):
    r""":math:`\eta^2` per coordinate (Lemma 4.1 of [HMSCG24]_), the squared FIL of one
    coordinate with an identity Jacobian. For a query with Jacobian :math:`J_f` the FIM is
    :math:`J_f^\top \mathrm{diag}(\eta_1^2, \ldots, \eta_d^2) J_f` (Prop. 5.1).

    With :math:`z_a = (l-\theta)/\sigma`, :math:`z_b = (u-\theta)/\sigma`,
    :math:`Z = \Phi(z_b) - \Phi(z_a)`:

    truncated (Eq. (3); equals :math:`\mathrm{Var}(X)/\sigma^4`),

    .. math:: \sigma^2\eta_T^2 = 1 - \Big(\frac{\phi(z_b)-\phi(z_a)}{Z}\Big)^2
              + \frac{z_a\phi(z_a) - z_b\phi(z_b)}{Z},

    rectified (Eq. (4) with the interior mass's sign corrected, as in Appendix F),

    .. math:: \sigma^2\eta_R^2 = \frac{\phi(z_a)^2}{\Phi(z_a)}
              + \frac{\phi(z_b)^2}{\Phi(-z_b)} + (\Phi(z_b) - \Phi(z_a))
              + z_a\phi(z_a) - z_b\phi(z_b),

    stochastic sign: :math:`\sigma^2\eta^2 = \phi(t)^2/(\Phi(t)\Phi(-t))`,
    :math:`t = \theta/\sigma`. Gaussian: :math:`\eta^2 = 1/\sigma^2`; every bounded value is
    at most that (Theorem 4.2).

    @PARAMETERS@

    Notes
    -----
    Departures from the paper: the printed Eq. (4) has
    :math:`\Phi((\theta-b)/\sigma) - \Phi((\theta-a)/\sigma)` for the interior mass, the
    negative of the correct term; it yields a negative "information" (-0.428555 at
    :math:`\theta=0`, :math:`\sigma=1`, S=[-1,1], where the correct value, confirmed by
    quadrature of the squared score and by the quantisation limit of Theorem F.1, is
    0.936824). Rounding is clamped into :math:`[0, 1/\sigma^2]` (Theorem 4.2).

    @EXAMPLES@
    """
    code = _mech_code(mechanism)
    th = _value(value)
    lo, hi, shape = _broadcast(mechanism, th)
    out = np.empty(shape)
    if out.size:
        _gradients.gr_eta2_rows(code, as_2d(th, shape), mechanism.sigma, as_2d(lo, shape),
                           as_2d(hi, shape), out.reshape(_shape2(shape)))
        if np.isnan(out).any():
            # the compiled forms overflow for |value| beyond ~1e154 sigma outside the box;
            # there eta^2 (rectified, sign: ~ |z| phi(z) / sigma^2; truncated: ~ 1/d^2 at the
            # distance d) is far below the smallest double: its limit 0
            with np.errstate(over="ignore", invalid="ignore"):
                d = np.maximum(np.maximum(lo - th, th - hi), np.abs(th) if code == 2 else 0.0)
                far = np.isnan(out) & (d / mechanism.sigma > 1e150)
            out[far] = 0.0
    return float(out) if out.ndim == 0 else out


@_fil_doc(r":math:`\eta`, in units of 1/(units of value).", "0.967897")
def fisher_information_loss(mechanism: Any, value: Any):
    r""":math:`\eta = \sqrt{\eta^2}` per coordinate: the FIL convention
    :math:`\eta = \sqrt{\lVert I \rVert_2}` (Gaussian: :math:`1/\sigma`). See
    :func:`fisher_information_loss_squared` for the formulas.

    Departures from the paper: Def. 2.4 writes :math:`\lVert I \rVert_2 \le \eta` and
    Appendix A calls :math:`1/\sigma^2` the Gaussian's :math:`\eta`; both are
    :math:`\eta^2` in the convention used elsewhere in the paper and here.

    @PARAMETERS@

    @EXAMPLES@
    """
    e2 = fisher_information_loss_squared(mechanism, value)
    return math.sqrt(e2) if isinstance(e2, float) else np.sqrt(e2)


def gaussian_rdp(sigma: Any, sensitivity: Any, alpha: Any, dim: int = 1):
    r"""RDP of the Gaussian mechanism with per-coordinate (L-infinity) sensitivity :math:`C`
    over ``dim`` coordinates (Lemma 4.3 of [HMSCG24]_, Prop. 7 of [M17]_):
    :math:`\mathrm{dim}\cdot\alpha C^2/(2\sigma^2)`; with an array ``sensitivity`` the sum
    :math:`\alpha\sum_j C_j^2/(2\sigma^2)`.

    Parameters
    ----------
    sigma : float
        Finite and > 0.
    sensitivity : float or array_like
        Finite and > 0.
    alpha : float or array_like
        Finite and > 1.
    dim : int
        Number of coordinates (>= 1) when ``sensitivity`` is a scalar.

    Returns
    -------
    float or ndarray
        Shaped like ``alpha``. Computed in units of :math:`\sigma` (no overflow for any
        finite inputs): ``inf`` only when the RDP exceeds the float range, and never 0 (a
        value below the smallest positive double is reported as that double).

    Examples
    --------
    >>> from bndp.accounting import gaussian_rdp
    >>> gaussian_rdp(2.0, 1.0, [2.0, 4.0])
    array([0.25, 0.5 ])
    >>> gaussian_rdp(2.0, 1.0, 2.0, dim=3)
    0.75
    """
    s = as_float_array(sigma, "sigma")
    check_positive(s, "sigma")
    if s.ndim:
        raise ValueError("`sigma` must be a scalar")
    c = as_float_array(sensitivity, "sensitivity")
    check_positive(c, "sensitivity")
    al = _check_alpha(alpha)
    if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ValueError(f"`dim` must be an int >= 1; got {dim!r}")
    # in units of sigma, so that no intermediate overflows for a huge sigma or sensitivity;
    # an RDP above the float range is inf, and one that underflows (sigma up to 1e308) is
    # reported as the smallest positive double, an upper bound on the exact positive value
    r = c / float(s)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        r2 = np.sum(r * r) if c.ndim else (np.float64(r * r) * int(dim)
                                           if dim <= 2 ** 53 else np.float64(np.inf))
        if np.isfinite(r2) and r2 >= _TINY_NORMAL:
            out = np.maximum(al * (0.5 * r2), _TINY)
        else:
            # r*r underflowed or the sum (or dim) left the float range: in logs, scaled by
            # the largest ratio, so a representable RDP is not lost to the intermediate
            lm = math.log(float(np.max(c))) - math.log(float(s))
            lr2 = (2.0 * lm + math.log(float(np.sum((c / np.max(c)) ** 2))) if c.ndim
                   else 2.0 * lm + math.log(int(dim)))
            out = np.maximum(np.exp(np.log(al) + (lr2 - math.log(2.0))), _TINY)
    return float(out) if al.ndim == 0 else out


_TINY = float(np.nextafter(0.0, 1.0))
_TINY_NORMAL = float(np.finfo(np.float64).tiny)


def rdp_to_dp(rdp_curve: Any, alphas: Any, delta: float, *, return_alpha: bool = False):
    r"""Convert an RDP curve to :math:`(\epsilon, \delta)`-DP by the standard bound
    (Prop. 3 of [M17]_):

    .. math:: \epsilon(\delta) = \min_\alpha\; \epsilon_{RDP}(\alpha) + \frac{\log(1/\delta)}
              {\alpha - 1}.

    Parameters
    ----------
    rdp_curve : array_like
        RDP values at ``alphas`` (finite, >= 0), same shape.
    alphas : array_like
        Renyi orders, finite and > 1.
    delta : float
        In (0, 1).
    return_alpha : bool
        Also return the minimising order.

    Returns
    -------
    float, or (float, float) with ``return_alpha``.

    Notes
    -----
    The paper does not state which conversion, delta or order grid its (epsilon, delta)
    figures use; this is the classical one (tighter conversions exist).

    Examples
    --------
    >>> from bndp.accounting import rdp_to_dp
    >>> eps, alpha = rdp_to_dp([0.25, 0.5, 1.0], [2.0, 4.0, 8.0], 1e-5, return_alpha=True)
    >>> round(eps, 6), alpha
    (2.644704, 8.0)
    """
    r = as_float_array(rdp_curve, "rdp_curve")
    al = _check_alpha(alphas, "alphas")
    if r.shape != al.shape:
        raise ValueError(f"`rdp_curve` and `alphas` must have the same shape; got {r.shape} "
                         f"and {al.shape}")
    bad = ~(np.isfinite(r) & (r >= 0))
    if bad.any():
        raise ValueError("`rdp_curve` must be finite and >= 0")
    d = float(as_float_array(delta, "delta"))
    if not (0.0 < d < 1.0):
        raise ValueError(f"`delta` must be in (0, 1); got {d!r}")
    eps = np.atleast_1d(r + math.log(1.0 / d) / (al - 1.0))
    k = int(np.argmin(eps))
    e = float(eps[k])
    return (e, float(np.atleast_1d(al)[k])) if return_alpha else e


class PerInstanceAccountant:
    r"""Per-instance RDP and FIL accounting for private gradient descent with a
    bounded-support Gaussian mechanism (Algorithm 1 of [HMSCG24]_, composed over steps):
    full-batch steps (RDP and FIL), or Poisson-subsampled mini-batch steps (FIL only).

    At each step feed the summed L-infinity-clipped gradient
    :math:`\hat g = \sum_{i \in B} \hat g(x_i)` of the batch (:meth:`step`, or
    :meth:`step_per_example` with the per-example gradients, which are checked against the
    clipping bound). For full batches the accountant adds the step's per-instance RDP curve
    :math:`\sum_j \epsilon_\alpha(\hat g_j)` (convention as in :func:`per_instance_rdp`) to the
    running total (RDP composes additively), and, when per-example Jacobians are given, the
    per-example squared FIL :math:`\lVert \mathrm{diag}(\eta) J_i \rVert_2^2` (FIMs add over
    steps).

    Parameters
    ----------
    mechanism : RectifiedGaussian, TruncatedGaussian or StochasticSign
        The release mechanism (its ``sigma`` and bounds are on the scale of the summed
        gradient).
    sensitivity : float or array_like
        L-infinity clipping bound :math:`C` (> 0), the per-coordinate sensitivity.
    alphas : sequence of float, optional
        Renyi orders (> 1); default :data:`DEFAULT_ALPHAS`.
    convention : {"sup", "text", "alg1", "rev"}
        Divergence convention, see :func:`per_instance_rdp` ("alg1" reproduces the paper).
        ``mode=`` is refused with a ``TypeError`` naming ``convention``.
    sampling_rate : float
        Poisson sampling rate :math:`q \in (0, 1]` of the batches; 1 (default) for full
        batches. With :math:`q < 1` only FIL is accounted (see Notes); :attr:`rdp` and
        :meth:`epsilon` refuse, since no amplification-by-subsampling bound is known for the
        RDP of these mechanisms (Section 5.3 of [HMSCG24]_): they are neither shift- nor
        rotation-invariant, so the reduction used for the subsampled Gaussian fails, and a
        mixture of product measures does not factor over coordinates. Subsampled-Gaussian
        RDP accountants (Opacus, TF Privacy) must not be used for them either.

    Notes
    -----
    **FIL under subsampling** (Section 6.3 of [HMSCG24]_, following Guo et al. 2022,
    "Bounding training data reconstruction in private (deep) learning", ICML). With Poisson
    sampling at rate :math:`q` the output law is the mixture
    :math:`(1-q)\,p_{B'} + q\,p_{B' \cup \{i\}}` over the rest :math:`B'` of the batch, and
    only the second part depends on example :math:`i`; joint convexity of the Fisher
    information gives

    .. math:: I_i \preceq q\, \mathbb{E}_{B'}\big[J_i^\top \mathrm{diag}(\eta^2(\hat g_{B'
              \cup \{i\}})) J_i\big],

    composed additively over steps. For the Gaussian mechanism :math:`\eta = 1/\sigma` does
    not depend on the batch and this is a bound. For the bounded-support mechanisms
    :math:`\eta` depends on the batch through :math:`\hat g`; as in the paper, the accountant
    evaluates it at the **realised** batch's summed gradient (the value passed to
    :meth:`step`) in place of the expectation over batches, and adds
    :math:`q\,\lVert \mathrm{diag}(\eta(\hat g_B)) J_i \rVert_2^2` for every example whose
    Jacobian is given (pass the Jacobians of all examples to be accounted, not only the
    batch's). :attr:`fil_eta2` is therefore an **approximation** (a one-sample estimate of
    the bound above), not a bound. :attr:`fil_eta2_bound` carries alongside it the bound
    :math:`q \sum_t \lVert J_i \rVert_2^2/\sigma^2`, which holds (Theorem 4.2:
    :math:`\eta_B \le 1/\sigma`) but gives up the bounded-support amplification.

    The values depend on the realised training trajectory (per-instance DP): they describe
    the privacy loss of this dataset's examples, not a worst-case guarantee, and releasing
    them leaks information.

    Examples
    --------
    >>> import bndp
    >>> from bndp.accounting import PerInstanceAccountant
    >>> m = bndp.RectifiedGaussian(sigma=1.0, lower=-1.0, upper=1.0)
    >>> acc = PerInstanceAccountant(m, sensitivity=1.0)
    >>> acc.step([0.5, -0.2]).shape  # one RDP value per order in DEFAULT_ALPHAS
    (16,)
    >>> acc
    PerInstanceAccountant(mechanism=RectifiedGaussian(sigma=1.0, lower=-1.0, upper=1.0), convention='sup', steps=1)
    >>> bool(acc.epsilon(1e-5) > 0)
    True
    """

    @removed_parameter("mode", "convention", removed_in="0.7.0")
    def __init__(self, mechanism: Any, sensitivity: Any, *, alphas: Any = None,
                 convention: str = "sup", sampling_rate: float = 1.0) -> None:
        _mech_code(mechanism)
        _check_convention(convention)
        q = as_float_array(sampling_rate, "sampling_rate")
        if q.ndim or not (0.0 < float(q) <= 1.0):
            raise ValueError(f"`sampling_rate` must be a number in (0, 1]; got {sampling_rate!r}")
        c = as_float_array(sensitivity, "sensitivity")
        check_positive(c, "sensitivity")
        al = _check_alpha(DEFAULT_ALPHAS if alphas is None else alphas, "alphas")
        if al.ndim != 1 or al.size == 0:
            raise ValueError("`alphas` must be a non-empty 1-D sequence")
        self.mechanism = mechanism
        self.sensitivity = c
        self.alphas = al
        self.convention = convention
        self.sampling_rate = float(q)
        self.steps = 0
        self._rdp = np.zeros(al.shape)
        self._fil_eta2: np.ndarray | None = None
        self._fil_bound: np.ndarray | None = None
        self.last_eta2: np.ndarray | None = None

    def _refuse_subsampled_rdp(self) -> None:
        if self.sampling_rate != 1.0:
            raise ValueError(
                f"no RDP is accounted at sampling_rate = {self.sampling_rate!r}: no "
                "privacy-amplification-by-subsampling bound exists for the rectified/truncated "
                "Gaussian (Hu et al. 2024, Sec. 5.3: the mechanisms are not shift/rotation "
                "invariant and a mixture of product measures does not tensorize over "
                "coordinates); do not reuse subsampled-Gaussian accountants for them. Use "
                "full batches (sampling_rate=1) for per-instance RDP; FIL is accounted here "
                "(fil_eta2, fil_eta2_bound)."
            )

    @property
    def rdp(self) -> np.ndarray:
        """Composed per-instance RDP curve at :attr:`alphas` (a copy; full batches only)."""
        self._refuse_subsampled_rdp()
        return self._rdp.copy()

    @property
    def fil_eta2_bound(self) -> np.ndarray | None:
        """Per-example upper bound on the composed squared FIL,
        :math:`q \\sum_t \\lVert J_i \\rVert_2^2 / \\sigma^2` (Theorem 4.2 of [HMSCG24]_;
        with Poisson sampling at rate q, the convexity bound of Guo et al.), or None if no
        Jacobians were given. For ``jacobian_norms`` the norms given are used."""
        return None if self._fil_bound is None else self._fil_bound.copy()

    @property
    def fil_eta2(self) -> np.ndarray | None:
        """Per-example squared FIL composed over steps (sum of
        :math:`\\lVert\\mathrm{diag}(\\eta)J_i\\rVert_2^2`), or None if no Jacobians were
        given."""
        return None if self._fil_eta2 is None else self._fil_eta2.copy()

    @property
    def fil_eta(self) -> np.ndarray | None:
        """Per-example FIL :math:`\\eta_i = \\sqrt{\\text{fil\\_eta2}_i}`."""
        return None if self._fil_eta2 is None else np.sqrt(self._fil_eta2)

    def step(self, summed_gradient: Any, *, jacobians: Any = None,
             jacobian_norms: Any = None) -> np.ndarray:
        r"""Account one full-batch step.

        Parameters
        ----------
        summed_gradient : array_like
            :math:`\hat g = \sum_i \hat g(x_i)` (shape broadcasting with the bounds), the
            value the mechanism is applied to.
        jacobians : array_like, optional
            Per-example Jacobians :math:`J_i = \partial \hat g(x_i)/\partial x_i`, shape
            (n, d, p), or (n, d) for p = 1. Gives the exact per-example squared FIL
            :math:`\lVert \mathrm{diag}(\eta) J_i \rVert_2^2` (spectral norm).
        jacobian_norms : array_like, optional
            :math:`\lVert J_i \rVert_2`, shape (n,): gives the upper bound
            :math:`\max_j \eta_j^2 \lVert J_i \rVert_2^2` instead.

        Returns
        -------
        ndarray
            This step's RDP curve at :attr:`alphas`; with ``sampling_rate < 1``, this step's
            per-example squared-FIL increments (the Jacobians are then required).

        Notes
        -----
        With ``sampling_rate`` q < 1, ``summed_gradient`` is the sum over the realised
        Poisson batch, and the per-example increments are q times the full-batch ones (see
        the class Notes: an approximation of the Guo et al. bound).
        """
        g = _value(summed_gradient, "summed_gradient")
        _broadcast(self.mechanism, g, (np.asarray(self.sensitivity),), "summed_gradient")
        q = self.sampling_rate
        sub = q != 1.0
        if sub and jacobians is None and jacobian_norms is None:
            raise ValueError(
                "with sampling_rate < 1 only FIL is accounted: give `jacobians` or "
                "`jacobian_norms` (RDP under subsampling is refused, Hu et al. 2024 Sec. 5.3)"
            )
        r = None if sub else np.atleast_1d(
            per_instance_rdp(self.mechanism, g, self.sensitivity, self.alphas, self.convention))
        eta2 = None
        fil = None
        if jacobians is not None or jacobian_norms is not None:
            if jacobians is not None and jacobian_norms is not None:
                raise ValueError("give `jacobians` or `jacobian_norms`, not both")
            eta2 = np.asarray(fisher_information_loss_squared(self.mechanism, g)).reshape(-1)
            inv_s2 = 1.0 / (self.mechanism.sigma * self.mechanism.sigma)
            if jacobians is not None:
                J = as_float_array(jacobians, "jacobians")
                check_finite(J, "jacobians")
                if J.ndim == 2:
                    J = J[:, :, None]
                if J.ndim != 3 or J.shape[1] != eta2.size:
                    raise ValueError(
                        f"`jacobians` must have shape (n, d) or (n, d, p) with d = {eta2.size}; "
                        f"got {J.shape}"
                    )
                w = np.sqrt(eta2)[None, :, None] * J
                if J.shape[2] > 1:
                    fil = np.linalg.norm(w, 2, axis=(1, 2)) ** 2
                    bound = np.linalg.norm(J, 2, axis=(1, 2)) ** 2 * inv_s2
                else:
                    fil = np.sum(w[:, :, 0] ** 2, axis=1)
                    bound = np.sum(J[:, :, 0] ** 2, axis=1) * inv_s2
            else:
                nrm = as_float_array(jacobian_norms, "jacobian_norms")
                check_finite(nrm, "jacobian_norms")
                if nrm.ndim != 1 or (nrm < 0).any():
                    raise ValueError("`jacobian_norms` must be a 1-D array of values >= 0")
                fil = float(np.max(eta2)) * nrm ** 2
                bound = nrm ** 2 * inv_s2
            fil = q * fil
            bound = np.maximum(q * bound, fil)     # eta <= 1/sigma; rounding only
            if self._fil_eta2 is None:
                self._fil_eta2 = np.zeros(fil.shape)
                self._fil_bound = np.zeros(fil.shape)
            if self._fil_eta2.shape != fil.shape:
                raise ValueError(f"number of examples changed: {self._fil_eta2.shape[0]} "
                                 f"before, {fil.shape[0]} now")
            assert self._fil_bound is not None
            self._fil_eta2 = self._fil_eta2 + fil
            self._fil_bound = self._fil_bound + bound
            self.last_eta2 = eta2
        if r is not None:
            self._rdp = self._rdp + r
        self.steps += 1
        if r is None:
            assert fil is not None             # sub-sampled steps require Jacobians
            return fil
        return r

    def step_per_example(self, per_example_gradients: Any, **kwargs: Any) -> np.ndarray:
        """:meth:`step` from per-example gradients of shape (n, d), which must already be
        clipped to ``[-sensitivity, sensitivity]`` per coordinate (checked: the accounting
        is only valid for L-infinity-clipped gradients)."""
        G = as_float_array(per_example_gradients, "per_example_gradients")
        check_finite(G, "per_example_gradients")
        if G.ndim != 2:
            raise ValueError(f"`per_example_gradients` must have shape (n, d); got {G.shape}")
        if (np.abs(G) > self.sensitivity).any():
            raise ValueError(
                "`per_example_gradients` must be clipped to [-sensitivity, sensitivity] per "
                "coordinate (L-infinity clipping) before accounting"
            )
        return self.step(G.sum(axis=0), **kwargs)

    def epsilon(self, delta: float, *, return_alpha: bool = False):
        """(epsilon, delta)-pDP of the composed steps by :func:`rdp_to_dp` (full batches
        only)."""
        self._refuse_subsampled_rdp()
        return rdp_to_dp(self._rdp, self.alphas, delta, return_alpha=return_alpha)

    def __repr__(self) -> str:
        q = "" if self.sampling_rate == 1.0 else f", sampling_rate={self.sampling_rate!r}"
        return (f"PerInstanceAccountant(mechanism={self.mechanism!r}, convention={self.convention!r}"
                f"{q}, steps={self.steps})")
