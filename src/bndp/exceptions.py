"""Exception and warning types of bndp."""

from __future__ import annotations

from typing import Any

__all__ = ["BudgetError", "ColumnDataError", "NegligibleNoiseWarning", "PrivacyLeakWarning",
           "ReleaseRecorded", "ScaledModelWarning", "SpecError", "SpecTypeError",
           "StoreNotFound"]


def _message_doc(cls: type) -> type:
    """Fill in ``{message}`` in ``cls``'s docstring: its Parameters section's ``*args``
    entry, the message as for any exception (or warning)."""
    kind = "warning" if issubclass(cls, Warning) else "exception"
    if cls.__doc__:
        cls.__doc__ = cls.__doc__.replace("    {message}\n", (
            "    Parameters\n    ----------\n    *args : object\n"
            f"        The message (as for any {kind}).\n"))
    return cls


@_message_doc
class BudgetError(ValueError):
    """A privacy budget would be exceeded.

    Raised before any noise is drawn, so a refused release spends nothing. A subclass of
    :class:`ValueError`.

    {message}

    Examples
    --------
    >>> import bndp
    >>> try:
    ...     raise bndp.BudgetError("epsilon 1.5 exceeds the remaining 1.0")
    ... except ValueError as err:
    ...     print(type(err).__name__, err)
    BudgetError epsilon 1.5 exceeds the remaining 1.0
    """


@_message_doc
class ReleaseRecorded(BudgetError):
    """A release with this release id is already recorded under the budget.

    Raised before any noise is drawn (and again, atomically, when the release is charged),
    so a retried job never releases the same data twice. A subclass of
    :class:`BudgetError`.

    {message}
    release_id : str, optional
        The release id that was refused.

    Attributes
    ----------
    release_id : str or None
        The release id that was refused.

    Examples
    --------
    >>> import bndp
    >>> b = bndp.Budget(epsilon=1.0)
    >>> _ = b.spend(0.25, release_id="2024-06-01")
    >>> try:
    ...     b.spend(0.25, release_id="2024-06-01")
    ... except bndp.ReleaseRecorded as err:
    ...     print(err.release_id, isinstance(err, bndp.BudgetError))
    2024-06-01 True
    """

    def __init__(self, *args: object, release_id: str | None = None) -> None:
        super().__init__(*args)
        self.release_id = release_id

    def __reduce__(self):  # picklable with its release id
        return (_release_recorded, (self.args, self.release_id))


def _release_recorded(args: tuple, release_id: str | None) -> ReleaseRecorded:
    return ReleaseRecorded(*args, release_id=release_id)


@_message_doc
class PrivacyLeakWarning(RuntimeWarning):
    """An operation weakens the privacy guarantee the user asked for.

    Warned in two cases:

    * a release charged to an in-memory :class:`bndp.Budget` draws from a reproducible
      generator (a seed, a ``SeedSequence`` or a generator bndp did not key itself) without
      ``allow_seeded=True``: whoever knows the seed can recompute the noise (a persistent
      budget refuses such a release with ``ValueError`` instead; without a budget it is
      allowed silently);
    * the default generator (``rng=None``) cannot be the cryptographically secure one
      because ``randomgen`` is not installed: an OS-seeded PCG64 is used instead (warned
      once a process).

    A :class:`RuntimeWarning`; turn it into an error with the :mod:`warnings` filters.

    {message}

    Examples
    --------
    >>> import warnings
    >>> import bndp
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("seeded generator used for a release", bndp.PrivacyLeakWarning)
    >>> caught[0].category.__name__
    'PrivacyLeakWarning'
    """


