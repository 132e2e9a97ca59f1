"""Privatise columns of a Dask DataFrame with bndp (``bndp.dask``).

The mechanism is calibrated once, when :func:`privatize` is called; each partition task
creates its own generator seeded with 256 bits from the OS CSPRNG of the worker that runs it
(thread, process or distributed worker), so partitions never share a stream.
"""

from __future__ import annotations

import secrets
from typing import Any, Sequence

__all__ = ["privatize"]


def _privatize_partition(part: Any, mech: Any, cols: Sequence[str], on_outside: str, nulls: str,
                         nonce: str) -> Any:
    # ``nonce`` only makes every privatize() call a distinct task in the graph: Dask merges
    # tasks with equal names, and two releases must never share their noise.
    from .._random import default_rng

    gen = default_rng(None)  # fresh OS entropy for this partition
    out = part.copy(deep=False)
    for c in cols:
        out[c] = mech.sample(part[c], rng=gen, on_outside=on_outside, nulls=nulls)
    return out


def privatize(ddf: Any, column: str | Sequence[str], *, mechanism: str, epsilon: float,
              sensitivity: float, lower: float, upper: float, delta: float = 0.0,
              on_outside: str = "clip", nulls: str = "raise") -> Any:
    r"""Return ``ddf`` with ``column`` (or each of several columns) privatised.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
    column : str or sequence of str
        Numeric column(s) to release; each becomes ``float64``. Other columns, the index
        and the divisions are kept.
    mechanism, epsilon, sensitivity, lower, upper, delta, on_outside, nulls
        As for :func:`bndp.spark.privatize`.

    Returns
    -------
    dask.dataframe.DataFrame
        Lazy. The noise is drawn when the graph runs and drawn again each time the same
        graph is computed again: ``persist()`` or write the result before reusing it (two
        computations are two releases and cost privacy twice).

    Notes
    -----
    Runs through ``map_partitions``: each partition is privatised with the mechanism
    calibrated here, from a generator seeded on the worker from its OS CSPRNG. Works with
    the threaded, process and distributed schedulers.

    Examples
    --------
    >>> import dask.dataframe as dd
    >>> import pandas as pd
    >>> import bndp.dask
    >>> pdf = pd.DataFrame({"age": [23, 35, 61, 118], "name": ["a", "b", "c", "d"]})
    >>> ddf = dd.from_pandas(pdf, npartitions=2)
    >>> out = bndp.dask.privatize(ddf, "age", mechanism="laplace", epsilon=1.0,
    ...                           sensitivity=1.0, lower=0, upper=120).compute()
    >>> out["age"].dtype, out["name"].tolist()
    (dtype('float64'), ['a', 'b', 'c', 'd'])
    >>> bool(out["age"].between(0, 120).all())
    True
    """
    import pandas as pd

    from .._validation import check_on_outside
    from ._columns import check_nulls
    from ._engine import build_mechanism

    check_on_outside(on_outside)
    check_nulls(nulls)
    cols = [column] if isinstance(column, str) else list(column)
    if not cols:
        raise ValueError("`column` must name at least one column")
    meta = ddf._meta
    for c in cols:
        if c not in meta.columns:
            raise ValueError(f"column {c!r} not found; columns are: "
                             f"{', '.join(map(str, meta.columns))}")
        dt = meta[c].dtype
        if not pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt):
            raise TypeError(f"column {c!r} must be numeric; got {dt}")
    mech = build_mechanism(mechanism, epsilon, sensitivity, lower, upper, delta)
    out_meta = meta.copy()
    for c in cols:
        nullable = isinstance(meta[c].dtype, pd.api.extensions.ExtensionDtype)
        out_meta[c] = out_meta[c].astype("Float64" if nullable and nulls == "keep" else "float64")
    return ddf.map_partitions(_privatize_partition, mech, tuple(cols), on_outside, nulls,
                              secrets.token_hex(16), meta=out_meta)
