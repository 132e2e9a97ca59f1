"""Budgets add the amounts as the decimals written (ten charges of 0.1 fit a cap of 1), show
decimals, never charge a release below its certified loss, and read stores of bndp 0.7.0
(sums of binary doubles) as they are."""

from __future__ import annotations

import decimal
import sqlite3
import uuid
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

import bndp
from bndp._amounts import (charge_delta, charge_epsilon, decimal_amount, double_down,
                           double_up, float_down, float_up, format_amount)
from bndp._release import parse_spec, spec_costs
from bndp._release.spec import ColumnPlan, certified_loss
from bndp.cli import main


def _name() -> str:
    return "d-" + uuid.uuid4().hex[:12]


def _spend_until_refused(spend, limit: int) -> tuple[int, str]:
    """How many calls of ``spend()`` pass before the first refusal, and its message."""
    for n in range(limit):
        try:
            spend()
        except bndp.BudgetError as err:
            return n, str(err)
    return limit, ""


# reading amounts ----------------------------------------------------------------------------
@pytest.mark.parametrize("given,exact", [
    (0.1, Fraction(1, 10)), (0.25, Fraction(1, 4)), (1e-3, Fraction(1, 1000)),
    (0.3, Fraction(3, 10)), (2, Fraction(2)), (np.int64(3), Fraction(3)),
    (Fraction(1, 3), Fraction(1, 3)), (decimal.Decimal("0.1"), Fraction(1, 10)),
    (np.float64(0.1), Fraction(1, 10)), (np.float32(0.1), Fraction(1, 10)),
    (1e-20, Fraction(1, 10 ** 20)), (0.1 + 0.2, Fraction("0.30000000000000004")),
])
def test_amounts_are_read_as_the_decimals_written(given, exact):
    assert decimal_amount(given, "epsilon", positive=True) == exact


@pytest.mark.parametrize("bad,exc", [(True, TypeError), ("0.1", TypeError), (-0.1, ValueError),
                                     (float("nan"), ValueError), (0.0, ValueError)])
def test_bad_amounts_are_refused(bad, exc):
    with pytest.raises(exc, match="epsilon"):
        decimal_amount(bad, "epsilon", positive=True)


def test_format_amount():
    assert format_amount(Fraction(1, 10)) == "0.1"
    assert format_amount(Fraction(1)) == "1"
    assert format_amount(Fraction(0)) == "0"
    assert format_amount(Fraction(7, 10), up=False) == "0.7"
    assert format_amount(Fraction(1, 10 ** 6)) == "1e-06"
    assert format_amount(Fraction(12345, 10 ** 9)) == "1.2345e-05"
    assert format_amount(Fraction(3, 2) * 10 ** 20) == "1.5e+20"
    # more than 17 significant digits: rounded outwards (costs) or inwards (what remains)
    assert format_amount(Fraction(1, 3)) == "0.33333333333333334"
    assert format_amount(Fraction(1, 3), up=False) == "0.33333333333333333"
    assert format_amount(Fraction(0.1)) == "0.10000000000000001"      # the binary 0.1


def test_shown_floats_are_the_decimals_on_the_safe_side():
    assert float_down(Fraction(7, 10)) == 0.7 and float_up(Fraction(3, 10)) == 0.3
    for x in (Fraction(1, 3), Fraction(2, 3), Fraction(0.1) * 9, Fraction(1) - Fraction(0.1) * 9,
              Fraction(123456789123456789, 10 ** 18)):
        assert Fraction(repr(float_up(x))) >= x >= Fraction(repr(float_down(x)))
        assert Fraction(double_up(x)) >= x >= Fraction(double_down(x))
    assert double_up(Fraction(3, 10)) == 0.30000000000000004 and double_down(Fraction(3, 10)) == 0.3


# in memory --------------------------------------------------------------------------------
@pytest.mark.parametrize("amount,n", [(0.1, 10), (0.25, 4), (1e-3, 1000),
                                      (decimal.Decimal("0.1"), 10), (Fraction(1, 10), 10),
                                      (np.float64(0.1), 10)])
def test_n_charges_fill_a_cap_of_one_in_memory(amount, n):
    b = bndp.Budget(epsilon=1.0)
    fit, msg = _spend_until_refused(lambda: b.spend(amount), n + 5)
    assert fit == n
    assert b.spent == (1.0, 0.0) and b.remaining == (0.0, 0.0)
    assert f"costs epsilon {format_amount(decimal_amount(amount, 'e', positive=True))} " \
           "(remaining 0 of 1)" in msg
    c = bndp.Budget(epsilon=1.0)
    fit, _ = _spend_until_refused(lambda: c.charge({"a": (amount, 0.0)}), n + 5)
    assert fit == n


