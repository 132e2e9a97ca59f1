"""Exception and warning types of bndp."""

__all__ = ["BudgetError", "PrivacyLeakWarning"]


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


class PrivacyLeakWarning(RuntimeWarning):
    """An operation weakens the privacy guarantee the user asked for.

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
