"""Side-by-side throughput of bndp's ETL paths against plain passes that only copy the column.

    PYTHONPATH=src python benchmarks/compare_etl.py [--rows 2000000] [--no-spark]

Prints rows/s for
  * ``bndp privatize`` on CSV and Parquet (in-process, so interpreter start-up is excluded),
    against a plain pandas chunked pass that reads, copies the column and writes, and
    against the same Arrow streaming pipeline with the noise step removed;
  * ``bndp.spark.privatize`` against a pandas UDF that only copies the column (same Arrow
    transport) and a native Spark cast, all written to Spark's ``noop`` sink;
  * ``workers=`` on 10^7 draws (1 vs 2 threads).
The ratio (time with privacy / time of the copy) is the cost of privacy. The load average
is printed: on a shared machine the numbers move.
"""


import argparse
import os
import sys
import tempfile
import time

import numpy as np


def best(f, k=3):
    ts = []
    for _ in range(k):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


def cpu_per_wall(f):
    """(best wall time, CPU seconds per wall second of that run): ~2 means two busy threads."""
    res = []
    for _ in range(5):
        c0, t0 = time.process_time(), time.perf_counter()
        f()
        res.append((time.perf_counter() - t0, time.process_time() - c0))
    wall, cpu = min(res)
    return wall, cpu / wall


def load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def make_files(d, n):
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    t = pa.table({
        "id": np.arange(n),
        "age": rng.integers(0, 121, n),
        "income": np.round(rng.uniform(0, 1e5, n), 2),
        "city": pa.array(np.array(["Paris", "Berlin", "Rome"])[rng.integers(0, 3, n)]),
    })
    csv_path = os.path.join(d, "in.csv")
    pcsv.write_csv(t, csv_path, write_options=pcsv.WriteOptions(quoting_style="none"))
    pq_path = os.path.join(d, "in.parquet")
    pq.write_table(t, pq_path, row_group_size=1 << 17)
    return csv_path, pq_path


def pandas_copy_csv(src, dst, chunk=1 << 17):
    import pandas as pd

    first = True
    for df in pd.read_csv(src, chunksize=chunk):
        df["age"] = df["age"].astype(np.float64).copy()
        df.to_csv(dst, mode="w" if first else "a", header=first, index=False)
        first = False


def pandas_copy_parquet(src, dst, chunk=1 << 17):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(src)
    writer = None
    for b in pf.iter_batches(batch_size=chunk):
        df = b.to_pandas()
        df["age"] = df["age"].astype(np.float64).copy()
        t = pa.Table.from_pandas(df, preserve_index=False)
        if writer is None:
            writer = pq.ParquetWriter(dst, t.schema)
        writer.write_table(t)
    writer.close()


def cli_run(src, dst, extra=()):
    from bndp import cli

    code = cli.main(["privatize", src, "-o", dst, "--column", "age:0:120", "--epsilon", "1",
                     "--sensitivity", "1", "--progress", "never", *extra])
    assert code == 0


def bench_files(n, d):
    import contextlib
    import io

    from bndp import cli

    csv_path, pq_path = make_files(d, n)
    out = os.path.join(d, "out")
    rows = []
    with contextlib.redirect_stdout(io.StringIO()):
        # the same streaming pipeline with the noise replaced by a copy
        real = cli._release_block

        def copy_only(spec, vals, missing, row0, path, args, gen, cells=None):
            spec.rows += vals.size
            return vals.copy()

        for fmt, src in (("csv", csv_path), ("parquet", pq_path)):
            dst = out + "." + fmt
            t_bndp = best(lambda: cli_run(src, dst))
            cli._release_block = copy_only
            try:
                t_arrow = best(lambda: cli_run(src, dst))
            finally:
                cli._release_block = real
            f = pandas_copy_csv if fmt == "csv" else pandas_copy_parquet
            t_pd = best(lambda: f(src, dst))
            rows.append((fmt, t_bndp, t_arrow, t_pd))
    print(f"\n== bndp privatize, {n:,} rows ({load()})")
    print(f"{'format':<9}{'bndp rows/s':>14}{'arrow copy rows/s':>20}{'pandas copy rows/s':>21}"
          f"{'bndp/arrow':>12}{'bndp/pandas':>13}")
    for fmt, a, b, c in rows:
        print(f"{fmt:<9}{n / a:14,.0f}{n / b:20,.0f}{n / c:21,.0f}{a / b:12.2f}{a / c:13.2f}")


