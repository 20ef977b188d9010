"""The async repository: runs, tool invocations, orchestration events, node steps and checkpoints.

Every write is one transaction: what a call writes is there whole or not at all. Driver errors
surface as StoreError with the cause chained. Terminal runs (SUCCESS, FAILED) are final: writes to
them raise RunAlreadyFinished.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from types import TracebackType
from typing import Any, Self

from sqlalchemy import ColumnElement, and_, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.store import migrate
from diagnosis_server.store.engine import DEFAULT_DATABASE_URL, create_engine, writer
from diagnosis_server.store.errors import (
    DuplicateRecord,
    InvalidRecord,
    RunAlreadyFinished,
    RunNotFound,
    StoreError,
)
from diagnosis_server.store.pagination import (
    PageToken,
    RunFilter,
    RunPage,
    decode_page_token,
    encode_page_token,
)
from diagnosis_server.store.records import (
    TERMINAL_STATUSES,
    Checkpoint,
    checkpoint_columns,
    event_columns,
    invocation_columns,
    parse_event,
    parse_invocation,
    parse_run,
    parse_step,
    require_id,
    run_columns,
    stamp_interrupted,
    stamp_new_run,
    stamp_run_update,
    status_name,
    step_columns,
    utc_now,
)
from diagnosis_server.store.tables import checkpoint as checkpoint_table
from diagnosis_server.store.tables import diagnosis_run, node_step, orchestration_event, tool_invocation

MAX_PAGE_SIZE = 1000
MAX_EVENTS_LIMIT = 10_000
INTERRUPTED = "INTERRUPTED"


def _describe(exc: BaseException) -> str:
    cause = getattr(exc, "orig", None) or exc
    text = str(cause).splitlines()[0] if str(cause) else ""
    return f"{type(cause).__name__}: {text}" if text else type(cause).__name__


@asynccontextmanager
async def _translated(what: str, *, duplicate: str | None = None) -> AsyncIterator[None]:
    """Driver errors -> StoreError (DuplicateRecord for a key conflict when ``duplicate`` says what)."""
    try:
        yield
    except IntegrityError as exc:
        if duplicate is not None:
            raise DuplicateRecord(f"{duplicate} ({_describe(exc)})") from exc
        raise StoreError(f"{what} failed: {_describe(exc)}") from exc
    except (SQLAlchemyError, OSError) as exc:
        raise StoreError(f"{what} failed: {_describe(exc)}") from exc


def _check_enum(value: int, enum_values: Any, what: str) -> None:
    if value not in enum_values:
        raise ValueError(f"unknown {what} {value}")


class Repository:
    """One server instance's handle on the store. ``owner`` identifies the instance."""

    def __init__(self, engine: AsyncEngine, *, owner: str) -> None:
        if not owner or len(owner) > 64:
            raise ValueError("owner must be 1 to 64 characters")
        self._engine = engine
        self._writer = writer(engine)
        self.owner = owner
        # Runs of this owner whose heartbeat is older than this belong to a previous life of the instance.
        self.started_at = utc_now()

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._engine.dialect.name

    async def close(self) -> None:
        await self._engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # ------------------------------------------------------------------ plumbing

    @asynccontextmanager
    async def _read(self, what: str) -> AsyncIterator[AsyncConnection]:
        async with _translated(what), self._engine.connect() as conn:
            yield conn

    @asynccontextmanager
    async def _write(self, what: str, *, duplicate: str | None = None) -> AsyncIterator[AsyncConnection]:
        async with _translated(what, duplicate=duplicate), self._writer.begin() as conn:
            yield conn

    @staticmethod
    async def _lock_run(conn: AsyncConnection, run_id: str, *, shared: bool = False) -> Any:
        """The run's (status, tenant, created_at), locked for this transaction on PostgreSQL."""
        query = (
            select(diagnosis_run.c.status, diagnosis_run.c.tenant, diagnosis_run.c.created_at)
            .where(diagnosis_run.c.run_id == run_id)
            .with_for_update(read=shared)
        )
        row = (await conn.execute(query)).first()
        if row is None:
            raise RunNotFound(f"no run {run_id!r}")
        return row

    @staticmethod
    def _refuse_finished(run_id: str, status: int) -> None:
        if status in TERMINAL_STATUSES:
            raise RunAlreadyFinished(f"run {run_id!r} is {status_name(status)}; its record is final")

    # ------------------------------------------------------------------ runs

    async def create_run(self, run: run_pb2.DiagnosisRun) -> None:
        """Stores a new run as RUNNING, owned by this instance (created_at kept if set, else now)."""
        now = utc_now()
        stored = stamp_new_run(run, now)
        values = run_columns(stored) | {"owner": self.owner, "heartbeat_at": now}
        async with self._write("create_run", duplicate=f"run {run.run_id!r} exists") as conn:
            await conn.execute(insert(diagnosis_run).values(**values))

    async def get_run(self, run_id: str, *, tenant: str | None = None) -> run_pb2.DiagnosisRun | None:
        """The run, or None when there is none or it belongs to another tenant (tenant None: any)."""
        query = select(diagnosis_run.c.payload).where(diagnosis_run.c.run_id == run_id)
        if tenant is not None:
            query = query.where(diagnosis_run.c.tenant == tenant)
        async with self._read("get_run") as conn:
            data = (await conn.execute(query)).scalar_one_or_none()
        return None if data is None else parse_run(data)

    async def list_runs(
        self,
        *,
        tenant: str | None,
        page_size: int,
        page_token: str = "",
        status: int = 0,
        verdict: int = 0,
    ) -> RunPage:
        """Runs newest first (created_at, then run_id, descending), a page at a time.

        ``status``/``verdict`` 0 mean any. The returned token is "" after the last page; a token is
        valid only with the tenant and filters it was made for (else InvalidPageToken).
        """
        if page_size < 1:
            raise ValueError("page_size must be at least 1")
        page_size = min(page_size, MAX_PAGE_SIZE)
        _check_enum(status, run_pb2.RunStatus.DESCRIPTOR.values_by_number, "run status")
        _check_enum(verdict, contracts_pb2.Verdict.DESCRIPTOR.values_by_number, "verdict")
        run_filter = RunFilter(tenant=tenant, status=status, verdict=verdict)
        position = decode_page_token(page_token, run_filter) if page_token else None

        c = diagnosis_run.c
        query = select(c.payload, c.created_at, c.run_id)
        if tenant is not None:
            query = query.where(c.tenant == tenant)
        if status:
            query = query.where(c.status == status)
        if verdict:
            query = query.where(c.verdict == verdict)
        if position is not None:
            query = query.where(
                or_(
                    c.created_at < position.created_at,
                    and_(c.created_at == position.created_at, c.run_id < position.run_id),
                )
            )
        query = query.order_by(c.created_at.desc(), c.run_id.desc()).limit(page_size + 1)
        async with self._read("list_runs") as conn:
            rows = (await conn.execute(query)).all()

        runs = [parse_run(row.payload) for row in rows[:page_size]]
        next_token = ""
        if len(rows) > page_size:
            last = rows[page_size - 1]
            next_token = encode_page_token(PageToken(created_at=last.created_at, run_id=last.run_id, filter=run_filter))
        return RunPage(runs, next_token)

    async def finish_run(self, run: run_pb2.DiagnosisRun) -> None:
        """Stores a run's final state (SUCCESS or FAILED) in one transaction."""
        if run.status not in TERMINAL_STATUSES:
            raise InvalidRecord(f"finish_run needs status SUCCESS or FAILED, not {status_name(run.status)}")
        await self.commit_node(run.run_id, run=run)

    # ------------------------------------------------------------------ nodes

    async def commit_node(
        self,
        run_id: str,
        *,
        events: Sequence[run_pb2.OrchestrationEvent] = (),
        steps: Sequence[run_pb2.NodeStep] = (),
        checkpoint: Checkpoint | None = None,
        run: run_pb2.DiagnosisRun | None = None,
    ) -> None:
        """Writes one node's outcome in ONE transaction: all of it or, on any error, none of it.

        ``run``, if given, replaces the run's payload and indexed columns. The run's heartbeat is
        touched and this instance becomes its owner. A run already SUCCESS or FAILED takes no writes.
        """
        require_id(run_id, "run_id")
        if run is not None and run.run_id != run_id:
            raise InvalidRecord(f"run {run.run_id!r} given to commit_node of run {run_id!r}")
        event_rows = [event_columns(run_id, event) for event in events]
        step_rows = [step_columns(run_id, step) for step in steps]
        checkpoint_row = None if checkpoint is None else checkpoint_columns(run_id, checkpoint)
        now = utc_now()
        duplicate = f"run {run_id!r} already has an event sequence or checkpoint step given"
        async with self._write("commit_node", duplicate=duplicate) as conn:
            current = await self._lock_run(conn, run_id)
            self._refuse_finished(run_id, current.status)
            values: dict[str, Any] = {"owner": self.owner, "heartbeat_at": now}
            if run is not None:
                stored = stamp_run_update(run, tenant=current.tenant, created_at=current.created_at, now=now)
                values |= run_columns(stored)
            await conn.execute(update(diagnosis_run).where(diagnosis_run.c.run_id == run_id).values(**values))
            if step_rows:
                await conn.execute(insert(node_step), step_rows)
            if checkpoint_row is not None:
                await conn.execute(insert(checkpoint_table).values(**checkpoint_row))
            if event_rows:
                await conn.execute(insert(orchestration_event), event_rows)

    async def list_events(
        self, run_id: str, *, after_sequence: int = 0, limit: int = 1000
    ) -> list[run_pb2.OrchestrationEvent]:
        """The run's events with sequence > after_sequence, in sequence order, at most ``limit``."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        t = orchestration_event.c
        query = (
            select(t.payload)
            .where(t.run_id == run_id, t.sequence > after_sequence)
            .order_by(t.sequence)
            .limit(min(limit, MAX_EVENTS_LIMIT))
        )
        async with self._read("list_events") as conn:
            rows = (await conn.execute(query)).scalars().all()
        return [parse_event(data) for data in rows]

    async def list_node_steps(self, run_id: str) -> list[run_pb2.NodeStep]:
        query = select(node_step.c.payload).where(node_step.c.run_id == run_id).order_by(node_step.c.id)
        async with self._read("list_node_steps") as conn:
            rows = (await conn.execute(query)).scalars().all()
        return [parse_step(data) for data in rows]

    async def latest_checkpoint(self, run_id: str) -> Checkpoint | None:
        t = checkpoint_table.c
        query = select(t.step, t.node, t.state).where(t.run_id == run_id).order_by(t.step.desc()).limit(1)
        async with self._read("latest_checkpoint") as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return None
        return Checkpoint(run_id=run_id, step=row.step, node=row.node, state=bytes(row.state))

    # ------------------------------------------------------------------ tool invocations

    async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        """Records one tool call of a RUNNING run, in its own transaction (R-C-2)."""
        values = invocation_columns(invocation)
        duplicate = f"run {invocation.run_id!r} already has invocation {invocation.invocation_id!r}"
        async with self._write("add_tool_invocation", duplicate=duplicate) as conn:
            current = await self._lock_run(conn, invocation.run_id, shared=True)
            self._refuse_finished(invocation.run_id, current.status)
            await conn.execute(insert(tool_invocation).values(**values))

    async def list_tool_invocations(self, run_id: str) -> list[contracts_pb2.ToolInvocation]:
        """This run's invocations (and no other run's) in recording order."""
        t = tool_invocation.c
        query = select(t.payload).where(t.run_id == run_id).order_by(t.seq)
        async with self._read("list_tool_invocations") as conn:
            rows = (await conn.execute(query)).scalars().all()
        return [parse_invocation(data) for data in rows]

    # ------------------------------------------------------------------ liveness

    async def heartbeat(self) -> None:
        """Touches heartbeat_at of this instance's RUNNING runs."""
        c = diagnosis_run.c
        statement = (
            update(diagnosis_run)
            .where(c.owner == self.owner, c.status == run_pb2.RUN_STATUS_RUNNING)
            .values(heartbeat_at=utc_now())
        )
        async with self._write("heartbeat") as conn:
            await conn.execute(statement)

    async def interrupt_orphans(self, *, stale_after_s: float = 30.0) -> list[str]:
        """Marks FAILED ("INTERRUPTED") the RUNNING runs nobody runs any more; returns their ids.

        Orphans: runs of another owner whose heartbeat is older than ``stale_after_s``, and runs of
        this owner from before this instance started (its previous life).
        """
        if stale_after_s < 0:
            raise ValueError("stale_after_s must not be negative")
        now = utc_now()
        c = diagnosis_run.c
        orphaned = or_(
            and_(c.owner != self.owner, c.heartbeat_at < now - timedelta(seconds=stale_after_s)),
            and_(c.owner == self.owner, c.heartbeat_at < self.started_at),
        )
        return await self._interrupt(orphaned, INTERRUPTED, now, "interrupt_orphans")

    async def interrupt_owned(self, *, reason: str = INTERRUPTED) -> list[str]:
        """Marks FAILED (with ``reason``) this instance's RUNNING runs; returns their ids."""
        return await self._interrupt(diagnosis_run.c.owner == self.owner, reason, utc_now(), "interrupt_owned")

    async def _interrupt(self, which: ColumnElement[bool], reason: str, now: datetime, what: str) -> list[str]:
        c = diagnosis_run.c
        query = (
            select(c.run_id, c.payload)
            .where(c.status == run_pb2.RUN_STATUS_RUNNING, which)
            .order_by(c.created_at, c.run_id)
            # A run locked right now is being written by its runner: it is not an orphan.
            .with_for_update(skip_locked=True)
        )
        interrupted: list[str] = []
        async with self._write(what) as conn:
            for row in (await conn.execute(query)).all():
                stored = stamp_interrupted(parse_run(row.payload), reason, now)
                result = await conn.execute(
                    update(diagnosis_run)
                    .where(c.run_id == row.run_id, c.status == run_pb2.RUN_STATUS_RUNNING)
                    .values(**run_columns(stored), heartbeat_at=now)
                )
                if result.rowcount:
                    interrupted.append(row.run_id)
        return interrupted

    async def count_runs(self, *, tenant: str | None = None, status: int = 0) -> int:
        """How many runs there are (of a tenant, of a status): for health and metrics."""
        query = select(func.count()).select_from(diagnosis_run)
        if tenant is not None:
            query = query.where(diagnosis_run.c.tenant == tenant)
        if status:
            query = query.where(diagnosis_run.c.status == status)
        async with self._read("count_runs") as conn:
            return int((await conn.execute(query)).scalar_one())


async def open_repository(url: str = DEFAULT_DATABASE_URL, *, owner: str | None = None) -> Repository:
    """Opens the store at ``url`` (creating the SQLite file and its folder) and applies migrations."""
    engine = create_engine(url)
    try:
        async with _translated("migrating the store"):
            await migrate.upgrade(engine)
        return Repository(engine, owner=owner or uuid.uuid4().hex)
    except BaseException:
        await engine.dispose()
        raise
