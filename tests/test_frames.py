"""bndp.privatize (one release spec for pandas, Polars and Arrow frames) and bndp.Budget."""

import threading
import time

import numpy as np
import pytest

import bndp
from bndp._release import ColumnPlan

from ._helpers import assert_independent_streams, grid_counts

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")
pytest.importorskip("narwhals")

N = 4000
SPEC = {
    "age": {"mechanism": "laplace", "lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25},
    "income": {"mechanism": "gaussian", "lower": 0, "upper": 500000, "sensitivity": 1000,
               "epsilon": 0.25},
    "score": {"lower": "score_lo", "upper": "score_hi", "sensitivity": 1, "epsilon": 0.25},
}


def data(n=N):
    i = np.arange(n)
    lo = (i % 5) * 10.0
    return {"id": i, "age": np.full(n, 60, dtype=np.int64),
            "name": [f"n{k}" for k in range(n)],
            "income": np.where(i % 2 == 0, 300000.0, 20000.0),
            "score": lo + 2.0, "score_lo": lo, "score_hi": lo + 5.0}


KINDS = ["pandas", "polars", "polars-lazy", "arrow"]


def make(kind, d):
    if kind == "pandas":
        return pd.DataFrame(d, index=pd.Index(np.arange(len(d["id"])) * 3 + 7, name="key"))
    if kind == "polars":
        return pl.DataFrame(d)
    if kind == "polars-lazy":
        return pl.DataFrame(d).lazy()
    return pa.table(d)


def to_pandas(out):
    if isinstance(out, pl.LazyFrame):
        out = out.collect()
    if isinstance(out, (pl.DataFrame, pa.Table)):
        return out.to_pandas()
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_privatize_same_kind_bounds_and_untouched_columns(kind):
    d = data()
    frame = make(kind, d)
    out = bndp.privatize(frame, SPEC, rng=12)
    assert type(out) is type(frame)
    res, src = to_pandas(out), to_pandas(frame)
    assert list(res.columns) == list(d)  # same column order
    if kind == "pandas":
        pd.testing.assert_index_equal(res.index, frame.index)
    untouched = ["id", "name", "score_lo", "score_hi"]
    pd.testing.assert_frame_equal(res[untouched], src[untouched])
    # an integer column with integral bounds and sensitivity: the integer law, its type kept
    assert res["age"].dtype == np.int64
    for c in ("income", "score"):
        assert res[c].dtype == np.float64
    age, inc, score = (res[c].to_numpy() for c in ("age", "income", "score"))
    assert ((age >= 0) & (age <= 120)).all()
    # income keeps its own bounds: not clipped into age's [0, 120]
    assert ((inc >= 0) & (inc <= 500000)).all() and inc.max() > 250000
    lo, hi = d["score_lo"], d["score_hi"]
    assert ((score >= lo) & (score <= hi)).all()
    # the per-row bounds are really used: every row's band is hit, none outside its own
    for k in range(5):
        rows = (np.arange(N) % 5) == k
        assert score[rows].min() >= 10 * k and score[rows].max() <= 10 * k + 5
    # every value is a point of its column's grid (the default law); the grid law repeats
    # values, so what must not repeat is the noise: the first and second halves (same true
    # values and bounds row by row) agree only as often as independent draws do
    # (age, an int64 column with integral bounds and sensitivity: the integer law's lattice)
    lap = bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=0.0, upper=120.0, integer=True)
    age_plan = lap.exact_plan
    inc_plan = bndp.BoundedGaussian(0.25, sensitivity=1000.0, lower=0.0, upper=500000.0).exact_plan
    bands = {k: bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=10.0 * k,
                                    upper=10.0 * k + 5).exact_plan
             for k in range(5)}
    grid_counts(age_plan, age)
    grid_counts(inc_plan, inc)
    band = np.arange(N) % 5
    for k, plan in bands.items():
        grid_counts(plan, score[band == k])
    laws = {"age": [(age_plan, 60.0)] * N,
            "income": [(inc_plan, v) for v in d["income"]],
            "score": [(bands[k], v) for k, v in zip(band, d["score"])]}
    h = N // 2
    for c in ("age", "income", "score"):
        v = res[c].to_numpy()
        assert_independent_streams(v[:h], v[h:], laws[c][:h], laws[c][h:])
    # per-column epsilon: age's variance matches its own mechanism (eps 0.25 on [0, 120])
    v = lap.variance(60.0)
    assert abs(age.var() - v) < 5 * v * np.sqrt(5.0 / N)


