"""Privatise columns of a Spark DataFrame with bndp (``bndp.spark``).

The release spec is validated and every column with fixed bounds calibrated once, on the
driver; the calibrated, immutable plan is shipped to the executors inside one
``mapInArrow`` pass that releases every listed column of each Arrow batch. Each task (one
partition) creates its own generator, a cryptographically secure stream (AES-CTR or
ChaCha20, see :func:`bndp.default_rng`) keyed with 256 bits from the executor's OS CSPRNG,
so no two partitions, and no two forked Python workers, ever share a stream.

A result is released once: :func:`privatize` materialises it before returning
(``localCheckpoint(eager=True)``: every partition drawn once and kept on the executors,
its lineage cut), then charges the budget. Every later action reads those values; a
partition lost with its executor cannot be recomputed, so an action that needs it fails
instead of drawing new noise.
"""

from __future__ import annotations

import warnings
from typing import Any, Iterator, Mapping, Sequence

from .._deprecate import removed_parameter
from .._random import default_rng
from .._release import (ColumnPlan, charge_release, check_allow_empty, draw, keyword_spec,
                        plan_release, prepare, refuse_empty, release_label)
from ..budget import check_budget

__all__ = ["privatize"]


def partition_releaser(plans: Sequence[ColumnPlan], names: Sequence[str] | None = None):
    """The per-partition function of ``mapInArrow``: one fresh OS-keyed secure stream per
    call (per partition), every released column of each batch in one pass. ``names``: the
    frame's column names, in order, when the batches carry placeholder names (see
    :func:`_placeholders`): the columns are released under ``names`` and handed back
    under the batches' own names."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import narwhals.stable.v2 as nw
        import pyarrow as pa

        gen = default_rng(None)  # 256 bits of executor-side OS entropy, per partition
        for rb in batches:
            table = pa.Table.from_batches([rb])
            if names is not None:
                table = table.rename_columns(list(names))
            frame = nw.from_native(table, eager_only=True)
            prepared = prepare(nw, frame, plans)
            out = draw(nw, frame, plans, prepared, [gen] * len(plans)).to_native()
            if names is not None:
                out = out.rename_columns(rb.schema.names)
            yield from out.combine_chunks().to_batches()

    return run


def _released_type(plan: ColumnPlan, dtype: Any) -> Any:
    """The Spark type of a released column of type ``dtype``: its integer type (or
    ``bigint`` where the lattice needs it, :meth:`ColumnPlan.output_dtype`) under the
    integer law, ``double`` otherwise."""
    import numpy as np
    from pyspark.sql.types import (ByteType, DoubleType, IntegerType, IntegralType, LongType,
                                   ShortType)

    if not plan.integer or not isinstance(dtype, IntegralType):
        return DoubleType()
    widths = {ByteType: np.int8, ShortType: np.int16, IntegerType: np.int32, LongType: np.int64}
    out = plan.output_dtype(widths.get(type(dtype), np.int64))
    return {np.dtype(v): k for k, v in widths.items()}[out]()


def _placeholders(names: Sequence[str]) -> list[str]:
    """Plain column names (``_bndp_0``, ``_bndp_1``, ...) that stand in for ``names`` in
    the ``mapInArrow`` pass: PySpark resolves each column of the frame by name there, which
    reads a name with a dot (``a.b``) as the field ``b`` of a struct ``a``."""
    return [f"_bndp_{i}" for i in range(len(names))]


def _keyword_form(spec: Any, kw: dict[str, Any]) -> dict[str, Any]:
    if isinstance(spec, Mapping):
        given = [k for k, v in kw.items() if v is not None]
        if given:
            raise TypeError(f"give either a spec mapping or the keyword form (column, "
                            f"mechanism=..., epsilon=...), not both; got {', '.join(given)}")
        return dict(spec)
    for k in ("mechanism", "epsilon", "sensitivity", "lower", "upper"):
        if kw.get(k) is None:
            raise TypeError(f"privatize() with a column name needs `{k}=` (or pass a spec "
                            "mapping {column: {key: value}})")
    return keyword_spec(spec, mechanism=kw["mechanism"], epsilon=kw["epsilon"],
                        sensitivity=kw["sensitivity"], lower=kw["lower"], upper=kw["upper"],
                        delta=kw["delta"] or 0.0, on_outside=kw["on_outside"] or "clip",
                        nulls=kw["nulls"] or "raise")


@removed_parameter("df", "frame", removed_in="0.8.0")
def privatize(frame: Any, spec: Any, *, budget: Any = None, mechanism: str | None = None,
              epsilon: float | None = None, sensitivity: float | None = None,
              lower: float | None = None, upper: float | None = None, delta: float | None = None,
              on_outside: str | None = None, nulls: str | None = None,
              release_id: str | None = None, allow_empty: bool = False) -> Any:
    r"""Return ``frame`` with the columns of ``spec`` privatised, in one Arrow pass.

    Parameters
    ----------
    frame : pyspark.sql.DataFrame
        Classic or Spark Connect.
    spec : mapping, str or sequence of str
        The release spec of :func:`bndp.privatize` (``{column: {key: value}}``: per-column
        mechanism, :math:`\epsilon`, sensitivity, bounds as numbers or as names of columns
        holding per-row bounds, ``delta``, ``on_outside``, ``nulls``, mechanism options).
        Or, keyword form: a column name (or several) released with the keywords below,
        the same settings for every column (each column a separate release).
    budget : bndp.Budget, optional
        Charged on the driver (sum of the columns' :math:`\epsilon` and :math:`\delta`,
        sequential composition), as the last step: once the result is materialised, so an
        error raised here (planning, the Spark plan, or the data while drawing) spends
        nothing; refused with :class:`bndp.BudgetError` before the plan is built if it
        would exceed. A persistent budget (:meth:`bndp.Budget.open`) commits the charge
        before this returns.
    mechanism, epsilon, sensitivity, lower, upper, delta, on_outside, nulls
        Keyword form only: as the spec keys of the same names.
    release_id : str, optional
        As in :func:`bndp.privatize`: refused with :class:`bndp.ReleaseRecorded` before
        anything is drawn if already recorded under ``budget``.
    allow_empty : bool, default False
        Release a frame without rows (its cost charged). By default such a frame is
        refused with ``ValueError`` before the charge: once the result is checkpointed,
        ``isEmpty()`` looks for a row in the checkpointed partitions (one small job that
        computes nothing again; an empty frame draws nothing), so a refused empty frame
        spends nothing.

    Returns
    -------
    pyspark.sql.DataFrame
        Same columns in the same order; released columns become ``double`` (decimal
        columns included), but integer columns released with the integer law (the
        default for integral bounds and sensitivity, see :func:`bndp.privatize`), which
        keep their integer type (``bigint`` where the lattice between the bounds does not
        fit it, and for per-row bounds); other columns, and the row order within partitions,
        are kept. ``nulls="keep"`` leaves null cells null and NaN cells NaN. Released
        once: the noise is drawn here, and the result is checkpointed on the executors
        (``localCheckpoint(eager=True)``), so every action on it sees the same values; an
        action that needs a partition lost with its executor fails rather than drawing
        new noise (write the result out to keep it).

    Raises
    ------
    ValueError, TypeError
        Invalid spec or schema, a mechanism that cannot be planned, or invalid data (a
        missing value with ``nulls="raise"``, a value outside its bounds with
        ``on_outside="raise"``; raised by Spark as its own exception type, with bndp's
        message), before the budget is charged.
    bndp.BudgetError
        If ``budget`` cannot pay; :class:`bndp.ReleaseRecorded` if ``release_id`` is
        already recorded.

    Notes
    -----
    Calibration runs once here, on the driver (columns with the same settings share one
    mechanism). Per-row bounds are planned on the executors (:func:`bndp.sample`: one
    kernel for the wide rows, one per narrow width). The released columns and the bound columns are converted from
    Arrow without going through pandas. Each partition draws from its own secure stream
    (AES-CTR or ChaCha20) keyed from the executor's OS CSPRNG.

    The signature is :func:`bndp.privatize`'s (the frame first, then ``spec``) without its
    ``rng``: a seed cannot fix a release whose partitions the engine chooses, so every
    partition seeds itself. ``df=``, the former spelling of ``frame``, was removed in 0.8.0:
    it raises ``TypeError`` naming ``frame``.

    Examples
    --------
    With ``spark`` a running :class:`pyspark.sql.SparkSession`:

    >>> import bndp.spark
    >>> sdf = spark.createDataFrame([(1, 23), (2, 35), (3, 61), (4, 118)], ["id", "age"])
    >>> out = bndp.spark.privatize(sdf, "age", mechanism="laplace", epsilon=1.0,
    ...                            sensitivity=1.0, lower=0, upper=120)
    >>> out.dtypes      # integer ages, integral bounds and sensitivity: the integer law
    [('id', 'bigint'), ('age', 'bigint')]
    >>> rows = out.orderBy("id").collect()
    >>> [r.id for r in rows], all(0 <= r.age <= 120 for r in rows)
    ([1, 2, 3, 4], True)
    """
    from pyspark.sql.types import DoubleType, IntegralType, NumericType, StructField, StructType

    check_budget(budget)
    check_allow_empty(allow_empty)
    spec = _keyword_form(spec, dict(mechanism=mechanism, epsilon=epsilon,
                                    sensitivity=sensitivity, lower=lower, upper=upper,
                                    delta=delta, on_outside=on_outside, nulls=nulls))
    # driver-side validation, calibration and planning of every fixed-bounds column; the
    # budget (and the release id) is checked here and charged only once the result exists
    is_frame = hasattr(frame, "mapInArrow") and hasattr(frame, "schema")
    # the schema (public) decides the law of a column without an `integer` key
    ints = ({f.name for f in frame.schema.fields if isinstance(f.dataType, IntegralType)}
            if is_frame else None)
    plans = plan_release(spec, budget, engine="spark", release_id=release_id,
                         integer_columns=ints)
    if not is_frame:
        raise TypeError("bndp.spark.privatize: `frame` must be a Spark DataFrame; got "
                        f"{type(frame).__module__}.{type(frame).__name__} (bndp.privatize "
                        "releases pandas, Polars and Arrow frames)")
    names = [f.name for f in frame.schema.fields]
    dup = sorted({c for c in names if names.count(c) > 1})
    if dup:
        raise ValueError(f"bndp.spark.privatize: duplicate column name(s): {', '.join(dup)}")
    fields = {f.name: f for f in frame.schema.fields}
    for p in plans:
        for col, role in [(p.name, f"spec column {p.name!r}")] + [
                (b, f"spec column {p.name!r}, bound column") for b in p.bound_columns()]:
            if col not in fields:
                raise ValueError(f"{role}: column {col!r} not found; columns are: "
                                 f"{', '.join(fields)}")
            if not isinstance(fields[col].dataType, NumericType):
                raise TypeError(f"{role}: column {col!r} must be numeric; got "
                                f"{fields[col].dataType.simpleString()}")
    released = {p.name: p for p in plans}
    # the pass runs on placeholder names (toDF renames by position, resolving no name), so
    # that any column name works, a dot or a backtick in it included; renamed back after
    safe = _placeholders(names)
    schema = StructType([StructField(s, _released_type(released[f.name], f.dataType), True)
                         if f.name in released else
                         StructField(s, f.dataType, f.nullable, f.metadata)
                         for s, f in zip(safe, frame.schema.fields)])
    with warnings.catch_warnings():
        # mapInArrow wraps the function in a pandas UDF, and PySpark warns there that it does
        # not yet support pandas >= 3; this pass reads and writes Arrow batches only
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                                category=FutureWarning)
        out = frame.toDF(*safe).mapInArrow(partition_releaser(plans, names), schema)
        out = out.toDF(*names)
        # released once: drawn now, kept on the executors, lineage cut (never drawn again)
        out = out.localCheckpoint(eager=True)
    if not allow_empty and out.isEmpty():   # read from the checkpoint, before the charge
        refuse_empty(0, "the Spark DataFrame")
    charge_release(budget, plans, release_label(plans, "spark"), release_id)
    return out
