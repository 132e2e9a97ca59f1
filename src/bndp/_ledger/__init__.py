r"""A privacy ledger in a database: named budgets, each charge checked and recorded in one
transaction, every release kept with its details.

Tables (the same on SQLite and PostgreSQL, see :mod:`._backends`):

``bndp_budget``
    one row per named budget: its cap ``(epsilon, delta)`` (doubles, read as the shortest
    decimals that round-trip to them) and composition rule, what was spent (exact
    rationals as text ``"p/q"``: sums of the decimals charged; a store of bndp 0.7.0 holds
    sums of the binary doubles, read as they are), the multiset of per-column costs (for
    optimal composition: each the double nearest above the amount charged) and the number
    of releases;
``bndp_release``
    one row per release: sequence number, release id (unique per budget when given), label,
    time, host, process id, library version, total cost and the columns released (JSON).

A charge is one write transaction: read the budget row (locked), refuse if the release id
is already recorded or if the cap would be exceeded, insert the release, update the row,
commit. Nothing here imports the in-memory :class:`bndp.Budget` (that module sits above:
``bndp.Budget.open`` wraps a :class:`Ledger`).
"""

from __future__ import annotations

import json
import math
import os
import socket
import threading
import time
import unicodedata
from fractions import Fraction
from typing import Any, Mapping

from .._amounts import (decimal_amount, double_down, double_up, float_down as _down,
                        float_up as _up, format_amount)
from .._validation import budget_amount
from ..exceptions import BudgetError, ReleaseRecorded
from . import _compose
from ._backends import StoreNotFound, backend_for

__all__ = ["Ledger", "open_ledger", "create_ledger", "COMPOSITIONS", "worker"]

COMPOSITIONS = ("basic", "optimal")


_worker: Any = None
_worker_pid = -1
_worker_lock = threading.Lock()


def worker() -> Any:
    """This process's one ledger thread (a single-worker executor; a new one after a
    fork): the release functions charge a persistent budget there while they put their
    result together from values already drawn. A charge's time is mostly its commit (the
    store's flush to disk or the server's round trip), which runs without the GIL."""
    global _worker, _worker_pid
    with _worker_lock:
        if _worker is None or _worker_pid != os.getpid():
            from concurrent.futures import ThreadPoolExecutor

            _worker = ThreadPoolExecutor(1, thread_name_prefix="bndp-ledger")
            _worker_pid = os.getpid()
        return _worker


def _version() -> str:
    # the version of the bndp that is running (its root package is loaded: this is a
    # subpackage of it)
    import sys

    return str(getattr(sys.modules.get("bndp"), "__version__", "unknown"))


def _frac_text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def _frac(text: str) -> Fraction:
    num, _, den = text.partition("/")  # as _frac_text writes it (faster than Fraction(text))
    return Fraction(int(num), int(den or 1))


def _exact_costs(costs: Mapping[str, tuple[Any, Any]]) -> dict[str, tuple[Fraction, Fraction]]:
    """Per-column costs as the exact decimals charged (:func:`bndp._amounts.decimal_amount`;
    a Fraction is kept as it is)."""
    return {k: (decimal_amount(c[0], "epsilon", positive=False),
                decimal_amount(c[1], "delta", positive=False)) for k, c in costs.items()}


def _counted(costs: Mapping[str, tuple[Fraction, Fraction]]) -> list[tuple[float, float]]:
    """The per-column costs as the optimal composition counts them: each amount as the
    smallest double not below it (the composition never sees less than is charged)."""
    return [(double_up(e), double_up(d)) for e, d in costs.values()]


def _cap_value(x: Any, name: str, positive: bool) -> float:
    return budget_amount(x, name, positive=positive)


class _State:
    """A budget's row."""

    __slots__ = ("name", "epsilon", "delta", "cap_e", "cap_d", "composition", "spent_e",
                 "spent_d", "counts", "releases", "created")

    def __init__(self, row: tuple) -> None:
        (self.name, eps, delta, self.composition, se, sd, counts, releases, created) = row
        self.epsilon = float(eps)
        self.delta = float(delta)
        # the cap as the decimals it was written as (stored as their doubles)
        self.cap_e = decimal_amount(self.epsilon, "epsilon", positive=False)
        self.cap_d = decimal_amount(self.delta, "delta", positive=False)
        self.spent_e = _frac(se)
        self.spent_d = _frac(sd)
        self.counts = _compose.counts_from_text(counts)
        self.releases = int(releases)
        self.created = float(created)


_SELECT = ("SELECT name, epsilon, delta, composition, spent_epsilon, spent_delta, counts, "
           "releases, created FROM bndp_budget WHERE name = ?")