def test_remaining_and_spent_are_decimals():
    b = bndp.Budget(epsilon=1.0, delta=1e-6)
    for _ in range(3):
        assert b.spend(0.1, 1e-7) == (0.1, 1e-7)
    assert b.remaining == (0.7, 7e-7)
    assert b.spent == (0.3, 3e-7)
    assert repr(b.remaining.epsilon) == "0.7"
    assert "spent epsilon=0.3," in repr(b)
    # 0.1 + 0.2 fits a cap of 0.3 and leaves nothing
    c = bndp.Budget(epsilon=0.3)
    c.spend(0.1)
    c.spend(0.2)
    assert c.remaining == (0.0, 0.0) and c.spent == (0.3, 0.0)
    assert c.log[1].cost == (0.2, 0.0)


def test_refusal_messages_print_decimals():
    b = bndp.Budget(epsilon=1.0, delta=1e-5)
    b.spend(0.1234567, 3e-6)
    with pytest.raises(bndp.BudgetError) as err:
        b.spend(0.9, 8e-6, label="x")
    msg = str(err.value)
    assert "costs epsilon 0.9 (remaining 0.8765433 of 1)" in msg
    assert "delta 8e-06 (remaining 7e-06 of 1e-05)" in msg


def test_columns_add_up_to_the_decimal_total():
    b = bndp.Budget(epsilon=1.0)
    b.spend(0.3, columns={"a": (0.1, 0.0), "b": (0.2, 0.0)})
    assert b.log[0].cost == (0.3, 0.0) and b.log[0].columns["b"] == (0.2, 0.0)
    b.charge({"a": (0.1, 0.0), "b": (0.2, 0.0)})
    assert b.log[1].columns == {"a": (0.1, 0.0), "b": (0.2, 0.0)}
    assert b.log[1].cost == (0.3, 0.0) and b.spent == (0.6, 0.0)


def _frame():
    pd = pytest.importorskip("pandas")
    return pd.DataFrame({"a": [1.0, 2.0, 3.0]})


SPEC = {"a": {"lower": 0, "upper": 10, "sensitivity": 1, "epsilon": 0.1}}


def test_ten_privatize_releases_of_a_tenth_fit_in_memory():
    df = _frame()
    b = bndp.Budget(epsilon=1.0)
    fit, msg = _spend_until_refused(lambda: bndp.privatize(df, SPEC, budget=b), 12)
    assert fit == 10 and b.spent == (1.0, 0.0)
    assert "costs epsilon 0.1 (remaining 0 of 1)" in msg


# persistent -------------------------------------------------------------------------------
def test_ten_spends_and_charges_of_a_tenth_fit_a_persistent_budget(store):
    name = _name()
    b = bndp.Budget.create(store, name, epsilon=1.0)
    fit, msg = _spend_until_refused(lambda: bndp.Budget.open(store, name).spend(0.1), 12)
    assert fit == 10 and "costs epsilon 0.1 (remaining 0 of 1)" in msg
    assert b.spent == (1.0, 0.0) and b.remaining == (0.0, 0.0)
    assert [e.cost for e in b.history] == [(0.1, 0.0)] * 10
    assert b.epsilon_at(0.0) == 1.0
    name = _name()
    c = bndp.Budget.create(store, name, epsilon=1.0, delta=1e-6)
    for _ in range(3):
        c.charge({"x": (0.1, 1e-7)})
    assert bndp.Budget.open(store, name).remaining == (0.7, 7e-7)
    assert c.spent == (0.3, 3e-7)
    fit, _ = _spend_until_refused(lambda: c.charge({"x": (0.1, 0.0)}), 12)
    assert fit == 7


def test_fractions_and_decimals_are_charged_exactly_to_a_persistent_budget(store):
    name = _name()
    b = bndp.Budget.create(store, name, epsilon=1.0)
    for _ in range(3):
        b.spend(Fraction(1, 3))
    assert b.remaining == (0.0, 0.0) and b.spent == (1.0, 0.0)
    with pytest.raises(bndp.BudgetError):
        b.spend(1e-300)
    c = bndp.Budget.create(store, _name(), epsilon=decimal.Decimal("0.3"))
    c.spend(decimal.Decimal("0.1"))
    c.spend(0.2)
    assert c.remaining == (0.0, 0.0)


