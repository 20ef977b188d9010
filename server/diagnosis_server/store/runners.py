"""Run one repository operation as one transaction: the SQL is a plain function over a sync Connection.

Every operation of the repository is a synchronous function of a SQLAlchemy Core ``Connection``
(``store/sql.py``); a runner opens the transaction, calls it, and commits (or rolls back on any error):

- ``SqliteRunner``: the synchronous pysqlite engine on a dedicated worker thread. An operation is one
  hand-off to that thread and back, whatever number of statements it runs. Reads and writes share the
  thread and its one connection: SQLite has one writer at a time anyway, the thread serialises this
  process's transactions in submission order (a run's writes land in the order it made them), and a
  reader pool would buy little here beyond contention for the GIL. The event loop never waits on the
  file: a write waiting on another process's lock (the busy timeout) blocks only the worker.
- ``PostgresRunner``: the asyncpg AsyncEngine; the function runs under ``AsyncConnection.run_sync``.

A write once begun ends (commit or rollback) even when its caller is cancelled: the cancellation is
re-raised once the write has ended. A transaction cut off mid-statement would leave its connection
invalidated, which on SQLite can leave the database's write lock held.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncEngine

from diagnosis_server.store.engine import enable_wal, is_sqlite_memory

_R = TypeVar("_R")


class StoreRunner(Protocol):
    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        ...

    async def prepare(self) -> None:
        """Readies the database before its first transaction (WAL mode on a SQLite file)."""
        ...

    async def read(self, operation: Callable[[Connection], _R]) -> _R:
        """``operation`` in a transaction that is rolled back (it reads only)."""
        ...

    async def write(self, operation: Callable[[Connection], _R]) -> _R:
        """``operation`` in a write transaction, committed when it returns, rolled back when it raises."""
        ...

    async def close(self) -> None: ...


async def _to_the_end(future: asyncio.Future[_R]) -> _R:
    """The future's result; a cancelled caller waits for it to end before its cancellation goes on."""
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        future.add_done_callback(_retrieve)
        await asyncio.wait({future})
        raise


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _run_for(loop: asyncio.AbstractEventLoop, future: asyncio.Future[_R], call: Callable[[], _R]) -> None:
    """On the worker thread: ``call()``, its result or exception handed to ``future`` on ``loop``."""
    if future.cancelled():  # a reader gone before its turn came (a write is shielded: never cancelled)
        return
    try:
        result = call()
    except BaseException as exc:
        _hand_back(loop, _set_exception, future, exc)
    else:
        _hand_back(loop, _set_result, future, result)


def _hand_back(loop: asyncio.AbstractEventLoop, setter: Callable[..., None], *args: object) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits for this any more
        loop.call_soon_threadsafe(setter, *args)


def _set_result(future: asyncio.Future[_R], result: _R) -> None:
    if not future.done():
        future.set_result(result)


