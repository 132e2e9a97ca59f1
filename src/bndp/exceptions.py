"""Exception and warning types of bndp."""

__all__ = ["BudgetError", "PrivacyLeakWarning"]


class BudgetError(ValueError):
    """A privacy budget would be exceeded."""


class PrivacyLeakWarning(RuntimeWarning):
    """An operation weakens the privacy guarantee the user asked for."""
