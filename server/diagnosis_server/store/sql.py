"""The store's SQL: one plain synchronous function per repository operation, over a Core ``Connection``.

Each function runs inside the transaction its runner opened (``store/runners.py``) and raises on any
failure (the runner rolls back, the repository translates the error). The statements of the hot paths
are built once, with bind parameters, so that executing one costs no statement construction and hits
SQLAlchemy's compiled cache; the same statements compile for SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Integer, LargeBinary, String, and_, bindparam, func, insert, or_, select, update
from sqlalchemy.engine import Connection

from diagnosis.v1 import run_pb2
from diagnosis_server.store.base import NodeCommit
from diagnosis_server.store.errors import RunAlreadyFinished, RunNotFound
from diagnosis_server.store.records import (
    TERMINAL_STATUSES,
    event_columns,
    parse_run,
    payload,
    run_columns,
    stamp_interrupted,
    stamp_run_update,
    status_name,
    step_columns,
)
from diagnosis_server.store.tables import (
    diagnosis_run,
    node_step,
    orchestration_event,
    store_probe,
    tool_invocation,
)

_run = diagnosis_run.c
_event = orchestration_event.c

# Bind parameters are named b_*: an UPDATE's SET columns come from the other keys of its parameters.
_THIS_RUN = _run.run_id == bindparam("b_run_id")
_NOT_FINISHED = and_(*(_run.status != status for status in sorted(TERMINAL_STATUSES)))
LOCK_RUN = select(_run.status, _run.tenant, _run.created_at).where(_THIS_RUN).with_for_update()
RUN_STATUS = select(_run.status).where(_THIS_RUN).with_for_update()
RUN_STATUS_SHARED = select(_run.status).where(_THIS_RUN).with_for_update(read=True)
INSERT_RUN = insert(diagnosis_run)
UPDATE_RUN = update(diagnosis_run).where(_THIS_RUN)
INSERT_STEPS = insert(node_step)
INSERT_EVENTS = insert(orchestration_event)
INSERT_INVOCATION = insert(tool_invocation)
# A tool call's row, only while its run is there and not final (the run's row locked against writes).
INSERT_INVOCATION_IF_RUNNING = insert(tool_invocation).from_select(
    ["run_id", "invocation_id", "tool_name", "payload"],
    select(
        _run.run_id,
        bindparam("invocation_id", type_=String),
        bindparam("tool_name", type_=String),
        bindparam("payload", type_=LargeBinary),
    )
    .where(_THIS_RUN, _NOT_FINISHED)
    .with_for_update(read=True),
)
# The channel PostgreSQL followers LISTEN on; the payload is "<run_id> <last sequence>[ end]".
NOTIFY_CHANNEL = "diagnosis_run_events"
NOTIFY = select(func.pg_notify(bindparam("b_channel", type_=String), bindparam("b_payload", type_=String)))
GET_RUN = select(_run.payload).where(_run.run_id == bindparam("b_run_id"))
GET_RUN_OF_TENANT = GET_RUN.where(_run.tenant == bindparam("b_tenant"))
LIST_EVENTS = (
    select(_event.payload)
    .where(_event.run_id == bindparam("b_run_id"), _event.sequence > bindparam("b_after"))
    .order_by(_event.sequence)
    .limit(bindparam("b_limit", type_=Integer))
)
LIST_STEPS = select(node_step.c.payload).where(node_step.c.run_id == bindparam("b_run_id")).order_by(node_step.c.id)
LIST_INVOCATIONS = (
    select(tool_invocation.c.payload)
    .where(tool_invocation.c.run_id == bindparam("b_run_id"))
    .order_by(tool_invocation.c.seq)
)


def lock_run(conn: Connection, run_id: str) -> Any:
    """The run's (status, tenant, created_at), locked for this transaction on PostgreSQL."""
    row = conn.execute(LOCK_RUN, {"b_run_id": run_id}).first()
    if row is None:
        raise RunNotFound(f"no run {run_id!r}")
    return row


def run_status(conn: Connection, run_id: str, *, shared: bool = False) -> int:
    """The run's status, its row locked (``shared``: against writes only) for this transaction on PostgreSQL."""
    status: int | None = conn.execute(RUN_STATUS_SHARED if shared else RUN_STATUS, {"b_run_id": run_id}).scalar()
    if status is None:
        raise RunNotFound(f"no run {run_id!r}")
    return status


