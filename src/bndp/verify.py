r"""Privacy verification: certified worst-case privacy loss from the closed densities, tight
calibration of the bounded Gaussian mechanism, and an empirical auditor.

:func:`verify` asks a mechanism for its certified worst-case :math:`\epsilon` (the supremum
of :math:`\ln p_q(x)/p_{q'}(x)` over all neighbouring true values and all outputs), computed
from the densities, not from samples. :func:`bounded_gaussian_loss` and
:func:`bounded_laplace_loss` are the evaluators behind it;
:func:`bounded_gaussian_tight_sigma` is the smallest :math:`\sigma` whose certified loss is
at most :math:`\epsilon`. :func:`audit` is an independent, sample-based check that can fail.

The module is callable: ``bndp.verify(m)`` is :func:`verify` (``bndp.verify`` is this
module, so ``import bndp.verify``, ``bndp.verify.privacy_profile(m, eps)`` and
``from bndp.verify import verify`` all work, and nothing shadows anything).

References
----------
.. [CH24] B. Chen, M. Hale. "The Bounded Gaussian Mechanism for Differential Privacy".
   Journal of Privacy and Confidentiality, 2024 (arXiv:2211.17230).
.. [HABM20] N. Holohan, S. Antonatos, S. Braghin, P. Mac Aonghusa. "The Bounded Laplace
   Mechanism in Differential Privacy". Journal of Privacy and Confidentiality 10(1), 2020.
.. [DWWZK18] Z. Ding, Y. Wang, G. Wang, D. Zhang, D. Kifer. "Detecting Violations of
   Differential Privacy". ACM CCS 2018.
.. [CP34] C. J. Clopper, E. S. Pearson. "The use of confidence or fiducial limits
   illustrated in the case of the binomial". Biometrika 26(4), 1934.
"""

from __future__ import annotations

import math
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ._core import certify as _certify
from ._loss import (LossCertificate, _pos, _widths, bounded_gaussian_loss,
                    bounded_gaussian_tight_sigma, bounded_laplace_loss)
from ._random import RNGLike, as_generator
from ._validation import as_float_array, fast_real
from .mechanisms.laplace import BoundedLaplace

__all__ = [
    "verify",
    "bounded_gaussian_loss",
    "bounded_laplace_loss",
    "bounded_gaussian_tight_sigma",
    "bounded_laplace_profile",
    "privacy_profile",
    "LossCertificate",
    "audit",
    "AuditResult",
]


def verify(mechanism: Any) -> float:
    r"""Certified worst-case privacy loss :math:`\epsilon` of a configured mechanism.

    Dispatches to ``mechanism.privacy_loss()``: every pure-:math:`\epsilon` mechanism of bndp
    implements it from its closed density (:class:`bndp.BoundedLaplace`: the exact closed
    form; :class:`bndp.BoundedGaussian`: :func:`bounded_gaussian_loss`), and any object with
    such a method is accepted.

    Parameters
    ----------
    mechanism : object
        Has a ``privacy_loss()`` method returning a float.

    Returns
    -------
    float
        An upper bound on :math:`\sup_{q \sim q'} \sup_x \ln p_q(x)/p_{q'}(x)`; the
        mechanism is :math:`\epsilon`-DP for every :math:`\epsilon` at least this value.

    Raises
    ------
    TypeError
        If ``mechanism`` has no callable ``privacy_loss``.

    Examples
    --------
    >>> import bndp
    >>> m = bndp.BoundedGaussian(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    >>> bndp.verify(m) <= 1.0
    True
    """
    fn = getattr(mechanism, "privacy_loss", None)
    if not callable(fn):
        raise TypeError(
            f"`mechanism` must have a privacy_loss() method; got {type(mechanism).__name__}"
        )
    return float(fn())


# ---------------------------------------------------------------------------------------
# Evaluators
# ---------------------------------------------------------------------------------------

