"""Optimal composition of a ledger's history (``bndp._ledger._compose``): the reported
epsilon is never below the exact optimal composition, at deltas down to 1e-15 and histories
up to 10^4 columns, and never decreases when a column is added; each method it may use
(exact, privacy loss distribution, Kairouz-Oh-Viswanath, basic) is checked against an
exact reference computed here in high precision."""

from __future__ import annotations

import bisect
import functools
import os
from fractions import Fraction

import pytest

import bndp

pytest.importorskip("dp_accounting")
mpmath = pytest.importorskip("mpmath")

from bndp._ledger import _compose  # noqa: E402

FULL = os.environ.get("BNDP_FULL", "") == "1"
DELTAS = (1e-4, 1e-6, 1e-9, 1e-12, 1e-14, 1e-15)
KS = (1, 2, 10, 100, 1000, 3000, 10000)
MP = mpmath.mp.clone()
MP.dps = 40


@functools.lru_cache(maxsize=None)
def _rr_composed(eps: float, n: int) -> tuple:
    """n-fold randomised response with parameter eps: ((loss as an exact rational of the
    double eps, probability), ...); loss (n - 2i) eps with probability
    C(n, i) p^(n-i) (1-p)^i, p = e^eps / (1 + e^eps) (by the ratio of successive terms,
    (n - i) / (i + 1) * e^-eps)."""
    e = MP.mpf(eps)
    prob = (MP.exp(e) / (1 + MP.exp(e))) ** n
    ratio = MP.exp(-e)
    out = []
    for i in range(n + 1):
        out.append(((n - 2 * i) * Fraction(eps), prob))
        prob = prob * (n - i) / (i + 1) * ratio
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _reference(items: tuple) -> tuple:
    """The exact privacy loss distribution of a history ((eps, delta), count), ...: an
    (eps, delta) column is randomised response with parameter eps and, with probability
    delta, an infinite loss. Returns the mass at infinity, 1 - that, the losses negated
    (increasing) and the running sums below."""
    keep = MP.mpf(1)
    dist = {Fraction(0): MP.mpf(1)}
    for (e, d), n in items:
        keep *= (1 - MP.mpf(d)) ** n
        if e == 0:
            continue
        out: dict = {}
        for l1, p1 in dist.items():
            for l2, p2 in _rr_composed(e, n):
                out[l1 + l2] = out.get(l1 + l2, 0) + p1 * p2
        dist = out
    # by decreasing loss, with the running sums A_j of P and B_j of P e^-L: for eps in
    # [L_(j+1), L_j), sum_(i <= j) P_i (1 - e^(eps - L_i)) = A_j - e^eps B_j (the
    # cancellation is harmless at 40 digits)
    pure = [(e, n) for (e, _d), n in items if e > 0]
    ordered = sorted(dist.items(), reverse=True)
    if len(pure) == 1:
        # one randomised response composed: P_i e^-L_i = P_(n-i)
        q_mass = [p for _loss, p in reversed(ordered)]
    else:
        q_mass = [p * MP.exp(-(MP.mpf(loss.numerator) / loss.denominator))
                  for loss, p in ordered]
    neg_losses, cum_p, cum_q = [], [], []
    a = b = MP.mpf(0)
    for (loss, p), q in zip(ordered, q_mass):
        a += p
        b += q
        neg_losses.append(-loss)
        cum_p.append(a)
        cum_q.append(b)
    return 1 - keep, keep, neg_losses, cum_p, cum_q


def reference_delta(counts: dict, eps: float):
    """delta(eps) of the exact composed curve: m + (1 - m) sum_L P(L) (1 - e^(eps - L))_+."""
    inf, keep, neg_losses, cum_p, cum_q = _reference(tuple(sorted(counts.items())))
    j = bisect.bisect_left(neg_losses, -Fraction(eps))  # the losses above eps
    if j == 0:
        return inf
    return inf + keep * (cum_p[j - 1] - MP.exp(MP.mpf(eps)) * cum_q[j - 1])


