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

Amounts are the decimals written: ``0.1`` is one tenth (a float is read as the shortest
decimal that round-trips to it; ints, :class:`fractions.Fraction` and
:class:`decimal.Decimal` as they are), and the sums are kept exactly, so no rounding drift
accumulates over many releases: ten releases of ``0.1`` fit a budget of ``1``, and ``0.1 +
0.2`` fits ``0.3``. A release is refused if the exact total would exceed the budget. A
release of :func:`bndp.privatize` charges a column's :math:`\epsilon` as written unless its
mechanism's certified loss lies above that decimal (see :mod:`bndp._amounts`). Amounts shown
(:attr:`Budget.spent`, :attr:`Budget.remaining`, messages) are decimals too.

Budgets that outlive the process
--------------------------------
:meth:`Budget.create` creates a named budget kept in a database (an SQLite file, or
PostgreSQL for jobs on several hosts) and :meth:`Budget.open` opens it (never creating
one): a :class:`PersistentBudget`, with the same interface, whose every charge is checked
and recorded in one database transaction, so that separate processes and hosts share one
cap. It can also compose by the optimal composition of the releases' privacy curves
(``composition="optimal"``). :func:`backup` copies an SQLite store. See the guide "Budgets
across jobs".
"""

from __future__ import annotations

import threading
import time
from fractions import Fraction
from collections.abc import Mapping
from typing import Any, NamedTuple

from ._amounts import decimal_amount, float_down as _down, float_up as _up, format_amount
from .exceptions import BudgetError, ReleaseRecorded
from ._ledger._backup import backup

__all__ = ["Budget", "Cost", "Release", "PersistentBudget", "LedgerEntry", "backup"]


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
        their :math:`\\delta`, as floats whose decimals (``repr``) are the exact sums
        (rounded upwards beyond 17 digits).
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
    """An amount as the exact decimal written (:func:`bndp._amounts.decimal_amount`)."""
    return decimal_amount(x, name, positive=positive)


def _checked_costs(costs: Any) -> "dict[str, tuple[Fraction, Fraction]]":
    """Per-column costs ``{column: (epsilon, delta)}``: a mapping of pairs of finite amounts
    ``>= 0`` (``TypeError`` or ``ValueError`` naming the column), as exact decimals."""
    if not isinstance(costs, Mapping):
        raise TypeError("`costs` must be a mapping {column: (epsilon, delta)}; got "
                        f"{type(costs).__name__}")
    out = {}
    for k, c in costs.items():
        if isinstance(c, (str, bytes)) or not hasattr(c, "__len__") or len(c) != 2:
            raise TypeError(f"the cost of column {k!r} must be a pair (epsilon, delta); "
                            f"got {c!r}")
        out[k] = (decimal_amount(c[0], f"costs[{k!r}] epsilon", positive=False),
                  decimal_amount(c[1], f"costs[{k!r}] delta", positive=False))
    return out


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
        Total :math:`\epsilon`, finite and > 0 (a float, int, Fraction or Decimal, read as
        the decimal written: see the module documentation).
    delta : float, default 0
        Total :math:`\delta`, finite, in [0, 1).

    Attributes
    ----------
    spent : Cost
        ``(epsilon, delta)`` spent so far: floats whose decimals (``repr``) are the exact
        sums, rounded upwards where they have more than 17 digits.
    remaining : Cost
        ``(epsilon, delta)`` still available: floats whose decimals are the exact
        differences, rounded towards zero where needed (so spending it is always
        allowed): a budget of 1 after three releases of 0.1 has ``0.7`` remaining.
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
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def open(cls, store: Any, name: str, epsilon: float | None = None,
             delta: float | None = None, composition: str | None = None) -> "PersistentBudget":
        r"""Open the existing budget ``name`` kept in ``store``, shared by every process and
        host that opens it. Opening never creates a budget nor a store: create one with
        :meth:`create` (or ``bndp budget create``).

        Parameters
        ----------
        store : str or os.PathLike
            A file path: an SQLite database (the embedded default; it must exist), or a
            ``postgresql://`` URL (psycopg 3: ``pip install 'bndp[postgres]'``), for jobs
            on several hosts.
        name : str
            The budget's name in the store, compared in Unicode normal form NFC (``"café"``
            typed with a combining accent opens the budget ``"café"``).
        epsilon, delta : float, optional
            The cap the caller expects: if given, each must equal the recorded one (a
            budget's cap never changes: a different one raises ``ValueError``).
        composition : {"basic", "optimal"}, optional
            The composition the caller expects (see :meth:`create`): if given, it must be
            the recorded one.

        Returns
        -------
        PersistentBudget
            A :class:`Budget` whose charges are transactions of the store.

        Raises
        ------
        bndp.BudgetError
            The store holds no budget of this name; the message names the store's nearest
            names and says how to create one.
        ValueError
            A missing SQLite file (the message gives its absolute path), a cap or
            composition different from the recorded one, an invalid cap, or a URL of
            another scheme.
        TypeError
            ``store`` or ``name`` of the wrong type.

        Examples
        --------
        >>> import os, tempfile
        >>> import bndp
        >>> path = os.path.join(tempfile.mkdtemp(), "ledger.db")
        >>> b = bndp.Budget.create(path, "survey", epsilon=1.0)
        >>> b.spend(0.25, label="ages", release_id="2024-06-01")
        Cost(epsilon=0.25, delta=0.0)
        >>> again = bndp.Budget.open(path, "survey")   # another process, another day
        >>> again.remaining
        Cost(epsilon=0.75, delta=0.0)
        >>> try:
        ...     bndp.Budget.open(path, "survy")
        ... except bndp.BudgetError as err:
        ...     print("did you mean 'survey'?" in str(err))
        True
        """
        from ._ledger import open_ledger

        return PersistentBudget(open_ledger(store, name, epsilon, delta, composition))

    @classmethod
    def create(cls, store: Any, name: str, epsilon: float, delta: float = 0.0,
               composition: str = "basic", *, exist_ok: bool = False) -> "PersistentBudget":
        r"""Create the budget ``name`` in ``store`` with its cap, and return it open.

        Parameters
        ----------
        store : str or os.PathLike
            A file path: an SQLite database, created if missing (its directory must
            exist). Or a ``postgresql://`` URL (psycopg 3: ``pip install
            'bndp[postgres]'``); the ledger's tables are created if missing.
        name : str
            The budget's name, stored in Unicode normal form NFC.
        epsilon : float
            The cap's :math:`\epsilon`, finite and > 0.
        delta : float, default 0
            The cap's :math:`\delta`, in [0, 1).
        composition : {"basic", "optimal"}, default "basic"
            How releases add up. ``"basic"``: the sums of the :math:`\epsilon` and of the
            :math:`\delta`, as :class:`Budget`. ``"optimal"``: the cap
            :math:`(\epsilon, \delta)` is met while the composed privacy curve of every
            released column (Google's ``dp-accounting``, privacy loss distributions with a
            pessimistic discretisation: ``pip install 'bndp[composition]'``) has
            :math:`\epsilon \le` the cap's at the cap's :math:`\delta`.
        exist_ok : bool, default False
            Accept an existing budget of this name whose cap and composition are these
            (it is opened, nothing is changed); otherwise an existing name is an error.

        Returns
        -------
        PersistentBudget
            The new (or, with ``exist_ok``, the existing) budget.

        Raises
        ------
        ValueError
            The name exists (without ``exist_ok``, or with another cap), an invalid cap,
            a directory that does not exist, or a URL of another scheme.
        TypeError
            ``store``, ``name`` or ``exist_ok`` of the wrong type.

        Examples
        --------
        >>> import os, tempfile
        >>> import bndp
        >>> path = os.path.join(tempfile.mkdtemp(), "ledger.db")
        >>> b = bndp.Budget.create(path, "survey", epsilon=1.0, delta=1e-6)
        >>> b.remaining
        Cost(epsilon=1.0, delta=1e-06)
        >>> bndp.Budget.create(path, "survey", epsilon=1.0, delta=1e-6, exist_ok=True).name
        'survey'
        >>> try:
        ...     bndp.Budget.create(path, "survey", epsilon=2.0)
        ... except ValueError as err:
        ...     print("already exists" in str(err))
        True
        """
        from ._ledger import create_ledger

        return PersistentBudget(create_ledger(store, name, epsilon, delta, composition,
                                              exist_ok=exist_ok))

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
        """``(epsilon, delta)`` spent so far, summed exactly: the floats whose shortest
        decimals (``repr``) are nearest the exact totals and never below them."""
        with self._lock:
            return Cost(_up(self._spent_eps), _up(self._spent_delta))

    @property
    def remaining(self) -> Cost:
        """``(epsilon, delta)`` still available: the budget minus what was spent, exact,
        as the floats whose shortest decimals (``repr``) are nearest and never above it
        (so a release costing exactly this is always allowed)."""
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
              columns: dict | None = None, release_id: str | None = None) -> Cost:
        """Spend ``(epsilon, delta)`` for one release, or refuse it.

        Parameters
        ----------
        epsilon, delta : float, int, Fraction or Decimal
            The release's cost (finite, >= 0), read as the decimal written (a float as
            its shortest round-trip decimal: ``0.1`` is one tenth).
        label : str
            Recorded in :attr:`log`.
        columns : dict, optional
            Per-column costs ``{name: (epsilon, delta)}``, recorded in :attr:`log`.
        release_id : str, optional
            Refuse the release (:class:`bndp.ReleaseRecorded`) if this id was already
            spent under this budget; recorded with the release otherwise.

        Returns
        -------
        Cost
            The cost spent.

        Raises
        ------
        bndp.BudgetError
            If the total spent would exceed the budget; nothing is spent then.
        bndp.ReleaseRecorded
            If ``release_id`` was already spent (a :class:`bndp.BudgetError`).
        """
        e = _amount(epsilon, "epsilon", positive=False)
        d = _amount(delta, "delta", positive=False)
        cols = _checked_costs(columns) if columns else {}
        return self._spend_exact(e, d, label, cols, _release_id(release_id))

    def charge(self, costs: "dict[str, tuple[Any, Any]]", label: str = "", *,
               release_id: str | None = None, details: "dict[str, dict] | None" = None
               ) -> Cost:
        """Spend the sequential composition of per-column costs (sum of epsilon, sum of
        delta, kept exactly) as one release. Used by the release functions; ``details``
        (per column: mechanism, bounds, ...) is kept by a :class:`PersistentBudget`."""
        costs = _checked_costs(costs)
        e, d = self._sums(costs)
        return self._spend_exact(e, d, label, costs, _release_id(release_id))

    def _check_charge(self, costs: "dict[str, tuple[Any, Any]]", label: str = "",
                      release_id: str | None = None) -> None:
        """Raise :class:`bndp.BudgetError` if :meth:`charge` of ``costs`` would be refused
        now; spends nothing. The release functions call it before drawing and charge after
        (the charge can still be refused if another release spent in between; nothing is
        released then)."""
        e, d = self._sums(costs)
        rid = _release_id(release_id)
        with self._lock:
            self._refuse_if_recorded(rid)
            self._refuse_if_over(e, d, label, costs)

    def _refuse_if_recorded(self, release_id: str | None) -> None:
        if release_id is not None and release_id in self._ids:
            raise ReleaseRecorded(f"release id {release_id!r} was already spent under this "
                                  "budget; nothing was drawn, spent or released",
                                  release_id=release_id)

    @staticmethod
    def _sums(costs: "dict[str, tuple[Any, Any]]") -> tuple[Fraction, Fraction]:
        checked = _checked_costs(costs)
        e = sum((c[0] for c in checked.values()), Fraction(0))
        d = sum((c[1] for c in checked.values()), Fraction(0))
        return e, d

    def _refuse_if_over(self, e: Fraction, d: Fraction, label: str,
                        columns: "dict[str, tuple[Any, Any]]") -> None:
        """Raise BudgetError if spending ``(e, d)`` would exceed the budget (lock held)."""
        new_e = self._spent_eps + e
        new_d = self._spent_delta + d
        if new_e > self._eps or new_d > self._delta:
            parts = []
            if new_e > self._eps:
                parts.append(f"epsilon {format_amount(e)} (remaining "
                             f"{format_amount(self._eps - self._spent_eps, up=False)} of "
                             f"{format_amount(self._eps, up=False)})")
            if new_d > self._delta:
                parts.append(f"delta {format_amount(d)} (remaining "
                             f"{format_amount(self._delta - self._spent_delta, up=False)} of "
                             f"{format_amount(self._delta, up=False)})")
            name = f"release {label!r}" if label else "the release"
            how = (f" (sequential composition over {len(columns)} column(s))"
                   if columns else "")
            raise BudgetError(f"{name} would exceed the privacy budget: it costs "
                              f"{' and '.join(parts)}{how}; nothing was spent or released")

    def _spend_exact(self, e: Fraction, d: Fraction, label: str,
                     columns: "dict[str, tuple[Any, Any]]",
                     release_id: str | None = None) -> Cost:
        with self._lock:
            self._refuse_if_recorded(release_id)
            self._refuse_if_over(e, d, label, columns)
            if release_id is not None:
                self._ids.add(release_id)
            self._spent_eps += e
            self._spent_delta += d
            cols = {k: Cost(_up(v[0]), _up(v[1])) for k, v in columns.items()}
            cost = Cost(_up(e), _up(d))
            self._log.append(Release(label, cost, cols, time.time()))
            return cost

def _release_id(release_id: Any) -> str | None:
    if release_id is None:
        return None
    if not isinstance(release_id, str):
        raise TypeError(f"`release_id` must be a string or None; got "
                        f"{type(release_id).__name__}")
    if not release_id.strip():
        raise ValueError("`release_id` must be a non-empty string")
    if "\x00" in release_id:       # no store keeps it (PostgreSQL refuses text with NUL)
        raise ValueError("`release_id` must not contain a NUL character")
    return release_id


class LedgerEntry(NamedTuple):
    """One release recorded by a :class:`PersistentBudget` (:attr:`PersistentBudget.history`).

    Attributes
    ----------
    seq : int
        The release's number under its budget, from 1.
    release_id : str or None
        The release id given to the release (unique under the budget), or None.
    label : str
        The release's label (for example ``"privatize(age, income)"``).
    time : float
        When the charge was committed (:func:`time.time`).
    host : str
        The host name of the process that charged it.
    pid : int
        That process's id.
    version : str
        The bndp version that made the release.
    cost : Cost
        The release's cost: the sums over its columns (as :attr:`Release.cost`).
    columns : list of dict
        Per released column: ``column``, ``mechanism``, ``epsilon``, ``delta``,
        ``sensitivity``, ``bounds`` (``[lower, upper]``, or the text ``"per-row from
        columns lo/hi"``), ``mode``, ``law`` (``"integer"``: the integer lattice,
        ``"grid"`` or ``"continuous"``; recorded since 0.9.1), ``certified_loss`` (the
        mechanism's certified worst-case loss; None for per-row bounds),
        ``epsilon_per_sensitivity`` (the guarantee's epsilon, for a change of at most the
        sensitivity in one value), ``whole_range_loss`` (the certified loss for a change
        of one record across the whole range, ``lower`` against ``upper``; None for
        per-row bounds and half-lines, the reason in ``whole_range_loss_note``) and
        ``seeded``, as far as the release gave them.
    seeded : bool or None
        Whether the release's noise came from a reproducible generator (a seed, allowed by
        ``allow_seeded=True`` / ``--allow-seeded``): True or False for the releases of
        :func:`bndp.privatize`, the Spark and Dask ``privatize`` and ``bndp privatize``;
        None where the release did not say (a direct :meth:`PersistentBudget.spend` or
        ``charge``, or a release recorded by bndp 0.7.0 or earlier).

    Examples
    --------
    >>> import os, tempfile
    >>> import bndp
    >>> b = bndp.Budget.create(os.path.join(tempfile.mkdtemp(), "l.db"), "x", epsilon=1.0)
    >>> _ = b.spend(0.5, label="counts", release_id="run-1")
    >>> e = b.history[0]
    >>> e.seq, e.release_id, e.label, e.cost
    (1, 'run-1', 'counts', Cost(epsilon=0.5, delta=0.0))
    """

    seq: int
    release_id: str | None
    label: str
    time: float
    host: str
    pid: int
    version: str
    cost: Cost
    columns: list
    seeded: bool | None = None


def _seeded(columns: list) -> bool | None:
    """A ledger entry's ``seeded``: recorded with each column of a release (None where no
    column says)."""
    flags = [c["seeded"] for c in columns if isinstance(c, dict) and "seeded" in c]
    return any(flags) if flags else None


class PersistentBudget(Budget):
    r"""A named budget kept in a database: :meth:`Budget.open` returns one.

    The interface of :class:`Budget` (``spend``, ``charge``, ``spent``, ``remaining``,
    ``log``), with every read and charge a transaction of the store, so that every process
    and host opening the same name shares one cap. A charge checks the cap and the release
    id and records the release in one transaction (SQLite: ``BEGIN IMMEDIATE``;
    PostgreSQL: the budget's row locked with ``SELECT ... FOR UPDATE``): concurrent
    releases can never together exceed the cap, and a committed charge survives a crash.
    The release functions commit the charge before their output can be seen.

    Parameters
    ----------
    ledger : bndp._ledger.Ledger
        The opened ledger (use :meth:`Budget.open`).

    Attributes
    ----------
    name : str
        The budget's name in its store.
    store : str
        The store: the SQLite file's absolute path, or the PostgreSQL URL with its
        password (and other secret parameters) shown as ``***``.
    composition : str
        ``"basic"`` or ``"optimal"``.
    history : list of LedgerEntry
        Every release, oldest first, with its details.

    Notes
    -----
    With ``composition="basic"``, :attr:`spent` is the exact sums of the decimals charged
    and :attr:`remaining` the cap minus them, shown as decimals rounded upwards and down
    (a release costing exactly :attr:`remaining` is allowed). With ``composition="optimal"``, :attr:`spent` is ``(epsilon_at(delta),
    delta)`` with ``delta`` the cap's (``(0, 0)`` before any release) and
    :attr:`remaining` the cap minus that: composition is not additive, so a release may
    fit although it costs more than ``remaining`` in the basic sense, and
    :meth:`epsilon_at` tells by how much a release would move the composed curve only
    once recorded.

    Examples
    --------
    >>> import os, tempfile
    >>> import bndp
    >>> path = os.path.join(tempfile.mkdtemp(), "ledger.db")
    >>> b = bndp.Budget.create(path, "daily", epsilon=4.0, delta=1e-6, composition="optimal")
    >>> for day in range(60):       # 60 x 0.1 = 6 by basic composition: above the cap
    ...     _ = b.spend(0.1, release_id=f"day-{day}")
    >>> print(f"{b.epsilon_at(1e-6):.2f}")
    3.55
    >>> b.spent.epsilon <= b.epsilon
    True
    """

    def __init__(self, ledger: Any) -> None:
        self._ledger = ledger
        st = ledger.state()
        self._eps = st.cap_e
        self._delta = st.cap_d
        self._composition = st.composition
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The budget's name in its store."""
        return self._ledger.name

    @property
    def store(self) -> str:
        """The SQLite file's absolute path, or the PostgreSQL URL with its password (in
        the user information or a ``password=`` parameter) and other secret parameters
        shown as ``***``."""
        return self._ledger.backend.url

    @property
    def composition(self) -> str:
        """``"basic"`` or ``"optimal"``."""
        return self._composition

    @property
    def composition_method(self) -> str:
        """How :attr:`spent` is composed now: ``"basic"`` under basic composition; under
        optimal composition ``"exact"`` (the optimum itself), ``"pld"`` (a privacy loss
        distribution with a certified error), ``"kairouz"`` (the bound of Kairouz, Oh &
        Viswanath) or ``"basic"`` (the sum of the epsilons): see "Budgets across jobs"."""
        from ._ledger import _compose

        st = self._ledger.state()
        if st.composition != "optimal":
            return "basic"
        return _compose.optimal_composition(st.counts, st.delta)[1]

    @property
    def spent(self) -> Cost:
        """``(epsilon, delta)`` spent so far, read from the store (see the class notes)."""
        e, d = self._ledger.spent_of(self._ledger.state())
        return Cost(e, d)

    @property
    def remaining(self) -> Cost:
        """``(epsilon, delta)`` still available: the cap minus :attr:`spent`, rounded
        towards zero."""
        st = self._ledger.state()
        if st.composition == "optimal":
            e, d = self._ledger.spent_of(st)
            # d is the cap's delta once anything was released, 0 before
            return Cost(_down(max(Fraction(0), self._eps - Fraction(e))),
                        _down(self._delta if d == 0 else Fraction(0)))
        return Cost(_down(self._eps - st.spent_e), _down(self._delta - st.spent_d))

    @property
    def history(self) -> list[LedgerEntry]:
        """Every release recorded under this budget, oldest first."""
        return [LedgerEntry(r["seq"], r["release_id"], r["label"], r["time"], r["host"],
                            r["pid"], r["version"], Cost(r["epsilon"], r["delta"]),
                            r["columns"], _seeded(r["columns"]))
                for r in self._ledger.history()]

    @property
    def log(self) -> list[Release]:
        """The releases, oldest first, as :attr:`Budget.log` gives them."""
        return [Release(e.label, e.cost,
                        {c["column"]: Cost(c["epsilon"], c["delta"]) for c in e.columns},
                        e.time) for e in self.history]

    def epsilon_at(self, delta: float) -> float:
        r"""The :math:`\epsilon` of the whole history at ``delta``.

        Parameters
        ----------
        delta : float
            In [0, 1).

        Returns
        -------
        float
            Optimal composition: the composed privacy curve's :math:`\epsilon` at
            ``delta`` (a pessimistic estimate, never below the optimum). Basic: the sum of
            the :math:`\epsilon` if ``delta`` covers the sum of the :math:`\delta`, else
            ``inf``.

        Examples
        --------
        >>> import os, tempfile
        >>> import bndp
        >>> b = bndp.Budget.create(os.path.join(tempfile.mkdtemp(), "l.db"), "b", epsilon=1.0)
        >>> _ = b.spend(0.25); _ = b.spend(0.25)
        >>> b.epsilon_at(0.0)
        0.5
        """
        d = _amount(delta, "delta", positive=False)
        if d >= 1:
            raise ValueError(f"`delta` must be in [0, 1); got {delta!r}")
        return self._ledger.epsilon_at(self._ledger.state(), d)

    def __repr__(self) -> str:
        s = self.spent
        return (f"PersistentBudget({self.name!r} in {self.store!r}: epsilon={self.epsilon!r}, "
                f"delta={self.delta!r}, composition={self.composition!r}; spent "
                f"epsilon={s.epsilon!r}, delta={s.delta!r})")

    def spend(self, epsilon: float, delta: float = 0.0, *, label: str = "",
              columns: dict | None = None, release_id: str | None = None) -> Cost:
        """Spend ``(epsilon, delta)`` for one release, or refuse it, in one transaction on
        the store: arguments, result and exceptions as :meth:`Budget.spend`, nothing recorded
        when refused. ``columns``' sums must be ``(epsilon, delta)``; under optimal
        composition the columns are composed one by one.

        Examples
        --------
        >>> import os, tempfile
        >>> import bndp
        >>> b = bndp.Budget.create(os.path.join(tempfile.mkdtemp(), "l.db"), "b", epsilon=1.0)
        >>> b.spend(0.5, label="first")
        Cost(epsilon=0.5, delta=0.0)
        """
        e = _amount(epsilon, "epsilon", positive=False)
        d = _amount(delta, "delta", positive=False)
        if columns:
            costs = {str(k): v for k, v in _checked_costs(columns).items()}
            if self._sums(costs) != (e, d):
                raise ValueError("`columns` must add up to (epsilon, delta)")
        else:
            costs = {"*": (e, d)}
        return self.charge(costs, label, release_id=release_id)

    def charge(self, costs: "dict[str, tuple[Any, Any]]", label: str = "", *,
               release_id: str | None = None, details: "dict[str, dict] | None" = None
               ) -> Cost:
        """Check and record one release in one transaction. Used by the release functions;
        ``details`` (per column) is recorded in :attr:`history`."""
        costs = _checked_costs(costs)
        e, d = self._ledger.charge(costs, label, _release_id(release_id), details)
        return Cost(e, d)

    def _check_charge(self, costs: "dict[str, tuple[Any, Any]]", label: str = "",
                      release_id: str | None = None) -> None:
        self._ledger.check(_checked_costs(costs), label, _release_id(release_id))


def check_budget(budget: Any) -> "Budget | None":
    if budget is not None and not isinstance(budget, Budget):
        raise TypeError(f"`budget` must be a bndp.Budget or None; got {type(budget).__name__}")
    return budget