def bounded_laplace_profile(scale: Any, epsilon: Any, sensitivity: Any, lower: Any,
                            upper: Any, *, details: bool = False):
    r"""Privacy profile of the bounded Laplace mechanism [HABM20]_: the exact smallest
    :math:`\delta` for which it is :math:`(\epsilon, \delta)`-DP at a given scale,

    .. math:: \delta(\epsilon) = \sup_{|q - q'| \le \Delta Q}\;\int_l^u
              \bigl(p_q(x) - e^{\epsilon} p_{q'}(x)\bigr)_+\,dx .

    For one pair (:math:`q < q'`) the log density ratio decreases in :math:`x`, so the
    integral is :math:`F_q(x^*) - e^{\epsilon}F_{q'}(x^*)` at the crossing point
    :math:`x^*`, a closed form in the CDFs. The CDFs decrease in the location (monotone
    likelihood ratio), so the supremum over the shift is at :math:`|q - q'| = \Delta Q`, and
    on :math:`q \in [q_0, q_1]` the pair value is bounded by that of the pair
    :math:`(q_0, q_1 + \Delta Q)`: a certified bound on each interval, refined by branch and
    bound over :math:`q \in [l, u - \Delta Q]` (the maximiser is in general inside the
    domain, not at the bound). The returned value is an upper bound within about
    :math:`10^{-7}` relative of an attained value (``details=True`` returns both); it is 0
    exactly when the mechanism is :math:`\epsilon`-DP.

    This is the :math:`\delta` the mechanism actually has. Theorem 3.5 of the paper
    certifies the larger :math:`\delta = 1 - e^{\epsilon - \Delta Q/b}/\Delta C(b)`
    (:func:`bndp.calibrate.bounded_laplace_delta_bound`, an upper bound on this profile):
    e.g. with :math:`\Delta Q = 1` on
    :math:`[0, 10]`, :math:`b = 1.5`, :math:`\epsilon = 0.5` it gives 0.430 where the exact
    profile is 0.1049.

    Parameters
    ----------
    scale : float
        :math:`b`, finite and > 0.
    epsilon : float
        Finite and >= 0.
    sensitivity : float
        :math:`\Delta Q`, finite and > 0 (capped at ``upper - lower``).
    lower, upper : float
        Finite, ``lower < upper``.
    details : bool, default False
        Return ``(upper_bound, attained, q)`` with the worst true value ``q`` (and
        :math:`q' = q + \Delta Q`, or the mirror pair) instead of the float.

    Returns
    -------
    float or tuple
        The certified :math:`\delta(\epsilon)` (an upper bound), or
        ``(upper_bound, attained, q)`` with ``details=True``.

    Examples
    --------
    The example above: the exact profile against Theorem 3.5's bound.

    >>> from bndp.verify import bounded_laplace_profile
    >>> round(bounded_laplace_profile(1.5, 0.5, 1.0, 0.0, 10.0), 4)
    0.1049
    >>> import bndp.calibrate
    >>> round(bndp.calibrate.bounded_laplace_delta_bound(1.5, 0.5, 1.0, 0.0, 10.0), 3)
    0.43
    """
    b = _pos(scale, "scale")
    eps = fast_real(epsilon, "epsilon")
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"`epsilon` must be finite and >= 0; got {eps!r}")
    dq = _pos(sensitivity, "sensitivity")
    w = _widths(lower, upper)
    if w.size != 1:
        raise ValueError("`lower` and `upper` must be scalars for the bounded Laplace mechanism")
    up, low, q = _certify.vf_bl_delta(b, dq, float(w[0]), eps)
    if details:
        return float(up), float(low), float(q) + float(as_float_array(lower, "lower"))
    return float(up)