def test_ten_privatize_releases_of_a_tenth_fit_a_persistent_budget(store):
    df = _frame()
    name = _name()
    b = bndp.Budget.create(store, name, epsilon=1.0)
    fit, msg = _spend_until_refused(
        lambda: bndp.privatize(df, SPEC, budget=bndp.Budget.open(store, name)), 12)
    assert fit == 10 and "costs epsilon 0.1 (remaining 0 of 1)" in msg
    assert b.spent == (1.0, 0.0) and len(b.history) == 10
    assert b.history[0].columns[0]["epsilon"] == 0.1


def test_ten_command_line_releases_of_a_tenth_fit(store, tmp_path, capsys):
    name = _name()
    assert main(["budget", "create", name, "--store", store, "--epsilon", "1", "-q"]) == 0
    src = tmp_path / "people.csv"
    src.write_text("age\n30\n41\n67\n")
    codes = []
    for i in range(11):
        out = str(tmp_path / f"o{i}.csv")
        codes.append(main(["privatize", str(src), "-o", out, "--column", "age:0:120",
                           "--epsilon", "0.1", "--sensitivity", "1", "-q",
                           "--budget-store", store, "--budget-name", name]))
    assert codes == [0] * 10 + [4]
    assert "costs epsilon 0.1 (remaining 0 of 1)" in capsys.readouterr().err
    b = bndp.Budget.open(store, name)
    assert b.spent == (1.0, 0.0) and b.remaining == (0.0, 0.0)


def test_a_store_of_0_7_0_keeps_its_binary_sums(tmp_path):
    # bndp 0.7.0 summed the binary doubles: nine charges of 0.1 recorded slightly above 0.9
    path = str(tmp_path / "ledger.db")
    bndp.Budget.create(path, "old", epsilon=1.0)
    spent = Fraction(0.1) * 9
    con = sqlite3.connect(path)
    con.execute("UPDATE bndp_budget SET spent_epsilon = ?, counts = ?, releases = 9 "
                "WHERE name = 'old'", (f"{spent.numerator}/{spent.denominator}",
                                       f'[["{(0.1).hex()}", "{(0.0).hex()}", 9]]'))
    con.commit()
    con.close()
    b = bndp.Budget.open(path, "old")
    assert Fraction(repr(b.spent.epsilon)) >= spent > Fraction(9, 10)
    assert b.spent.epsilon == 0.9000000000000001
    assert b.remaining.epsilon == 0.09999999999999995
    with pytest.raises(bndp.BudgetError, match=r"costs epsilon 0\.1 \(remaining "
                                                r"0\.09999999999999995 of 1\)"):
        b.spend(0.1)
    b.spend(b.remaining.epsilon)            # what remains can always be spent
    left = Fraction(1) - spent - Fraction(repr(0.09999999999999995))
    assert 0 < left < Fraction(1, 10 ** 19)   # the exact rest of the binary sums
    assert Fraction(repr(b.remaining.epsilon)) <= left


def test_a_cap_is_read_as_its_decimal(tmp_path):
    path = str(tmp_path / "ledger.db")
    b = bndp.Budget.create(path, "c", epsilon=0.3)
    b.spend(0.1)
    b.spend(0.2)                              # 0.1 + 0.2 = 0.3: fits
    assert b.remaining == (0.0, 0.0) and b.spent == (0.3, 0.0)
    assert b.epsilon == 0.3


def test_optimal_composition_counts_each_charge_as_a_double_not_below_it(tmp_path):
    pytest.importorskip("dp_accounting")
    from bndp._ledger import _compose

    path = str(tmp_path / "ledger.db")
    b = bndp.Budget.create(path, "o", epsilon=1.0, delta=1e-6, composition="optimal")
    b.spend(0.1)
    b.spend(0.3)
    counts = b._ledger.state().counts
    assert counts == {(0.1, 0.0): 1, (0.30000000000000004, 0.0): 1}
    assert all(Fraction(e) >= c for (e, _), c in zip(sorted(counts), (Fraction(1, 10),
                                                                      Fraction(3, 10))))
    assert b.spent.epsilon == _compose.optimal_epsilon(counts, 1e-6)


# the certified-loss floor -------------------------------------------------------------------
def test_charge_epsilon_is_the_decimal_above_the_certificate():
    assert charge_epsilon(0.1, 0.09999999654817904) == Fraction(1, 10)
    assert charge_epsilon(0.3, 0.29999999) == Fraction(3, 10)
    assert charge_epsilon(Fraction(1, 3), 0.3333) == Fraction(1, 3)