@pytest.mark.parametrize("kind", KINDS)
def test_privatize_reproducible_and_uses_the_mechanisms(kind):
    """With a seed, column k draws from child k of one SeedSequence through the existing
    mechanism / bndp.sample: the release is bit-for-bit what they give."""
    d = data(500)
    spec = {"age": dict(SPEC["age"], mode="continuous"),
            "score": SPEC["score"]}
    a = to_pandas(bndp.privatize(make(kind, d), spec, rng=5))
    b = to_pandas(bndp.privatize(make(kind, d), spec, rng=5))
    pd.testing.assert_frame_equal(a, b)
    g_age, g_score = np.random.SeedSequence(5).spawn(2)
    want_age = bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=0.0, upper=120.0,
                                   mode="continuous").sample(
        d["age"].astype(float), rng=np.random.default_rng(g_age))
    np.testing.assert_array_equal(a["age"].to_numpy(), want_age)
    want_score = bndp.sample(d["score"], mechanism="laplace", epsilon=0.25, sensitivity=1.0,
                             lower=d["score_lo"], upper=d["score_hi"],
                             rng=np.random.default_rng(g_score))
    np.testing.assert_array_equal(a["score"].to_numpy(), want_score)


def test_privatize_columns_get_independent_streams():
    d = {"a": np.full(1000, 5.0), "b": np.full(1000, 5.0)}
    s = {"lower": 0, "upper": 10, "sensitivity": 1, "epsilon": 1}
    plan = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=10.0).exact_plan
    laws = [(plan, 5.0)] * 1000
    # same true values, same mechanism: a shared stream would give equal columns
    for out in (bndp.privatize(pl.DataFrame(d), {"a": s, "b": s}, rng=3),
                bndp.privatize(pl.DataFrame(d), {"a": s, "b": s})):  # secure default
        a, b = out["a"].to_numpy(), out["b"].to_numpy()
        grid_counts(plan, a)
        grid_counts(plan, b)
        assert_independent_streams(a, b, laws, laws)


@pytest.mark.parametrize("kind", ["polars", "arrow"])
def test_privatize_nulls_keep_null_and_nan_distinct(kind):
    d = {"x": [1.0, None, float("nan"), 4.0], "y": [1, None, 3, 4]}
    spec = {"x": {"lower": 0, "upper": 5, "sensitivity": 1, "epsilon": 1, "nulls": "keep"},
            "y": {"lower": 0, "upper": 5, "sensitivity": 1, "epsilon": 1, "nulls": "keep"}}
    frame = pl.DataFrame(d) if kind == "polars" else pa.table(d)
    out = bndp.privatize(frame, spec, rng=1)
    if kind == "arrow":
        out = pl.from_arrow(out)
    x, y = out["x"], out["y"]
    assert x.is_null().to_list() == [False, True, False, False]
    assert x.is_nan().to_list()[2] is True
    assert y.is_null().to_list() == [False, True, False, False]
    assert 0 <= x[0] <= 5 and 0 <= x[3] <= 5 and x[0] != 1.0


def test_privatize_pandas_nullable_and_nan():
    df = pd.DataFrame({"a": pd.array([1, None, 3], dtype="Int64"), "b": [1.0, np.nan, 2.0]})
    spec = {c: {"lower": 0, "upper": 5, "sensitivity": 1, "epsilon": 1, "nulls": "keep"}
            for c in "ab"}
    out = bndp.privatize(df, spec, rng=1)
    assert out["a"].isna().tolist() == [False, True, False]
    assert str(out["a"].dtype) == "Int64"     # the integer law keeps the nullable type
    assert out["b"].isna().tolist() == [False, True, False]
    with pytest.raises(ValueError, match=r"column 'b'.*missing value.*row 2 \(data rows counted from 1\)"):
        bndp.privatize(df, {"b": dict(spec["b"], nulls="raise")})


