r"""A privacy budget shared by a sequence of releases: :class:`Budget`.

Composition rule
----------------
Basic sequential composition (Dwork & Roth, *The Algorithmic Foundations of Differential
Privacy*, 2014, Theorem 3.16): releases that are :math:`(\epsilon_i, \delta_i)`-DP, run on
the same data, are together :math:`(\sum_i \epsilon_i, \sum_i \delta_i)`-DP. A release of
several columns of one table counts every released column as one release (a record's
columns are all about the same person), so its cost is the sum over the columns of their
:math:`\epsilon` and the sum of their :math:`\delta`. The rule is conservative: it never
undercounts, whatever the releases are.

The sums are kept exactly (as rationals of the binary floating-point values given), so no
rounding drift accumulates over many releases, and a release is refused if the exact total
would exceed the budget. Note that in binary floating point ``0.1 + 0.2 > 0.3``: a budget
of ``0.3`` refuses a second release of ``0.2`` after one of ``0.1``. Split budgets into
binary fractions (``0.25``, ``0.125``, ...) or set the total from the planned costs.
"""

from __future__ import annotations

import math
import threading
import time
from fractions import Fraction
from typing import Any, NamedTuple

from .exceptions import BudgetError

__all__ = ["Budget", "Cost", "Release"]


class Cost(NamedTuple):
    r"""A privacy cost or amount: ``(epsilon, delta)``.

    Returned by :meth:`Budget.spend` and :meth:`Budget.charge`, and by
    :attr:`Budget.spent` and :attr:`Budget.remaining`; a plain named tuple, so it compares
    equal to ``(epsilon, delta)``.

    Attributes
    ----------
    epsilon : float
        The :math:`\epsilon` part.
    delta : float
        The :math:`\delta` part.

    Examples
    --------
    >>> import bndp
    >>> b = bndp.Budget(epsilon=1.0, delta=1e-6)
    >>> c = b.spend(0.25, 1e-7)
    >>> c
    Cost(epsilon=0.25, delta=1e-07)
    >>> c.epsilon, c.delta
    (0.25, 1e-07)
    >>> b.spent == (0.25, 1e-7)
    True
    """

    epsilon: float
    delta: float


class Release(NamedTuple):
    """One entry of :attr:`Budget.log`.

    ``columns`` maps each released column to its own cost; ``cost`` is their sum.

    Attributes
    ----------
    label : str
        The release's label (``""`` when none was given).
    cost : Cost
        What the release spent: the sum of its columns' :math:`\\epsilon` and the sum of
        their :math:`\\delta` (rounded upwards to a float).
    columns : dict
        ``{column name: Cost}``, each released column's own cost (empty when the spend
        named no columns).
    time : float
        When the release was recorded, as :func:`time.time` gives it (seconds since the
        epoch).

    Examples
    --------
    >>> import bndp
    >>> b = bndp.Budget(epsilon=1.0)
    >>> _ = b.charge({"age": (0.25, 0.0), "income": (0.5, 0.0)}, label="survey")
    >>> r = b.log[0]
    >>> r.label, r.cost
    ('survey', Cost(epsilon=0.75, delta=0.0))
    >>> r.columns["income"]
    Cost(epsilon=0.5, delta=0.0)
    >>> r.time > 0
    True
    """

    label: str
    cost: Cost
    columns: dict
    time: float


def _amount(x: Any, name: str, *, positive: bool) -> Fraction:
    if isinstance(x, bool) or not isinstance(x, (int, float)) and not hasattr(x, "__float__"):
        raise TypeError(f"`{name}` must be a real number; got {x!r}")
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a real number; got {x!r}") from None
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        raise ValueError(f"`{name}` must be finite and {'> 0' if positive else '>= 0'}; got {x!r}")
    return Fraction(v)


def _down(x: Fraction) -> float:
    """``x`` rounded to a float towards zero (never above the exact value)."""
    f = float(x)
    if Fraction(f) > x:
        f = math.nextafter(f, 0.0)
    return f


def _up(x: Fraction) -> float:
    """``x`` rounded to a float upwards (never below the exact value)."""
    f = float(x)
    if Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


