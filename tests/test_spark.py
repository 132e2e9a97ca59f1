"""bndp.spark.privatize on a real local Spark session (local[2], Arrow batches)."""

import os
import shutil
import sys
import warnings

import numpy as np
import pytest

import bndp

from ._helpers import assert_independent_streams, grid_counts

pyspark = pytest.importorskip("pyspark")
pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime (17+)", allow_module_level=True)

from .conftest import bndp_import_root  # noqa: E402

SRC = bndp_import_root()  # where this run imports bndp from (src/ or site-packages)
N = 20000
PARTS = 4

pytestmark = [pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore:The copy keyword is deprecated")]


@pytest.fixture(scope="module")
def spark():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # executors are separate Python processes: they must import this checkout's bndp
    os.environ["PYTHONPATH"] = SRC + os.pathsep + os.environ.get("PYTHONPATH", "")
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = (SparkSession.builder.master("local[2]").appName("bndp-test")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.sql.execution.arrow.pyspark.enabled", "true")
             .config("spark.driver.memory", "1g")
             .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def people(spark):
    return spark.range(0, N, numPartitions=PARTS).selectExpr(
        "id", "cast(60 as int) as age", "concat('name-', id) as name",
        "cast(id % 7 as double) as other")


def collect(df):
    from pyspark.sql import functions as F

    return df.withColumn("pid", F.spark_partition_id()).toPandas()


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_spark_privatize_bounds_columns_variance(spark, people, mechanism):
    out = bndp.spark.privatize(people, "age", mechanism=mechanism, epsilon=1.0,
                               sensitivity=1.0, lower=0.0, upper=120.0)
    # schema unchanged: an int column with integral bounds and sensitivity is released with
    # the integer law and keeps its type
    fields = {f.name: f.dataType.simpleString() for f in out.schema.fields}
    assert list(fields) == ["id", "age", "name", "other"]
    assert fields["age"] == "int" and fields["id"] == "bigint" and fields["name"] == "string"
    pdf = collect(out).sort_values("id")
    assert len(pdf) == N
    np.testing.assert_array_equal(pdf["id"].to_numpy(), np.arange(N))
    assert (pdf["name"] == "name-" + pdf["id"].astype(str)).all()
    np.testing.assert_array_equal(pdf["other"].to_numpy(), (np.arange(N) % 7).astype(float))
    age = pdf["age"].to_numpy()
    assert ((age >= 0) & (age <= 120)).all()
    mech = (bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0,
                                upper=120.0, integer=True) if mechanism == "laplace"
            else bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=120.0,
                                      integer=True))
    grid_counts(mech.exact_plan, age)     # the integer release: lattice points only
    v = mech.variance(60.0)
    assert abs(age.mean() - mech.mean(60.0)) < 5 * np.sqrt(v / N)
    # sd of the sample variance: v*sqrt(5/N) (Laplace, kurtosis 6) or v*sqrt(2/N): 5 sd
    tol = 5 * v * np.sqrt((5.0 if mechanism == "laplace" else 2.0) / N)
    assert abs(age.var() - v) < tol
    # no repeated noise: every partition has its own stream
    assert pdf["pid"].nunique() == PARTS
    # (the default grid law repeats values; what must not repeat is a stream: the ordered
    # draws of two partitions agree only where independent draws on the grid would)
    heads = [g["age"].to_numpy()[:50] for _, g in pdf.sort_values("id").groupby("pid")]
    for i in range(len(heads)):
        for j in range(i + 1, len(heads)):
            assert np.mean(heads[i] == heads[j]) < 0.5


def test_spark_two_runs_are_two_independent_releases(spark, people):
    src = people.limit(2000).repartition(2).localCheckpoint(eager=True)
    kw = dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    out = bndp.spark.privatize(src, "age", **kw)
    a = out.orderBy("id").toPandas()["age"].to_numpy()
    b = bndp.spark.privatize(src, "age", **kw).orderBy("id").toPandas()["age"].to_numpy()
    assert a.size == b.size == 2000 and np.mean(a == b) < 0.5
    # while two actions on one result are one release: the same values
    np.testing.assert_array_equal(out.orderBy("id").toPandas()["age"].to_numpy(), a)


