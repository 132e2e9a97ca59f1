"""bndp.spark.privatize on Spark Connect (a local Connect server, started by pyspark)."""

import os
import shutil
import sys
import warnings

import numpy as np
import pytest

import bndp

from ._helpers import assert_independent_streams, grid_counts

pytest.importorskip("pyspark")
pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
pytest.importorskip("grpc")  # pyspark's Connect client: pip install 'pyspark[connect]'
pytest.importorskip("google.protobuf")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("Spark needs a Java runtime (17+)", allow_module_level=True)

from .conftest import bndp_import_root  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(scope="module")
def connect():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = bndp_import_root() + os.pathsep + os.environ.get("PYTHONPATH", "")
    from pyspark.sql import SparkSession

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            s = (SparkSession.builder.remote("local[2]")
                 .config("spark.ui.enabled", "false").getOrCreate())
        except Exception as exc:  # pragma: no cover - no Connect server in this pyspark
            pytest.skip(f"cannot start a local Spark Connect server: {exc}")
    yield s
    s.stop()


def test_spark_connect_spec_release(connect):
    n = 2000
    df = connect.range(0, n, numPartitions=4).selectExpr(
        "id", "cast(60 as int) as age", "cast(id % 7 as decimal(10,2)) as price",
        "cast(id % 3 as double) as lo", "cast(id % 3 + 5 as double) as hi")
    assert type(df).__module__.startswith("pyspark.sql.connect")
    spec = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.5},
            "price": {"lower": "lo", "upper": "hi", "sensitivity": 1, "epsilon": 0.5}}
    b = bndp.Budget(epsilon=1.0)
    out = bndp.privatize(df, spec, budget=b)  # handed to bndp.spark.privatize
    assert b.remaining.epsilon == 0.0
    # age, an int column with integral bounds and sensitivity: the integer law, its type
    assert out.schema.simpleString() == "struct<id:bigint,age:int,price:double,lo:double,hi:double>"
    pdf = out.toPandas().sort_values("id")
    np.testing.assert_array_equal(pdf["id"].to_numpy(), np.arange(n))
    assert pdf["age"].between(0, 120).all()
    assert ((pdf["price"] >= pdf["lo"]) & (pdf["price"] <= pdf["hi"])).all()
    # grid points of each column's law (price: of its row's (lo, hi) pair)
    age, price = pdf["age"].to_numpy(), pdf["price"].to_numpy()
    age_plan = bndp.BoundedLaplace(0.5, sensitivity=1.0, lower=0.0, upper=120.0,
                                   integer=True).exact_plan
    bands = {k: bndp.BoundedLaplace(0.5, sensitivity=1.0, lower=k,
                                    upper=k + 5.0).exact_plan for k in range(3)}
    grid_counts(age_plan, age)
    i = np.arange(n)
    for k, plan in bands.items():
        grid_counts(plan, price[i % 3 == k])
    # the grid law repeats values; what must not repeat is a stream: the 4 partitions'
    # ordered ages (all 60) agree only by chance
    m = n // 4
    laws = [(age_plan, 60.0)] * m
    part = [slice(p * m, (p + 1) * m) for p in range(4)]
    for p1 in range(4):
        for p2 in range(p1 + 1, 4):
            assert_independent_streams(age[part[p1]], age[part[p2]], laws, laws)
    # released once: a second action reads the same values, never new noise
    again = out.toPandas().sort_values("id")
    np.testing.assert_array_equal(again["age"].to_numpy(), age)
    np.testing.assert_array_equal(again["price"].to_numpy(), price)