def check_sound_and_tight(counts: dict, delta: float, tight: bool) -> tuple[float, str]:
    eps, method = _compose.optimal_composition(counts, delta)
    basic = float(sum(Fraction(e) * n for (e, _d), n in counts.items()))
    if eps == float("inf"):
        # only when delta is below the mass at infinite loss
        assert reference_delta(counts, basic) > delta
        return eps, method
    # never below the optimum: the exact curve at the reported epsilon is within delta
    assert reference_delta(counts, eps) <= delta, (counts, delta, eps, method)
    assert eps <= basic * (1 + 1e-12)
    if tight and eps > 0:
        # the optimum itself, up to a relative 1e-6
        assert reference_delta(counts, eps - 1e-6 * max(eps, 1e-2)) > delta, (counts, delta)
    return eps, method


@pytest.fixture
def no_exact(monkeypatch):
    """Force the bounds used for histories whose exact curve is out of reach."""
    _compose._optimal.cache_clear()
    monkeypatch.setattr(_compose, "EXACT_TERMS", 0)
    yield
    _compose._optimal.cache_clear()


@pytest.mark.parametrize("k", KS)
def test_homogeneous_history_is_the_exact_optimum(k):
    counts = {(0.01, 0.0): k}
    for delta in DELTAS:
        eps, method = check_sound_and_tight(counts, delta, tight=True)
        assert method == "exact"
        if k > 1:
            assert eps < 0.01 * k


def test_the_reported_small_delta_case_is_refused_by_the_ledger(tmp_path):
    # cap (3.99, 1e-14): 3,000 columns of 0.01 compose to 4.139 at 1e-14 (true delta at
    # 3.99: 7.7e-14), which must not fit
    assert float(reference_delta({(0.01, 0.0): 3000}, 3.99)) > 7e-14
    assert _compose.optimal_epsilon({(0.01, 0.0): 3000}, 1e-14) > 4.139
    path = str(tmp_path / "l.db")
    make = getattr(bndp.Budget, "create", bndp.Budget.open)
    b = make(path, "small-delta", epsilon=3.99, delta=1e-14, composition="optimal")
    with pytest.raises(bndp.BudgetError, match="optimal composition"):
        b.charge({f"c{i}": (0.01, 0.0) for i in range(3000)}, label="3000 columns")
    assert b.history == []
    b.charge({f"c{i}": (0.01, 0.0) for i in range(2000)}, label="2000 columns")
    assert b.composition_method == "exact"
    assert b.spent.epsilon <= 3.99
    assert float(reference_delta({(0.01, 0.0): 2000}, b.spent.epsilon)) <= 1e-14


def test_never_decreases_when_a_column_is_added():
    ks = sorted(set(range(2890, 2901)) | set(range(2995, 3001)) | set(range(1, 3001, 97)))
    for delta in (1e-14, 1e-6):
        got = [_compose.optimal_epsilon({(0.01, 0.0): k}, delta) for k in ks]
        assert all(a < b for a, b in zip(got, got[1:])), delta


def test_bounds_never_decrease_when_a_column_is_added(no_exact):
    # the privacy loss distribution (certified at 1e-6) and Kairouz's bound (at 1e-14)
    ks = sorted(set(range(2890, 2901)) | set(range(100, 3001, 400)))
    for delta, method in ((1e-6, "pld"), (1e-14, "kairouz")):
        got = [_compose.optimal_composition({(0.01, 0.0): k}, delta) for k in ks]
        assert {m for _e, m in got} == {method}
        assert all(a[0] < b[0] for a, b in zip(got, got[1:])), delta


def test_a_column_off_the_coarse_grid_does_not_lower_the_estimate(no_exact):
    # 300 columns of 0.82 lie on the coarse grid of the privacy loss distribution; a column
    # of 1e-7 moves the history to the fine grid, which must not compose to less
    for e in (0.82,):
        alone = _compose.optimal_composition({(e, 0.0): 300}, 1e-6)
        more = _compose.optimal_composition({(e, 0.0): 300, (1e-7, 0.0): 1}, 1e-6)
        assert alone[1] == more[1] == "pld"
        assert more[0] >= alone[0]
        assert reference_delta({(e, 0.0): 300}, alone[0]) <= 1e-6


