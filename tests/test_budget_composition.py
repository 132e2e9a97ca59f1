"""Optimal composition of a persistent budget's history (Google's dp-accounting): never
below the exact optimum of Kairouz, Oh & Viswanath for k homogeneous pure-epsilon releases,
and close to it."""

from __future__ import annotations

import math
import os

import pytest

import bndp

pytest.importorskip("dp_accounting")
mpmath = pytest.importorskip("mpmath")


def kairouz_delta(k: int, eps: float, eps_total: float) -> "mpmath.mpf":
    r"""The exact delta(eps_total) of k-fold composition of eps-DP mechanisms: the curve of
    k-fold randomised response, which dominates every eps-DP mechanism (Kairouz, Oh &
    Viswanath 2015, Theorem 3.3): with p = e^eps / (1 + e^eps), j flips ~ Bin(k, 1 - p),
    privacy loss (k - 2j) eps."""
    mp = mpmath.mp
    mp.dps = 50
    e = mpmath.mpf(eps)
    p = mpmath.e ** e / (1 + mpmath.e ** e)
    q = 1 - p
    et = mpmath.e ** mpmath.mpf(eps_total)
    total = mpmath.mpf(0)
    for j in range(k + 1):
        term = mpmath.binomial(k, j) * (p ** (k - j) * q ** j - et * p ** j * q ** (k - j))
        if term > 0:
            total += term
    return total


def kairouz_epsilon(k: int, eps: float, delta: float) -> float:
    """The smallest eps_total with delta(eps_total) <= delta (bisection; delta is
    decreasing in eps_total)."""
    lo, hi = 0.0, k * eps
    for _ in range(60):
        mid = (lo + hi) / 2
        if kairouz_delta(k, eps, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return lo


@pytest.mark.parametrize("k,eps,delta", [(10, 0.5, 1e-5), (50, 0.1, 1e-6), (365, 0.05, 1e-6),
                                         (4, 1.0, 1e-3)])
def test_never_below_the_optimal_composition(tmp_path, k, eps, delta):
    b = bndp.Budget.create(str(tmp_path / "l.db"), "opt", epsilon=1e6, delta=delta,
                         composition="optimal")
    # one release of k identical columns composes like k releases of one column
    b.charge({f"c{i}": (eps, 0.0) for i in range(k)}, label="k columns")
    reported = b.epsilon_at(delta)
    exact = kairouz_epsilon(k, eps, delta)
    assert reported >= exact * (1 - 1e-12)
    assert reported <= exact + 0.02 * max(1.0, exact)
    assert reported < k * eps  # tighter than basic composition


def test_a_year_of_daily_releases_fits_where_basic_composition_refuses(tmp_path):
    from fractions import Fraction

    path = str(tmp_path / "l.db")
    opt = bndp.Budget.create(path, "opt", epsilon=4.7, delta=1e-6, composition="optimal")
    basic = bndp.Budget.create(path, "basic", epsilon=4.7, delta=1e-6)
    # 360 days recorded in one go (each column one release of 0.05), then day by day
    opt.charge({f"day-{d}": (0.05, 0.0) for d in range(360)}, label="days 0-359")
    for day in range(360, 365):
        opt.spend(0.05, release_id=f"day-{day}")
    refused = 0
    for day in range(365):
        try:
            basic.spend(0.05)
        except bndp.BudgetError:
            refused += 1
    assert 4.5 < opt.epsilon_at(1e-6) <= 4.7 and opt.spent.epsilon == opt.epsilon_at(1e-6)
    # the exact sums of the decimals written: 94 x 0.05 = 4.7 exactly
    fit = max(n for n in range(100) if n * Fraction("0.05") <= Fraction("4.7"))
    assert fit == 94 and refused == 365 - fit
    # a release that takes the composed curve above the cap is refused and records nothing
    with pytest.raises(bndp.BudgetError, match="optimal composition"):
        opt.spend(0.5)
    assert len(opt.history) == 6


def test_deltas_enter_the_composition(tmp_path):
    b = bndp.Budget.create(str(tmp_path / "l.db"), "d", epsilon=10.0, delta=1e-5,
                         composition="optimal")
    b.spend(0.5, 4e-6)
    b.spend(0.5, 4e-6)
    assert b.epsilon_at(1e-5) <= 1.0 + 1e-9
    assert b.epsilon_at(7e-6) == math.inf  # below the releases' own delta
    with pytest.raises(bndp.BudgetError):
        b.spend(0.5, 4e-6)  # 1.2e-5 of delta cannot fit a cap of 1e-5
    assert len(b.history) == 2


def test_optimal_composition_is_recorded_with_the_budget(tmp_path):
    path = str(tmp_path / "l.db")
    bndp.Budget.create(path, "o", epsilon=1.0, delta=1e-6, composition="optimal")
    assert bndp.Budget.open(path, "o").composition == "optimal"
    with pytest.raises(ValueError, match="another cap"):
        bndp.Budget.open(path, "o", composition="basic")


def test_privatize_under_optimal_composition(store):
    pd = pytest.importorskip("pandas")
    b = bndp.Budget.create(store, "o-" + os.urandom(5).hex(), epsilon=1.0, delta=1e-6,
                         composition="optimal")
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    spec = {c: {"lower": 0, "upper": 10, "sensitivity": 1, "epsilon": 0.05} for c in "ab"}
    n = 0
    while True:
        try:
            bndp.privatize(df, spec, budget=b)
        except bndp.BudgetError:
            break
        n += 1
    assert n > 10  # basic composition: 10 releases of 0.1
    assert b.epsilon_at(1e-6) <= 1.0
