"""bndp.dask.privatize with Dask's local threaded and process schedulers."""

import os

import numpy as np
import pytest

import bndp

from ._helpers import assert_independent_streams, grid_counts

pd = pytest.importorskip("pandas")
dd = pytest.importorskip("dask.dataframe")
import dask  # noqa: E402

from .conftest import bndp_import_root  # noqa: E402

SRC = bndp_import_root()  # where this run imports bndp from (src/ or site-packages)
N = 20000
PARTS = 4


@pytest.fixture(scope="module")
def ddf():
    pdf = pd.DataFrame({"id": np.arange(N), "age": np.full(N, 60, dtype=np.int64),
                        "name": [f"n{i}" for i in range(N)],
                        "other": (np.arange(N) % 7).astype(float)})
    return dd.from_pandas(pdf, npartitions=PARTS)


@pytest.fixture(scope="module", autouse=True)
def process_workers_import_this_checkout():
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = SRC + (os.pathsep + old if old else "")
    yield
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


@pytest.mark.parametrize("scheduler", ["threads", "processes"])
@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_dask_privatize(ddf, scheduler, mechanism):
    with dask.config.set(scheduler=scheduler):  # the partitions are drawn by privatize
        out = bndp.dask.privatize(ddf, "age", mechanism=mechanism, epsilon=1.0,
                                  sensitivity=1.0, lower=0.0, upper=120.0)
    assert out.npartitions == PARTS
    assert list(out.dtypes.index) == ["id", "age", "name", "other"]
    # an int64 column, integral bounds and sensitivity: the integer law, its type kept
    assert out.dtypes["age"] == np.int64
    res = out.compute(scheduler=scheduler)
    src = ddf.compute()
    assert len(res) == N
    pd.testing.assert_frame_equal(res[["id", "name", "other"]], src[["id", "name", "other"]])
    age = res["age"].to_numpy()
    assert ((age >= 0) & (age <= 120)).all()
    mech = (bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0,
                                upper=120.0, integer=True) if mechanism == "laplace"
            else bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=120.0,
                                      integer=True))
    grid_counts(mech.exact_plan, age)     # the integer release: lattice points only
    v = mech.variance(60.0)
    assert abs(age.mean() - mech.mean(60.0)) < 5 * np.sqrt(v / N)
    tol = 5 * v * np.sqrt((5.0 if mechanism == "laplace" else 2.0) / N)
    assert abs(age.var() - v) < tol
    # no repeated noise, within or across partitions
    # (the default grid law repeats values; what must not repeat is a stream: the ordered
    # draws of two partitions agree only where independent draws on the grid would)
    heads = [age[i * (N // PARTS):i * (N // PARTS) + 50] for i in range(PARTS)]
    for i in range(PARTS):
        for j in range(i + 1, PARTS):
            assert np.mean(heads[i] == heads[j]) < 0.5


def test_dask_two_calls_are_distinct_tasks(ddf):
    kw = dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    a = bndp.dask.privatize(ddf, "age", **kw)
    b = bndp.dask.privatize(ddf, "age", **kw)
    # equal task names would make Dask merge them and release the same noise twice
    ra, rb = dask.compute(a, b, scheduler="threads")
    assert np.mean(ra["age"].to_numpy() == rb["age"].to_numpy()) < 0.5


def test_dask_nulls_and_several_columns():
    pdf = pd.DataFrame({"a": [1.0, None, 3.0, 4.0], "b": pd.array([1, 2, None, 4], "Int64")})
    ddf = dd.from_pandas(pdf, npartitions=2)
    kw = dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0, upper=10.0)
    res = bndp.dask.privatize(ddf, ["a", "b"], nulls="keep", **kw).compute(scheduler="threads")
    assert res["a"].isna().tolist() == [False, True, False, False]
    assert res["b"].isna().tolist() == [False, False, True, False]
    assert str(res["b"].dtype) == "Int64"     # the integer law keeps the nullable type
    with pytest.raises(ValueError, match="missing value"):
        bndp.dask.privatize(ddf, "a", **kw).compute(scheduler="threads")


def test_dask_argument_errors(ddf):
    kw = dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    with pytest.raises(ValueError, match="not found"):
        bndp.dask.privatize(ddf, "nope", mechanism="laplace", **kw)
    with pytest.raises(TypeError, match="numeric"):
        bndp.dask.privatize(ddf, "name", mechanism="laplace", **kw)
    with pytest.raises(ValueError, match="delta"):
        bndp.dask.privatize(ddf, "age", mechanism="gaussian", delta=0.5, **kw)


# ------------------------------------------------------------------------------------------
# the release spec, per-row bounds, Dask Series bounds stay lazy
# ------------------------------------------------------------------------------------------
def test_dask_series_bounds_are_not_pulled_to_the_client():
    n = 400
    pdf = pd.DataFrame({"v": np.full(n, 3.0), "k": np.arange(n) % 4})
    ddf = dd.from_pandas(pdf, npartitions=4)
    calls = []

    def lower_of(part):
        calls.append(len(part))
        return part["k"] * 10.0

    lower = ddf.map_partitions(lower_of, meta=("k", "f8"))
    out = bndp.dask.privatize(ddf, "v", mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                              lower=lower, upper=lower + 5.0)
    # the bounds are computed inside the graph, partition by partition, once (the release
    # is materialised by privatize), never pulled to the client as a whole
    assert sorted(calls) == [n // 4] * 4
    assert list(out.columns) == ["v", "k"]
    res = out.compute(scheduler="threads")
    assert len(calls) == 4  # released once: computing the result draws (and reads) nothing
    lo = (np.arange(n) % 4) * 10.0
    v = res["v"].to_numpy()
    assert ((v >= lo) & (v <= lo + 5)).all()
    # grid points of each row's own bounds; the 4 partitions (same bounds and true values
    # row by row) have their own streams: their ordered draws agree only by chance
    plans = {k: bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=10.0 * k,
                                    upper=10.0 * k + 5).exact_plan
             for k in range(4)}
    k = np.arange(n) % 4
    for j, plan in plans.items():
        grid_counts(plan, v[k == j])
    laws = [(plans[j], min(max(3.0, 10.0 * j), 10.0 * j + 5)) for j in k]
    m = n // 4
    part = [slice(p * m, (p + 1) * m) for p in range(4)]
    for p1 in range(4):
        for p2 in range(p1 + 1, 4):
            pa, pb = part[p1], part[p2]
            assert_independent_streams(v[pa], v[pb], laws[pa], laws[pb])


def test_dask_spec_8_partitions_per_row_bounds_budget():
    n, parts = 16000, 8
    i = np.arange(n)
    pdf = pd.DataFrame({"age": np.full(n, 60), "income": np.full(n, 3e5),
                        "lo": (i % 5) * 10.0, "hi": (i % 5) * 10.0 + 5, "score": (i % 5) * 10.0 + 2,
                        "name": [f"n{k}" for k in i]})
    ddf = dd.from_pandas(pdf, npartitions=parts)
    spec = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25},
            "income": {"mechanism": "gaussian", "lower": 0, "upper": 500000,
                       "sensitivity": 1000, "epsilon": 0.5},
            "score": {"lower": "lo", "upper": "hi", "sensitivity": 1, "epsilon": 0.25}}
    b = bndp.Budget(epsilon=1.0)
    out = bndp.dask.privatize(ddf, spec, budget=b)
    assert b.remaining == (0.0, 0.0)
    with pytest.raises(bndp.BudgetError):
        bndp.dask.privatize(ddf, spec, budget=b)
    assert out.npartitions == parts and list(out.columns) == list(pdf.columns)
    res = out.compute(scheduler="threads")
    src = ddf.compute()
    pd.testing.assert_frame_equal(res[["lo", "hi", "name"]], src[["lo", "hi", "name"]])
    age, inc, score = (res[c].to_numpy() for c in ("age", "income", "score"))
    assert ((age >= 0) & (age <= 120)).all()
    assert ((inc >= 0) & (inc <= 500000)).all() and abs(inc.mean() - 3e5) < 5000
    assert ((score >= pdf["lo"].to_numpy()) & (score <= pdf["hi"].to_numpy())).all()
    lap = bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=0.0, upper=120.0, integer=True)
    v = lap.variance(60.0)  # the integer law's (the default for an integer column)
    assert abs(age.var() - v) < 5 * v * np.sqrt(5.0 / n)
    # every value a point of its column's grid; no stream repeated across the 8 partitions:
    # their ordered draws (same true values and bounds row by row) agree only by chance
    age_plan = lap.exact_plan
    inc_plan = bndp.BoundedGaussian(0.5, sensitivity=1000.0, lower=0.0, upper=500000.0).exact_plan
    bands = {k: bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=10.0 * k,
                                    upper=10.0 * k + 5).exact_plan
             for k in range(5)}
    grid_counts(age_plan, age)
    grid_counts(inc_plan, inc)
    for k, plan in bands.items():
        grid_counts(plan, score[i % 5 == k])
    laws = {"age": [(age_plan, 60.0)] * n, "income": [(inc_plan, 3e5)] * n,
            "score": [(bands[k], 10.0 * k + 2) for k in i % 5]}
    part = [slice(a * n // parts, (a + 1) * n // parts) for a in range(parts)]
    for c in ("age", "income", "score"):
        x = res[c].to_numpy()
        for p1 in range(parts):
            for p2 in range(p1 + 1, parts):
                pa, pb = part[p1], part[p2]
                assert_independent_streams(x[pa], x[pb], laws[c][pa], laws[c][pb])
    # bndp.privatize hands a Dask DataFrame to bndp.dask.privatize
    out2 = bndp.privatize(ddf, {"age": spec["age"]})
    assert isinstance(out2, dd.DataFrame)
    with pytest.raises(ValueError, match="rng"):
        bndp.privatize(ddf, {"age": spec["age"]}, rng=1)


def test_dask_constrained_laplace_releases_the_grid_law():
    # a half-line with a gap, per column spec: grid points of the allowed set, the law of
    # each true value
    n = 4000
    pdf = pd.DataFrame({"v": np.tile([0.0, 5.0, 25.0, 300.0], n // 4)})
    spec = {"v": {"mechanism": "constrained_laplace", "lower": 0, "forbidden": [(10, 20)],
                  "sensitivity": 1, "epsilon": 1}}
    res = bndp.dask.privatize(dd.from_pandas(pdf, npartitions=4), spec).compute()
    x = res["v"].to_numpy()
    m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=[(10.0, 20.0)], lower=0.0)
    assert ((x >= 0) & ((x <= 10) | (x >= 20))).all()
    assert (np.ldexp(x, -m.exact_plan.exponent) % 1 == 0).all()
    v = pdf["v"].to_numpy()
    for t in (0.0, 5.0, 25.0, 300.0):
        sel = x[v == t]
        z = (sel.mean() - m.mean(t)) / np.sqrt(m.variance(t) / sel.size)
        assert abs(z) < 5


# a release that fails before the graph is handed back spends nothing (issue 21, item 7)
@pytest.mark.parametrize("where", ["planning", "graph"])
def test_dask_failure_on_the_client_spends_nothing(ddf, monkeypatch, where):
    from bndp.mechanisms import BoundedLaplace

    spec = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.5}}

    def boom(*a, **k):
        raise ValueError("planted failure")

    if where == "planning":  # the mechanism is built (and its grid law planned) here
        monkeypatch.setattr(BoundedLaplace, "__init__", boom)
    else:
        monkeypatch.setattr(type(ddf), "map_partitions", boom)
    b = bndp.Budget(epsilon=0.5)
    with pytest.raises(ValueError, match="planted"):
        bndp.dask.privatize(ddf, spec, budget=b)
    assert b.spent == (0.0, 0.0) and b.log == []
    monkeypatch.undo()
    out = bndp.dask.privatize(ddf, spec, budget=b)
    assert b.spent == (0.5, 0.0) and [r.label for r in b.log] == ["dask privatize(age)"]
    assert len(out.compute(scheduler="sync")) == N


# released once ---------------------------------------------------------------------------
def test_dask_result_is_released_once(ddf):
    b = bndp.Budget(epsilon=1.0)
    out = bndp.dask.privatize(ddf, "age", mechanism="laplace", epsilon=0.5, sensitivity=1.0,
                              lower=0.0, upper=120.0, budget=b)
    first = out.compute(scheduler="threads")
    again = out.compute(scheduler="sync")
    pd.testing.assert_frame_equal(first, again)  # the same values, not a new release
    assert out["age"].sum().compute() == first["age"].sum()
    assert b.spent == (0.5, 0.0)


def test_dask_data_error_spends_nothing_and_release_ids(tmp_path):
    pdf = pd.DataFrame({"age": [1.0, np.nan, 3.0, 4.0]})
    b = bndp.Budget.create(str(tmp_path / "l.db"), "dask", epsilon=1.0)
    kw = dict(mechanism="laplace", epsilon=0.5, sensitivity=1.0, lower=0.0, upper=120.0)
    with pytest.raises(ValueError, match="missing value"):
        bndp.dask.privatize(dd.from_pandas(pdf, npartitions=2), "age", budget=b,
                            release_id="r", **kw)
    assert b.history == []  # drawn (and failed) before the charge
    good = dd.from_pandas(pdf.fillna(2.0), npartitions=2)
    bndp.dask.privatize(good, "age", budget=b, release_id="r", **kw)
    with pytest.raises(bndp.ReleaseRecorded):
        bndp.dask.privatize(good, "age", budget=b, release_id="r", **kw)
    assert [e.label for e in b.history] == ["dask privatize(age)"]


def test_decimal_and_wide_int64_columns_released_from_exact_values(monkeypatch):
    """A Dask frame of Arrow decimals and int64 beyond 2^53, drawn in this process (the
    synchronous scheduler) with a seeded generator: the release equals the release of the
    grid points of the exact values' indices."""
    import math
    from decimal import Decimal
    from fractions import Fraction
    pa = pytest.importorskip("pyarrow")
    from bndp.integrations import dask as bdask
    x = Fraction("63.531249999999995")
    vals = [x, x + 1] * 50
    dec = pa.array([Decimal(v.numerator) / Decimal(v.denominator) for v in vals],
                   type=pa.decimal128(38, 20))
    pdf = pd.DataFrame({"age": pd.array(dec, dtype=pd.ArrowDtype(dec.type))})
    m = bndp.BoundedLaplace(epsilon=1.0, sensitivity=1.0, lower=63.5, upper=183.5)
    p = m.exact_plan
    ks = [math.floor((v - Fraction(63.5)) / Fraction(p.gamma) + Fraction(1, 2)) for v in vals]
    assert ks[1] - ks[0] == p.dk
    grid = pd.DataFrame({"age": [float(Fraction(63.5) + k * Fraction(p.gamma)) for k in ks]})
    spec = {"age": dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=63.5,
                        upper=183.5)}
    outs = []
    for frame in (pdf, grid):
        monkeypatch.setattr(bdask, "default_rng", lambda _=None: np.random.default_rng(5))
        with dask.config.set(scheduler="synchronous"):
            out = bndp.dask.privatize(dd.from_pandas(frame, npartitions=1), spec)
            outs.append(out.compute(scheduler="synchronous")["age"].to_numpy(dtype=float))
    np.testing.assert_array_equal(outs[0], outs[1])
