"""The store's engines: a SQLite file (WAL, foreign keys, busy timeout) or PostgreSQL.

SQLite: the URL users give (``sqlite+aiosqlite:///path``, or ``sqlite+aiosqlite://`` in memory) is run by
the synchronous pysqlite driver on the store's own worker thread (``runners.SqliteRunner``), one
connection a process, kept open (an in-memory database lives as long as it): transactions of this
process never interleave on it, and each costs one hand-off to that thread. The driver opens no
transaction by itself: the runner emits BEGIN, IMMEDIATE for writes, so a write transaction holds the
write lock from its start and another process waits on the busy timeout instead of failing on a lock
upgrade. PostgreSQL: an asyncpg pool.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy import event, make_url
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool

from diagnosis_server.store.errors import StoreError

SQLITE_BUSY_TIMEOUT_MS = 15_000
_WAL_ATTEMPTS = 40
SUPPORTED_DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")
# The driver that runs a SQLite URL: the store's worker thread calls it synchronously.
SQLITE_DRIVER = "sqlite+pysqlite"


def parse_url(url: str | URL) -> URL:
    """A database URL the store can use, or StoreError saying why not."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"not a database URL: {url!r}") from exc
    if parsed.drivername not in SUPPORTED_DRIVERS:
        raise StoreError(
            f"unsupported database driver {parsed.drivername!r}: use one of {', '.join(SUPPORTED_DRIVERS)}"
        )
    return parsed


def is_sqlite_memory(url: URL) -> bool:
    database = url.database or ""
    return database in ("", ":memory:") or "mode=memory" in database


def sqlite_file(url: URL) -> Path | None:
    """The path of a SQLite file URL (None for PostgreSQL, in-memory and ``file:`` URIs)."""
    if url.get_backend_name() != "sqlite" or is_sqlite_memory(url) or (url.database or "").startswith("file:"):
        return None
    return Path(url.database or "").expanduser().absolute()


def describe_location(url: URL) -> str:
    """Where a store is, for messages: a SQLite file's path, else the URL with its password hidden."""
    path = sqlite_file(url)
    if path is not None:
        return repr(str(path))
    if url.get_backend_name() == "sqlite":
        return "an in-memory SQLite database" if is_sqlite_memory(url) else repr(url.database)
    return url.render_as_string(hide_password=True)


def _ensure_sqlite_parent(url: URL) -> None:
    database = url.database or ""
    if is_sqlite_memory(url) or database.startswith("file:"):
        return
    path = Path(database).expanduser()
    if path.is_dir():
        raise StoreError(f"the SQLite database {database!r} is a folder, not a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder of the SQLite database {database!r}: {exc}") from exc


def _sqlite_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    # The driver must not open transactions by itself: the runner does.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
    finally:
        cursor.close()


DEFAULT_STORE_TIMEOUT_S = 10.0


def create_engine(url: str | URL, *, timeout_s: float = DEFAULT_STORE_TIMEOUT_S) -> Engine | AsyncEngine:
    """The store's engine for ``url``: SQLite -> a synchronous pysqlite Engine holding one connection
    (the SQLite file's folder is created if missing); PostgreSQL -> an asyncpg AsyncEngine whose every
    statement, connection attempt and pool checkout is bounded by ``timeout_s`` (a hung server fails the
    call, which the store reports as a StoreError: UNAVAILABLE, and the probe turns health NOT_SERVING)."""
    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_async_engine(
            parsed,
            pool_pre_ping=True,
            pool_size=5,
            max_overflow=10,
            pool_timeout=timeout_s,
            connect_args={"timeout": timeout_s, "command_timeout": timeout_s},
        )
    _ensure_sqlite_parent(parsed)
    # One connection, kept open, used by the store's worker thread only (made there, closed there).
    engine = create_sync_engine(
        parsed.set(drivername=SQLITE_DRIVER),
        poolclass=StaticPool,
        connect_args={"check_same_thread": False},
    )
    # A pool event only: an engine with no listeners of its own skips the per-statement event dispatch.
    event.listen(engine, "connect", _sqlite_connect)
    return engine


def enable_wal(engine: Engine) -> None:
    """Puts a SQLite file in WAL mode (a property of the file, kept once set). Blocking: call it off the loop.

    The pragma takes the file's exclusive lock and does not wait on the busy timeout, so two
    instances creating one file at once retry here.
    """
    if engine.dialect.name != "sqlite" or is_sqlite_memory(engine.url):
        return
    delay = 0.01
    for _ in range(_WAL_ATTEMPTS):
        with engine.connect() as conn:
            driver: Any = conn.connection.driver_connection
            try:
                row = driver.execute("PRAGMA journal_mode = WAL").fetchone()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise StoreError(f"cannot put the SQLite database in WAL mode: {exc}") from exc
                row = None
            except sqlite3.Error as exc:
                raise StoreError(f"cannot put the SQLite database in WAL mode: {exc}") from exc
        if row is not None and str(row[0]).lower() == "wal":
            return
        time.sleep(delay)
        delay = min(delay * 2, 0.25)
    raise StoreError("cannot put the SQLite database in WAL mode: it stayed locked")
