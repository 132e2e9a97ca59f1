r"""Release several columns of a data frame at once: :func:`privatize`.

Built on `narwhals <https://narwhals-dev.github.io/narwhals/>`_, so one code path serves
pandas, Polars (eager and lazy), PyArrow tables and the other libraries narwhals supports
(Modin, cuDF, ...). Spark and Dask DataFrames are handed to :func:`bndp.spark.privatize`
and :func:`bndp.dask.privatize`, which take the same spec.

The spec
--------
A mapping from column name to that column's settings::

    spec = {
        "age":    {"mechanism": "laplace", "lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 0.25},
        "income": {"mechanism": "gaussian", "lower": 0, "upper": 500000, "sensitivity": 1000, "epsilon": 0.25},
        "score":  {"lower": "score_lo", "upper": "score_hi", "sensitivity": 1, "epsilon": 0.25},
    }

Keys: ``mechanism`` (``"bounded_laplace"`` or its short spelling ``"laplace"``, the default:
:class:`bndp.BoundedLaplace`; ``"bounded_gaussian"`` or ``"gaussian"``:
:class:`bndp.BoundedGaussian`; ``"constrained_laplace"``: :class:`bndp.ConstrainedLaplace`;
the unbounded :class:`bndp.Laplace` and :class:`bndp.Gaussian` release no column), ``epsilon`` and ``sensitivity`` (required), ``lower`` and
``upper`` (required but for ``constrained_laplace``: numbers, or, for ``laplace``, names of
columns holding per-row bounds, which must be public data), ``delta`` (default 0),
``on_outside`` (``"clip"``/``"raise"``), ``nulls`` (``"raise"``/``"keep"``) and the
mechanism's own constructor options (for example ``mode``; ``integer`` for ``laplace`` and
``gaussian``: true, false or a lattice step k (an integer >= 1); ``sigma_rule`` for
``gaussian``; ``forbidden``, ``guarantee``, ``scale_rule`` for ``constrained_laplace``) and
``workers``.

The law of a column: without an ``integer`` key, an integer-typed column (its type in the
frame's schema) with integral bounds and sensitivity (at least 1) and the default mode is
released with the integer law (values ``lower + j``, :class:`bndp.BoundedLaplace`'s
``integer=True``) and keeps its integer type; every other column with the certified grid
law, as float64. ``integer = false`` keeps an integer column on the grid law (float64);
``integer = true`` (or a step k) asks for the integer law on any numeric column (refused
for non-integral bounds or sensitivity); a float column then holds integral float64 values.
Per-row bounds (bound columns) take it by default where the bound columns are integer-typed
too (their type decides, never their values: per-row bounds are data), and then come back
as int64.
"""

from __future__ import annotations

import sys
from typing import Any, TypeVar

from ._random import RNGLike, default_rng, spawn
from ._release import (assemble, charge_release, check_allow_empty, draw_columns,
                       integer_columns, plan_release, prepare, refuse_empty, release_label,
                       seeded_release)
from .budget import check_budget

__all__ = ["privatize"]


def _engine_kind(frame: Any) -> str | None:
    mod = type(frame).__module__
    if mod.startswith("pyspark.sql") and "pyspark.sql" in sys.modules:
        return "spark"
    if mod.startswith(("dask.dataframe", "dask_expr")) and "dask.dataframe" in sys.modules:
        import dask.dataframe as dd

        if isinstance(frame, dd.DataFrame):
            return "dask"
    return None


#: A data frame: :func:`privatize` returns one of the kind it is given.
FrameT = TypeVar("FrameT")