@_message_doc
class NegligibleNoiseWarning(UserWarning):
    """A release's epsilon is so large that its noise is negligible.

    Warned when a column's noise has a standard deviation (at the range's centre) below a
    hundredth of its sensitivity (capped at the range's width): the released values are
    then the true values up to that, and a per-record release protects little. Epsilon is a
    guarantee per sensitivity unit; the loss a whole record's change costs is reported per
    column as ``whole_range_loss``. A :class:`UserWarning`; turn it into an error with the
    :mod:`warnings` filters.

    {message}

    Examples
    --------
    >>> import warnings
    >>> import bndp, pandas as pd
    >>> spec = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 1e300}}
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = bndp.privatize(pd.DataFrame({"age": [30.0, 41.0]}), spec)
    >>> [w.category.__name__ for w in caught if w.category is bndp.NegligibleNoiseWarning]
    ['NegligibleNoiseWarning']
    """


@_message_doc
class ScaledModelWarning(UserWarning):
    """The rows of per-row bounds disagree with one shared distribution of their values'
    position in the row.

    Warned by :func:`bndp.estimate` with ``bounds_model="scaled"``: narrow and wide rows
    (or low and high ones) released positions that differ beyond their noise. The
    estimate's assumption does not hold; estimate the kinds of rows apart
    (``bounds_model="strata"`` with groups of many rows each). A :class:`UserWarning`.

    {message}

    Examples
    --------
    >>> import bndp
    >>> issubclass(bndp.ScaledModelWarning, UserWarning)
    True
    """


def _spec_place(column: str, key: str | None = None) -> str:
    """Where in a release spec: ``spec column 'age'`` or ``spec column 'age', key 'epsilon'``."""
    return f"spec column {column!r}" + (f", key {key!r}" if key is not None else "")


class _SpecFields:
    """The fields of a spec error: the column and key at fault, and what is wrong. A
    subclass's docstring says ``{fields}`` where their Parameters and Attributes sections
    go (filled in by ``__init_subclass__``)."""

    _FIELDS_DOC = """\
    Parameters
    ----------
    *args : object
        The message; by default built from ``column``, ``key`` and ``detail``.
    column : str, optional
        The spec column at fault (None for the spec as a whole).
    key : str, optional
        The column's key at fault (None for the column as a whole).
    detail : str, optional
        What is wrong, without the place.

    Attributes
    ----------
    column, key, detail : str or None
        As given.
"""

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if cls.__doc__ and "{fields}" in cls.__doc__:
            cls.__doc__ = cls.__doc__.replace("    {fields}\n", _SpecFields._FIELDS_DOC)

    args: tuple[Any, ...]     # (of the exception type it is mixed into)
    column: str | None
    key: str | None
    detail: str | None

    def __init__(self, *args: object, column: str | None = None, key: str | None = None,
                 detail: str | None = None) -> None:
        if not args and detail is not None:
            args = (detail if column is None else f"{_spec_place(column, key)}: {detail}",)
        super().__init__(*args)
        self.column, self.key, self.detail = column, key, detail

    def __reduce__(self) -> Any:  # picklable with its fields (raised on Spark/Dask workers)
        return (_rebuild, (type(self), self.args,
                           {"column": self.column, "key": self.key, "detail": self.detail}))


def _rebuild(cls: type, args: tuple, fields: dict) -> BaseException:
    return cls(*args, **fields)


class SpecError(_SpecFields, ValueError):
    """An invalid release spec (a :class:`ValueError`): a value out of its domain, a key
    unknown, missing or not allowed with the column's other settings.

    Raised by :func:`bndp.privatize` (and the Spark and Dask ``privatize``) before any data
    is read. The message names the column and key (``spec column 'age', key 'epsilon':
    ...``); the attributes give the same to a front end that words it its own way (the
    command line names its ``--column`` and options).

    {fields}

    Examples
    --------
    >>> import bndp, pandas as pd
    >>> try:
    ...     bndp.privatize(pd.DataFrame({"age": [30.0]}),
    ...                    {"age": {"lower": 0, "upper": 120, "sensitivity": 1}})
    ... except bndp.SpecError as err:
    ...     print(err.column, err.key, err.detail)
    ...     print(err)
    age epsilon missing (required)
    spec column 'age', key 'epsilon': missing (required)
    """