def _set_exception(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


class SqliteRunner:
    """Transactions on SQLite: on the event loop when they cannot block, else on the store's worker thread.

    The worker thread keeps one SQLAlchemy Connection open between transactions (the engine's one pooled
    connection) and opens each transaction on the driver itself: BEGIN IMMEDIATE for a write (the write
    lock from the start), a deferred BEGIN for a read.

    The hot path (``write_raw``/``read_raw``: DB-API functions of ``sqlite_ops``) runs on the loop when it
    cannot wait: a file's loop connection has a busy timeout of 0, so its BEGIN IMMEDIATE takes the write
    lock at once or fails at once (another process or the worker holds it), and in WAL mode with
    synchronous=NORMAL a commit writes the log without syncing it. A transaction that meets a lock anywhere
    is rolled back and run again on the worker thread, which waits on the busy timeout like every other
    transaction there. Checkpoints are SQLite's own: the connection whose commit takes the log past 1,000
    pages copies it back into the database (PASSIVE, ``wal_autocheckpoint``), on the loop for the loop's
    connection: done there, it catches up with the log, which then starts over (a checkpoint on another thread
    runs beside the loop's writes and never does: the log grows without bound). An in-memory database has one
    connection and no other process: its transactions run on the loop whenever the worker thread has nothing
    queued (so the two never share the connection at once).
    """

    YIELD_AFTER_S = 0.001

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._executor: ThreadPoolExecutor | None = None
        # Touched on the worker thread only (and on the loop, for an in-memory database, while the worker is idle).
        self._conn: Connection | None = None
        self._memory = is_sqlite_memory(engine.url)
        database = engine.url.database or ""
        # A plain file: the loop gets a connection of its own. (A ``file:`` URI is left to the worker.)
        self._path = None if self._memory or database.startswith("file:") else database
        self._loop_conn: sqlite3.Connection | None = None
        self._queued = 0  # transactions handed to the worker thread and not yet done
        self._prepared = False
        self._yielded_at = 0.0
        self.on_loop = 0  # transactions run on the loop, and on the worker (tests and the bench read them)
        self.on_worker = 0

    @property
    def backend(self) -> str:
        return self.engine.dialect.name

    def _submit(self, call: Callable[[], _R]) -> asyncio.Future[_R]:
        """``call`` queued on the worker thread; its outcome comes back on the loop's future.

        Leaner than ``run_in_executor`` (no concurrent future chained to an asyncio one): one hand-off
        there, one ``call_soon_threadsafe`` back.
        """
        if self._executor is None:
            # Made on first use (and again after close(): a closed store reopens its connection on use).
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="diagnosis-store")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_R] = loop.create_future()
        self._queued += 1
        future.add_done_callback(self._dequeued)
        self._executor.submit(_run_for, loop, future, call)
        return future

    def _dequeued(self, _: asyncio.Future[Any]) -> None:
        self._queued -= 1

    def _connection(self) -> Connection:
        conn = self._conn
        if conn is None or conn.closed:
            conn = self._conn = self.engine.connect()
        return conn

    def _transaction(self, operation: Callable[[Connection], _R], begin: str, *, commit: bool) -> _R:
        conn = self._connection()
        conn.begin()  # SQLAlchemy's side of it; pysqlite's own begin is a no-op, the driver opens it here
        try:
            conn.connection.driver_connection.execute(begin)  # type: ignore[union-attr]
            result = operation(conn)
            if commit:
                conn.commit()
            else:
                conn.rollback()
            return result
        except BaseException:
            try:
                conn.rollback()
            except BaseException:
                self._conn = None
                conn.invalidate()
            raise

    def _raw_on_worker(self, operation: Callable[[sqlite3.Connection], _R], begin: str, *, commit: bool) -> _R:
        """On the worker: a DB-API operation on the worker's connection, in a transaction of its own."""
        self.on_worker += 1
        driver: sqlite3.Connection = self._connection().connection.driver_connection  # type: ignore[assignment]
        return _raw_transaction(driver, operation, begin, commit=commit)

    def _loop_connection(self) -> sqlite3.Connection | None:
        """The connection the loop may use right now, or None (the worker must run the transaction)."""
        if self._memory:
            shared = self._conn
            if self._queued or shared is None or shared.closed:
                return None
            driver: Any = shared.connection.driver_connection
            return driver  # type: ignore[no-any-return]
        if self._path is None or not self._prepared:
            return None
        if self._loop_conn is None:
            own = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            own.execute("PRAGMA busy_timeout = 0")
            own.execute("PRAGMA synchronous = NORMAL")
            own.execute("PRAGMA foreign_keys = ON")
            self._loop_conn = own
        return self._loop_conn

    def _on_loop(self, operation: Callable[[sqlite3.Connection], _R], begin: str | None, *, commit: bool) -> Any:
        """The transaction's result when it ran on the loop; ``_MET_LOCK`` when it met a lock (rolled back).

        ``begin`` None: the operation is one statement (or one statement each time it runs, as one whose
        refusal reads why in a statement of its own), each SQLite's own transaction: a write statement takes
        the write lock before it reads anything, as BEGIN IMMEDIATE would, and commits when it is done; a
        read statement reads one snapshot. Two calls of the driver fewer a transaction.
        """
        conn = self._loop_connection()
        if conn is None:
            return _MET_LOCK
        execute = conn.execute
        try:
            if begin is None:
                result = operation(conn)
            else:
                execute(begin)
                try:
                    result = operation(conn)
                    execute("COMMIT" if commit else "ROLLBACK")
                except BaseException:
                    if conn.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            execute("ROLLBACK")
                    raise
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc):
                self._drop_broken(conn)
                raise
            return _MET_LOCK
        except sqlite3.Error:
            self._drop_broken(conn)
            raise
        self.on_loop += 1
        return result

    async def _fair(self) -> None:
        """One turn of the loop, given once transactions on the loop have held it for ``YIELD_AFTER_S`` since
        the last turn they gave: a run of writes never holds the loop for long (a turn each would cost a loop
        iteration, a poll, per transaction: about a fifth of the store's CPU)."""
        await asyncio.sleep(0)
        self._yielded_at = time.perf_counter()

    def _drop_broken(self, conn: sqlite3.Connection) -> None:
        """After a driver error, the loop's file connection is reopened on next use if it is left in a transaction."""
        if conn is self._loop_conn and conn.in_transaction:
            self._loop_conn = None
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _dispose(self) -> None:
        conn, self._conn = self._conn, None
        try:
            if conn is not None:
                conn.close()
        finally:
            self.engine.dispose()

    async def prepare(self) -> None:
        await self._submit(lambda: enable_wal(self.engine))
        self._prepared = True

    async def read(self, operation: Callable[[Connection], _R]) -> _R:
        return await self._submit(lambda: self._transaction(operation, "BEGIN", commit=False))

    async def write(self, operation: Callable[[Connection], _R]) -> _R:
        return await _to_the_end(self._submit(lambda: self._transaction(operation, "BEGIN IMMEDIATE", commit=True)))

    async def read_raw(self, operation: Callable[[sqlite3.Connection], _R], *, one_statement: bool = False) -> _R:
        """A DB-API read (``sqlite_ops``): on the loop when it cannot wait, else on the worker thread.

        ``one_statement``: the operation reads with one statement, which reads one snapshot by itself (on the
        loop, no BEGIN and ROLLBACK around it)."""
        result = self._on_loop(operation, None if one_statement else "BEGIN", commit=False)
        if result is _MET_LOCK:
            return await self._submit(lambda: self._raw_on_worker(operation, "BEGIN", commit=False))
        if time.perf_counter() - self._yielded_at >= self.YIELD_AFTER_S:
            await self._fair()
        return result  # type: ignore[no-any-return]

    async def write_raw(self, operation: Callable[[sqlite3.Connection], _R], *, one_statement: bool = False) -> _R:
        """A DB-API write transaction (``sqlite_ops``): on the loop when it cannot wait, else on the worker.

        ``one_statement``: the operation writes with one statement (a refusal may read why in another), which
        is its own transaction (on the loop, no BEGIN IMMEDIATE and COMMIT around it). On the worker every
        write is in BEGIN IMMEDIATE: it waits for the lock on the busy timeout there."""
        result = self._on_loop(operation, None if one_statement else "BEGIN IMMEDIATE", commit=True)
        if result is _MET_LOCK:
            return await _to_the_end(
                self._submit(lambda: self._raw_on_worker(operation, "BEGIN IMMEDIATE", commit=True))
            )
        # Committed: a cancellation that lands in ``_fair`` comes after the commit, as it would after a write
        # on the worker thread.
        if time.perf_counter() - self._yielded_at >= self.YIELD_AFTER_S:
            await self._fair()
        return result  # type: ignore[no-any-return]

    async def close(self) -> None:
        loop_conn, self._loop_conn = self._loop_conn, None
        if loop_conn is not None:
            with contextlib.suppress(sqlite3.Error):
                loop_conn.close()
        executor, self._executor = self._executor, None
        if executor is None:
            self._dispose()
            return
        # After every transaction already submitted; the connection is closed on the thread that used it.
        self._executor = executor
        try:
            await _to_the_end(self._submit(self._dispose))
        finally:
            self._executor = None
            executor.shutdown(wait=True)