class Budget:
    r"""A total privacy budget :math:`(\epsilon, \delta)` that releases spend from.

    Pass it as ``budget=`` to :func:`bndp.privatize`, :func:`bndp.spark.privatize`,
    :func:`bndp.dask.privatize` (or give ``[budget]`` in the CLI's ``--spec``). Each release
    spends its cost by basic sequential composition (see the module documentation): the
    sum of the :math:`\epsilon` of its columns and the sum of their :math:`\delta`. A
    release that would take the total spent above the budget raises
    :class:`bndp.BudgetError` **before any noise is drawn**, and spends nothing. The release
    functions charge only once the release is drawn (or, on Spark and Dask, its plan built),
    so a release that fails spends nothing either.

    Parameters
    ----------
    epsilon : float
        Total :math:`\epsilon`, finite and > 0.
    delta : float, default 0
        Total :math:`\delta`, finite, in [0, 1).

    Attributes
    ----------
    spent : Cost
        ``(epsilon, delta)`` spent so far (rounded upwards to a float).
    remaining : Cost
        ``(epsilon, delta)`` still available (rounded towards zero, so spending it is
        always allowed).
    log : list of Release
        One entry per release, in order: label, cost, per-column costs, time.

    Notes
    -----
    Spending is thread-safe: the check and the update are done under one lock, so two
    threads cannot both pass the check on the same remaining budget. The budget is an
    account kept by this process: it protects against mistakes, not against a caller who
    makes a new :class:`Budget`.

    Examples
    --------
    >>> import bndp
    >>> b = bndp.Budget(epsilon=1.0)
    >>> b.spend(0.25, label="ages")
    Cost(epsilon=0.25, delta=0.0)
    >>> b.remaining
    Cost(epsilon=0.75, delta=0.0)
    >>> try:
    ...     b.spend(1.0)
    ... except bndp.BudgetError as e:
    ...     print("refused")
    refused
    >>> b.spent
    Cost(epsilon=0.25, delta=0.0)
    """

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        self._eps = _amount(epsilon, "epsilon", positive=True)
        self._delta = _amount(delta, "delta", positive=False)
        if self._delta >= 1:
            raise ValueError(f"`delta` must be in [0, 1); got {delta!r}")
        self._spent_eps = Fraction(0)
        self._spent_delta = Fraction(0)
        self._log: list[Release] = []
        self._lock = threading.Lock()

    # read-only views -------------------------------------------------------------------
    @property
    def epsilon(self) -> float:
        """Total :math:`\\epsilon` of the budget."""
        return float(self._eps)

    @property
    def delta(self) -> float:
        """Total :math:`\\delta` of the budget."""
        return float(self._delta)

    @property
    def spent(self) -> Cost:
        """``(epsilon, delta)`` spent so far, summed exactly and rounded upwards to a
        float (never below the exact total)."""
        with self._lock:
            return Cost(_up(self._spent_eps), _up(self._spent_delta))

    @property
    def remaining(self) -> Cost:
        """``(epsilon, delta)`` still available: the budget minus what was spent, exact,
        rounded towards zero (so a release costing exactly this is always allowed)."""
        with self._lock:
            return Cost(_down(self._eps - self._spent_eps), _down(self._delta - self._spent_delta))

    @property
    def log(self) -> list[Release]:
        """The releases spent so far, oldest first: a copy, one :class:`Release` (label,
        cost, per-column costs, time) per release."""
        with self._lock:
            return list(self._log)

    def __repr__(self) -> str:
        s = self.spent
        return (f"Budget(epsilon={self.epsilon!r}, delta={self.delta!r}; spent "
                f"epsilon={s.epsilon!r}, delta={s.delta!r}, {len(self._log)} release(s))")

    # spending --------------------------------------------------------------------------
    def spend(self, epsilon: float, delta: float = 0.0, *, label: str = "",
              columns: dict | None = None) -> Cost:
        """Spend ``(epsilon, delta)`` for one release, or refuse it.

        Parameters
        ----------
        epsilon, delta : float
            The release's cost (finite, >= 0).
        label : str
            Recorded in :attr:`log`.
        columns : dict, optional
            Per-column costs ``{name: (epsilon, delta)}``, recorded in :attr:`log`.

        Returns
        -------
        Cost
            The cost spent.

        Raises
        ------
        bndp.BudgetError
            If the total spent would exceed the budget; nothing is spent then.
        """
        e = _amount(epsilon, "epsilon", positive=False)
        d = _amount(delta, "delta", positive=False)
        return self._spend_exact(e, d, label, columns or {})

    def charge(self, costs: "dict[str, tuple[float, float]]", label: str = "") -> Cost:
        """Spend the sequential composition of per-column costs (sum of epsilon, sum of
        delta, kept exactly) as one release. Used by the release functions."""
        e, d = self._sums(costs)
        return self._spend_exact(e, d, label, costs)

    def _check_charge(self, costs: "dict[str, tuple[float, float]]", label: str = "") -> None:
        """Raise :class:`bndp.BudgetError` if :meth:`charge` of ``costs`` would be refused
        now; spends nothing. The release functions call it before drawing and charge after
        (the charge can still be refused if another release spent in between; nothing is
        released then)."""
        e, d = self._sums(costs)
        with self._lock:
            self._refuse_if_over(e, d, label, costs)

    @staticmethod
    def _sums(costs: "dict[str, tuple[float, float]]") -> tuple[Fraction, Fraction]:
        e = sum((Fraction(float(c[0])) for c in costs.values()), Fraction(0))
        d = sum((Fraction(float(c[1])) for c in costs.values()), Fraction(0))
        return e, d

    def _refuse_if_over(self, e: Fraction, d: Fraction, label: str,
                        columns: "dict[str, tuple[float, float]]") -> None:
        """Raise BudgetError if spending ``(e, d)`` would exceed the budget (lock held)."""
        new_e = self._spent_eps + e
        new_d = self._spent_delta + d
        if new_e > self._eps or new_d > self._delta:
            parts = []
            if new_e > self._eps:
                parts.append(f"epsilon {_up(e):g} (remaining "
                             f"{_down(self._eps - self._spent_eps):g} of {float(self._eps):g})")
            if new_d > self._delta:
                parts.append(f"delta {_up(d):g} (remaining "
                             f"{_down(self._delta - self._spent_delta):g} of "
                             f"{float(self._delta):g})")
            name = f"release {label!r}" if label else "the release"
            how = (f" (sequential composition over {len(columns)} column(s))"
                   if columns else "")
            raise BudgetError(f"{name} would exceed the privacy budget: it costs "
                              f"{' and '.join(parts)}{how}; nothing was spent or released")

    def _spend_exact(self, e: Fraction, d: Fraction, label: str,
                     columns: "dict[str, tuple[float, float]]") -> Cost:
        with self._lock:
            self._refuse_if_over(e, d, label, columns)
            self._spent_eps += e
            self._spent_delta += d
            cols = {k: Cost(float(v[0]), float(v[1])) for k, v in columns.items()}
            cost = Cost(_up(e), _up(d))
            self._log.append(Release(label, cost, cols, time.time()))
            return cost


def check_budget(budget: Any) -> "Budget | None":
    if budget is not None and not isinstance(budget, Budget):
        raise TypeError(f"`budget` must be a bndp.Budget or None; got {type(budget).__name__}")
    return budget