class SpecTypeError(_SpecFields, TypeError):
    """A release spec's setting of the wrong type (a :class:`TypeError`), with the fields
    of :class:`SpecError`.

    {fields}

    Examples
    --------
    >>> import bndp, pandas as pd
    >>> try:
    ...     bndp.privatize(pd.DataFrame({"age": [30.0]}), {"age": {
    ...         "lower": 0, "upper": 120, "sensitivity": 1, "epsilon": "1"}})
    ... except TypeError as err:
    ...     print(type(err).__name__, err.column, err.key)
    SpecTypeError age epsilon
    """


class ColumnDataError(ValueError):
    """A column's data failed a check of a release (a :class:`ValueError`).

    The message is the library's; the attributes let a front end word the same failure its
    own way (the command line names file rows and cells) without checking anything itself.
    Neither the message nor the attributes hold a value of the data (a released value, a
    per-row bound): only the column, the row and what is wrong with it.

    Parameters
    ----------
    message : str
        The message.
    kind, column, row, value, lower, upper, detail
        The attributes below.

    Attributes
    ----------
    kind : str
        ``"missing"`` (a missing value with ``nulls="raise"``), ``"not_finite"`` (a value),
        ``"bound_not_finite"`` (a per-row bound), ``"bound_order"`` (per-row bounds with
        ``lower >= upper``), ``"calibration"`` (the rows' widths have no calibrated scale)
        or ``"outside"`` (a value outside its bounds with ``on_outside="raise"``).
    row : int or None
        The first bad row, 0-based, as an index into the column's values (missing rows
        included); None for ``"calibration"`` (it concerns the rows together).
    column : str
        The column holding the bad cell: the released column, or for
        ``"bound_not_finite"`` the column of per-row bounds.
    value : float or None
        The non-finite value, NaN or +-inf (``"not_finite"``, ``"bound_not_finite"``); None
        for every other kind (a finite value of the data is never recorded).
    lower, upper : float or None
        The column's scalar bounds (``"outside"``; -inf or inf where the mechanism has
        none); None for per-row bounds (data) and for every other kind.
    detail : str or None
        ``"calibration"``: what the calibration refused, without the rows' widths;
        ``"outside"``: ``"below"`` (the value is below its lower bound) or ``"above"``.

    Examples
    --------
    >>> import bndp, numpy as np, pandas as pd
    >>> spec = {"age": {"lower": 0, "upper": 120, "sensitivity": 1, "epsilon": 1.0}}
    >>> try:
    ...     bndp.privatize(pd.DataFrame({"age": [30.0, np.inf]}), spec)
    ... except bndp.ColumnDataError as err:
    ...     print(err.kind, err.column, err.row, err.value)
    not_finite age 1 inf
    """

    _FIELDS = ("kind", "column", "row", "value", "lower", "upper", "detail")
    kind: str
    column: str
    row: int | None
    value: float | None
    lower: float | None
    upper: float | None
    detail: str | None

    def __init__(self, message: str, kind: str, column: str, row: int | None = None,
                 value: float | None = None, lower: float | None = None,
                 upper: float | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        for k, v in zip(self._FIELDS, (kind, column, row, value, lower, upper, detail)):
            setattr(self, k, v)

    def __reduce__(self) -> Any:  # picklable with its attributes (raised on Spark and Dask workers)
        return (type(self), (self.args[0], *(getattr(self, k) for k in self._FIELDS)))


@_message_doc
class StoreNotFound(ValueError):
    """A SQLite budget store's path names no file that can be one: its directory is
    missing, or it is a directory (a :class:`ValueError`; an I/O error for the command
    line, exit status 1).

    {message}

    Examples
    --------
    >>> import bndp
    >>> try:
    ...     bndp.Budget.open("/no/such/directory/budgets.db", "survey")
    ... except bndp.StoreNotFound as err:
    ...     print(err)
    budget store '/no/such/directory/budgets.db': directory /no/such/directory does not exist
    """
