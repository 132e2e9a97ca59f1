"""The two stores of a ledger: SQLite (a file, the standard library) and PostgreSQL
(psycopg 3). Each gives a connection and a write transaction that serialises the charges of
one budget; the SQL itself is shared (:mod:`bndp._ledger`).

SQLite: a rollback journal (``journal_mode=TRUNCATE``) with ``synchronous=FULL``: a
committed charge is in the database file itself, synced to disk (it survives a power loss
as well as a crash, and a copy of that one file holds it); one ``BEGIN IMMEDIATE``
transaction per charge (the database's write lock is taken when the transaction starts, so
the check and the charge see no other writer), a busy timeout for concurrent writers. A
store left in WAL mode by an earlier version is switched to the rollback journal when no
other connection holds it; while one does, each write transaction is followed by a full
checkpoint, which copies the write-ahead log into the database file. Opening a store never
creates its file: only creating a budget does.

PostgreSQL: ``READ COMMITTED`` transactions in which the budget's row is read with
``SELECT ... FOR UPDATE``: concurrent charges of one budget queue on that row lock; the
release-id uniqueness is also a constraint of the table.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any

from ..exceptions import StoreNotFound

__all__ = ["Backend", "SQLiteBackend", "PostgresBackend", "backend_for", "scrub"]

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

    def create_schema(self, cur: Any) -> None:
        """Create the ledger's tables if missing, in the write transaction of ``cur``."""
        for stmt in SCHEMA:
            cur.execute(stmt)

    def has_schema(self, cur: Any) -> bool:  # pragma: no cover - abstract
        """Whether the store holds the ledger's tables."""
        raise NotImplementedError

    def after_write(self, conn: Any) -> None:
        """Run after a write transaction's commit (nothing by default)."""

    def missing(self) -> str | None:
        """Why the store cannot be opened without creating it (None: it exists or is a
        server)."""
        return None

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
                if self.write:
                    self.b.after_write(conn)
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
    """An SQLite file. ``create``: the connection may create the file (creating a budget);
    otherwise it must exist."""

    def __init__(self, path: str, create: bool = False) -> None:
        super().__init__()
        self.path = os.path.abspath(os.fspath(path))
        self.url = self.path
        self.create = create
        d = os.path.dirname(self.path)
        if not os.path.isdir(d):
            raise StoreNotFound(f"budget store {path!r}: directory {d} does not exist")
        if os.path.isdir(self.path):
            raise StoreNotFound(f"budget store {path!r} is a directory: name an SQLite file "
                                "in it")

    def _connect(self) -> Any:
        import sqlite3

        from urllib.parse import quote

        # isolation_level=None: transactions are begun explicitly (BEGIN IMMEDIATE);
        # mode=rw: a connection that only opens never creates the file
        assert self.path is not None
        uri = f"file:{quote(self.path)}?mode={'rwc' if self.create else 'rw'}"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=60.0, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.OperationalError as exc:
            why = self.missing()
            if why is not None:
                raise StoreNotFound(why) from None
            raise sqlite3.OperationalError(f"budget store {self.path}: {exc}") from None
        try:
            # the rollback journal: a committed transaction is in the database file. A
            # store in WAL mode stays so while another connection holds it (the switch
            # needs the only connection): after_write then checkpoints.
            conn.execute("PRAGMA journal_mode=TRUNCATE")
        except sqlite3.OperationalError:
            pass
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def begin(self, cur: Any, write: bool) -> None:
        cur.execute("BEGIN IMMEDIATE" if write else "BEGIN")

    def has_schema(self, cur: Any) -> bool:
        return cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                           "name = 'bndp_budget'").fetchone() is not None

    def after_write(self, conn: Any) -> None:
        # nothing to do under the rollback journal (the pragma answers at once); in WAL
        # mode (see _connect), the committed transaction is copied into the database file
        try:
            conn.execute("PRAGMA wal_checkpoint(FULL)").fetchall()
        except Exception:  # pragma: no cover - the charge is committed whatever happens
            pass

    def missing(self) -> str | None:
        assert self.path is not None
        if os.path.isfile(self.path):
            return None
        return (f"there is no budget store at {self.path} (opening a budget never creates "
                "one: create the budget with bndp.Budget.create or 'bndp budget create')")