@pytest.fixture
def no_draws(monkeypatch):
    calls = []
    real = ColumnPlan.draw

    def spy(self, *a, **k):
        calls.append(self.name)
        return real(self, *a, **k)

    monkeypatch.setattr(ColumnPlan, "draw", spy)
    return calls


@pytest.mark.parametrize("bad, exc, match", [
    ({"sensitivity": None}, ValueError, r"column 'income', key 'sensitivity': missing"),
    ({"epsilon": "1"}, TypeError, r"column 'income', key 'epsilon'"),
    ({"epsilon": -1.0}, ValueError, r"column 'income'.*epsilon"),
    ({"mechanism": "cauchy"}, ValueError, r"column 'income', key 'mechanism'"),
    ({"bogus": 1}, ValueError, r"column 'income', key 'bogus': unknown key"),
    ({"nulls": "drop"}, ValueError, r"column 'income', key 'nulls'"),
    ({"on_outside": "wrap"}, ValueError, r"column 'income', key 'on_outside'"),
    ({"mode": "fuzzy"}, ValueError, r"column 'income'.*mode"),
    ({"delta": 0.1}, ValueError, r"column 'income', key 'delta'"),
    ({"mechanism": "constrained_laplace", "upper": "score_hi"}, ValueError,
     r"column 'income', key 'upper'.*'laplace' or 'gaussian'"),
    ({"mechanism": "laplace", "upper": "nope"}, ValueError, r"key 'upper'.*'nope' not found"),
    ({"mechanism": "laplace", "upper": "age"}, ValueError, r"key 'upper'.*itself released"),
])
def test_spec_errors_name_column_and_key_before_any_draw(no_draws, bad, exc, match):
    income = {k: v for k, v in dict(SPEC["income"], **bad).items() if v is not None}
    spec = {"age": SPEC["age"], "income": income}
    with pytest.raises(exc, match=match):
        bndp.privatize(pl.DataFrame(data(50)), spec, rng=1)
    assert no_draws == []


def test_data_errors_before_any_draw(no_draws):
    d = data(50)
    d["income"] = d["income"].copy()
    d["income"][7] = np.nan
    with pytest.raises(ValueError, match=r"column 'income'.*row 8 \(data rows counted from 1\)"):
        bndp.privatize(pd.DataFrame(d), SPEC, rng=1)
    d = data(50)
    d["score_hi"] = d["score_hi"].copy()
    d["score_hi"][3] = d["score_lo"][3]
    with pytest.raises(ValueError, match=r"column 'score'.*row 4 \(data rows counted from 1\)"):
        bndp.privatize(pd.DataFrame(d), SPEC, rng=1)
    d = data(50)
    with pytest.raises(ValueError, match=r"column 'age'.*row 1 \(data rows counted from 1\).*outside") as info:
        bndp.privatize(pd.DataFrame(d), {"age": dict(SPEC["age"], upper=50,
                                                     on_outside="raise")}, rng=1)
    # a ColumnDataError: what the command line words per file row (one copy of the checks)
    from bndp._release import ColumnDataError
    e = info.value
    assert isinstance(e, ColumnDataError) and (e.kind, e.column, e.row) == ("outside", "age", 0)
    # (the scalar bounds are public and recorded; the value is data and is not)
    assert e.upper == 50.0 and e.value is None and e.detail == "above"
    with pytest.raises(TypeError, match="column 'name' must be numeric"):
        bndp.privatize(pd.DataFrame(d), {"name": SPEC["age"]})
    assert no_draws == []


def test_privatize_refuses_non_frames():
    with pytest.raises(TypeError, match="frame"):
        bndp.privatize(np.zeros((3, 2)), SPEC)
    with pytest.raises(TypeError, match="mapping"):
        bndp.privatize(pl.DataFrame(data(5)), [("age", SPEC["age"])])