class Ledger:
    """One named budget in a store. Every method is one transaction; nothing is cached
    between calls (other processes charge the same budget)."""

    def __init__(self, backend: Any, name: str) -> None:
        self.backend = backend
        self.name = name

    # reading ----------------------------------------------------------------------------
    def state(self) -> _State:
        with self.backend.transaction(write=False) as cur:
            row = cur.execute(_SELECT, (self.name,)).fetchone()
        if row is None:  # pragma: no cover - budgets are never deleted
            raise ValueError(f"budget {self.name!r} does not exist in {self.backend.url}")
        return _State(row)

    def history(self) -> list[dict]:
        """Every release, oldest first, as dictionaries (see :meth:`_record`)."""
        with self.backend.transaction(write=False) as cur:
            rows = cur.execute(
                "SELECT seq, release_id, label, time, host, pid, version, epsilon, delta, "
                "columns FROM bndp_release WHERE budget = ? ORDER BY seq", (self.name,)
            ).fetchall()
        return [self._record(r) for r in rows]

    @staticmethod
    def _record(r: tuple) -> dict:
        seq, rid, label, t, host, pid, version, eps, delta, columns = r
        return {"seq": int(seq), "release_id": rid, "label": label, "time": float(t),
                "host": host, "pid": int(pid), "version": version, "epsilon": float(eps),
                "delta": float(delta), "columns": json.loads(columns)}

    def has_release(self, release_id: str) -> bool:
        with self.backend.transaction(write=False) as cur:
            return cur.execute("SELECT 1 FROM bndp_release WHERE budget = ? AND "
                               "release_id = ?", (self.name, release_id)).fetchone() is not None

    # composition --------------------------------------------------------------------------
    @staticmethod
    def spent_of(st: _State) -> tuple[float, float]:
        """``(epsilon, delta)`` spent: basic, the exact sums as :func:`_up` shows them;
        optimal, the composed epsilon at the cap's delta and that delta (zero before any
        release)."""
        if st.composition == "optimal":
            if not any(st.counts.values()):
                return 0.0, 0.0
            return _compose.optimal_epsilon(st.counts, double_down(st.cap_d)), st.delta
        return _up(st.spent_e), _up(st.spent_d)

    @staticmethod
    def epsilon_at(st: _State, delta: Any) -> float:
        """The epsilon of the history at ``delta`` (a decimal amount: a Fraction or a
        float, read by :func:`bndp._amounts.decimal_amount`)."""
        d = decimal_amount(delta, "delta", positive=False)
        if st.composition == "optimal":
            return _compose.optimal_epsilon(st.counts, double_down(d))
        return _up(st.spent_e) if d >= st.spent_d else math.inf

    def _refusal(self, st: _State, costs: Mapping[str, tuple[Any, Any]], label: str,
                 new_e: Fraction, new_d: Fraction) -> str | None:
        """The reason the release is refused, or None if it fits."""
        what = f"release {label!r}" if label else "the release"
        if st.composition == "optimal":
            counts = _compose.add_counts(st.counts, _counted(costs))
            eps = _compose.optimal_epsilon(counts, double_down(st.cap_d))
            if eps > st.cap_e:             # (exact: a Fraction compares with a float exactly)
                before = (_compose.optimal_epsilon(st.counts, double_down(st.cap_d))
                          if any(st.counts.values()) else 0.0)
                return (f"{what} would exceed the privacy budget {self.name!r}: by optimal "
                        f"composition its {len(costs)} column(s) take the composed epsilon at "
                        f"delta = {format_amount(st.cap_d)} from {before:.6g} to {eps:.6g}, "
                        f"above the cap {format_amount(st.cap_e, up=False)}; nothing was spent "
                        "or released")
            return None
        parts = []
        cap_e, cap_d = st.cap_e, st.cap_d
        e = new_e - st.spent_e
        d = new_d - st.spent_d
        if new_e > cap_e:
            parts.append(f"epsilon {format_amount(e)} (remaining "
                         f"{format_amount(cap_e - st.spent_e, up=False)} of "
                         f"{format_amount(cap_e, up=False)})")
        if new_d > cap_d:
            parts.append(f"delta {format_amount(d)} (remaining "
                         f"{format_amount(cap_d - st.spent_d, up=False)} of "
                         f"{format_amount(cap_d, up=False)})")
        if not parts:
            return None
        how = f" (sequential composition over {len(costs)} column(s))" if costs else ""
        return (f"{what} would exceed the privacy budget {self.name!r}: it costs "
                f"{' and '.join(parts)}{how}; nothing was spent or released")

    def _refuse(self, cur: Any, st: _State, costs: Mapping[str, tuple[Any, Any]],
                label: str, release_id: str | None) -> tuple[Fraction, Fraction]:
        if release_id is not None:
            row = cur.execute("SELECT seq, label, time FROM bndp_release WHERE budget = ? AND "
                              "release_id = ?", (self.name, release_id)).fetchone()
            if row is not None:
                when = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(float(row[2])))
                raise ReleaseRecorded(
                    f"release id {release_id!r} is already recorded under budget "
                    f"{self.name!r} (release #{row[0]}, {row[1]!r}, {when}); nothing was "
                    "drawn, spent or released", release_id=release_id)
        e = sum((c[0] for c in costs.values()), Fraction(0))
        d = sum((c[1] for c in costs.values()), Fraction(0))
        new_e, new_d = st.spent_e + e, st.spent_d + d
        why = self._refusal(st, costs, label, new_e, new_d)
        if why is not None:
            raise BudgetError(why)
        return e, d

    # writing ------------------------------------------------------------------------------
    def check(self, costs: Mapping[str, tuple[Any, Any]], label: str = "",
              release_id: str | None = None) -> None:
        """Raise :class:`bndp.BudgetError` or :class:`bndp.ReleaseRecorded` if
        :meth:`charge` would refuse now; records nothing."""
        costs = _exact_costs(costs)
        with self.backend.transaction(write=False) as cur:
            row = cur.execute(_SELECT, (self.name,)).fetchone()
            self._refuse(cur, _State(row), costs, label, release_id)

    def charge(self, costs: Mapping[str, tuple[Any, Any]], label: str = "",
               release_id: str | None = None, details: Mapping[str, dict] | None = None
               ) -> tuple[float, float]:
        """Check and record one release in one transaction; returns its cost
        ``(epsilon, delta)`` (the exact sums of the decimals charged, as
        :func:`bndp._amounts.float_up` shows them). Raises :class:`bndp.BudgetError` or
        :class:`bndp.ReleaseRecorded` (recording nothing)."""
        costs = _exact_costs(costs)
        if "\x00" in label or any("\x00" in str(k) for k in costs):
            raise ValueError("a release's label and column names must not contain a NUL "
                             "character (no store keeps it)")
        with self.backend.transaction(write=True) as cur:
            row = cur.execute(_SELECT + self.backend.lock_suffix, (self.name,)).fetchone()
            st = _State(row)
            e, d = self._refuse(cur, st, costs, label, release_id)
            seq = st.releases + 1
            cols = []
            for name, c in costs.items():
                entry = {"column": name, "epsilon": _up(c[0]), "delta": _up(c[1])}
                if details and name in details:
                    entry.update({k: v for k, v in details[name].items()
                                  if k not in ("column", "epsilon", "delta")})
                cols.append(entry)
            cost = (_up(e), _up(d))
            cur.execute(
                "INSERT INTO bndp_release (budget, seq, release_id, label, time, host, pid, "
                "version, epsilon, delta, columns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (self.name, seq, release_id, label, time.time(), socket.gethostname(),
                 os.getpid(), _version(), cost[0], cost[1], json.dumps(cols)))
            counts = _compose.add_counts(st.counts, _counted(costs))
            cur.execute(
                "UPDATE bndp_budget SET spent_epsilon = ?, spent_delta = ?, counts = ?, "
                "releases = ? WHERE name = ?",
                (_frac_text(st.spent_e + e), _frac_text(st.spent_d + d),
                 _compose.counts_to_text(counts), seq, self.name))
        return cost