def refuse_finished(run_id: str, status: int) -> None:
    if status in TERMINAL_STATUSES:
        raise RunAlreadyFinished(f"run {run_id!r} is {status_name(status)}; its record is final")


# ---------------------------------------------------------------------- writes


def create_run(conn: Connection, values: dict[str, Any]) -> None:
    conn.execute(INSERT_RUN, values)


def commit_node(conn: Connection, commit: NodeCommit, *, owner: str, now: datetime) -> run_pb2.DiagnosisRun | None:
    """One node's rows; with ``commit.run``, the run's record replaced too (returned as stored), owner and
    heartbeat set. Without it the run's row is only locked against writes (PostgreSQL) while the rows go in."""
    run_id, run = commit.run_id, commit.run
    stored: run_pb2.DiagnosisRun | None = None
    if run is None:
        refuse_finished(run_id, run_status(conn, run_id, shared=True))
    else:
        current = lock_run(conn, run_id)
        refuse_finished(run_id, current.status)
        stored = stamp_run_update(run, tenant=current.tenant, created_at=current.created_at, now=now)
        values = {"owner": owner, "heartbeat_at": now}
        conn.execute(UPDATE_RUN, {"b_run_id": run_id, **values, **run_columns(stored)})
    if commit.steps:
        conn.execute(INSERT_STEPS, [step_columns(run_id, step) for step in commit.steps])
    event_rows = [event_columns(run_id, event) for event in commit.events]
    if event_rows:
        conn.execute(INSERT_EVENTS, event_rows)
    if event_rows or run is not None:
        notify_events(conn, run_id, event_rows, final=run is not None and run.status in TERMINAL_STATUSES)
    return stored


def notify_events(conn: Connection, run_id: str, event_rows: Sequence[dict[str, Any]], *, final: bool) -> None:
    """PostgreSQL: tells the run's followers on other replicas (LISTEN) that rows are in, at commit."""
    if conn.dialect.name != "postgresql":
        return
    last = max((int(row["sequence"]) for row in event_rows), default=0)
    conn.execute(
        NOTIFY, {"b_channel": NOTIFY_CHANNEL, "b_payload": f"{run_id} {last} {'end' if final else ''}".rstrip()}
    )


def add_tool_invocation(conn: Connection, run_id: str, values: dict[str, Any]) -> None:
    """The invocation's row, in one conditional insert that locks its run's row against writes (PostgreSQL)."""
    params = {key: values[key] for key in ("invocation_id", "tool_name", "payload")}
    if conn.execute(INSERT_INVOCATION_IF_RUNNING, {"b_run_id": run_id, **params}).rowcount:
        return
    refuse_finished(run_id, run_status(conn, run_id, shared=True))  # RunNotFound when there is no such run
    raise RunNotFound(f"run {run_id!r} took no invocation")  # unreachable: a run not final takes it


def heartbeat(conn: Connection, owner: str, run_ids: Sequence[str], now: datetime) -> None:
    """Touches heartbeat_at of the given RUNNING runs of ``owner`` (the runs whose task is alive)."""
    if not run_ids:
        return
    conn.execute(
        update(diagnosis_run)
        .where(_run.owner == owner, _run.status == run_pb2.RUN_STATUS_RUNNING, _run.run_id.in_(list(run_ids)))
        .values(heartbeat_at=now)
    )


def running_leases(conn: Connection) -> Sequence[Any]:
    """Every RUNNING run's id, owner and heartbeat stamp (what the orphan sweep judges)."""
    query = select(_run.run_id, _run.owner, _run.heartbeat_at).where(_run.status == run_pb2.RUN_STATUS_RUNNING)
    return conn.execute(query).all()


PROBE = update(store_probe).where(store_probe.c.id == 1)


def probe(conn: Connection, owner: str, now: datetime) -> None:
    """Rewrites the probe row: a real write (a page of the database file, a WAL record on PostgreSQL)."""
    if not conn.execute(PROBE, {"owner": owner, "probed_at": now}).rowcount:
        conn.execute(insert(store_probe), {"id": 1, "owner": owner, "probed_at": now})


