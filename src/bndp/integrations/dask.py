"""Privatise columns of a Dask DataFrame with bndp (``bndp.dask``).

The release spec is validated and every column with fixed bounds calibrated once, when
:func:`privatize` is called; each partition task releases every listed column in one pass,
from its own generator: a cryptographically secure stream keyed with 256 bits from the OS
CSPRNG of the worker that runs it (thread, process or distributed worker), so partitions
never share a stream.

A result is released once: :func:`privatize` materialises it before returning
(``persist()``: every partition drawn once and kept, in memory, by the scheduler), then
charges the budget. Every later computation reads those partitions and draws nothing.
"""

from __future__ import annotations

import secrets
from typing import Any, Mapping, Sequence

from .._deprecate import removed_parameter
from .._random import default_rng
from .._release import (ColumnPlan, charge_release, check_allow_empty, draw, plan_release,
                        prepare, refuse_empty, release_label)
from ..budget import check_budget
from .spark import _keyword_form

__all__ = ["privatize"]


def _privatize_partition(part: Any, plans: Sequence[ColumnPlan], dtypes: dict[str, Any],
                         nonce: str) -> Any:
    # ``nonce`` only makes every privatize() call a distinct task in the graph: Dask merges
    # tasks with equal names, and two releases must never share their noise.
    import narwhals.stable.v2 as nw

    gen = default_rng(None)  # fresh OS entropy for this partition
    frame = nw.from_native(part, eager_only=True)
    prepared = prepare(nw, frame, plans)
    out = draw(nw, frame, plans, prepared, [gen] * len(plans)).to_native()
    return out.astype(dtypes)


def _check_frame(frame: Any) -> Any:
    """``frame``'s meta (an empty pandas frame), refusing anything but a Dask DataFrame
    with distinct column names."""
    import pandas as pd

    meta = getattr(frame, "_meta", None)
    if not (isinstance(meta, pd.DataFrame) and _is_dask_collection(frame)):
        raise TypeError("bndp.dask.privatize: `frame` must be a dask DataFrame; got "
                        f"{type(frame).__module__}.{type(frame).__name__} (bndp.privatize "
                        "releases pandas, Polars and Arrow frames)")
    cols = list(meta.columns)
    dup = sorted({str(c) for c in cols if cols.count(c) > 1})
    if dup:
        raise ValueError(f"bndp.dask.privatize: duplicate column name(s): {', '.join(dup)}")
    return meta


def _is_dask_collection(x: Any) -> bool:
    try:
        from dask import is_dask_collection
    except ImportError:  # pragma: no cover
        return False
    return bool(is_dask_collection(x))