def privacy_profile(mechanism: Any, epsilon: Any) -> float:
    r"""Exact :math:`\delta(\epsilon)` of a configured mechanism (its privacy profile, the
    smallest :math:`\delta` for which it is :math:`(\epsilon, \delta)`-DP), where a closed
    form (or a certified evaluation of one) exists. The mechanism-level entry point: for
    the bounded Laplace it is :func:`bounded_laplace_profile` at the mechanism's scale,
    never the paper's looser :func:`bndp.calibrate.bounded_laplace_delta_bound`.

    ``mechanism.privacy_profile(epsilon)`` is used when the mechanism provides it;
    :class:`bndp.BoundedLaplace` in continuous mode uses :func:`bounded_laplace_profile` at its
    scale. A grid law (a mechanism with an ``exact_plan``) with certified loss :math:`L` has
    :math:`\delta(\epsilon) \le 1 - e^{\epsilon - L}` (an upper bound: any event has
    :math:`P(A) - e^{\epsilon}P'(A) \le P(A)(1 - e^{\epsilon - L})`). For any other
    mechanism with ``privacy_loss()``, :math:`\delta(\epsilon) = 0` for
    :math:`\epsilon` at least its certified loss; below it the profile has no closed form
    here and ``NotImplementedError`` is raised.

    Parameters
    ----------
    mechanism : object
        A configured mechanism (has ``privacy_profile(epsilon)`` or ``privacy_loss()``).
    epsilon : float
        Finite and >= 0.

    Returns
    -------
    float
        :math:`\delta(\epsilon) \in [0, 1]`.

    Examples
    --------
    >>> import bndp
    >>> from bndp.verify import privacy_profile
    >>> m = bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0,
    ...                         mode="continuous")
    >>> privacy_profile(m, 1.0)
    0.0
    >>> round(privacy_profile(m, 0.5), 4)
    0.0881
    """
    fn = getattr(mechanism, "privacy_profile", None)
    if callable(fn):
        return float(fn(epsilon))
    eps = fast_real(epsilon, "epsilon")
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"`epsilon` must be finite and >= 0; got {eps!r}")
    if getattr(mechanism, "exact_plan", None) is not None:
        # a loss bound L gives P(A) - e^eps P'(A) <= P(A)(1 - e^(eps - L)) <= 1 - e^(eps - L)
        z = eps - mechanism.privacy_loss()
        return 0.0 if z >= 0.0 else -math.expm1(z)     # no expm1 overflow for a large eps
    if isinstance(mechanism, BoundedLaplace):
        return bounded_laplace_profile(mechanism.scale, eps, mechanism.sensitivity,
                                       mechanism.lower, mechanism.upper)
    if eps >= verify(mechanism):
        return 0.0
    raise NotImplementedError(
        f"no closed-form privacy profile for {type(mechanism).__name__} below its "
        "worst-case loss"
    )


