"""asv benchmarks for the ETL paths: workers=, pandas/Arrow columns, and ``bndp privatize``."""

import contextlib
import io
import os
import shutil
import tempfile

import numpy as np

import bndp


class TimeWorkers:
    params = ([1, 2], ["laplace", "gaussian"])
    param_names = ["workers", "mechanism"]

    def setup(self, workers, mechanism):
        self.mech = (bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0,
                                         upper=120.0) if mechanism == "laplace"
                     else bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=120.0))
        self.rng = np.random.default_rng(0)
        self.x = np.random.default_rng(1).uniform(0, 120, 2_000_000)

    def time_scalar_value_size(self, workers, mechanism):
        self.mech.sample(60.0, size=2_000_000, rng=self.rng, workers=workers)

    def time_array_value(self, workers, mechanism):
        self.mech.sample(self.x, rng=self.rng, workers=workers)


class TimeColumns:
    def setup(self):
        import pandas as pd
        import pyarrow as pa

        x = np.random.default_rng(0).uniform(0, 120, 1_000_000)
        self.np = x
        self.series = pd.Series(x, name="age")
        self.series_na = self.series.copy()
        self.series_na.iloc[::10] = np.nan
        self.arrow = pa.chunked_array([x[:500_000], x[500_000:]])
        self.mech = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0)
        self.rng = np.random.default_rng(0)

    def time_numpy(self):
        self.mech.sample(self.np, rng=self.rng)

    def time_series(self):
        self.mech.sample(self.series, rng=self.rng)

    def time_series_nulls_keep(self):
        self.mech.sample(self.series_na, rng=self.rng, nulls="keep")

    def time_chunked_array(self):
        self.mech.sample(self.arrow, rng=self.rng)


class TimeCLI:
    rows = 200_000
    timeout = 300

    def setup(self):
        import pyarrow as pa
        import pyarrow.csv as pcsv
        import pyarrow.parquet as pq

        self.d = tempfile.mkdtemp()
        rng = np.random.default_rng(0)
        t = pa.table({"id": np.arange(self.rows), "age": rng.integers(0, 121, self.rows),
                      "city": pa.array(np.array(["a", "b"])[rng.integers(0, 2, self.rows)])})
        self.csv = os.path.join(self.d, "in.csv")
        self.pq = os.path.join(self.d, "in.parquet")
        pcsv.write_csv(t, self.csv)
        pq.write_table(t, self.pq)

    def teardown(self):
        shutil.rmtree(self.d, ignore_errors=True)

    def _run(self, src, dst):
        from bndp import cli

        with contextlib.redirect_stdout(io.StringIO()):
            cli.main(["privatize", src, "-o", dst, "--column", "age:0:120", "--epsilon", "1",
                      "--sensitivity", "1", "--progress", "never"])

    def time_privatize_csv(self):
        self._run(self.csv, os.path.join(self.d, "out.csv"))

    def time_privatize_parquet(self):
        self._run(self.pq, os.path.join(self.d, "out.parquet"))


class TimeDask:
    """``bndp.dask.privatize`` computed with the threaded scheduler (4 partitions)."""

    rows = 200_000

    def setup(self):
        try:
            import dask.dataframe as dd
            import pandas as pd
        except ImportError:
            raise NotImplementedError("needs dask[dataframe]")
        import bndp.dask

        rng = np.random.default_rng(0)
        pdf = pd.DataFrame({"id": np.arange(self.rows), "age": rng.integers(0, 121, self.rows)})
        self.ddf = dd.from_pandas(pdf, npartitions=4)
        self.privatize = bndp.dask.privatize

    def time_privatize_threads(self):
        self.privatize(self.ddf, "age", mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                       lower=0.0, upper=120.0).compute(scheduler="threads")


class TimeSpark:
    """``bndp.spark.privatize`` on a local[2] session, written to Spark's ``noop`` sink.
    Skipped without pyspark or a Java runtime."""

    rows = 200_000
    timeout = 300
    number = 1
    repeat = (1, 3, 20.0)

    def setup(self):
        import os
        import sys

        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            raise NotImplementedError("Spark needs a Java runtime")
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise NotImplementedError("needs pyspark")
        import warnings

        import bndp.spark

        # the Python workers must import the same bndp as this process
        root = os.path.dirname(os.path.dirname(os.path.abspath(bndp.__file__)))
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYTHONPATH"] = root + os.pathsep + os.environ.get("PYTHONPATH", "")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.spark = (SparkSession.builder.master("local[2]").appName("bndp-asv")
                          .config("spark.ui.enabled", "false").getOrCreate())
        self.spark.sparkContext.setLogLevel("ERROR")
        self.df = self.spark.range(0, self.rows, numPartitions=4).selectExpr(
            "id", "cast(rand(1) * 120 as int) as age").cache()
        self.df.count()
        self.privatize = bndp.spark.privatize

    def teardown(self):
        self.spark.stop()

    def time_privatize_noop_sink(self):
        out = self.privatize(self.df, "age", mechanism="laplace", epsilon=1.0, sensitivity=1.0,
                             lower=0.0, upper=120.0)
        out.write.format("noop").mode("overwrite").save()