@removed_parameter("ddf", "frame", removed_in="0.8.0")
def privatize(frame: Any, spec: Any, *, budget: Any = None, mechanism: str | None = None,
              epsilon: float | None = None, sensitivity: float | None = None,
              lower: Any = None, upper: Any = None, delta: float | None = None,
              on_outside: str | None = None, nulls: str | None = None,
              release_id: str | None = None, allow_empty: bool = False) -> Any:
    r"""Return ``frame`` with the columns of ``spec`` privatised, in one pass per partition.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
    spec : mapping, str or sequence of str
        The release spec of :func:`bndp.privatize` (per-column mechanism, :math:`\epsilon`,
        sensitivity, bounds as numbers or names of columns with per-row bounds, ...), or,
        keyword form, column name(s) released with the keywords below.
    budget : bndp.Budget, optional
        Charged when this is called (sum of the columns' :math:`\epsilon` and
        :math:`\delta`), as the last step: once the result is materialised, so an error
        raised here (planning, the graph, or the data while drawing) spends nothing;
        refused with :class:`bndp.BudgetError` before the graph is built if it would
        exceed. A persistent budget (:meth:`bndp.Budget.open`) commits the charge before
        this returns.
    mechanism, epsilon, sensitivity, lower, upper, delta, on_outside, nulls
        Keyword form only, as the spec keys. ``lower``/``upper`` may also be Dask Series
        aligned with ``frame`` (per-row bounds): they are joined into the graph lazily,
        never computed on the client.
    release_id : str, optional
        Looked up on the client while planning, before the graph is built: refused with
        :class:`bndp.ReleaseRecorded` if ``budget`` already recorded it; recorded with the
        charge otherwise (as in :func:`bndp.privatize`).
    allow_empty : bool, default False
        Release a frame without rows (its cost charged). By default such a frame is
        refused with ``ValueError`` before the charge: the rows of the materialised
        result are counted (on the persisted partitions: nothing is computed again, and
        an empty frame draws nothing), so a refused empty frame spends nothing.

    Returns
    -------
    dask.dataframe.DataFrame
        Same columns, index and divisions; released columns become ``float64``
        (``Float64`` for nullable pandas dtypes with ``nulls="keep"``), but integer columns
        released with the integer law (the default for integral bounds and sensitivity,
        see :func:`bndp.privatize`), which keep their integer type (nullable ones their
        nullable type; int64 where the lattice between the bounds does not fit it, and
        for per-row bounds). Released once:
        the noise is drawn here and the partitions are persisted (``persist()``, on the
        scheduler in use), so every computation on the result sees the same values. On a
        ``dask.distributed`` cluster a persisted partition lost with its worker would be
        recomputed with new noise: write the result out before relying on a cluster that
        loses workers.

    Notes
    -----
    Runs through ``map_partitions``: each partition is privatised with the plan calibrated
    here, from a secure generator keyed on the worker from its OS CSPRNG. Works with the
    threaded, process and distributed schedulers.

    The signature is :func:`bndp.privatize`'s (the frame first, then ``spec``) without its
    ``rng``: a seed cannot fix a release whose partitions the engine chooses, so every
    partition seeds itself. ``ddf=``, the former spelling of ``frame``, was removed in 0.8.0:
    it raises ``TypeError`` naming ``frame``.

    Examples
    --------
    >>> import dask.dataframe as dd
    >>> import pandas as pd
    >>> import bndp.dask
    >>> pdf = pd.DataFrame({"age": [23, 35, 61, 118], "name": ["a", "b", "c", "d"]})
    >>> ddf = dd.from_pandas(pdf, npartitions=2)
    >>> out = bndp.dask.privatize(ddf, "age", mechanism="laplace", epsilon=1.0,
    ...                           sensitivity=1.0, lower=0, upper=120).compute()
    >>> out["age"].dtype, out["name"].tolist()     # integer ages: the integer law
    (dtype('int64'), ['a', 'b', 'c', 'd'])
    >>> bool(out["age"].between(0, 120).all())
    True
    """
    import pandas as pd

    check_budget(budget)
    check_allow_empty(allow_empty)
    tmp: list[str] = []
    if not isinstance(spec, Mapping):
        token = secrets.token_hex(8)
        bounds = {"lower": lower, "upper": upper}
        for key, val in bounds.items():
            if _is_dask_collection(val):
                _check_frame(frame)
                # a Dask Series of per-row bounds: a temporary column, joined lazily
                name = f"__bndp_{key}_{token}"
                frame = frame.assign(**{name: val})
                tmp.append(name)
                bounds[key] = name
        lower, upper = bounds["lower"], bounds["upper"]
    spec = _keyword_form(spec, dict(mechanism=mechanism, epsilon=epsilon,
                                    sensitivity=sensitivity, lower=lower, upper=upper,
                                    delta=delta, on_outside=on_outside, nulls=nulls))
    # validation, calibration and planning of every fixed-bounds column; the budget is
    # checked here and charged only once the graph is built
    meta_ = getattr(frame, "_meta", None)
    # the schema (public) decides the law of a column without an `integer` key
    ints = ({str(c) for c in meta_.columns if getattr(meta_[c].dtype, "kind", "") in "iu"
             and not pd.api.types.is_bool_dtype(meta_[c].dtype)}
            if isinstance(meta_, pd.DataFrame) else None)
    plans = plan_release(spec, budget, engine="dask", release_id=release_id,
                         integer_columns=ints)
    meta = _check_frame(frame)
    for p in plans:
        for col, role in [(p.name, f"spec column {p.name!r}")] + [
                (b, f"spec column {p.name!r}, bound column") for b in p.bound_columns()]:
            if col not in meta.columns:
                raise ValueError(f"{role}: column {col!r} not found; columns are: "
                                 f"{', '.join(map(str, meta.columns))}")
            dt = meta[col].dtype
            if not pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt):
                raise TypeError(f"{role}: column {col!r} must be numeric; got {dt}")
    out_meta = meta.copy()
    dtypes = {}
    for p in plans:
        dt = meta[p.name].dtype
        nullable = isinstance(dt, pd.api.extensions.ExtensionDtype)
        if p.integer and getattr(dt, "kind", "") in "iu":
            # the integer law on an integer column: its integer type (or int64)
            out_dt = p.output_dtype(getattr(dt, "numpy_dtype", dt))
            dtypes[p.name] = (f"{'UInt' if out_dt.kind == 'u' else 'Int'}{out_dt.itemsize * 8}"
                              if nullable else out_dt)
        else:
            dtypes[p.name] = "Float64" if nullable and p.nulls == "keep" else "float64"
        out_meta[p.name] = out_meta[p.name].astype(dtypes[p.name])
    out = frame.map_partitions(_privatize_partition, tuple(plans), dtypes, secrets.token_hex(16),
                             meta=out_meta)
    if tmp:
        out = out.drop(columns=tmp)
    # released once: every partition drawn now and kept (errors in the data raise here,
    # before the charge)
    out = _materialise(out)
    if not allow_empty:     # counted on the persisted partitions, before the charge
        refuse_empty(int(len(out)), "the Dask DataFrame")
    charge_release(budget, plans, release_label(plans, "dask"), release_id)
    return out


def _materialise(out: Any) -> Any:
    """``out.persist()``, waited for: on ``dask.distributed`` the partitions are computed
    in the background, so wait for them and raise the first task's error."""
    out = out.persist()
    try:
        from distributed import default_client, futures_of, wait
    except ImportError:
        return out
    try:
        default_client()
    except ValueError:  # no distributed client: persist() computed every partition
        return out
    futures = futures_of(out)
    wait(futures)
    for f in futures:
        if f.status == "error":
            f.result()  # raises the task's exception
    return out
