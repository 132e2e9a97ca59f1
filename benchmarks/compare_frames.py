"""Side by side: ``bndp.privatize`` on a whole frame against the same release done column by
column with ``bndp.sample``; the Spark one-pass UDF against one pass per column.

    PYTHONPATH=src python benchmarks/compare_frames.py [--rows 10000000] [--spark-rows 2000000]
                                                       [--no-spark] [--repeat 3]

The frame has 3 released columns (age: bounded Laplace on [0, 120]; income: bounded
Gaussian on [0, 500000]; score: bounded Laplace with per-row bounds from two columns) and 3
untouched ones. Both sides use the secure default generator (``rng=None``) and the default
mode of the mechanisms. Spark writes to its ``noop`` sink (the whole plan runs, nothing is
stored). Best of ``--repeat`` runs; the load average is printed (on a shared machine the
numbers move).

This is a script, not an asv suite: nothing runs at import.
"""

import argparse
import os
import time

import numpy as np


def best(f, k):
    ts = []
    for _ in range(k):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


SPEC = {
    "age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25},
    "income": {"mechanism": "gaussian", "lower": 0, "upper": 500000, "sensitivity": 1000,
               "epsilon": 0.25},
    "score": {"lower": "score_lo", "upper": "score_hi", "sensitivity": 1, "epsilon": 0.25},
}


def make_data(n):
    rng = np.random.default_rng(0)
    lo = rng.integers(0, 50, n).astype(np.float64)
    return {"id": np.arange(n), "age": rng.integers(0, 121, n),
            "income": rng.uniform(0, 500000, n), "score": lo + rng.uniform(0, 10, n),
            "score_lo": lo, "score_hi": lo + 10.0}


def by_column_pandas(df):
    import bndp

    out = {}
    for c, s in SPEC.items():
        kw = {k: v for k, v in s.items() if k not in ("lower", "upper")}
        kw.setdefault("mechanism", "laplace")
        lo = df[s["lower"]].to_numpy() if isinstance(s["lower"], str) else s["lower"]
        hi = df[s["upper"]].to_numpy() if isinstance(s["upper"], str) else s["upper"]
        out[c] = bndp.sample(df[c].to_numpy(dtype=np.float64), lower=lo, upper=hi, **kw)
    return df.assign(**out)


def by_column_polars(df):
    import polars as pl

    import bndp

    new = []
    for c, s in SPEC.items():
        kw = {k: v for k, v in s.items() if k not in ("lower", "upper")}
        kw.setdefault("mechanism", "laplace")
        lo = df[s["lower"]].to_numpy() if isinstance(s["lower"], str) else s["lower"]
        hi = df[s["upper"]].to_numpy() if isinstance(s["upper"], str) else s["upper"]
        new.append(pl.Series(c, bndp.sample(df[c].to_numpy().astype(np.float64), lower=lo,
                                            upper=hi, **kw)))
    return df.with_columns(new)


def frames(n, k):
    import pandas as pd
    import polars as pl

    import bndp

    d = make_data(n)
    rows = []
    for name, frame, by_col in (("pandas", pd.DataFrame(d), by_column_pandas),
                                ("polars", pl.DataFrame(d), by_column_polars)):
        t_priv = best(lambda: bndp.privatize(frame, SPEC), k)
        t_col = best(lambda: by_col(frame), k)
        rows.append((name, t_priv, t_col))
    print(f"\n{n:,} rows x 3 released columns (+3 untouched), best of {k}")
    print(f"{'frame':<8}{'bndp.privatize s':>18}{'by column (bndp.sample) s':>28}{'ratio':>8}")
    for name, a, b in rows:
        print(f"{name:<8}{a:18.3f}{b:28.3f}{a / b:8.2f}")


def spark(n, k):
    import sys
    import warnings

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    os.environ["PYTHONPATH"] = src + os.pathsep + os.environ.get("PYTHONPATH", "")
    from pyspark.sql import SparkSession

    import bndp

    warnings.simplefilter("ignore")
    s = (SparkSession.builder.master("local[2]").appName("bndp-bench")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.driver.memory", "2g")
         .getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    df = s.range(0, n, numPartitions=8).selectExpr(
        "id", "cast(id % 121 as int) as age", "cast(id % 500000 as double) as income",
        "cast(id % 50 as double) as score_lo", "cast(id % 50 + 10 as double) as score_hi",
        "cast(id % 50 + 5 as double) as score").cache()
    df.count()

    def one_pass():
        bndp.spark.privatize(df, SPEC).write.format("noop").mode("overwrite").save()

    def per_column():
        out = df
        for c, spec in SPEC.items():
            out = bndp.spark.privatize(out, {c: spec})
        out.write.format("noop").mode("overwrite").save()

    def copy_only():  # the plan without any release: what reading and writing costs
        df.write.format("noop").mode("overwrite").save()

    one_pass()  # warm the Python workers
    t1, t3, t0 = best(one_pass, k), best(per_column, k), best(copy_only, k)
    print(f"\nSpark local[2], {n:,} rows, 8 partitions, 3 released columns, best of {k}")
    print(f"{'one mapInArrow pass s':>22}{'one pass per column s':>24}{'ratio':>8}"
          f"{'no release s':>14}")
    print(f"{t1:22.3f}{t3:24.3f}{t1 / t3:8.2f}{t0:14.3f}")
    s.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--spark-rows", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-spark", action="store_true")
    a = ap.parse_args()
    print(f"load average {os.getloadavg()}")
    frames(a.rows, a.repeat)
    if not a.no_spark:
        spark(a.spark_rows, a.repeat)


if __name__ == "__main__":
    main()