def test_spark_several_columns_and_nulls(spark):
    df = spark.createDataFrame(
        [(1, 5.0, 50.0), (2, None, 60.0), (3, 7.0, None), (4, 8.0, 70.0)],
        "id long, a double, b double")
    kw = dict(mechanism="laplace", epsilon=1.0, sensitivity=1.0, lower=0.0, upper=100.0)
    out = bndp.spark.privatize(df, ["a", "b"], nulls="keep", **kw).toPandas().sort_values("id")
    assert out["a"].isna().tolist() == [False, True, False, False]
    assert out["b"].isna().tolist() == [False, False, True, False]
    vals = np.concatenate([out["a"].dropna(), out["b"].dropna()])
    assert ((vals >= 0) & (vals <= 100)).all()
    with pytest.raises(Exception, match="missing value"):
        bndp.spark.privatize(df, "a", **kw).collect()


def test_spark_calibrates_once_on_the_driver(spark, people, monkeypatch):
    # the grid law is planned once (the continuous b* is not computed in the default mode)
    calls, continuous = [], []
    real = bndp.mechanisms.exact.plan_bounded_laplace

    def spy(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(bndp.mechanisms.exact, "plan_bounded_laplace", spy)
    monkeypatch.setattr(bndp.mechanisms.laplace, "bounded_laplace_scale",
                        lambda *a, **k: continuous.append(a))
    # (the int columns age and id share the integer law's plan, other (double) has the
    # grid law's: one plan per law)
    out = bndp.spark.privatize(people, ["age", "id", "other"], mechanism="laplace",
                               epsilon=0.5, sensitivity=2.0, lower=0.0, upper=120.0)
    assert len(calls) == 2 and continuous == []
    assert out.count() == N


def test_spark_argument_errors(spark, people):
    kw = dict(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    with pytest.raises(ValueError, match="not found"):
        bndp.spark.privatize(people, "nope", mechanism="laplace", **kw)
    with pytest.raises(TypeError, match="numeric"):
        bndp.spark.privatize(people, "name", mechanism="laplace", **kw)
    with pytest.raises(ValueError, match="delta"):
        bndp.spark.privatize(people, "age", mechanism="gaussian", delta=0.1, **kw)
    with pytest.raises(ValueError, match="mechanism"):
        bndp.spark.privatize(people, "age", mechanism="cauchy", **kw)
    with pytest.raises(ValueError, match="nulls"):
        bndp.spark.privatize(people, "age", mechanism="laplace", nulls="drop", **kw)


def test_spark_constrained_laplace_releases_the_grid_law(spark):
    # true values 0, 10, 20, 30 (10 and 20 end the gap and are allowed)
    df = spark.range(800).selectExpr("id", "cast((id % 4) * 10 as double) as v")
    spec = {"v": {"mechanism": "constrained_laplace", "lower": 0, "upper": 40,
                  "forbidden": [(10, 20)], "sensitivity": 1, "epsilon": 1}}
    rows = sorted(bndp.spark.privatize(df, spec).collect(), key=lambda r: r["id"])
    x = np.array([r["v"] for r in rows])
    m = bndp.ConstrainedLaplace(1.0, sensitivity=1.0, forbidden=[(10.0, 20.0)], lower=0.0,
                                upper=40.0)
    assert ((x >= 0) & (x <= 40) & ((x <= 10) | (x >= 20))).all()
    assert (np.ldexp(x, -m.exact_plan.exponent) % 1 == 0).all()
    true = np.arange(800) % 4 * 10.0
    for t in (0.0, 10.0, 20.0, 30.0):
        sel = x[true == t]
        assert abs(sel.mean() - m.mean(t)) < 5 * np.sqrt(m.variance(t) / sel.size)


# ------------------------------------------------------------------------------------------
# the release spec (one mapInArrow pass), decimal columns, NaN vs null
# ------------------------------------------------------------------------------------------
def test_spark_decimal_column_is_released(spark):
    df = spark.createDataFrame([(i, f"{(i % 100) + 0.25:.2f}") for i in range(200)],
                               "id long, s string").selectExpr(
        "id", "cast(s as decimal(10,2)) as price")
    out = bndp.spark.privatize(df, "price", mechanism="laplace", epsilon=1.0,
                               sensitivity=1.0, lower=0.0, upper=120.0)
    assert dict((f.name, f.dataType.simpleString()) for f in out.schema.fields)["price"] == "double"
    rows = sorted(out.collect(), key=lambda r: r["id"])  # the action used to fail here
    vals = np.array([r["price"] for r in rows])
    assert len(vals) == 200 and ((vals >= 0) & (vals <= 120)).all()
    # the decimals were read as their values: grid points of the mechanism, centred on
    # the true prices (z-score of the total against the law's mean and variance)
    mech = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    true = np.arange(200) % 100 + 0.25
    grid_counts(mech.exact_plan, vals)
    z = (vals - mech.mean(true)).sum() / np.sqrt(mech.variance(true).sum())
    assert abs(z) < 5
    # noise not repeated: rows i and i + 100 (the same price) agree only by chance
    laws = [(mech.exact_plan, t) for t in true]
    assert_independent_streams(vals[:100], vals[100:], laws[:100], laws[100:])


def test_spark_nan_and_null_stay_distinct(spark):
    df = spark.createDataFrame([(1, 5.0), (2, None), (3, float("nan")), (4, 7.0)],
                               "id long, a double").repartition(1)
    out = bndp.spark.privatize(df, "a", mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                               lower=0.0, upper=10.0, nulls="keep")
    got = {r["id"]: r["a"] for r in out.collect()}
    assert got[2] is None  # null stays null
    assert got[3] is not None and np.isnan(got[3])  # NaN stays NaN (it used to become null)
    assert 0 <= got[1] <= 10 and 0 <= got[4] <= 10


def test_spark_docstring_names_the_secure_stream():
    doc = bndp.spark.privatize.__doc__
    assert "PCG64" not in doc and "secure" in doc


def test_spark_spec_per_column_epsilon_per_row_bounds_8_partitions(spark):
    n, parts = 16000, 8
    df = spark.range(0, n, numPartitions=parts).selectExpr(
        "id", "cast(60 as int) as age", "cast(300000 as double) as income",
        "cast((id % 5) * 10 as double) as lo", "cast((id % 5) * 10 + 5 as double) as hi",
        "cast((id % 5) * 10 + 2 as double) as score", "concat('n', id) as name")
    spec = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25},
            "income": {"mechanism": "gaussian", "lower": 0, "upper": 500000,
                       "sensitivity": 1000, "epsilon": 0.5},
            "score": {"lower": "lo", "upper": "hi", "sensitivity": 1, "epsilon": 0.25}}
    b = bndp.Budget(epsilon=1.5)
    out = bndp.spark.privatize(df, spec, budget=b)
    assert b.spent == (1.0, 0.0) and len(b.log) == 1
    assert [f.name for f in out.schema.fields] == ["id", "age", "income", "lo", "hi", "score",
                                                   "name"]
    pdf = collect(out).sort_values("id")
    assert pdf["pid"].nunique() == parts and len(pdf) == n
    np.testing.assert_array_equal(pdf["id"].to_numpy(), np.arange(n))
    assert (pdf["name"] == "n" + pdf["id"].astype(str)).all()
    lo, hi = (np.arange(n) % 5) * 10.0, (np.arange(n) % 5) * 10.0 + 5
    np.testing.assert_array_equal(pdf["lo"].to_numpy(), lo)
    age, inc, score = (pdf[c].to_numpy() for c in ("age", "income", "score"))
    assert ((age >= 0) & (age <= 120)).all()
    assert ((inc >= 0) & (inc <= 500000)).all() and abs(inc.mean() - 300000) < 5000
    assert ((score >= lo) & (score <= hi)).all()
    # per-column epsilon: age's variance is its own mechanism's (eps = 0.25)
    lap = bndp.BoundedLaplace(0.25, sensitivity=1.0, lower=0.0, upper=120.0, integer=True)
    v = lap.variance(60.0)  # the integer law's (the default for an int column)
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
    band = np.arange(n) % 5
    for k, plan in bands.items():
        grid_counts(plan, score[band == k])
    laws = {"age": [(age_plan, 60.0)] * n, "income": [(inc_plan, 3e5)] * n,
            "score": [(bands[k], 10.0 * k + 2) for k in band]}
    pid = pdf["pid"].to_numpy()
    part = [np.flatnonzero(pid == p) for p in np.unique(pid)]
    assert all(len(r) == n // parts for r in part)
    for c in ("age", "income", "score"):
        x = pdf[c].to_numpy()
        for p1 in range(parts):
            for p2 in range(p1 + 1, parts):
                ra, rb = part[p1], part[p2]
                assert_independent_streams(x[ra], x[rb], [laws[c][i] for i in ra],
                                           [laws[c][i] for i in rb])
    # a budget that cannot pay refuses before the plan is built, spending nothing
    with pytest.raises(bndp.BudgetError):
        bndp.spark.privatize(df, spec, budget=b)
    assert b.spent == (1.0, 0.0)
    with pytest.raises(ValueError, match=r"spec column 'score', bound column: column 'nope'"):
        bndp.spark.privatize(df, {"score": dict(spec["score"], upper="nope")})
    with pytest.raises(TypeError, match="not both"):
        bndp.spark.privatize(df, spec, epsilon=1.0)


# a release that fails on the driver spends nothing (issue 21, item 7)
@pytest.mark.parametrize("where", ["planning", "spark plan"])
def test_spark_failure_on_the_driver_spends_nothing(spark, monkeypatch, where):
    import bndp.integrations.spark as bspark
    from bndp.mechanisms import BoundedLaplace

    df = spark.createDataFrame([(1, 23.0), (2, 35.0)], ["id", "age"])
    spec = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.5}}

    def boom(*a, **k):
        raise ValueError("planted failure")

    if where == "planning":  # the mechanism is built (and its grid law planned) here
        monkeypatch.setattr(BoundedLaplace, "__init__", boom)
    else:
        monkeypatch.setattr(bspark, "partition_releaser", boom)
    b = bndp.Budget(epsilon=0.5)
    with pytest.raises(ValueError, match="planted"):
        bndp.spark.privatize(df, spec, budget=b)
    assert b.spent == (0.0, 0.0) and b.log == []
    monkeypatch.undo()
    out = bndp.spark.privatize(df, spec, budget=b)
    assert b.spent == (0.5, 0.0) and [r.label for r in b.log] == ["spark privatize(age)"]
    assert len(out.collect()) == 2