class PostgresBackend(Backend):
    lock_suffix = " FOR UPDATE"

    def __init__(self, url: str) -> None:
        super().__init__()
        self._dsn = url
        self.url, secrets = _redact(url)
        self._secrets = frozenset(secrets)
        _SECRETS.update(secrets)
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise ImportError("a budget store on PostgreSQL needs psycopg 3; install it with: "
                              "pip install 'bndp[postgres]'") from None

    def sql(self, text: str) -> str:
        return text.replace("?", "%s")

    def _connect(self) -> Any:
        import psycopg

        # psycopg's messages may quote the URL or parts of it: shown without its secrets
        try:
            return psycopg.connect(self._dsn, autocommit=False)
        except psycopg.ProgrammingError as exc:     # a malformed URL or parameter
            raise ValueError(f"budget store {self.url}: not a valid PostgreSQL URL: "
                             f"{self.scrub(exc)}") from None
        except (psycopg.Error, OSError) as exc:
            raise ConnectionError(f"budget store {self.url}: cannot connect to PostgreSQL: "
                                  f"{self.scrub(exc)}") from None
        except Exception as exc:  # pragma: no cover - whatever else parsing the URL raises
            raise ValueError(f"budget store {self.url}: not a valid PostgreSQL URL: "
                             f"{self.scrub(exc)}") from None

    def scrub(self, exc: Any) -> str:
        """``exc``'s text on one line, this URL's secrets masked."""
        return _mask(" ".join(str(exc).split()), self._secrets)

    def has_schema(self, cur: Any) -> bool:
        return cur.execute("SELECT to_regclass('bndp_budget') IS NOT NULL").fetchone()[0]

    def begin(self, cur: Any, write: bool) -> None:
        # psycopg opens the transaction on the first statement (autocommit off)
        pass

    def create_schema(self, cur: Any) -> None:
        # concurrent creations: one creates the tables and its budget, the others wait
        cur.execute("SELECT pg_advisory_xact_lock(?)", (0x626E6470,))
        super().create_schema(cur)


#: the query parameters of a PostgreSQL URL whose values are masked wherever it is shown
SECRET_PARAMS = frozenset({"password", "sslpassword", "passfile", "sslkey"})
#: every secret of the PostgreSQL URLs given in this process (see :func:`scrub`)
_SECRETS: set[str] = set()
_MASK = "***"


def _redact(url: str) -> tuple[str, set[str]]:
    """The URL as shown (its password, in the user information or as a ``password=``
    parameter, and the other :data:`SECRET_PARAMS` masked) and the secrets masked (as
    written and percent-decoded). Parsed as libpq parses a URI: the user information ends
    at the first ``@`` before any ``/``; the parameters follow the first ``?``."""
    from urllib.parse import unquote

    scheme, sep, rest = url.partition("://")
    secrets: set[str] = set()
    at = len(rest)
    for i, ch in enumerate(rest):
        if ch in "@/":
            at = i
            break
    if at < len(rest) and rest[at] == "@":
        user, colon, pw = rest[:at].partition(":")
        if colon:
            secrets.add(pw)
            rest = f"{user}:{_MASK}{rest[at:]}"
    elif "@" in rest.partition("?")[0]:
        # a password with an unencoded "/": libpq reads it as a host, port and database,
        # and may quote them in its messages; masked as the password it was meant to be
        user, colon, pw = rest.partition("?")[0].rpartition("@")[0].partition(":")
        if colon:
            secrets.add(pw)
    head, q, query = rest.partition("?")
    if q:
        params = []
        for item in query.split("&"):
            key, eq, value = item.partition("=")
            if eq and unquote(key).strip().lower() in SECRET_PARAMS:
                secrets.add(value)
                item = f"{key}={_MASK}"
            params.append(item)
        rest = head + q + "&".join(params)
    secrets = {x for x in secrets | {unquote(x) for x in secrets} if x}
    # a secret repeated elsewhere in the URL (in another parameter) is masked there too
    return _mask(scheme + sep + rest, secrets), secrets