MIXED = [
    {(0.01, 0.0): 100, (0.05, 1e-9): 20, (0.3, 0.0): 3},
    {(0.1, 0.0): 30, (0.25, 0.0): 10, (0.02, 1e-12): 20},
    {(0.05, 0.0): 200, (0.5, 0.0): 2, (0.0, 1e-10): 3},
    {(1.0, 0.0): 1, (0.001, 0.0): 40, (0.2, 1e-15): 4},
]


@pytest.mark.parametrize("counts", MIXED)
def test_mixed_history_is_the_exact_optimum(counts):
    for delta in DELTAS:
        eps, method = check_sound_and_tight(counts, delta, tight=True)
        assert method == "exact"


@pytest.mark.parametrize("counts", MIXED + [{(0.01, 0.0): 3000}])
def test_bounds_are_sound_where_the_exact_curve_is_out_of_reach(no_exact, counts):
    basic = float(sum(Fraction(e) * n for (e, _d), n in counts.items()))
    methods = set()
    for delta in DELTAS:
        eps, method = check_sound_and_tight(counts, delta, tight=False)
        methods.add(method)
        if method == "pld":
            assert eps < basic
            # read at delta less its certified error: close to the optimum
            assert reference_delta(counts, eps * 0.99) > delta
    assert "pld" in methods
    # the FFT's round-off is not certified at the smallest deltas
    assert _compose.optimal_composition(counts, 1e-15)[1] != "pld"


def test_kairouz_bound_alone_is_sound(no_exact, monkeypatch):
    monkeypatch.setattr(_compose, "_pld_epsilon", lambda items, delta: None)
    methods = set()
    for counts in MIXED + [{(0.01, 0.0): 3000}]:
        for delta in DELTAS:
            eps, method = check_sound_and_tight(counts, delta, tight=False)
            if eps != float("inf"):
                # the smaller of Kairouz's bound and the sum of the epsilons
                methods.add(method)
    assert methods == {"kairouz", "basic"}


def test_delta_below_the_mass_at_infinity():
    counts = {(0.5, 4e-6): 2}
    assert _compose.optimal_composition(counts, 7e-6) == (float("inf"), "exact")
    eps, method = check_sound_and_tight(counts, 1e-5, tight=True)
    assert method == "exact" and eps <= 1.0
    assert _compose.optimal_composition({}, 1e-6) == (0.0, "exact")
    assert _compose.optimal_composition({(0.2, 0.0): 3}, 0.0)[0] == pytest.approx(0.6)


def test_basic_budgets_report_basic(tmp_path):
    make = getattr(bndp.Budget, "create", bndp.Budget.open)
    b = make(str(tmp_path / "l.db"), "b", epsilon=1.0)
    b.spend(0.25)
    assert b.composition_method == "basic"


@pytest.mark.slow
def test_sweep_of_epsilons_counts_and_deltas():
    """Sound and tight for other epsilons (the full sweep with BNDP_FULL=1)."""
    eps0s = (0.001, 0.05, 0.3, 1.0) if FULL else (0.05, 1.0)
    ks = KS if FULL else (3, 300, 3000)
    for e in eps0s:
        for k in ks:
            for delta in DELTAS:
                eps, method = check_sound_and_tight({(e, 0.0): k}, delta, tight=True)
                assert method == "exact"


def test_budget_show_names_the_method(tmp_path, capsys):
    import json

    from bndp.cli import main

    path = str(tmp_path / "l.db")
    make = getattr(bndp.Budget, "create", bndp.Budget.open)
    b = make(path, "opt", epsilon=4.0, delta=1e-9, composition="optimal")
    b.charge({f"c{i}": (0.01, 0.0) for i in range(300)}, label="300 columns")
    capsys.readouterr()
    assert main(["budget", "show", "opt", "--store", path, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["composition_method"] == "exact"
    assert float(reference_delta({(0.01, 0.0): 300}, doc["spent"]["epsilon"])) <= 1e-9
    assert main(["budget", "show", "opt", "--store", path]) == 0
    assert "(optimal composition, by the exact method)" in capsys.readouterr().out