# released once -----------------------------------------------------------------------------
def test_spark_result_is_released_once(spark, tmp_path):
    df = spark.range(0, 400, numPartitions=4).selectExpr("id", "cast(60 as double) as age")
    b = bndp.Budget.create(str(tmp_path / "l.db"), "spark", epsilon=1.0)
    out = bndp.spark.privatize(df, "age", mechanism="laplace", epsilon=0.5, sensitivity=1.0,
                               lower=0.0, upper=120.0, budget=b, release_id="r1")
    first = out.orderBy("id").toPandas()
    again = out.orderBy("id").toPandas()
    np.testing.assert_array_equal(first["age"].to_numpy(), again["age"].to_numpy())
    assert out.count() == 400 and [e.release_id for e in b.history] == ["r1"]
    with pytest.raises(bndp.ReleaseRecorded):
        bndp.spark.privatize(df, "age", mechanism="laplace", epsilon=0.5, sensitivity=1.0,
                             lower=0.0, upper=120.0, budget=b, release_id="r1")
    # a data error surfaces while the result is drawn, before the charge
    bad = spark.createDataFrame([(1, 5.0), (2, None)], "id long, age double")
    with pytest.raises(Exception, match="missing value"):
        bndp.spark.privatize(bad, "age", mechanism="laplace", epsilon=0.5, sensitivity=1.0,
                             lower=0.0, upper=120.0, budget=b)
    assert len(b.history) == 1 and b.spent == (0.5, 0.0)