# What ``_on_loop`` returns for a transaction that met a lock (and was rolled back): it goes to the worker.
_MET_LOCK: Any = object()


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    text = str(exc)
    return "locked" in text or "busy" in text


def _raw_transaction(
    conn: sqlite3.Connection, operation: Callable[[sqlite3.Connection], _R], begin: str, *, commit: bool
) -> _R:
    conn.execute(begin)
    try:
        result = operation(conn)
        conn.execute("COMMIT" if commit else "ROLLBACK")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise
    return result


@dataclass(frozen=True, slots=True)
class PostgresRunner:
    """Transactions on the asyncpg engine, each through ``AsyncConnection.run_sync``."""

    engine: AsyncEngine

    @property
    def backend(self) -> str:
        return self.engine.dialect.name

    async def prepare(self) -> None:
        return None

    async def read(self, operation: Callable[[Connection], _R]) -> _R:
        async with self.engine.connect() as conn:
            return await conn.run_sync(operation)

    async def write(self, operation: Callable[[Connection], _R]) -> _R:
        async def transaction() -> _R:
            async with self.engine.begin() as conn:
                return await conn.run_sync(operation)

        return await _to_the_end(asyncio.ensure_future(transaction()))

    async def close(self) -> None:
        await self.engine.dispose()


def runner_for(engine: Engine | AsyncEngine) -> StoreRunner:
    """The runner of ``engine``: a sync (SQLite) engine gets the worker thread, an async one run_sync."""
    if isinstance(engine, AsyncEngine):
        return PostgresRunner(engine)
    return SqliteRunner(engine)
