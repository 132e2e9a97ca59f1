"""The two stores of a ledger: SQLite (a file, the standard library) and PostgreSQL
(psycopg 3). Each gives a connection and a write transaction that serialises the charges of
one budget; the SQL itself is shared (:mod:`bndp._ledger`).

SQLite: WAL journal, ``synchronous=FULL`` (a committed charge survives a power loss as well
as a crash), one ``BEGIN IMMEDIATE`` transaction per charge (the database's write lock is
taken when the transaction starts, so the check and the charge see no other writer), a busy
timeout for concurrent writers.

PostgreSQL: ``READ COMMITTED`` transactions in which the budget's row is read with
``SELECT ... FOR UPDATE``: concurrent charges of one budget queue on that row lock; the
release-id uniqueness is also a constraint of the table.
"""

from __future__ import annotations

import os
import threading
from typing import Any

__all__ = ["Backend", "SQLiteBackend", "PostgresBackend", "backend_for"]

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS bndp_budget (
        name TEXT PRIMARY KEY,
        epsilon DOUBLE PRECISION NOT NULL,
        delta DOUBLE PRECISION NOT NULL,
        composition TEXT NOT NULL,
        spent_epsilon TEXT NOT NULL,
        spent_delta TEXT NOT NULL,
        counts TEXT NOT NULL,
        releases BIGINT NOT NULL,
        created DOUBLE PRECISION NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS bndp_release (
        budget TEXT NOT NULL REFERENCES bndp_budget(name),
        seq BIGINT NOT NULL,
        release_id TEXT,
        label TEXT NOT NULL,
        time DOUBLE PRECISION NOT NULL,
        host TEXT NOT NULL,
        pid BIGINT NOT NULL,
        version TEXT NOT NULL,
        epsilon DOUBLE PRECISION NOT NULL,
        delta DOUBLE PRECISION NOT NULL,
        columns TEXT NOT NULL,
        PRIMARY KEY (budget, seq),
        UNIQUE (budget, release_id)
    )""",
)



class StoreNotFound(ValueError):
    """A SQLite store's path names no file that can be one (its directory is missing, or
    it is a directory): an I/O error for the command line (exit 1)."""

class Backend:
    """A store's connection and transactions. ``?`` placeholders in the shared SQL."""

    #: appended to the SELECT of the budget row inside a write transaction
    lock_suffix = ""
    url = ""
    #: the SQLite file (None for a server)
    path: str | None = None

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._conn: Any = None
        self._pid = -1

    def conn(self) -> Any:
        """The connection of this process (a new one after a fork)."""
        if self._conn is None or self._pid != os.getpid():
            self._conn = self._connect()
            self._pid = os.getpid()
        return self._conn

    def sql(self, text: str) -> str:
        return text

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            try:
                self._conn.close()
            except Exception:  # pragma: no cover - closing a broken connection
                pass
        self._conn = None

    def _connect(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def begin(self, cur: Any, write: bool) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def create_schema(self) -> None:
        with self.transaction(write=True) as cur:
            for stmt in SCHEMA:
                cur.execute(stmt)

    def transaction(self, write: bool) -> "_Transaction":
        return _Transaction(self, write)


class _Transaction:
    def __init__(self, backend: Backend, write: bool) -> None:
        self.b = backend
        self.write = write

    def __enter__(self) -> Any:
        self.b._lock.acquire()
        try:
            conn = self.b.conn()
            self.cur = conn.cursor()
            self.b.begin(self.cur, self.write)
        except BaseException:
            self.b._lock.release()
            raise
        return _Cursor(self.cur, self.b)

    def __exit__(self, et: Any, ev: Any, tb: Any) -> None:
        conn = self.b._conn
        try:
            if et is None:
                try:
                    conn.commit()
                except BaseException:
                    self._rollback(conn)  # a failed commit leaves nothing open
                    raise
            else:
                self._rollback(conn)
        finally:
            try:
                self.cur.close()
            except Exception:  # pragma: no cover
                pass
            self.b._lock.release()

    def _rollback(self, conn: Any) -> None:
        try:
            conn.rollback()
        except Exception:  # pragma: no cover - a broken connection: dropped
            self.b.close()


class _Cursor:
    """A cursor taking ``?`` placeholders on either store."""

    def __init__(self, cur: Any, backend: Backend) -> None:
        self._cur = cur
        self._b = backend

    def execute(self, text: str, params: tuple = ()) -> Any:
        self._cur.execute(self._b.sql(text), params)
        return self

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> list:
        return self._cur.fetchall()


class SQLiteBackend(Backend):
    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = os.path.abspath(os.fspath(path))
        self.url = self.path
        d = os.path.dirname(self.path)
        if not os.path.isdir(d):
            raise StoreNotFound(f"budget store {path!r}: directory {d} does not exist")
        if os.path.isdir(self.path):
            raise StoreNotFound(f"budget store {path!r} is a directory: name an SQLite file "
                                "in it")

    def _connect(self) -> Any:
        import sqlite3

        # isolation_level=None: transactions are begun explicitly (BEGIN IMMEDIATE)
        assert self.path is not None
        conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def begin(self, cur: Any, write: bool) -> None:
        cur.execute("BEGIN IMMEDIATE" if write else "BEGIN")


class PostgresBackend(Backend):
    lock_suffix = " FOR UPDATE"

    def __init__(self, url: str) -> None:
        super().__init__()
        self._dsn = url
        self.url = _redact(url)
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise ImportError("a budget store on PostgreSQL needs psycopg 3; install it with: "
                              "pip install 'bndp[postgres]'") from None

    def sql(self, text: str) -> str:
        return text.replace("?", "%s")

    def _connect(self) -> Any:
        import psycopg

        try:
            return psycopg.connect(self._dsn, autocommit=False)
        except psycopg.OperationalError as exc:
            raise ConnectionError(f"budget store: cannot connect to PostgreSQL: "
                                  f"{' '.join(str(exc).split())}") from None
        except psycopg.ProgrammingError as exc:     # a malformed URL or parameter
            raise ValueError(f"budget store {self.url}: not a valid PostgreSQL URL: "
                             f"{' '.join(str(exc).split())}") from None

    def begin(self, cur: Any, write: bool) -> None:
        # psycopg opens the transaction on the first statement (autocommit off)
        pass

    def create_schema(self) -> None:
        with self.transaction(write=True) as cur:
            # concurrent first opens: one creates the tables, the others wait for it
            cur.execute("SELECT pg_advisory_xact_lock(?)", (0x626E6470,))
            for stmt in SCHEMA:
                cur.execute(stmt)


def _redact(url: str) -> str:
    """The URL as shown in messages: without its password."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.hostname or ""
        netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return "postgresql://..."


def backend_for(store: Any) -> Backend:
    """The backend of ``store``: a ``postgresql://`` (or ``postgres://``) URL, or a path to
    an SQLite file."""
    if isinstance(store, bytes) or not isinstance(store, (str, os.PathLike)):
        raise TypeError(f"`store` must be a file path or a postgresql:// URL; got "
                        f"{type(store).__name__}")
    s = os.fspath(store)
    if not s:
        raise ValueError("`store` must be a file path or a postgresql:// URL; got ''")
    if isinstance(store, str) and s.startswith(("postgresql://", "postgres://")):
        return PostgresBackend(s)
    if isinstance(store, str) and "://" in s:
        scheme = s.split("://", 1)[0]
        raise ValueError(f"`store` {s!r}: unknown URL scheme {scheme!r}; give a file path "
                         "(SQLite) or a postgresql:// URL")
    return SQLiteBackend(s)
