"""The SQL store (``RunStore`` on SQLite or PostgreSQL): runs, tool invocations, orchestration events, node steps.

Every write is one transaction: what a call writes is there whole or not at all, and a write once begun
ends (commit or rollback) even when its caller is cancelled. Driver errors surface as StoreError with the
cause chained. Terminal runs (SUCCESS, FAILED) are final: writes to them raise RunAlreadyFinished.

Each operation is one synchronous function of a Core connection (``sql.py``) run as one transaction by
the backend's runner (``runners.py``): on SQLite one hand-off to the store's worker thread, on
PostgreSQL one ``run_sync`` on the asyncpg engine.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sqlite3
import uuid
from collections.abc import Callable, Collection, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

from sqlalchemy import ColumnElement, and_, or_
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.store import migrate, sql, sqlite_ops
from diagnosis_server.store.base import DEFAULT_STALE_AFTER_S, INTERRUPTED, LiveRuns, NodeCommit
from diagnosis_server.store.engine import create_engine, describe_location, sqlite_file
from diagnosis_server.store.errors import DuplicateRecord, StoreError, StoreFileLost
from diagnosis_server.store.notify import RunNotifier, RunWatch
from diagnosis_server.store.pagination import Listing, RunPage
from diagnosis_server.store.records import (
    check_commit,
    events_limit,
    final_commit,
    invocation_columns,
    invocation_row,
    parse_event,
    parse_invocations,
    parse_run,
    parse_step,
    run_columns,
    stamp_new_run,
    utc_now,
)
from diagnosis_server.store.runners import SqliteRunner, StoreRunner, runner_for
from diagnosis_server.store.tables import diagnosis_run

_R = TypeVar("_R")


def _describe(exc: BaseException) -> str:
    cause = getattr(exc, "orig", None) or exc
    text = str(cause).splitlines()[0] if str(cause) else ""
    return f"{type(cause).__name__}: {text}" if text else type(cause).__name__


# Below this much free space on the filesystem of a SQLite file, the store counts as full: SQLite still rewrites
# pages it has (the probe's row, a log it starts over) while a run's new pages no longer fit.
SQLITE_MIN_FREE_BYTES = 4 * 1024 * 1024

_DRIVER_ERRORS = (SQLAlchemyError, sqlite3.Error, OSError)  # sqlite3: the SQLite runner's own BEGIN


def _store_error(exc: BaseException, what: str, duplicate: str | None = None) -> StoreError:
    """A driver error as StoreError (DuplicateRecord for a key conflict when ``duplicate`` says what)."""
    if isinstance(exc, IntegrityError | sqlite3.IntegrityError) and duplicate is not None:
        return DuplicateRecord(f"{duplicate} ({_describe(exc)})")
    return StoreError(f"{what} failed: {_describe(exc)}")


class Repository:
    """One server instance's handle on the store. ``owner`` identifies the instance.

    ``engine`` is the store's engine (``engine.create_engine``): a synchronous SQLite engine, run on a
    worker thread of the repository's own, or an asyncpg AsyncEngine.
    """

    def __init__(self, engine: Engine | AsyncEngine, *, owner: str) -> None:
        if not owner or len(owner) > 64:
            raise ValueError("owner must be 1 to 64 characters")
        self._engine = engine
        self._runner: StoreRunner = runner_for(engine)
        # SQLite's hot path is DB-API calls (``sqlite_ops``), on the event loop when they cannot block.
        self._sqlite: SqliteRunner | None = self._runner if isinstance(self._runner, SqliteRunner) else None
        # PostgreSQL: one LISTEN connection for followers of other replicas' runs, opened on first use.
        self._notifier: RunNotifier | None = None
        self._reads: dict[tuple[Any, ...], asyncio.Future[Any]] = {}
        if self._sqlite is None:
            dsn = self.sync_engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
            self._notifier = RunNotifier(dsn)
        self.owner = owner
        self.backend: str = self._runner.backend  # sqlite or postgresql
        # Where the store is, for messages: the SQLite file's path, or the URL without its password.
        self.location = describe_location(self.sync_engine.url)
        # The SQLite file and its (device, inode) when the store opened it (``probe`` checks it).
        self._file: tuple[Path, tuple[int, int]] | None = None
        # Runs of this owner whose heartbeat is older than this belong to a previous life of the instance.
        self.started_at = utc_now()

    @property
    def sync_engine(self) -> Engine:
        """The synchronous Engine the operations run on (for instrumentation, e.g. event listeners)."""
        return self._engine.sync_engine if isinstance(self._engine, AsyncEngine) else self._engine

    async def close(self) -> None:
        if self._notifier is not None:
            await self._notifier.close()
        await self._runner.close()

    def watch_run(self, run_id: str) -> RunWatch | None:
        """Wake-ups on the commits of ``run_id``'s events by any instance (PostgreSQL LISTEN/NOTIFY); None on
        SQLite, whose followers poll. Close the watch when done with it."""
        return None if self._notifier is None else self._notifier.watch(run_id)

    @property
    def notifier(self) -> RunNotifier | None:
        return self._notifier

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # ------------------------------------------------------------------ plumbing

    async def _read(self, what: str, operation: Callable[[Connection], _R]) -> _R:
        try:
            return await self._runner.read(operation)
        except _DRIVER_ERRORS as exc:
            raise _store_error(exc, what) from exc

    async def _write(self, what: str, operation: Callable[[Connection], _R], *, duplicate: str | None = None) -> _R:
        try:
            return await self._runner.write(operation)
        except _DRIVER_ERRORS as exc:
            raise _store_error(exc, what, duplicate) from exc

    async def _read_raw(
        self, what: str, operation: Callable[[sqlite3.Connection], _R], *, one_statement: bool = False
    ) -> _R:
        assert self._sqlite is not None
        try:
            return await self._sqlite.read_raw(operation, one_statement=one_statement)
        except _DRIVER_ERRORS as exc:
            raise _store_error(exc, what) from exc

    async def _write_raw(
        self,
        what: str,
        operation: Callable[[sqlite3.Connection], _R],
        *,
        duplicate: str | None = None,
        one_statement: bool = False,
    ) -> _R:
        assert self._sqlite is not None
        try:
            return await self._sqlite.write_raw(operation, one_statement=one_statement)
        except _DRIVER_ERRORS as exc:
            raise _store_error(exc, what, duplicate) from exc

    # ------------------------------------------------------------------ runs

    async def create_run(self, run: run_pb2.DiagnosisRun) -> None:
        """Stores a new run as RUNNING, owned by this instance (created_at kept if set, else now)."""
        now = utc_now()
        stored = stamp_new_run(run, now)
        values = run_columns(stored) | {"owner": self.owner, "heartbeat_at": now}
        duplicate = f"run {run.run_id!r} exists"
        if self._sqlite is not None:
            await self._write_raw(
                "create_run",
                functools.partial(sqlite_ops.create_run, values=values),
                duplicate=duplicate,
                one_statement=True,
            )
            return
        await self._write("create_run", functools.partial(sql.create_run, values=values), duplicate=duplicate)

    async def get_run(self, run_id: str, *, tenant: str | None = None) -> run_pb2.DiagnosisRun | None:
        """The run, or None when there is none or it belongs to another tenant (tenant None: any)."""
        if self._sqlite is not None:
            data = await self._read_raw("get_run", functools.partial(sqlite_ops.get_run, run_id=run_id, tenant=tenant))
        else:
            data = await self._read("get_run", functools.partial(sql.get_run, run_id=run_id, tenant=tenant))
        return None if data is None else parse_run(data)

    async def list_runs(
        self, *, tenant: str | None, page_size: int, page_token: str = "", status: int = 0, verdict: int = 0
    ) -> RunPage:
        listing = Listing.of(tenant=tenant, page_size=page_size, page_token=page_token, status=status, verdict=verdict)
        query = functools.partial(
            sql.list_runs,
            tenant=tenant,
            status=status,
            verdict=verdict,
            after=listing.after,
            limit=listing.page_size + 1,
        )
        rows = await self._read("list_runs", query)
        return listing.page([(parse_run(row.payload), row.created_at, row.run_id) for row in rows])

    async def finish_run(self, run: run_pb2.DiagnosisRun) -> run_pb2.DiagnosisRun:
        """Stores a run's final state (SUCCESS or FAILED) in one transaction; returns the record as stored
        (created_at as first stored, updated_at and completed_at stamped), what GetRun reads from now on."""
        stored = await self.commit_node(final_commit(run))
        assert stored is not None
        return stored

    # ------------------------------------------------------------------ nodes

    async def commit_node(self, commit: NodeCommit) -> run_pb2.DiagnosisRun | None:
        """Writes one node's outcome in ONE transaction: all of it or, on any error, none of it.

        ``commit.run``, if given, replaces the run's payload and indexed columns (returned as stored), touches
        the run's heartbeat and makes this instance its owner; a node commit without it writes only the
        node's rows (the heartbeat of a live run is periodic, ``heartbeat``). A run already SUCCESS or
        FAILED takes no writes.
        """
        check_commit(commit)
        duplicate = f"run {commit.run_id!r} already has an event sequence given"
        if self._sqlite is not None:
            raw = functools.partial(sqlite_ops.commit_node, commit=commit, owner=self.owner, now=utc_now())
            return await self._write_raw("commit_node", raw, duplicate=duplicate)
        operation = functools.partial(sql.commit_node, commit=commit, owner=self.owner, now=utc_now())
        return await self._write("commit_node", operation, duplicate=duplicate)

    async def list_events(
        self, run_id: str, *, after_sequence: int = 0, limit: int = 1000
    ) -> list[run_pb2.OrchestrationEvent]:
        """The run's events with sequence > after_sequence, in sequence order, at most ``limit``."""
        limit = events_limit(limit)
        if self._sqlite is not None:
            raw = functools.partial(sqlite_ops.list_events, run_id=run_id, after_sequence=after_sequence, limit=limit)
            rows = await self._read_raw("list_events", raw, one_statement=True)
        else:
            query = functools.partial(sql.list_events, run_id=run_id, after_sequence=after_sequence, limit=limit)
            rows = await self._shared_read(("list_events", run_id, after_sequence, limit), "list_events", query)
        return [parse_event(data) for data in rows]

    async def _shared_read(self, key: tuple[Any, ...], what: str, query: Callable[[Connection], Any]) -> list[Any]:
        """PostgreSQL: one read for every caller asking the same at the same time (the followers of a run on
        this replica, all woken by one NOTIFY, read the same events once)."""
        pending = self._reads.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._read(what, query))
            self._reads[key] = pending
            pending.add_done_callback(lambda _: self._reads.pop(key, None))
        rows: list[Any] = list(await asyncio.shield(pending))
        return rows

    async def list_node_steps(self, run_id: str) -> list[run_pb2.NodeStep]:
        rows = await self._read("list_node_steps", functools.partial(sql.list_node_steps, run_id=run_id))
        return [parse_step(data) for data in rows]

    # ------------------------------------------------------------------ tool invocations

    async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        """Records one tool call of a RUNNING run, in its own transaction (R-C-2)."""
        duplicate = f"run {invocation.run_id!r} already has invocation {invocation.invocation_id!r}"
        if self._sqlite is not None:
            raw = functools.partial(sqlite_ops.add_tool_invocation, row=invocation_row(invocation))
            await self._write_raw("add_tool_invocation", raw, duplicate=duplicate, one_statement=True)
            return
        values = invocation_columns(invocation)
        operation = functools.partial(sql.add_tool_invocation, run_id=invocation.run_id, values=values)
        await self._write("add_tool_invocation", operation, duplicate=duplicate)

    async def list_tool_invocations(self, run_id: str) -> list[contracts_pb2.ToolInvocation]:
        """This run's invocations (and no other run's) in recording order."""
        rows: Sequence[bytes]
        if self._sqlite is not None:
            raw = functools.partial(sqlite_ops.list_tool_invocations, run_id=run_id)
            rows = await self._read_raw("list_tool_invocations", raw, one_statement=True)
        else:
            rows = await self._read(
                "list_tool_invocations", functools.partial(sql.list_tool_invocations, run_id=run_id)
            )
        return parse_invocations(rows)

    # ------------------------------------------------------------------ liveness

    async def heartbeat(self, run_ids: Collection[str]) -> None:
        """Touches heartbeat_at of the given RUNNING runs of this instance: the runs whose task is alive.

        A run whose task is gone is never touched again: its heartbeat goes stale and any instance
        (this one included, see ``interrupt_orphans``) sweeps it.
        """
        operation = functools.partial(sql.heartbeat, owner=self.owner, run_ids=sorted(run_ids), now=utc_now())
        await self._write("heartbeat", operation)

    async def interrupt_orphans(
        self, *, stale_after_s: float = DEFAULT_STALE_AFTER_S, live: LiveRuns | None = None
    ) -> list[str]:
        """Marks FAILED ("INTERRUPTED") the RUNNING runs nobody runs any more; returns their ids.

        Orphans: runs of another owner whose heartbeat is older than ``stale_after_s``; runs of this
        owner from before this instance started; and, when ``live`` (the run ids whose task is alive
        in this instance, taken at ``live.at``) is given, runs of this owner not among them whose
        heartbeat is older than ``live.at`` (a run created after the snapshot is not swept).
        """
        if stale_after_s < 0:
            raise ValueError("stale_after_s must not be negative")
        now = utc_now()
        c = diagnosis_run.c
        mine = [and_(c.owner == self.owner, c.heartbeat_at < self.started_at)]
        if live is not None:
            dead = and_(c.owner == self.owner, c.heartbeat_at < live.at)
            if live.run_ids:
                dead = and_(dead, c.run_id.not_in(sorted(live.run_ids)))
            mine.append(dead)
        orphaned = or_(
            and_(c.owner != self.owner, c.heartbeat_at < now - timedelta(seconds=stale_after_s)),
            *mine,
        )
        return await self._interrupt(orphaned, INTERRUPTED, now, "interrupt_orphans")

    async def probe(self) -> None:
        """A cheap real write (one row rewritten); StoreError when the store cannot be written.

        For a SQLite file it first checks that the file at the store's path is still the one this
        store opened (same device and inode): a file deleted or replaced under a running server takes
        writes that no restart would see, so that is ``StoreFileLost``. Then that its filesystem has room
        for what a run writes (``SQLITE_MIN_FREE_BYTES``): on a full disk the one-row rewrite may still
        succeed in space SQLite already holds while every run fails.
        """

        def operation(conn: Connection) -> None:
            self._check_file()
            self._check_space()
            sql.probe(conn, owner=self.owner, now=utc_now())

        await self._write("probe", operation)

    def _check_file(self) -> None:
        if self._file is None:
            return
        path, identity = self._file
        try:
            info = os.stat(path)
        except FileNotFoundError:
            raise StoreFileLost(f"the SQLite database file {str(path)!r} was deleted") from None
        if (info.st_dev, info.st_ino) != identity:
            raise StoreFileLost(f"the SQLite database file {str(path)!r} was replaced by another file")

    def _check_space(self) -> None:
        if self._file is None:
            return
        path = self._file[0]
        info = os.statvfs(path.parent)
        free = info.f_bavail * info.f_frsize
        if free < SQLITE_MIN_FREE_BYTES:
            raise StoreError(
                f"the filesystem holding {str(path)!r} is full: {free:,} bytes free, "
                f"less than the {SQLITE_MIN_FREE_BYTES:,} a run may need"
            )

    def _remember_file(self) -> None:
        """Records the identity of the SQLite file this store uses (none for PostgreSQL or in memory)."""
        path = sqlite_file(self.sync_engine.url)
        if path is not None:
            info = os.stat(path)
            self._file = (path, (info.st_dev, info.st_ino))

    async def interrupt_owned(self, *, reason: str = INTERRUPTED) -> list[str]:
        """Marks FAILED (with ``reason``) this instance's RUNNING runs; returns their ids."""
        return await self._interrupt(diagnosis_run.c.owner == self.owner, reason, utc_now(), "interrupt_owned")

    async def _interrupt(self, which: ColumnElement[bool], reason: str, now: datetime, what: str) -> list[str]:
        return await self._write(what, functools.partial(sql.interrupt, which=which, reason=reason, now=now))

    async def count_runs(self, *, tenant: str | None = None, status: int = 0) -> int:
        """How many runs there are (of a tenant, of a status): for health and metrics."""
        return await self._read("count_runs", functools.partial(sql.count_runs, tenant=tenant, status=status))


async def open_repository(url: str, *, owner: str | None = None) -> Repository:
    """Opens the store at ``url`` (creating the SQLite file and its folder) and applies migrations.

    Errors name where the store is (the SQLite path, or the URL without its password).
    """
    repository = Repository(create_engine(url), owner=owner or uuid.uuid4().hex)
    try:
        try:
            await migrate.upgrade(repository._runner)
            await asyncio.to_thread(repository._remember_file)
        except _DRIVER_ERRORS as exc:
            raise StoreError(f"the store at {repository.location} cannot be used: {_describe(exc)}") from exc
        except StoreError as exc:
            raise StoreError(f"the store at {repository.location} cannot be used: {exc}") from exc
        return repository
    except BaseException:
        await repository.close()
        raise