def test_constrained_laplace_in_spec():
    d = {"v": np.array([-2.0, 3.0, 0.0, 1.0] * 50)}
    spec = {"v": {"mechanism": "constrained_laplace", "forbidden": [(0.0, 1.0)],
                  "sensitivity": 1, "epsilon": 1}}
    out = bndp.privatize(pl.DataFrame(d), spec, rng=2)["v"].to_numpy()
    assert ((out <= 0) | (out >= 1)).all()


# ------------------------------------------------------------------------------------------
# budget
# ------------------------------------------------------------------------------------------
def test_budget_spends_sum_over_columns_and_refuses_without_spending(no_draws):
    b = bndp.Budget(epsilon=1.0, delta=1e-6)
    spec = dict(SPEC, age=dict(SPEC["age"], delta=1e-7))
    bndp.privatize(pd.DataFrame(data(100)), spec, budget=b, rng=1)
    assert b.spent == (0.75, 1e-7)
    assert b.remaining == (0.25, 1e-6 - 1e-7)
    assert len(b.log) == 1 and set(b.log[0].columns) == {"age", "income", "score"}
    assert b.log[0].cost == (0.75, 1e-7)
    n_draws = len(no_draws)
    assert n_draws == 3
    with pytest.raises(bndp.BudgetError, match="exceed"):
        bndp.privatize(pd.DataFrame(data(100)), SPEC, budget=b, rng=1)
    assert len(no_draws) == n_draws  # nothing drawn
    assert b.spent == (0.75, 1e-7) and len(b.log) == 1  # nothing spent
    bndp.privatize(pd.DataFrame(data(100)), {"age": SPEC["age"]}, budget=b, rng=1)
    assert b.spent == (1.0, 1e-7) and b.remaining.epsilon == 0.0
    assert isinstance(bndp.BudgetError("x"), ValueError)


def test_budget_delta_and_argument_errors():
    b = bndp.Budget(epsilon=10.0)  # delta 0: any delta > 0 is refused
    with pytest.raises(bndp.BudgetError, match="delta"):
        bndp.privatize(pl.DataFrame(data(10)), {"age": dict(SPEC["age"], delta=1e-9)},
                       budget=b)
    assert b.spent == (0.0, 0.0)
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="epsilon"):
            bndp.Budget(epsilon=bad)
    with pytest.raises(ValueError, match="delta"):
        bndp.Budget(epsilon=1.0, delta=1.0)
    with pytest.raises(TypeError, match="epsilon"):
        bndp.Budget(epsilon="1")
    with pytest.raises(TypeError, match="budget"):
        bndp.privatize(pl.DataFrame(data(10)), SPEC, budget=1.0)


def test_budget_exact_sums_and_conservative_rounding():
    from fractions import Fraction

    b = bndp.Budget(epsilon=1.0)
    for _ in range(10):
        b.spend(0.1)
    # the decimals add up exactly: ten of 0.1 are 1 (the binary doubles would sum to
    # 1 + 5.55e-17 and refuse the tenth; floating point to 0.9999999999999999)
    assert b.spent.epsilon == 1.0 and b.remaining.epsilon == 0.0
    with pytest.raises(bndp.BudgetError, match="nothing was spent"):
        b.spend(0.1)
    assert len(b.log) == 10
    c = bndp.Budget(epsilon=1.0)
    c.spend(Fraction(1, 3))
    r = c.remaining.epsilon
    assert 0.6666666666666665 < r and Fraction(repr(r)) < Fraction(2, 3)
    c.spend(r)  # remaining is rounded towards zero: spending it is always allowed
    assert 0.0 <= c.remaining.epsilon < 1e-16
    assert c.spent.epsilon <= 1.0


def _spend_race(b, threads=16, cost=0.125):
    """``threads`` threads spend ``cost`` from ``b`` at once; returns (spent, refused)."""
    ok, refused = [], []
    barrier = threading.Barrier(threads)

    def worker():
        barrier.wait()
        try:
            b.spend(cost)
            ok.append(1)
        except bndp.BudgetError:
            refused.append(1)

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return len(ok), len(refused)


