r"""Composition of a ledger's history: basic (exact sums) and optimal (privacy loss
distributions from Google's ``dp-accounting``).

A history is kept as a multiset of per-column costs ``{(epsilon, delta): count}``; each
released column is one mechanism run on the same data.

Basic composition: the sum of the :math:`\epsilon` and the sum of the :math:`\delta`
(Dwork & Roth 2014, Theorem 3.16). The ledger keeps these sums itself, exactly, of the
decimals charged; the multiset here holds each charged amount as the smallest double not
below it.

Optimal composition (:func:`optimal_composition`): the :math:`\epsilon` at a :math:`\delta`
of the composed privacy curve of the history, by the first of these methods that applies
(each is sound: never below the optimal composition of Kairouz, Oh & Viswanath 2015):

``"exact"``
    An :math:`(\epsilon_i, \delta_i)` column is dominated by randomised response with
    parameter :math:`\epsilon_i` and, with probability :math:`\delta_i`, an infinite loss.
    The composed curve is :math:`\delta(\epsilon) = m + (1 - m)\,\delta_{\text{RR}}(\epsilon)`
    with :math:`m = 1 - \prod_i (1 - \delta_i)` and :math:`\delta_{\text{RR}}` the curve of
    the composed randomised responses. With :math:`n_j` columns of each distinct
    :math:`\epsilon_j > 0`, the composed loss takes at most :math:`\prod_j (n_j + 1)`
    values; when that is at most :data:`EXACT_TERMS` (any history of one distinct
    :math:`\epsilon`, up to that many columns) they are enumerated in log space and
    :math:`\epsilon` is found by bisection: the optimum itself, up to the relative margin
    :data:`EXACT_MARGIN` on :math:`\delta`.
Otherwise the smallest of:

``"pld"``
    The privacy-loss-distribution estimate of Google's ``dp-accounting``: each column
    enters as the randomised response above with its losses rounded up to the grid
    (``PrivacyLossDistribution.create_from_rounded_probability``; see
    :func:`_grid_losses`), identical columns by ``self_compose`` and distinct ones by
    ``compose``;
    the curve is read at :math:`\delta` less a bound on the FFT's floating-point error (see
    :func:`_pld_epsilon`), and only where that bound is below half of :math:`\delta` (the
    FFT's round-off, about :math:`10^{-15}` a bin, makes the estimate meaningless at the
    smallest :math:`\delta`).
``"kairouz"``
    The composition bound of Kairouz, Oh & Viswanath (2015, Theorem 3.5), tighter than the
    advanced composition of Dwork, Rothblum & Vadhan (2010).
``"basic"``
    The sum of the :math:`\epsilon`, valid at any :math:`\delta \ge m`.

Adding a column never lowers the optimal curve, so the exact method's result never
decreases; nor do the closed forms (``"kairouz"``, ``"basic"``: sums of non-negative terms),
nor the privacy-loss-distribution estimate in exact arithmetic (composing with a further
dominating pair never lowers the curve, and the discretisation is the same) up to its
certified error. A history whose exact curve is tractable only has sub-histories whose
curve is, and every sound bound of a longer history is at least the optimum of a shorter
one, so the reported :math:`\epsilon` does not decrease along a budget's history.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Iterable, Mapping

__all__ = ["Counts", "add_counts", "basic_sums", "optimal_composition", "optimal_epsilon",
           "counts_from_text", "counts_to_text", "DISCRETIZATION", "METHODS"]

Counts = dict  # {(epsilon, delta): count}

#: Width of the privacy-loss grid of the optimal accountant (dp-accounting's default), and a
#: coarser one used when every epsilon of the history lies on it (the losses of pure-epsilon
#: columns then lie on the grid, so the coarse grid is as tight and about ten times faster).
#: Either is pessimistic (see :func:`_grid_losses`).
DISCRETIZATION = 1e-4
COARSE_DISCRETIZATION = 1e-3

#: Relative margin added to the privacy-loss-distribution estimate's epsilon: it covers the
#: rounding of the logarithm that solves for epsilon (the FFT's error enters through delta,
#: see :func:`_pld_epsilon`).
FLOAT_MARGIN = 1e-6

#: The methods of :func:`optimal_composition`, tightest first.
METHODS = ("exact", "pld", "kairouz", "basic")

#: Largest number of loss values (product over the distinct epsilons of their count plus
#: one) the exact method enumerates.
EXACT_TERMS = 200_000

#: Relative margin on the exact method's delta: covers the error of its log-space sums
#: (log-gamma of counts up to EXACT_TERMS, about 1e-10 relative).
EXACT_MARGIN = 1e-6

#: Constant of the FFT error bound of the privacy-loss-distribution estimate (per
#: transform, Higham's bound is about 7 unit round-offs times log2 of the length; a
#: convolution takes three transforms).
FFT_ERROR_CONSTANT = 32

_U = 2.0 ** -53       # unit round-off of a double
_REL = 1e-12          # relative rounding margin of the closed forms
_TAIL = 1e-15         # dp-accounting's tail truncation (moved to infinite loss)


def counts_to_text(counts: Mapping[tuple[float, float], int]) -> str:
    """The multiset as text that keeps every double exactly (``float.hex``)."""
    import json

    return json.dumps(sorted([float(e).hex(), float(d).hex(), int(n)]
                             for (e, d), n in counts.items()))


def counts_from_text(text: str) -> Counts:
    import json

    return {(float.fromhex(e), float.fromhex(d)): int(n) for e, d, n in json.loads(text or "[]")}


def add_counts(counts: Mapping[tuple[float, float], int],
               costs: Iterable[tuple[float, float]]) -> Counts:
    out = dict(counts)
    for e, d in costs:
        k = (float(e), float(d))
        out[k] = out.get(k, 0) + 1
    return out


def basic_sums(counts: Mapping[tuple[float, float], int]) -> tuple[Fraction, Fraction]:
    """Exact sums of the epsilon and of the delta of a multiset of costs."""
    e = sum((Fraction(k[0]) * n for k, n in counts.items()), Fraction(0))
    d = sum((Fraction(k[1]) * n for k, n in counts.items()), Fraction(0))
    return e, d


def _pld():
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld
        from dp_accounting.pld.common import DifferentialPrivacyParameters
    except ImportError:
        raise ImportError("composition='optimal' needs Google's dp-accounting; install it "
                          "with: pip install 'bndp[composition]'") from None
    return pld, DifferentialPrivacyParameters


def check_optimal_available() -> None:
    """Raise ImportError (with the install command) if dp-accounting is missing."""
    _pld()


def optimal_composition(counts: Mapping[tuple[float, float], int],
                        delta: float) -> tuple[float, str]:
    r"""The composed :math:`\epsilon` at ``delta`` of the mechanisms in ``counts`` and the
    method that gave it (see :data:`METHODS`): ``"exact"`` whenever the history's exact
    curve is tractable, else the smallest of the sound bounds ``"pld"``, ``"kairouz"`` and
    ``"basic"``. ``inf`` when ``delta`` is below the composed mass at infinite loss
    (:math:`1 - \prod_i (1 - \delta_i)`). Never below the optimal composition, and never
    decreasing when a column is added to ``counts``. A pure function of the multiset: the
    last results are kept (a charge's check and the ``spent`` read after it compose the
    same history)."""
    items = tuple(sorted((k, n) for k, n in counts.items()
                         if n > 0 and (k[0] > 0 or k[1] > 0)))
    if not items:
        return 0.0, "exact"
    return _optimal(items, float(delta))


def optimal_epsilon(counts: Mapping[tuple[float, float], int], delta: float) -> float:
    r"""The composed :math:`\epsilon` at ``delta`` (:func:`optimal_composition`'s first
    value)."""
    return optimal_composition(counts, delta)[0]


def _up_float(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


@functools.lru_cache(maxsize=64)
def _optimal(items: tuple, delta: float) -> tuple[float, str]:
    # mass at infinite loss: 1 - prod (1 - delta_i)^n_i, rounded up
    inf_mass = -math.expm1(math.fsum(n * math.log1p(-d) for (_e, d), n in items))
    inf_mass = min(1.0, inf_mass * (1 + _REL))
    if delta < inf_mass:
        return math.inf, "exact"
    # the randomised-response part depends on the epsilons only
    groups: dict[float, int] = {}
    for (e, _d), n in items:
        if e > 0:
            groups[e] = groups.get(e, 0) + n
    if not groups:
        return 0.0, "exact"
    if math.prod(n + 1 for n in groups.values()) <= EXACT_TERMS:
        return _exact_epsilon(groups, inf_mass, delta), "exact"
    found = [(_up_float(sum((Fraction(e) * n for e, n in groups.items()), Fraction(0))),
              "basic")]
    kov = _kairouz_epsilon(groups, inf_mass, delta)
    if kov is not None:
        found.append((kov, "kairouz"))
    pld = _pld_epsilon(items, delta)
    if pld is not None:
        found.append((pld, "pld"))
    order = {m: i for i, m in enumerate(METHODS)}
    return min(found, key=lambda r: (r[0], order[r[1]]))


def _pure_delta_target(inf_mass: float, delta: float) -> float:
    r"""The largest :math:`\delta` the randomised-response part may have:
    :math:`\delta(\epsilon) = m + (1 - m)\,\delta_{\text{pure}}(\epsilon)` with ``m`` the
    mass at infinity, so :math:`\delta_{\text{pure}} \le (\delta - m)/(1 - m)` (rounded
    down)."""
    return max(0.0, (delta - inf_mass) / (1 - inf_mass) * (1 - _REL))


def _exact_epsilon(groups: Mapping[float, int], inf_mass: float, delta: float) -> float:
    r"""The exact optimal composition: the composed privacy loss of the randomised
    responses (loss :math:`\sum_j (n_j - 2 i_j)\epsilon_j` with probability
    :math:`\prod_j \binom{n_j}{i_j} p_j^{n_j - i_j} (1 - p_j)^{i_j}`,
    :math:`p_j = e^{\epsilon_j}/(1 + e^{\epsilon_j})`), enumerated in log space; the
    smallest :math:`\epsilon` (bisection to the last double) whose
    :math:`\delta(\epsilon)`, inflated by the relative margin :data:`EXACT_MARGIN`, is at
    most ``delta``."""
    import numpy as np
    from scipy.special import gammaln

    loss = np.zeros(1)
    logp = np.zeros(1)
    top = 0.0
    for e, n in sorted(groups.items()):
        i = np.arange(n + 1, dtype=float)
        log_p = -math.log1p(math.exp(-e))  # log(e^e / (1 + e^e))
        log_q = -math.log1p(math.exp(e))   # log(1 / (1 + e^e))
        lp = (gammaln(n + 1.0) - gammaln(i + 1) - gammaln(n - i + 1)
              + (n - i) * log_p + i * log_q)
        loss = np.add.outer(loss, (n - 2 * i) * e).ravel()
        logp = np.add.outer(logp, lp).ravel()
        top += n * e
    order = np.argsort(-loss, kind="stable")
    loss, logp = loss[order], logp[order]
    target = _pure_delta_target(inf_mass, delta)

    def fits(eps: float) -> bool:
        m = int(np.searchsorted(-loss, -eps, side="left"))  # losses > eps come first
        if m == 0:
            return True
        if target <= 0:
            return False
        t = logp[:m] + np.log(-np.expm1(eps - loss[:m]))
        top_t = float(t.max())
        log_delta = top_t + math.log(float(np.exp(t - top_t).sum()))
        return log_delta + math.log1p(EXACT_MARGIN) <= math.log(target)

    if fits(0.0):
        return 0.0
    lo, hi = 0.0, top * (1 + _REL)
    while True:
        mid = lo + (hi - lo) / 2
        if not lo < mid < hi:
            return hi
        if fits(mid):
            hi = mid
        else:
            lo = mid


def _kairouz_epsilon(groups: Mapping[float, int], inf_mass: float,
                     delta: float) -> float | None:
    r"""Kairouz, Oh & Viswanath (2015, Theorem 3.5): columns
    :math:`(\epsilon_i, \delta_i)` compose to
    :math:`(\tilde\epsilon, 1 - (1 - \tilde\delta)\prod_i (1 - \delta_i))`-DP with
    :math:`\tilde\epsilon = \sum_i \epsilon_i \tanh(\epsilon_i/2) + \min\{\sqrt{2 \sum_i
    \epsilon_i^2 \log(e + \sqrt{\sum_i \epsilon_i^2}/\tilde\delta)}, \sqrt{2 \sum_i
    \epsilon_i^2 \log(1/\tilde\delta)}\}` (tighter than the advanced composition of Dwork,
    Rothblum & Vadhan), rounded up. None when ``delta`` leaves no
    :math:`\tilde\delta > 0`."""
    dt = _pure_delta_target(inf_mass, delta)
    if dt <= 0:
        return None
    s1 = math.fsum(n * e * math.tanh(e / 2) for e, n in groups.items())
    s2 = math.fsum(n * e * e for e, n in groups.items())
    tail = min(math.sqrt(2 * s2 * math.log(math.e + math.sqrt(s2) / dt)),
               math.sqrt(2 * s2 * -math.log(dt)) if dt < 1 else 0.0)
    return (s1 + tail) * (1 + _REL)


def _pld_epsilon(items: tuple, delta: float) -> float | None:
    r"""The privacy-loss-distribution estimate (``dp-accounting``, pessimistic
    discretisation) evaluated at ``delta`` less a bound on its floating-point error, or
    None when that bound leaves less than half of ``delta``.

    The bound: each FFT-based convolution of probability vectors of length at most
    :math:`N`, raised to a power :math:`k` in the frequency domain, is off by at most
    :math:`C (k + 1) u \log_2(2N)` in the :math:`\ell_2` norm (Higham 2002, Theorem 24.2:
    :math:`\eta \log_2 N` per transform with :math:`\eta \approx 7u`; ``C`` =
    :data:`FFT_ERROR_CONSTANT`); later convolutions with probability vectors do not grow it.
    The error of :math:`\delta(\epsilon)`, a sum of the bins weighted in [0, 1], is at most
    :math:`\sqrt{N}` times the :math:`\ell_2` error, plus :math:`2 N u` for the summation,
    plus ``dp-accounting``'s tail truncation (moved to infinite loss, and wrapped around
    the FFT window) for each self-composition."""
    pld, _params = _pld()
    step = (COARSE_DISCRETIZATION
            if all(abs(e / COARSE_DISCRETIZATION - round(e / COARSE_DISCRETIZATION)) < 1e-9
                   for (e, _), _n in items) else DISCRETIZATION)
    bins = 1 + sum(n * (math.ceil(2 * e / step) + 2) for (e, _d), n in items)
    log_n = math.log2(2 * bins)
    l2 = 0.0
    extra = 0.0
    shift = Fraction(0)
    total = None
    for (e, d), n in items:
        up, down, off = _grid_losses(e, step)
        shift += off * n
        p = 1 / (1 + math.exp(-e))  # e^e / (1 + e^e)
        pmf = {up: (1 - d) * p}
        pmf[down] = pmf.get(down, 0.0) + (1 - d) * (1 - p)
        one = pld.PrivacyLossDistribution.create_from_rounded_probability(
            pmf, float(d), step, pessimistic_estimate=True)
        if n > 1:
            part = one.self_compose(n, tail_mass_truncation=_TAIL)
            l2 += FFT_ERROR_CONSTANT * (n + 1) * _U * log_n
            extra += 2 * _TAIL
        else:
            part = one
        if total is None:
            total = part
        else:
            total = total.compose(part, tail_mass_truncation=_TAIL)
            l2 += FFT_ERROR_CONSTANT * 3 * _U * log_n
    assert total is not None
    err = math.sqrt(bins) * l2 + 2 * bins * _U + extra
    if err > delta / 2:
        return None
    eps = float(total.get_epsilon_for_delta(delta - err))
    if not math.isfinite(eps):
        return None
    eps = max(eps, 0.0)
    return _up_float(Fraction(eps + FLOAT_MARGIN * max(eps, step)) + shift)


def _grid_losses(e: float, step: float) -> tuple[int, int, Fraction]:
    r"""The grid indices of the losses :math:`+\epsilon` and :math:`-\epsilon` of randomised
    response, and by how much (at most) they fall below the true losses. An
    :math:`\epsilon` within :math:`10^{-9}` steps of a multiple ``m`` of the step is put at
    :math:`\pm m` (the same curve on every grid it lies on; the shortfall, below
    :math:`10^{-9}` steps, is added to the composed :math:`\epsilon`); any other loss is
    rounded up to the grid (pessimistic)."""
    ratio = Fraction(e) / Fraction(step)
    m = round(ratio)
    if abs(ratio - m) < Fraction(1, 10 ** 9):
        return m, -m, abs(Fraction(e) - m * Fraction(step))
    return math.ceil(ratio), -math.floor(ratio), Fraction(0)