def interrupt(conn: Connection, which: ColumnElement[bool], reason: str, now: datetime) -> list[str]:
    """Marks FAILED (with ``reason``) the RUNNING runs ``which`` selects that nobody holds locked."""
    query = (
        select(_run.run_id, _run.payload)
        .where(_run.status == run_pb2.RUN_STATUS_RUNNING, which)
        .order_by(_run.created_at, _run.run_id)
        # A run locked right now is being written by its runner: it is not an orphan.
        .with_for_update(skip_locked=True)
    )
    interrupted: list[str] = []
    for row in conn.execute(query).all():
        stored = stamp_interrupted(parse_run(row.payload), reason, now)
        result = conn.execute(
            update(diagnosis_run)
            .where(_run.run_id == row.run_id, _run.status == run_pb2.RUN_STATUS_RUNNING)
            .values(**run_columns(stored), heartbeat_at=now)
        )
        if result.rowcount:
            interrupted.append(row.run_id)
            notify_events(conn, row.run_id, (), final=True)
    return interrupted


# ---------------------------------------------------------------------- reads


def get_run(conn: Connection, run_id: str, tenant: str | None) -> bytes | None:
    if tenant is None:
        data: bytes | None = conn.execute(GET_RUN, {"b_run_id": run_id}).scalar_one_or_none()
    else:
        data = conn.execute(GET_RUN_OF_TENANT, {"b_run_id": run_id, "b_tenant": tenant}).scalar_one_or_none()
    return data


def list_runs(
    conn: Connection,
    *,
    tenant: str | None,
    status: int,
    verdict: int,
    after: tuple[datetime, str] | None,
    limit: int,
    trigger: int = 0,
) -> Sequence[Any]:
    """(payload, created_at, run_id) rows newest first, after the keyset position ``after``."""
    query = select(_run.payload, _run.created_at, _run.run_id)
    if tenant is not None:
        query = query.where(_run.tenant == tenant)
    if status:
        query = query.where(_run.status == status)
    if verdict:
        query = query.where(_run.verdict == verdict)
    if trigger:
        query = query.where(_run.trigger_kind == trigger)
    if after is not None:
        created_at, run_id = after
        query = query.where(
            or_(_run.created_at < created_at, and_(_run.created_at == created_at, _run.run_id < run_id))
        )
    query = query.order_by(_run.created_at.desc(), _run.run_id.desc()).limit(limit)
    return conn.execute(query).all()


def find_alert_run(conn: Connection, *, tenant: str, dedupe_key: str, since: datetime) -> bytes | None:
    """The payload of the newest run of ``tenant`` with this alert dedupe key created at or after ``since``."""
    query = (
        select(_run.payload)
        .where(_run.tenant == tenant, _run.trigger_key == dedupe_key, _run.created_at >= since)
        .order_by(_run.created_at.desc(), _run.run_id.desc())
        .limit(1)
    )
    data: bytes | None = conn.execute(query).scalar_one_or_none()
    return data


def record_notifications(conn: Connection, *, run_id: str, notifications: Sequence[run_pb2.RunNotification]) -> None:
    """The run's payload with ``notifications`` appended (its row locked on PostgreSQL); RunNotFound."""
    data = conn.execute(select(_run.payload).where(_THIS_RUN).with_for_update(), {"b_run_id": run_id}).scalar()
    if data is None:
        raise RunNotFound(f"no run {run_id!r}")
    run = parse_run(data)
    run.notifications.extend(notifications)
    conn.execute(update(diagnosis_run).where(_run.run_id == run_id).values(payload=payload(run)))


def list_events(conn: Connection, run_id: str, after_sequence: int, limit: int) -> Sequence[bytes]:
    return conn.execute(LIST_EVENTS, {"b_run_id": run_id, "b_after": after_sequence, "b_limit": limit}).scalars().all()


def list_node_steps(conn: Connection, run_id: str) -> Sequence[bytes]:
    return conn.execute(LIST_STEPS, {"b_run_id": run_id}).scalars().all()


def list_tool_invocations(conn: Connection, run_id: str) -> Sequence[bytes]:
    return conn.execute(LIST_INVOCATIONS, {"b_run_id": run_id}).scalars().all()


def count_runs(conn: Connection, tenant: str | None, status: int) -> int:
    query = select(func.count()).select_from(diagnosis_run)
    if tenant is not None:
        query = query.where(diagnosis_run.c.tenant == tenant)
    if status:
        query = query.where(diagnosis_run.c.status == status)
    return int(conn.execute(query).scalar_one())