def test_budget_thread_safe(monkeypatch):
    import contextlib

    from bndp.budget import Budget

    # widen the window between the check and the update, so that threads interleave there
    check = Budget._refuse_if_over

    def slow_check(self, *args):
        check(self, *args)
        time.sleep(0.02)

    monkeypatch.setattr(Budget, "_refuse_if_over", slow_check)
    # without its lock the race is real: the budget overspends (so this test can fail)
    unlocked = bndp.Budget(epsilon=1.0)
    unlocked._lock = contextlib.nullcontext()
    ok, _ = _spend_race(unlocked)
    assert ok > 8 and unlocked.spent.epsilon > 1.0
    # with it, exactly the affordable releases pass
    b = bndp.Budget(epsilon=1.0)
    assert _spend_race(b) == (8, 8)
    assert b.spent == (1.0, 0.0) and len(b.log) == 8


def test_budget_metric_guarantee_is_refused():
    spec = {"v": {"mechanism": "constrained_laplace", "forbidden": [(0.0, 1.0)],
                  "guarantee": "metric", "sensitivity": 1, "epsilon": 1}}
    b = bndp.Budget(epsilon=5.0)
    with pytest.raises(ValueError, match="metric"):
        bndp.privatize(pl.DataFrame({"v": [2.0]}), spec, budget=b)
    assert b.spent == (0.0, 0.0)


# a release that fails after the data checks spends nothing (issue 21, item 7)
def _fail_on(monkeypatch, target, attr, when=lambda *a, **k: True):
    real = getattr(target, attr)

    def boom(*a, **k):
        if when(*a, **k):
            raise ValueError("planted failure while planning or drawing")
        return real(*a, **k)

    monkeypatch.setattr(target, attr, boom)


@pytest.mark.parametrize("kind", KINDS)
def test_failed_draw_spends_nothing_and_retry_works(kind, monkeypatch):
    b = bndp.Budget(epsilon=0.75)
    # the second column fails after the first was drawn
    _fail_on(monkeypatch, ColumnPlan, "draw", lambda self, *a, **k: self.name == "income")
    with pytest.raises(ValueError, match="planted"):
        bndp.privatize(make(kind, data(200)), SPEC, budget=b, rng=1)
    assert b.spent == (0.0, 0.0) and b.log == []
    monkeypatch.undo()
    out = to_pandas(bndp.privatize(make(kind, data(200)), SPEC, budget=b, rng=1))
    assert b.spent == (0.75, 0.0) and len(b.log) == 1
    assert out["age"].between(0, 120).all()


def test_failed_per_row_planning_spends_nothing(monkeypatch):
    # the per-row grid plans are built while drawing (a refusal such as too many distinct
    # (lower, upper) pairs comes from there)
    import bndp.mechanisms.rows

    _fail_on(monkeypatch, bndp.mechanisms.rows, "_grid_rows")
    b = bndp.Budget(epsilon=1.0)
    with pytest.raises(ValueError, match="planted"):
        bndp.privatize(pd.DataFrame(data(200)), SPEC, budget=b, rng=1)
    assert b.spent == (0.0, 0.0) and b.log == []
    monkeypatch.undo()
    bndp.privatize(pd.DataFrame(data(200)), SPEC, budget=b, rng=1)
    assert b.spent == (0.75, 0.0)


def test_failed_fixed_bounds_planning_spends_nothing(monkeypatch):
    from bndp.mechanisms import BoundedGaussian

    _fail_on(monkeypatch, BoundedGaussian, "__init__")
    b = bndp.Budget(epsilon=1.0)
    with pytest.raises(ValueError, match="planted"):
        bndp.privatize(pd.DataFrame(data(50)), SPEC, budget=b, rng=1)
    assert b.spent == (0.0, 0.0)
    monkeypatch.undo()
    bndp.privatize(pd.DataFrame(data(50)), SPEC, budget=b, rng=1)
    assert b.spent == (0.75, 0.0)


