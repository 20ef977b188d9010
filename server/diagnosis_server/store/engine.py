"""Async engines for the store: a SQLite file (WAL, foreign keys, busy timeout) or PostgreSQL.

SQLite: one connection a process (aiosqlite runs it in its own thread), so coroutines of this
process queue for it instead of fighting over the file lock; BEGIN is emitted by us, IMMEDIATE for
writes, so a write transaction holds the write lock from its start and another process waits on
the busy timeout instead of failing on a lock upgrade. PostgreSQL: a normal pool.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import event, make_url
from sqlalchemy.engine import URL, Connection
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import AsyncAdaptedQueuePool, ConnectionPoolEntry

from diagnosis_server.store.errors import StoreError

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///var/diagnosis.db"

SQLITE_BUSY_TIMEOUT_MS = 15_000
# Execution option naming the statement that opens a transaction on SQLite.
SQLITE_BEGIN_OPTION = "diagnosis_sqlite_begin"
_WAL_ATTEMPTS = 40
SUPPORTED_DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")


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
    # The driver must not open transactions by itself: ``_sqlite_begin`` does.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
    finally:
        cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    conn.exec_driver_sql(str(conn.get_execution_options().get(SQLITE_BEGIN_OPTION, "BEGIN")))


def create_engine(url: str | URL) -> AsyncEngine:
    """An async engine for ``url`` (the SQLite file's folder is created if missing)."""
    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_async_engine(parsed, pool_pre_ping=True, pool_size=5, max_overflow=10)
    _ensure_sqlite_parent(parsed)
    # One connection, kept open (an in-memory database lives as long as it), handed to one
    # coroutine at a time: transactions of this process never interleave on it.
    engine = create_async_engine(
        parsed, poolclass=AsyncAdaptedQueuePool, pool_size=1, max_overflow=0, pool_timeout=60, pool_recycle=-1
    )
    event.listen(engine.sync_engine, "connect", _sqlite_connect)
    event.listen(engine.sync_engine, "begin", _sqlite_begin)
    return engine


async def enable_wal(engine: AsyncEngine) -> None:
    """Puts a SQLite file in WAL mode (a property of the file, kept once set).

    The pragma takes the file's exclusive lock and does not wait on the busy timeout, so two
    instances creating one file at once retry here, without blocking the event loop.
    """
    if engine.dialect.name != "sqlite" or is_sqlite_memory(engine.url):
        return
    delay = 0.01
    for _ in range(_WAL_ATTEMPTS):
        async with engine.connect() as conn:
            raw = await conn.get_raw_connection()
            driver: Any = raw.driver_connection
            try:
                cursor = await driver.execute("PRAGMA journal_mode = WAL")
                row = await cursor.fetchone()
                await cursor.close()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise StoreError(f"cannot put the SQLite database in WAL mode: {exc}") from exc
                row = None
        if row is not None and str(row[0]).lower() == "wal":
            return
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.25)
    raise StoreError("cannot put the SQLite database in WAL mode: it stayed locked")


def writer(engine: AsyncEngine) -> AsyncEngine:
    """The same engine (same pool) whose transactions take SQLite's write lock at BEGIN."""
    if engine.dialect.name != "sqlite":
        return engine
    return engine.execution_options(**{SQLITE_BEGIN_OPTION: "BEGIN IMMEDIATE"})