def bench_spark(n):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import warnings

    warnings.simplefilter("ignore")
    from typing import Iterator

    import pandas as pd
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    import bndp.spark

    spark = (SparkSession.builder.master("local[2]").appName("bndp-bench")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.range(0, n, numPartitions=4).selectExpr(
        "id", "cast(rand(1) * 120 as int) as age", "concat('c', id % 3) as city").cache()
    df.count()

    @pandas_udf("double")
    def copy_udf(it: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for s in it:
            yield s.astype("float64").copy()

    def run(d):
        d.write.format("noop").mode("overwrite").save()

    t_bndp = best(lambda: run(bndp.spark.privatize(df, "age", mechanism="laplace", epsilon=1,
                                                   sensitivity=1, lower=0, upper=120)))
    t_udf = best(lambda: run(df.withColumn("age", copy_udf(F.col("age")))))
    t_native = best(lambda: run(df.withColumn("age", F.col("age").cast("double"))))
    spark.stop()
    print(f"\n== Spark local[2], {n:,} rows, noop sink ({load()})")
    print(f"{'path':<28}{'rows/s':>14}{'time/bndp':>11}")
    for name, t in (("bndp.spark.privatize", t_bndp), ("pandas UDF copy", t_udf),
                    ("native cast (no Python)", t_native)):
        print(f"{name:<28}{n / t:14,.0f}{t / t_bndp:11.2f}")
    print(f"cost of privacy: bndp / pandas-UDF copy = {t_bndp / t_udf:.2f}, "
          f"bndp / native = {t_bndp / t_native:.2f}")


def bench_workers(n=10**7):
    import bndp

    print(f"\n== workers=, {n:,} draws, best of 5 ({load()})")
    print(f"{'path':<36}{'1 thread s':>12}{'2 threads s':>13}{'speed-up':>10}"
          f"{'cpu/wall (2)':>14}")
    lap = bndp.BoundedLaplace(1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    gau = bndp.BoundedGaussian(1.0, sensitivity=1.0, lower=0.0, upper=120.0)
    x = np.random.default_rng(0).uniform(0, 120, n)
    g = np.random.default_rng(1)
    cases = [
        ("BoundedLaplace scalar value, size", lambda w: lap.sample(60.0, size=n, rng=g, workers=w)),
        ("BoundedGaussian scalar value, size", lambda w: gau.sample(60.0, size=n, rng=g, workers=w)),
        ("BoundedLaplace array value", lambda w: lap.sample(x, rng=g, workers=w)),
        ("BoundedGaussian array value", lambda w: gau.sample(x, rng=g, workers=w)),
    ]
    for name, f in cases:
        t1 = best(lambda: f(1), 5)
        t2, util = cpu_per_wall(lambda: f(2))
        print(f"{name:<36}{t1:12.3f}{t2:13.3f}{t1 / t2:10.2f}{util:14.2f}")
    print(f"after: {load()}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--spark-rows", type=int, default=2_000_000)
    p.add_argument("--no-spark", action="store_true")
    p.add_argument("--only", choices=("files", "spark", "workers"))
    a = p.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; {load()}")
    if a.only in (None, "workers"):
        bench_workers()
    if a.only in (None, "files"):
        with tempfile.TemporaryDirectory() as d:
            bench_files(a.rows, d)
    if a.only in (None, "spark") and not a.no_spark:
        bench_spark(a.spark_rows)


if __name__ == "__main__":
    main()