def test_spark_release_is_recorded_unseeded(spark, tmp_path, caplog):
    """No seed reaches Spark (every partition keys its own generator from the OS): the
    release is recorded with seeded false in the ledger and the log record, and a seed
    given to bndp.privatize for a Spark frame is refused, opt-in or not."""
    import logging

    import pandas as pd

    df = spark.createDataFrame(pd.DataFrame({"id": [1, 2, 3], "age": [30.0, 45.0, 61.0]}))
    b = bndp.Budget.create(str(tmp_path / "l.db"), "spark", epsilon=5.0)
    caplog.set_level(logging.INFO, logger="bndp")
    out = bndp.spark.privatize(df, {"age": {"lower": 0, "upper": 120, "sensitivity": 1,
                                            "epsilon": 0.5}}, budget=b)
    assert out.count() == 3
    assert [e.seeded for e in b.history] == [False]
    assert [c["seeded"] for c in b.history[0].columns] == [False]
    logged = [r.bndp_release for r in caplog.records if hasattr(r, "bndp_release")]
    assert [r["seeded"] for r in logged] == [False]
    with pytest.raises(ValueError, match="rng"):
        bndp.privatize(df, {"age": {"lower": 0, "upper": 120, "sensitivity": 1,
                                    "epsilon": 0.5}}, budget=b, rng=1, allow_seeded=True)
    assert len(b.history) == 1