def test_budget_refused_before_data_is_read(no_draws):
    # the budget is checked (not charged) right after the spec is planned: a release it
    # cannot pay is refused before the data is checked or drawn
    d = data(50)
    d["age"] = d["age"].astype(float)
    d["age"][3] = np.nan
    b = bndp.Budget(epsilon=0.5)
    with pytest.raises(bndp.BudgetError):
        bndp.privatize(pd.DataFrame(d), SPEC, budget=b, rng=1)
    assert no_draws == [] and b.spent == (0.0, 0.0)


def test_charge_refused_after_the_draw_releases_nothing(monkeypatch):
    # another release spends the budget between the check and the charge: the charge is
    # refused and nothing is returned
    import bndp._release as spec_mod

    b = bndp.Budget(epsilon=1.0)
    real = spec_mod.charge_release

    def racing(budget, plans, label, *args, **kwargs):
        b.spend(0.5, label="someone else")
        return real(budget, plans, label, *args, **kwargs)

    monkeypatch.setattr(spec_mod, "charge_release", racing)
    monkeypatch.setattr(bndp.frames, "charge_release", racing)
    with pytest.raises(bndp.BudgetError):
        bndp.privatize(pd.DataFrame(data(50)), SPEC, budget=b, rng=1)
    assert b.spent == (0.5, 0.0) and [r.label for r in b.log] == ["someone else"]


def test_frames_guide_python_blocks_run():
    import os
    import re

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "docs", "frames.md")
    if not os.path.exists(path):
        pytest.skip("needs the source tree")
    blocks = re.findall(r"```python\n(.*?)```", open(path, encoding="utf-8").read(), flags=re.S)
    assert len(blocks) >= 4
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/frames.md block {i}", "exec"), {})


def test_readme_frames_block_runs():
    import os
    import re

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "README.md")
    if not os.path.exists(path):
        pytest.skip("needs the source tree")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", open(path, encoding="utf-8").read(),
                                    flags=re.S) if "bndp.privatize(df, spec" in b]
    assert len(blocks) == 1
    exec(compile(blocks[0], "README.md", "exec"), {})


@pytest.mark.parametrize("modname", ["bndp.frames", "bndp.budget"])
def test_docstring_examples_run(modname):
    import doctest
    import importlib

    res = doctest.testmod(importlib.import_module(modname),
                          optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0


@pytest.mark.parametrize("explicit, short", [("bounded_laplace", "laplace"),
                                             ("bounded_gaussian", "gaussian")])
def test_explicit_mechanism_names_release_what_the_short_ones_do(explicit, short):
    # "bounded_laplace" / "bounded_gaussian" name bndp.BoundedLaplace / BoundedGaussian
    # (bndp.Laplace and bndp.Gaussian are unbounded) on every path: spec, bndp.sample,
    # the registry; the release records the short name
    from bndp._release import parse_spec
    from bndp.mechanisms.registry import mechanism_class

    entry = {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.5}
    a, = parse_spec({"age": {"mechanism": explicit, **entry}})
    b, = parse_spec({"age": {"mechanism": short, **entry}})
    assert a.mechanism == b.mechanism == short and a.mech == b.mech
    x = np.array([3.0, 50.0, 119.0])
    kw = dict(epsilon=0.5, sensitivity=1.0, lower=0.0, upper=120.0, rng=7)
    np.testing.assert_array_equal(bndp.sample(x, mechanism=explicit, **kw),
                                  bndp.sample(x, mechanism=short, **kw))
    df = pd.DataFrame({"age": x})
    np.testing.assert_array_equal(
        bndp.privatize(df, {"age": {"mechanism": explicit, **entry}}, rng=3)["age"],
        bndp.privatize(df, {"age": {"mechanism": short, **entry}}, rng=3)["age"])
    assert mechanism_class(explicit) is mechanism_class(short) is type(a.mech)
    with pytest.raises(ValueError, match=r"must be one of \('bounded_laplace', "
                       r"'bounded_gaussian', 'laplace', 'gaussian'"):
        bndp.sample(x, mechanism="unbounded", **kw)
    with pytest.raises(ValueError, match="bounded_laplace"):
        parse_spec({"age": {"mechanism": "Laplace", **entry}})