def _checked_name(name: Any) -> str:
    """The budget's name, normalised to Unicode NFC (the form in which it is stored)."""
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a string; got {type(name).__name__}")
    if not name or name != name.strip() or "\x00" in name:
        raise ValueError(f"`name` must be a non-empty string without surrounding spaces or NUL "
                         f"characters; got {name!r}")
    return unicodedata.normalize("NFC", name)


def _checked_cap(epsilon: Any, delta: Any, composition: Any
                 ) -> tuple[float | None, float | None, str | None]:
    eps = None if epsilon is None else _cap_value(epsilon, "epsilon", positive=True)
    dlt = None if delta is None else _cap_value(delta, "delta", positive=False)
    if dlt is not None and dlt >= 1:
        raise ValueError(f"`delta` must be in [0, 1); got {delta!r}")
    if composition is not None and composition not in COMPOSITIONS:
        raise ValueError(f"`composition` must be one of {COMPOSITIONS}; got {composition!r}")
    if composition == "optimal":
        _compose.check_optimal_available()
    return eps, dlt, composition


def _find(cur: Any, backend: Any, name: str, lock: bool) -> tuple | None:
    """The row of the budget called ``name`` (NFC) in the store: stored under that name,
    or under a name of the same NFC form (written by a version that did not normalise);
    None if there is none."""
    row = cur.execute(_SELECT + (backend.lock_suffix if lock else ""), (name,)).fetchone()
    if row is not None:
        return row
    same = [n for (n,) in cur.execute("SELECT name FROM bndp_budget").fetchall()
            if unicodedata.normalize("NFC", n) == name]
    if len(same) > 1:
        raise ValueError(f"budget {name!r}: the store {backend.url} holds several budgets of "
                         f"this name in different Unicode forms: {', '.join(map(repr, same))}")
    if not same:
        return None
    return cur.execute(_SELECT + (backend.lock_suffix if lock else ""), (same[0],)).fetchone()