# ---------------------------------------------------------------------------------------
# Empirical auditor
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`.

    Attributes
    ----------
    epsilon : float
        The claimed :math:`\\epsilon` that was tested.
    delta : float
        The claimed :math:`\\delta`.
    epsilon_lower : float
        Lower confidence bound (level ``1 - alpha``, simultaneous over all events and both
        directions) on the privacy loss of the two inputs; ``-inf`` if no event had enough
        mass.
    epsilon_hat : float
        Point estimate :math:`\\ln \\hat P(E)/\\hat P'(E)` at the event that gave
        ``epsilon_lower``.
    violation : bool
        ``epsilon_lower > epsilon``: the claim is refuted at level ``alpha``.
    event : tuple
        ``(low, high, direction)``: the event :math:`\\{low < T \\le high\\}` of the
        statistic and ``+1`` if it is over-represented under ``sampler_q``, ``-1`` under
        ``sampler_q_prime``.
    counts : tuple
        Counts of the event in the two main samples.
    n : int
        Size of each main sample.
    alpha : float
        Family-wise error level.

    Examples
    --------
    >>> import bndp
    >>> m = bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    >>> res = bndp.audit(lambda n, rng: m.sample(0.0, size=n, rng=rng),
    ...                  lambda n, rng: m.sample(1.0, size=n, rng=rng),
    ...                  epsilon=1.0, n=20_000, rng=1)
    >>> res.epsilon, res.n, isinstance(res.violation, bool)
    (1.0, 20000, True)
    >>> bool(res.epsilon_lower <= res.epsilon_hat)
    True
    """

    epsilon: float
    delta: float
    epsilon_lower: float
    epsilon_hat: float
    violation: bool
    event: tuple
    counts: tuple
    n: int
    alpha: float


def _draw(sampler: Callable, n: int, gen: np.random.Generator,
          statistic: Callable | None) -> np.ndarray:
    x = np.asarray(sampler(n, gen), dtype=np.float64)
    if statistic is not None:
        x = np.asarray(statistic(x), dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(
            "samplers must return a 1-D array of n outputs (pass `statistic` to reduce "
            f"multivariate outputs to one number each); got shape {x.shape}"
        )
    if x.shape[0] != n:
        raise ValueError(f"a sampler returned {x.shape[0]} outputs; expected n = {n}")
    if not np.isfinite(x).all():
        raise ValueError("samplers must return finite outputs")
    return x


def audit(sampler_q: Callable, sampler_q_prime: Callable, epsilon: float, *,
          delta: float = 0.0, n: int = 200_000, bins: int = 64, alpha: float = 0.05,
          statistic: Callable | None = None, rng: RNGLike = None) -> AuditResult:
    r"""Empirical privacy audit of one pair of neighbouring inputs.

    Draws samples of the mechanism's output on two neighbouring inputs and tests the claim
    :math:`P(M(q) \in E) \le e^{\epsilon} P(M(q') \in E) + \delta` (and with the roles
    swapped) on a family of events :math:`E`, in the style of published DP testers
    [DWWZK18]_: a pilot sample (one tenth of ``n`` from each input, discarded afterwards)
    fixes ``bins`` equal-mass intervals at the quantiles of the pooled outputs, refined by
    12 geometrically spaced quantiles in each tail (down to about 50 pilot points); the
    events are these intervals, their prefix unions :math:`\{T \le e_j\}` and suffix unions
    :math:`\{T > e_j\}`. For each event the probabilities under the two inputs are bounded
    by exact Clopper-Pearson intervals [CP34]_ on fresh samples, at level
    :math:`\alpha/(4K)` for :math:`K` events (Bonferroni over events, directions and the two
    bounds), so that with probability at least :math:`1 - \alpha`

    .. math:: \epsilon_{\rm lower} = \max_{E,\ \pm}
              \ln\frac{\underline{P}(E) - \delta}{\overline{P'}(E)}

    is below the true privacy loss of this pair. A violation is flagged when
    :math:`\epsilon_{\rm lower} > \epsilon`: a correct mechanism is flagged with
    probability at most :math:`\alpha`. An audit can only refute, never certify: a pass
    says nothing about other inputs or about events of tiny mass (use :func:`verify`).

    Parameters
    ----------
    sampler_q, sampler_q_prime : callable
        ``sampler(n, rng)`` returns ``n`` independent outputs of the mechanism on each of
        the two neighbouring inputs, as a 1-D array (or anything ``statistic`` maps to one).
        ``rng`` is a :class:`numpy.random.Generator`.
    epsilon : float
        Claimed :math:`\epsilon`, finite and >= 0.
    delta : float, default 0
        Claimed :math:`\delta` in [0, 1).
    n : int, default 200000
        Main sample size per input (>= 1000).
    bins : int, default 64
        Number of intervals, from 2 to ``n``.
    alpha : float, default 0.05
        Family-wise false-alarm level, in (0, 1).
    statistic : callable, optional
        Maps a sampler's output to one number per draw (e.g. a coordinate, or a
        likelihood-ratio statistic); required for multivariate outputs.
    rng : None, int, SeedSequence, BitGenerator or Generator
        Randomness for the samplers (fix it for reproducible audits).

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> import bndp
    >>> m = bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    >>> r = bndp.audit(lambda k, g: m.sample(0.0, size=k, rng=g),
    ...                lambda k, g: m.sample(1.0, size=k, rng=g), 1.0, rng=1)
    >>> r.violation
    False
    """
    from scipy.special import betaincinv

    eps = fast_real(epsilon, "epsilon")
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"`epsilon` must be finite and >= 0; got {eps!r}")
    dl = fast_real(delta, "delta")
    if not (0.0 <= dl < 1.0):
        raise ValueError(f"`delta` must be in [0, 1); got {dl!r}")
    al = fast_real(alpha, "alpha")
    if not (0.0 < al < 1.0):
        raise ValueError(f"`alpha` must be in (0, 1); got {al!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1000:
        raise ValueError(f"`n` must be an integer >= 1000; got {n!r}")
    if (isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2
            or bins > n):
        # equal-mass intervals of the draws: more of them than draws is meaningless (and
        # 10**9 of them ran out of memory)
        raise ValueError(f"`bins` must be an integer from 2 to `n` ({n!r}); got {bins!r}")
    n = int(n)
    gen = as_generator(rng)
    n_pilot = max(n // 10, 1000)
    pilot = np.concatenate([_draw(sampler_q, n_pilot, gen, statistic),
                            _draw(sampler_q_prime, n_pilot, gen, statistic)])
    # equal-mass edges, plus geometrically spaced tail edges down to ~50 pilot points per
    # tail event (violations of pure DP often sit in the tails)
    levels = np.linspace(0.0, 1.0, int(bins) + 1)[1:-1]
    p_min = 50.0 / pilot.size
    if p_min < 1.0 / bins:
        tail = np.geomspace(p_min, 1.0 / bins, 12)
        levels = np.concatenate([levels, tail, 1.0 - tail])
    edges = np.unique(np.quantile(pilot, np.clip(levels, 0.0, 1.0)))
    xa = _draw(sampler_q, n, gen, statistic)
    xb = _draw(sampler_q_prime, n, gen, statistic)
    k = edges.size + 1
    ca = np.bincount(np.searchsorted(edges, xa, side="left"), minlength=k)
    cb = np.bincount(np.searchsorted(edges, xb, side="left"), minlength=k)
    lo_e = np.concatenate([[-np.inf], edges])
    hi_e = np.concatenate([edges, [np.inf]])
    # events: single intervals, prefixes (-inf, e_j], suffixes (e_j, inf)
    pa = np.cumsum(ca)[:-1]
    pb = np.cumsum(cb)[:-1]
    ev_a = np.concatenate([ca, pa, n - pa])
    ev_b = np.concatenate([cb, pb, n - pb])
    ev_lo = np.concatenate([lo_e, np.full(k - 1, -np.inf), edges])
    ev_hi = np.concatenate([hi_e, edges, np.full(k - 1, np.inf)])
    n_events = ev_a.size
    level = al / (4.0 * n_events)

    def cp_lower(x):
        out = np.zeros(x.shape)
        m = x > 0
        out[m] = betaincinv(x[m], n - x[m] + 1.0, level)
        return out

    def cp_upper(x):
        out = np.ones(x.shape)
        m = x < n
        out[m] = betaincinv(x[m] + 1.0, n - x[m], 1.0 - level)
        return out

    la, ua = cp_lower(ev_a.astype(float)), cp_upper(ev_a.astype(float))
    lb, ub = cp_lower(ev_b.astype(float)), cp_upper(ev_b.astype(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        lb_fwd = np.where(la > dl, np.log(la - dl) - np.log(ub), -np.inf)
        lb_bwd = np.where(lb > dl, np.log(lb - dl) - np.log(ua), -np.inf)
    both = np.concatenate([lb_fwd, lb_bwd])
    j = int(np.argmax(both))
    best = float(both[j])
    direction = 1 if j < n_events else -1
    i = j % n_events
    a, b = (int(ev_a[i]), int(ev_b[i]))
    num, den = (a, b) if direction == 1 else (b, a)
    with np.errstate(divide="ignore"):
        hat = float(np.log(max(num / n - dl, 0.0)) - np.log(den / n)) if den > 0 else math.inf
    return AuditResult(epsilon=eps, delta=dl, epsilon_lower=best, epsilon_hat=hat,
                       violation=bool(best > eps),
                       event=(float(ev_lo[i]), float(ev_hi[i]), direction),
                       counts=(a, b), n=n, alpha=al)


class _CallableModule(types.ModuleType):
    """Type of this module: calling it calls :func:`verify`, so that ``bndp.verify(m)``
    works while ``bndp.verify`` stays the module (no function shadowing the submodule)."""

    def __call__(self, mechanism: Any) -> float:
        return verify(mechanism)


sys.modules[__name__].__class__ = _CallableModule