def test_charge_epsilon_never_below_the_certificate():
    # the double of 0.1 lies above one tenth; a certificate there (at its target, the
    # double) is above the decimal: the certificate rounded up is charged
    loss = 0.1
    assert Fraction(loss) > Fraction(1, 10)
    charged = charge_epsilon(0.1, loss)
    assert charged >= Fraction(loss)
    assert charged == Fraction("0.10000000000000001")
    # a certificate above the double (no grid law gives one; still never undercharged)
    high = 0.1 + 1e-12
    assert charge_epsilon(0.1, high) >= Fraction(high)
    # with delta: the certificate's epsilon at that delta, L + ln(1 - delta)
    import math
    d = charge_delta(1e-6, True)
    low = 0.1 - math.log1p(-1e-6) - 1e-9      # well below the target: the decimal
    assert charge_epsilon(0.1, low, d) == Fraction(1, 10)
    at = 0.1 - math.log1p(-1e-6)              # at the target: above the decimal
    assert charge_epsilon(0.1, at, d) > Fraction(1, 10)
    assert charge_epsilon(0.1, at, d) >= Fraction(at) + Fraction(math.log1p(-1e-6))


def test_charge_without_a_certificate_is_the_larger_of_decimal_and_double():
    assert charge_epsilon(0.1, None) == Fraction(0.1) > Fraction(1, 10)
    assert charge_epsilon(0.3, None) == Fraction(3, 10) > Fraction(0.3)
    assert charge_delta(1e-6, False) == max(Fraction(1, 10 ** 6), Fraction(1e-6))
    assert charge_delta(1e-6, True) == Fraction(1, 10 ** 6)


def _fake_plan(loss: float | None, epsilon: float = 0.1) -> ColumnPlan:
    """A column whose mechanism certifies ``loss`` (None: no certificate)."""
    mech = SimpleNamespace(exact_plan=None if loss is None else
                           SimpleNamespace(certified_epsilon=loss))
    return ColumnPlan("a", "laplace", 0.0, 10.0, 1.0, epsilon, 0.0, "clip", "raise", {}, mech)


def test_a_release_whose_certificate_is_above_the_decimal_charges_the_certificate():
    plan = _fake_plan(0.1)                    # certified at the double of 0.1
    (eps, delta), = spec_costs([plan]).values()
    assert eps >= Fraction(0.1) > Fraction(1, 10) and delta == 0
    b = bndp.Budget(epsilon=1.0)
    fit, msg = _spend_until_refused(lambda: b.charge(spec_costs([plan])), 12)
    assert fit == 9                           # ten such releases exceed 1
    assert "costs epsilon 0.10000000000000001 (remaining 0.09999999999999991 of 1)" in msg
    below = _fake_plan(0.0999999999)
    assert spec_costs([below])["a"] == (Fraction(1, 10), Fraction(0))


@pytest.mark.parametrize("entry", [
    {"mechanism": "laplace", "epsilon": 0.1},
    {"mechanism": "laplace", "epsilon": 0.3, "delta": 1e-6},
    {"mechanism": "gaussian", "epsilon": 0.7},
    {"mechanism": "constrained_laplace", "epsilon": 0.1},
])
def test_real_releases_charge_the_decimal_and_at_least_their_certificate(entry):
    spec = {"a": {"lower": 0, "upper": 10, "sensitivity": 1, **entry}}
    plan, = parse_spec(spec)
    loss = certified_loss(plan)
    assert loss is not None
    eps, delta = spec_costs([plan])["a"]
    assert eps == decimal_amount(entry["epsilon"], "epsilon", positive=True)
    assert delta == decimal_amount(entry.get("delta", 0.0), "delta", positive=False)
    assert eps >= Fraction(loss) + Fraction(np.log1p(-float(delta))) * (1 + Fraction(1, 10**12))


def test_continuous_releases_charge_the_double_where_it_is_above_the_decimal():
    spec = {"a": {"lower": 0, "upper": 10, "sensitivity": 1, "epsilon": 0.1,
                  "mode": "continuous"}}
    plan, = parse_spec(spec)
    assert certified_loss(plan) is None
    assert spec_costs([plan])["a"] == (Fraction(0.1), Fraction(0))
    spec["a"]["epsilon"] = 0.3
    assert spec_costs(parse_spec(spec))["a"] == (Fraction(3, 10), Fraction(0))
