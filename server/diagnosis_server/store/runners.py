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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncEngine

from diagnosis_server.store.engine import enable_wal

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
    """Transactions on the synchronous SQLite engine, one at a time, on the store's worker thread.

    The thread keeps one Connection open between transactions (the engine's one pooled connection)
    and opens each transaction on the driver itself: BEGIN IMMEDIATE for a write (the write lock from
    the start), a deferred BEGIN for a read.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._executor: ThreadPoolExecutor | None = None
        # Touched on the worker thread only.
        self._conn: Connection | None = None

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
        self._executor.submit(_run_for, loop, future, call)
        return future

    def _transaction(self, operation: Callable[[Connection], _R], begin: str, *, commit: bool) -> _R:
        conn = self._conn
        if conn is None or conn.closed:
            conn = self._conn = self.engine.connect()
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

    def _dispose(self) -> None:
        conn, self._conn = self._conn, None
        try:
            if conn is not None:
                conn.close()
        finally:
            self.engine.dispose()

    async def prepare(self) -> None:
        await self._submit(lambda: enable_wal(self.engine))

    async def read(self, operation: Callable[[Connection], _R]) -> _R:
        return await self._submit(lambda: self._transaction(operation, "BEGIN", commit=False))

    async def write(self, operation: Callable[[Connection], _R]) -> _R:
        return await _to_the_end(self._submit(lambda: self._transaction(operation, "BEGIN IMMEDIATE", commit=True)))

    async def close(self) -> None:
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


class PostgresRunner:
    """Transactions on the asyncpg engine, each through ``AsyncConnection.run_sync``."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

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