def _mask(text: str, secrets: Any) -> str:
    for x in sorted(secrets, key=len, reverse=True):
        text = text.replace(x, _MASK)
    return text


def scrub(text: str) -> str:
    """``text`` with every secret of the PostgreSQL URLs given in this process masked (for
    the messages of errors raised where the URL is not known)."""
    return _mask(text, set(_SECRETS))


#: libpq's connection keywords: a store string made of ``keyword=value`` words with one of
#: them is a keyword/value connection string, not an SQLite path
_CONNINFO_KEYS = frozenset({"host", "hostaddr", "port", "dbname", "user", "password",
                            "passfile", "sslmode", "sslpassword", "sslkey", "service",
                            "options", "application_name", "connect_timeout"})


def _slash_in_password(url: str) -> bool:
    """Whether a PostgreSQL URL has an ``@`` after a ``/`` before its parameters: user
    information (a password) holding an unencoded ``/``."""
    rest = url.partition("://")[2].partition("?")[0]
    first = min((i for i in (rest.find("@"), rest.find("/")) if i >= 0), default=-1)
    return first >= 0 and rest[first] == "/" and "@" in rest[first:]


def _looks_like_conninfo(text: str) -> bool:
    keys = "|".join(sorted(_CONNINFO_KEYS))
    return re.search(rf"(?:^|\s)(?:{keys})\s*=", text, re.IGNORECASE) is not None


def _mask_conninfo(text: str) -> str:
    """A keyword/value connection string with the values of :data:`SECRET_PARAMS` masked
    (plain or single-quoted, as libpq writes them)."""
    keys = "|".join(sorted(SECRET_PARAMS))
    return re.sub(rf"((?:^|\s)(?:{keys})\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)",
                  rf"\g<1>{_MASK}", text, flags=re.IGNORECASE)


def backend_for(store: Any, create: bool = False) -> Backend:
    """The backend of ``store``: a ``postgresql://`` (or ``postgres://``) URL, or a path to
    an SQLite file (``create``: its connection may create the file)."""
    if isinstance(store, bytes) or not isinstance(store, (str, os.PathLike)):
        raise TypeError(f"`store` must be a file path or a postgresql:// URL; got "
                        f"{type(store).__name__}")
    s = os.fspath(store)
    if not s:
        raise ValueError("`store` must be a file path or a postgresql:// URL; got ''")
    if isinstance(store, str) and s.startswith(("postgresql://", "postgres://")):
        if _slash_in_password(s):
            # libpq would read the password's tail as a host, port and database and quote
            # its pieces in messages that no mask can find: refused before connecting
            raise ValueError(f"`store` {_redact(s)[0]!r}: the URL's user information "
                             "holds an unencoded '/' (a password with '/'?): percent-"
                             "encode it as %2F")
        return PostgresBackend(s)
    if isinstance(store, str) and _looks_like_conninfo(s):
        raise ValueError(f"`store` {_mask_conninfo(s)!r} is a keyword/value connection "
                         "string: give a postgresql:// URL (or a file path for SQLite)")
    if isinstance(store, str) and "://" in s:
        scheme = s.split("://", 1)[0]
        raise ValueError(f"`store` {_redact(s)[0]!r}: unknown URL scheme {scheme!r}; give a "
                         "file path (SQLite) or a postgresql:// URL")
    return SQLiteBackend(s, create=create)