def privatize(frame: FrameT, spec: Any, budget: Any = None, rng: RNGLike = None, *,
              release_id: str | None = None, progress: bool = False,
              allow_seeded: bool = False, allow_empty: bool = False) -> FrameT:
    r"""Release the columns named in ``spec``, each with its own bounds and privacy loss.

    Parameters
    ----------
    frame : data frame
        A pandas DataFrame, a Polars DataFrame or LazyFrame, a PyArrow Table, or any other
        frame `narwhals` supports; a Spark or Dask DataFrame is handed to
        :func:`bndp.spark.privatize` / :func:`bndp.dask.privatize` (``rng`` must then be
        None: each partition seeds itself from the OS).
    spec : mapping
        ``{column: {key: value}}``, see the module documentation: per column
        ``mechanism`` (default ``"laplace"``), ``epsilon``, ``sensitivity``, ``lower`` and
        ``upper`` (numbers, or column names for per-row bounds), ``delta``,
        ``on_outside``, ``nulls`` and the mechanism's options (e.g. ``mode``).
    budget : bndp.Budget, optional
        Spends the release's cost: by sequential composition, the sum of the columns'
        :math:`\epsilon` and the sum of their :math:`\delta`. Refused with
        :class:`bndp.BudgetError` before any noise is drawn if it would exceed the budget;
        charged only once every column is drawn, so a release that fails spends nothing. A
        persistent budget (:meth:`bndp.Budget.open`) commits the charge in its store before
        this returns.
    rng : None, int, SeedSequence, BitGenerator or Generator
        ``None`` (a real release): a fresh cryptographically secure stream per column,
        keyed from the OS. Otherwise one independent child stream per column, spawned from
        ``rng`` (:meth:`numpy.random.Generator.spawn`: the columns never share a stream);
        seeds are for tests and research only. Only ``None`` and the generators of
        :func:`bndp.default_rng` without a seed are secure; anything else (a seed, a
        ``SeedSequence``, NumPy's own ``default_rng()``: not a cryptographically secure
        generator, and bndp cannot tell whether its entropy was fixed) is reproducible.
        A reproducible ``rng`` with a persistent ``budget`` is refused (``ValueError``,
        nothing drawn or charged) unless ``allow_seeded=True``; with an in-memory
        ``budget`` it issues a :class:`bndp.PrivacyLeakWarning` unless
        ``allow_seeded=True``.
    release_id : str, optional
        An id for this release under ``budget`` (for example the date of a nightly job):
        if a release with this id is already recorded, the release is refused with
        :class:`bndp.ReleaseRecorded` before anything is drawn, so a retried job never
        releases twice. Needs ``budget``.
    progress : bool, default False
        Show a progress bar on stderr while the noise is drawn, counting the values drawn
        (rows times released columns, column by column; ``tqdm.auto``: a widget in a
        notebook), for large frames with many released columns. It needs tqdm (``pip
        install 'bndp[progress]'``); without it the call raises ``ImportError`` before any
        noise is drawn, so nothing is charged. Ignored for a Spark or Dask DataFrame. The
        command line's counterpart is ``bndp privatize --progress auto|always|never`` (a
        bar by rows written, shown by default when stderr is a terminal; see
        ``docs/etl.md``).
    allow_seeded : bool, default False
        Release from a reproducible ``rng`` with a persistent ``budget`` (tests only:
        whoever knows the seed can subtract the noise). The release is recorded as seeded:
        ``"seeded": true`` with every column of its ledger entry
        (:attr:`bndp.LedgerEntry.seeded`) and in its log record.
    allow_empty : bool, default False
        Release a frame without rows (an empty result, its cost charged to ``budget``).
        By default a frame without rows is refused with ``ValueError`` once its columns
        are checked, before anything is charged: an empty input (a failed upstream
        extract) must not spend a job's budget. The command line's counterpart is
        ``bndp privatize --allow-empty``; :func:`bndp.dask.privatize` and
        :func:`bndp.spark.privatize` take the same keyword.

    Returns
    -------
    data frame
        Of the same kind as ``frame``, with the same columns in the same order (and the
        same pandas index); released columns become float64, but those released with the
        integer law from an integer column, which keep their integer type (int64 where
        the lattice between the bounds does not fit it); missing cells kept by
        ``nulls="keep"`` stay as they were (null or NaN); other columns are untouched. A
        lazy frame is collected once and returned lazy over the released data: evaluating
        it again does not draw new noise.

    Raises
    ------
    ValueError, TypeError
        For an invalid spec (the message names the column and key) or invalid data (the
        column and row), a frame without rows (unless ``allow_empty=True``), or a
        reproducible ``rng`` with a persistent ``budget`` without ``allow_seeded=True``;
        raised before any noise is drawn.
    bndp.BudgetError
        If ``budget`` cannot pay for the release; nothing is drawn or spent. Any error
        raised while planning or drawing also leaves the budget unspent.
    bndp.ReleaseRecorded
        If ``release_id`` is already recorded under ``budget`` (a
        :class:`bndp.BudgetError`); nothing is drawn or spent.

    Notes
    -----
    The whole spec is validated and every column with fixed bounds calibrated (its
    mechanism built once) and the budget checked (not charged) before the data is read;
    then every column's data is checked; then noise is drawn (per-row bounds are planned
    here); only when every column is drawn is the budget charged. Columns are released
    independently, so a record's privacy loss over the release is at most the sum over
    the columns (Dwork & Roth 2014, Theorem 3.16).

    Examples
    --------
    >>> import bndp, pandas as pd
    >>> df = pd.DataFrame({"age": [30, 41, 67], "city": ["a", "b", "c"]})
    >>> out = bndp.privatize(df, {"age": {"lower": 0, "upper": 120, "sensitivity": 1,
    ...                                   "epsilon": 0.5}}, rng=1)
    >>> list(out.columns), bool(out["age"].between(0, 120).all())
    (['age', 'city'], True)
    """
    check_budget(budget)
    check_allow_empty(allow_empty)
    kind = _engine_kind(frame)
    if kind is not None:
        if rng is not None:
            raise ValueError(f"`rng` must be None for a {kind.capitalize()} DataFrame: each "
                             "partition seeds its own secure stream from the OS")
        if kind == "spark":
            from .integrations import spark

            return spark.privatize(frame, spec, budget=budget, release_id=release_id,
                                   allow_empty=allow_empty)
        from .integrations import dask

        return dask.privatize(frame, spec, budget=budget, release_id=release_id,
                              allow_empty=allow_empty)

    try:
        import narwhals.stable.v2 as nw
    except ImportError:  # pragma: no cover - a core dependency
        raise ImportError("bndp.privatize on a data frame needs narwhals; install it with: "
                          "pip install narwhals") from None
    try:
        nwf: Any = nw.from_native(frame)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError("`frame` must be a data frame (pandas, Polars, PyArrow Table, or "
                        f"another library narwhals supports); got {type(frame).__name__}. "
                        "For a single column use bndp.sample.") from None
    if not isinstance(nwf, (nw.DataFrame, nw.LazyFrame)):
        raise TypeError(f"`frame` must be a data frame; got {type(frame).__name__} (for a "
                        "single column use bndp.sample)")
    # a reproducible rng with a persistent budget refused (without the opt-in), then
    # validation, calibration and planning, and the budget checked (not charged): no data
    # read, nothing drawn
    seeded = seeded_release(budget, rng, allow_seeded)
    # the schema (public) decides the law of a column without an `integer` key
    plans = plan_release(spec, budget, release_id=release_id,
                         integer_columns=integer_columns(nw, nwf.collect_schema()))
    lazy = isinstance(nwf, nw.LazyFrame)
    impl = nwf.implementation
    eager = nwf.collect() if lazy else nwf  # type: ignore[union-attr]
    prepared = prepare(nw, eager, plans)  # every column's data checked
    if not allow_empty:
        refuse_empty(len(eager))  # type: ignore[arg-type]
    gens = [default_rng(None) for _ in plans] if rng is None else spawn(rng, len(plans))
    bar = _progress_bar(len(eager) * len(plans)) if progress else None  # type: ignore[arg-type]
    try:
        noisy = draw_columns(plans, prepared, gens, None if bar is None else bar.update)
    finally:
        if bar is not None:
            bar.close()

    def result() -> Any:
        out = assemble(nw, eager, plans, prepared, noisy)
        return out.lazy(backend=impl).to_native() if lazy else out.to_native()

    # charged (and, for a persistent budget, committed) only once every column is drawn
    # and before the result is handed back: a release that fails spends nothing. The
    # result frame is put together while the charge commits.
    return charge_release(budget, plans, release_label(plans), release_id,
                          while_charging=result, seeded=seeded)


def _progress_bar(total: int) -> Any:
    """A tqdm progress bar over ``total`` cells (on stderr)."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise ImportError("privatize(progress=True) shows its bar with tqdm: pip install tqdm "
                          "(or 'bndp[progress]')") from None
    return tqdm(total=total, unit="values", unit_scale=True, desc="bndp.privatize")
