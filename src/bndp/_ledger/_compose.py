r"""Composition of a ledger's history: basic (exact sums) and optimal (privacy loss
distributions from Google's ``dp-accounting``).

A history is kept as a multiset of per-column costs ``{(epsilon, delta): count}``; each
released column is one mechanism run on the same data.

Basic composition: the sum of the :math:`\epsilon` and the sum of the :math:`\delta`
(Dwork & Roth 2014, Theorem 3.16), kept as exact rationals of the stored doubles.

Optimal composition: each :math:`(\epsilon_i, \delta_i)` column enters as the dominating
pair of an :math:`(\epsilon_i, \delta_i)`-DP mechanism
(``PrivacyLossDistribution.from_privacy_parameters``), identical columns by
``self_compose`` and distinct ones by ``compose``; the composed :math:`\epsilon` at a
:math:`\delta` is read from the composed distribution. The discretisation is pessimistic
(``dp-accounting``'s default) and a relative margin of :data:`FLOAT_MARGIN` covers the
floating-point error of the convolutions, so the reported :math:`\epsilon` is never below
the optimal composition's (Kairouz, Oh & Viswanath 2015).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Iterable, Mapping

__all__ = ["Counts", "add_counts", "basic_sums", "optimal_epsilon", "counts_from_text",
           "counts_to_text", "DISCRETIZATION"]

Counts = dict  # {(epsilon, delta): count}

#: Width of the privacy-loss grid of the optimal accountant (dp-accounting's default), and a
#: coarser one used when every epsilon of the history lies on it (the losses of pure-epsilon
#: columns then lie on the grid, so the coarse grid is as tight and about ten times faster).
#: Either is pessimistic: every loss is rounded up to the grid.
DISCRETIZATION = 1e-4
COARSE_DISCRETIZATION = 1e-3

#: Relative margin added to the composed epsilon: the pessimistic discretisation bounds the
#: grid's error, not the floating-point error of the FFT convolutions (about 1e-10 relative
#: over a few hundred compositions), which may fall on either side.
FLOAT_MARGIN = 1e-6


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


def optimal_epsilon(counts: Mapping[tuple[float, float], int], delta: float) -> float:
    r"""The composed :math:`\epsilon` at ``delta`` of the mechanisms in ``counts`` (the
    pessimistic privacy-loss-distribution estimate; ``inf`` when ``delta`` is below the
    composed mass at infinity). A pure function of the multiset: the last results are
    kept (a charge's check and the ``spent`` read after it compose the same history)."""
    items = tuple(sorted((k, n) for k, n in counts.items()
                         if n > 0 and (k[0] > 0 or k[1] > 0)))
    if not items:
        return 0.0
    return _optimal_epsilon(items, float(delta))


@functools.lru_cache(maxsize=64)
def _optimal_epsilon(items: tuple, delta: float) -> float:
    pld, Params = _pld()
    step = (COARSE_DISCRETIZATION
            if all(abs(e / COARSE_DISCRETIZATION - round(e / COARSE_DISCRETIZATION)) < 1e-9
                   for (e, _), _n in items) else DISCRETIZATION)
    total = None
    for (e, d), n in items:
        one = pld.from_privacy_parameters(Params(float(e), float(d)),
                                          value_discretization_interval=step)
        part = one.self_compose(n) if n > 1 else one
        total = part if total is None else total.compose(part)
    assert total is not None
    eps = float(total.get_epsilon_for_delta(float(delta)))
    if not math.isfinite(eps):
        return math.inf
    eps = max(eps, 0.0)
    return eps + FLOAT_MARGIN * max(eps, step)
