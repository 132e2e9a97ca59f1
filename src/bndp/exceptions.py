"""Exception and warning types of bndp."""

__all__ = ["BudgetError", "NegligibleNoiseWarning", "PrivacyLeakWarning", "ReleaseRecorded"]


class BudgetError(ValueError):
    """A privacy budget would be exceeded.

    Raised before any noise is drawn, so a refused release spends nothing. A subclass of
    :class:`ValueError`.

    Parameters
    ----------
    *args : object
        The message (as for any exception).

    Examples
    --------
    >>> import bndp
    >>> try:
    ...     raise bndp.BudgetError("epsilon 1.5 exceeds the remaining 1.0")
    ... except ValueError as err:
    ...     print(type(err).__name__, err)
    BudgetError epsilon 1.5 exceeds the remaining 1.0
    """


class ReleaseRecorded(BudgetError):
    """A release with this release id is already recorded under the budget.

    Raised before any noise is drawn (and again, atomically, when the release is charged),
    so a retried job never releases the same data twice. A subclass of
    :class:`BudgetError`.

    Parameters
    ----------
    *args : object
        The message (as for any exception).
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

    def __init__(self, *args: object, release_id: "str | None" = None) -> None:
        super().__init__(*args)
        self.release_id = release_id

    def __reduce__(self):  # picklable with its release id
        return (_release_recorded, (self.args, self.release_id))


def _release_recorded(args: tuple, release_id: "str | None") -> ReleaseRecorded:
    return ReleaseRecorded(*args, release_id=release_id)


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

    Parameters
    ----------
    *args : object
        The message (as for any warning).

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


class NegligibleNoiseWarning(UserWarning):
    """A release's epsilon is so large that its noise is negligible.

    Warned when a column's noise has a standard deviation (at the range's centre) below a
    hundredth of its sensitivity (capped at the range's width): the released values are
    then the true values up to that, and a per-record release protects little. Epsilon is a
    guarantee per sensitivity unit; the loss a whole record's change costs is reported per
    column as ``whole_range_loss``. A :class:`UserWarning`; turn it into an error with the
    :mod:`warnings` filters.

    Parameters
    ----------
    *args : object
        The message (as for any warning).

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