def test_spark_privatize_warns_nothing_about_pandas(spark):
    """mapInArrow builds a pandas UDF, where PySpark warns about pandas >= 3 on every call;
    bndp's Arrow pass uses no pandas, and says nothing."""
    import warnings
    df = spark.createDataFrame([(1, 30.0), (2, 45.0)], "id long, age double")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = bndp.spark.privatize(df, "age", mechanism="laplace", epsilon=1.0,
                                   sensitivity=1.0, lower=0.0, upper=120.0)
    assert not [w for w in caught if "pandas" in str(w.message)], [str(w.message) for w in caught]
    assert out.count() == 2


def test_decimal_and_wide_long_columns_reach_the_partitions_exactly(spark):
    """Decimal and bigint columns arrive in the partitions as Arrow decimals and int64 (not
    doubles): each value is rounded onto the grid from its exact value there
    (tests/test_wide_values.py checks the law of the partition function itself)."""
    from decimal import Decimal
    rows = [(i, Decimal("63.531249999999995") + i, 2 ** 60 + i) for i in range(8)]
    df = spark.createDataFrame(rows, "id long, age decimal(20,15), big long")
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types["age"].startswith("decimal") and types["big"] == "bigint"
    out = bndp.spark.privatize(df, {"age": dict(mechanism="laplace", epsilon=1.0,
                                                sensitivity=1.0, lower=63.5, upper=183.5),
                                    "big": dict(mechanism="laplace", epsilon=0.05,
                                                sensitivity=4096.0, lower=float(2 ** 60),
                                                upper=float(2 ** 60 + 2 ** 22))})
    res = out.orderBy("id").toPandas()
    assert ((res["age"] >= 63.5) & (res["age"] <= 183.5)).all()
    assert ((res["big"] >= 2.0 ** 60) & (res["big"] <= 2.0 ** 60 + 2 ** 22)).all()
    assert {f.name: f.dataType.simpleString() for f in out.schema.fields}["age"] == "double"


def test_spark_column_names_with_a_dot_or_a_backtick(spark):
    """A column named ``a.b`` (released, or holding per-row bounds) is released: PySpark's
    mapInArrow resolved it as the field ``b`` of a struct ``a`` (nothing was charged)."""
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    schema = StructType([StructField("id", LongType()), StructField("a.b", DoubleType()),
                         StructField("c`d", DoubleType()), StructField("lo.w", DoubleType()),
                         StructField("x.y", StringType())])
    df = spark.createDataFrame([(i, 10.0 + i, 5.0, -1.0 - i, f"s{i}") for i in range(6)],
                               schema)
    spec = {"a.b": {"lower": 0, "upper": 100, "sensitivity": 1, "epsilon": 0.5},
            "c`d": {"lower": "lo.w", "upper": 50, "sensitivity": 1, "epsilon": 0.5}}
    b = bndp.Budget(epsilon=1.0)
    out = bndp.spark.privatize(df, spec, budget=b)
    assert b.spent == (1.0, 0.0)
    assert out.columns == ["id", "a.b", "c`d", "lo.w", "x.y"]
    assert [f.dataType.simpleString() for f in out.schema.fields] == \
        ["bigint", "double", "double", "double", "string"]
    res = out.toPandas().sort_values("id")
    assert res["a.b"].between(0, 100).all()
    assert (res["c`d"] >= res["lo.w"]).all() and (res["c`d"] <= 50).all()
    # the columns not released are untouched
    assert res["lo.w"].tolist() == [-1.0 - i for i in range(6)]
    assert res["x.y"].tolist() == [f"s{i}" for i in range(6)]


def test_spark_empty_frame_refused_before_the_charge(spark):
    spec = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.5}}
    people = spark.createDataFrame([(1, 30.0), (2, 41.0)], "id long, age double")
    b = bndp.Budget(epsilon=5.0)
    for empty in (spark.createDataFrame([], "id long, age double"),
                  people.where("age > 200")):          # every row filtered out
        for call in (bndp.spark.privatize, bndp.privatize):
            with pytest.raises(ValueError, match="Spark DataFrame has no rows; nothing was "
                                                 "charged"):
                call(empty, spec, budget=b)
            assert b.spent == (0.0, 0.0) and b.log == []
    out = bndp.spark.privatize(people.where("age > 200"), spec, budget=b, allow_empty=True)
    assert out.count() == 0 and b.spent == (0.5, 0.0)
    assert bndp.spark.privatize(people, spec, budget=b).count() == 2 and b.spent == (1.0, 0.0)
