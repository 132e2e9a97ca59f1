"""A consistent copy of an SQLite budget store, made with SQLite's online backup API while
other processes may be charging it (:func:`backup`)."""

from __future__ import annotations

import os
from typing import Any

from ._backends import SQLiteBackend, StoreNotFound, backend_for

__all__ = ["backup"]


def backup(store: Any, dest: Any) -> str:
    """Copy the SQLite budget store ``store`` to the new file ``dest``.

    The copy is made with SQLite's online backup API (:meth:`sqlite3.Connection.backup`):
    it is one consistent snapshot of the store, every committed charge included, taken
    while other processes may hold the store open and charge it. It is a store of its own
    (one file): :meth:`bndp.Budget.open` opens it. This is the way to copy a ledger; on
    the command line, ``bndp budget backup``.

    Parameters
    ----------
    store : str or os.PathLike
        The SQLite file of the store (it must exist and hold the budget tables).
    dest : str or os.PathLike
        The copy's path: a file that does not exist yet, in a directory that does.

    Returns
    -------
    str
        The copy's absolute path.

    Raises
    ------
    ValueError
        ``store`` is a PostgreSQL URL (copy it with ``pg_dump``), is missing or is not a
        budget store; ``dest`` exists (never overwritten), or its directory does not.
    TypeError
        ``store`` or ``dest`` of the wrong type.

    Examples
    --------
    >>> import os, tempfile
    >>> import bndp
    >>> folder = tempfile.mkdtemp()
    >>> b = bndp.Budget.create(os.path.join(folder, "ledger.db"), "survey", epsilon=1.0)
    >>> _ = b.spend(0.25)
    >>> copy = bndp.budget.backup(b.store, os.path.join(folder, "copy.db"))
    >>> bndp.Budget.open(copy, "survey").spent
    Cost(epsilon=0.25, delta=0.0)
    """
    import sqlite3

    src = backend_for(store)
    if not isinstance(src, SQLiteBackend):
        raise ValueError(f"budget store {src.url} is on PostgreSQL: copy it with the "
                         "server's tools (pg_dump -t bndp_budget -t bndp_release), not "
                         "with bndp's backup")
    why = src.missing()
    if why is not None:
        raise StoreNotFound(why)
    if isinstance(dest, bytes) or not isinstance(dest, (str, os.PathLike)):
        raise TypeError(f"`dest` must be a file path; got {type(dest).__name__}")
    target = os.path.abspath(os.fspath(dest))
    if not os.fspath(dest) or "\x00" in target:
        raise ValueError(f"`dest` must be a file path; got {os.fspath(dest)!r}")
    if not os.path.isdir(os.path.dirname(target)):
        raise StoreNotFound(f"backup {target}: directory {os.path.dirname(target)} does not "
                            "exist")
    if os.path.lexists(target):
        raise ValueError(f"backup {target} exists: the backup never overwrites a file; "
                         "choose a new name")
    with src.transaction(write=False) as cur:
        if not src.has_schema(cur):
            raise ValueError(f"{src.path} is not a budget store (it holds no bndp_budget "
                             "table)")
    # claim the name first (O_EXCL): a file that appears meanwhile is never overwritten
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ValueError(f"backup {target} exists: the backup never overwrites a file; "
                         "choose a new name") from None
    os.close(fd)
    try:
        out = sqlite3.connect(target, isolation_level=None)
        try:
            with src._lock:
                src.conn().backup(out)
            # the copy is one self-contained file: a rollback journal, synced
            out.execute("PRAGMA journal_mode=TRUNCATE")
            out.execute("PRAGMA synchronous=FULL")
            check = out.execute("PRAGMA integrity_check").fetchone()[0]
            if check != "ok":  # pragma: no cover - a corrupt source
                raise ValueError(f"backup {target}: the copy fails SQLite's integrity check: "
                                 f"{check}")
        finally:
            out.close()
        for suffix in ("-journal", "-wal", "-shm"):
            extra = target + suffix
            if os.path.exists(extra) and os.path.getsize(extra) == 0:
                os.unlink(extra)
    except BaseException:
        for suffix in ("", "-journal", "-wal", "-shm"):
            try:
                os.unlink(target + suffix)
            except OSError:
                pass
        raise
    return target
