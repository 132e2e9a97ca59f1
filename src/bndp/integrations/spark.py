"""Privatise columns of a Spark DataFrame with bndp (``bndp.spark``).

The mechanism is calibrated once, on the driver; the calibrated, immutable mechanism object
is shipped to the executors inside an Arrow-batched pandas UDF. Each task (one partition)
creates its own generator seeded with 256 bits from the executor's OS CSPRNG, so no two
partitions, and no two forked Python workers, ever share a stream.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

import pandas as pd

from ._engine import build_mechanism

__all__ = ["privatize"]


def partition_sampler(mech: Any, on_outside: str, nulls: str):
    """The per-partition function: one fresh OS-seeded stream per call (per partition)."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        from .._random import default_rng

        gen = default_rng(None)  # 256 bits of executor-side OS entropy, per partition
        for s in batches:
            yield mech.sample(s, rng=gen, on_outside=on_outside, nulls=nulls)

    return run


def privatize(df: Any, column: str | Sequence[str], *, mechanism: str, epsilon: float,
              sensitivity: float, lower: float, upper: float, delta: float = 0.0,
              on_outside: str = "clip", nulls: str = "raise") -> Any:
    r"""Return ``df`` with ``column`` (or each of several columns) privatised.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
    column : str or sequence of str
        Numeric column(s) to release. Each becomes ``double`` (the noise is continuous);
        every other column, the column order and the row order within partitions are kept.
    mechanism : {"laplace", "gaussian"}
    epsilon, sensitivity, lower, upper, delta : float
        As for :func:`bndp.sample` (scalar bounds; the same mechanism for every listed
        column, each column being a separate release).
    on_outside : {"clip", "raise"}
        True values outside ``[lower, upper]``: clipped (default) or refused.
    nulls : {"raise", "keep"}
        Null cells: an error (default) or left null.

    Returns
    -------
    pyspark.sql.DataFrame
        Lazy, like every Spark transformation. The noise is drawn when an action runs, and
        **drawn again if the plan is evaluated again** (the UDF is marked nondeterministic
        so Spark does not duplicate it within one plan, but two actions on an uncached
        result give two independent releases, which costs privacy twice). Write the result
        out, or ``persist()`` it, before using it more than once.

    Notes
    -----
    Calibration (:func:`bndp.calibrate.bounded_laplace_scale` or
    :func:`~bndp.calibrate.bounded_gaussian_sigma`) runs once here, on the driver. The UDF
    is an iterator-of-Series pandas UDF (Arrow batches): only the privatised column travels
    to Python. Each partition keys its own secure stream (see :func:`bndp.default_rng`) from
    the executor's OS CSPRNG.

    Examples
    --------
    With ``spark`` a running :class:`pyspark.sql.SparkSession`:

    >>> import bndp.spark
    >>> sdf = spark.createDataFrame([(1, 23), (2, 35), (3, 61), (4, 118)], ["id", "age"])
    >>> out = bndp.spark.privatize(sdf, "age", mechanism="laplace", epsilon=1.0,
    ...                            sensitivity=1.0, lower=0, upper=120)
    >>> out.dtypes
    [('id', 'bigint'), ('age', 'double')]
    >>> rows = out.orderBy("id").collect()
    >>> [r.id for r in rows], all(0 <= r.age <= 120 for r in rows)
    ([1, 2, 3, 4], True)
    """
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf
    from pyspark.sql.types import DoubleType, NumericType

    from .._validation import check_on_outside
    from ._columns import check_nulls

    check_on_outside(on_outside)
    check_nulls(nulls)
    cols = [column] if isinstance(column, str) else list(column)
    if not cols:
        raise ValueError("`column` must name at least one column")
    fields = {f.name: f for f in df.schema.fields}
    for c in cols:
        if c not in fields:
            raise ValueError(f"column {c!r} not found; columns are: {', '.join(fields)}")
        if not isinstance(fields[c].dataType, NumericType):
            raise TypeError(f"column {c!r} must be numeric; got {fields[c].dataType.simpleString()}")
    mech = build_mechanism(mechanism, epsilon, sensitivity, lower, upper, delta)  # driver-side
    run = partition_sampler(mech, on_outside, nulls)

    def udf_body(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        return run(batches)

    udf = pandas_udf(udf_body, returnType=DoubleType()).asNondeterministic()  # type: ignore[call-overload]
    out = df
    for c in cols:
        out = out.withColumn(c, udf(F.col(c)))
    return out