def _not_found(cur: Any, backend: Any, name: str) -> BudgetError:
    """The error for a name the store does not hold: the nearest names it holds, and how
    to create one."""
    import difflib

    names = ([unicodedata.normalize("NFC", n) for (n,) in
              cur.execute("SELECT name FROM bndp_budget").fetchall()]
             if cur is not None else [])
    near = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if near:
        hint = f"did you mean {' or '.join(map(repr, near))}?"
    elif names:
        hint = f"it holds {len(names)} other budget(s), none with a similar name"
    else:
        hint = "it holds no budget"
    return BudgetError(f"budget {name!r} does not exist in {backend.url} ({hint}); opening "
                       "never creates a budget: create it with bndp.Budget.create(store, "
                       "name, epsilon=...) or 'bndp budget create NAME --store STORE "
                       "--epsilon E'")


def _cap_differs(st: _State, eps: float | None, dlt: float | None,
                 composition: str | None) -> list[str]:
    diff = []
    if eps is not None and eps != st.epsilon:
        diff.append(f"epsilon {eps!r} (recorded: {st.epsilon!r})")
    if dlt is not None and dlt != st.delta:
        diff.append(f"delta {dlt!r} (recorded: {st.delta!r})")
    if composition is not None and composition != st.composition:
        diff.append(f"composition {composition!r} (recorded: {st.composition!r})")
    return diff


def open_ledger(store: Any, name: Any, epsilon: Any = None, delta: Any = None,
                composition: Any = None) -> Ledger:
    """Open the existing budget ``name`` of ``store`` (never creating it nor the store);
    a cap given must be the recorded one. See :meth:`bndp.Budget.open`."""
    key = _checked_name(name)
    eps, dlt, composition = _checked_cap(epsilon, delta, composition)
    backend = backend_for(store)
    why = backend.missing()
    if why is not None:
        raise StoreNotFound(why)
    with backend.transaction(write=False) as cur:
        schema = backend.has_schema(cur)
        row = _find(cur, backend, key, lock=False) if schema else None
        if row is None:
            raise _not_found(cur if schema else None, backend, key)
    st = _State(row)
    diff = _cap_differs(st, eps, dlt, composition)
    if diff:
        raise ValueError(f"budget {st.name!r} in {backend.url} has another cap: "
                         f"{', '.join(diff)}; a budget's cap never changes (open it without "
                         "a cap, or create a budget of a new name)")
    if st.composition == "optimal":
        _compose.check_optimal_available()
    return Ledger(backend, st.name)


def create_ledger(store: Any, name: Any, epsilon: Any, delta: Any = 0.0,
                  composition: Any = "basic", exist_ok: bool = False) -> Ledger:
    """Create the budget ``name`` of ``store`` with its cap (and the store, an SQLite file
    whose directory exists, if missing). See :meth:`bndp.Budget.create`."""
    key = _checked_name(name)
    if epsilon is None:
        raise ValueError("`epsilon` is required to create a budget (its cap)")
    eps, dlt, composition = _checked_cap(epsilon, 0.0 if delta is None else delta,
                                         composition or "basic")
    if not isinstance(exist_ok, bool):
        raise TypeError(f"`exist_ok` must be a bool; got {type(exist_ok).__name__}")
    backend = backend_for(store, create=True)
    with backend.transaction(write=True) as cur:
        backend.create_schema(cur)
        row = _find(cur, backend, key, lock=True)
        if row is None:
            cur.execute(
                "INSERT INTO bndp_budget (name, epsilon, delta, composition, spent_epsilon, "
                "spent_delta, counts, releases, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, eps, dlt, composition, "0/1", "0/1", "[]", 0, time.time()))
            return Ledger(backend, key)
    st = _State(row)
    if not exist_ok:
        raise ValueError(f"budget {st.name!r} already exists in {backend.url} (epsilon = "
                         f"{st.epsilon!r}, delta = {st.delta!r}, {st.composition} "
                         "composition): open it with bndp.Budget.open, or give "
                         "exist_ok=True to accept it when its cap is this one")
    diff = _cap_differs(st, eps, dlt, composition)
    if diff:
        raise ValueError(f"budget {st.name!r} already exists in {backend.url} with another "
                         f"cap: {', '.join(diff)}; a budget's cap never changes (open it "
                         "without a cap, or create a budget of a new name)")
    return Ledger(backend, st.name)
