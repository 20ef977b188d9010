"""The SQLite hot path: the repository's per-run operations as plain DB-API calls on a ``sqlite3.Connection``.

The same statements ``sql.py`` builds with SQLAlchemy Core, written out once as SQL text: on the hot path
(a run's create, node commits, tool calls, final write and the reads a run and its streams make) a
transaction here costs the driver's own work and nothing else. Each function runs inside the transaction
its runner opened (``SqliteRunner.write_raw``/``read_raw``) and raises on any failure (the runner rolls
back). Timestamps are stored as SQLAlchemy's SQLite ``DateTime`` stores them (naive UTC text with
microseconds), so rows written here and rows written through SQLAlchemy read the same.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from diagnosis.v1 import run_pb2
from diagnosis_server.store.base import NodeCommit
from diagnosis_server.store.errors import RunAlreadyFinished, RunNotFound
from diagnosis_server.store.records import TERMINAL_STATUSES, payload, stamp_run_update, status_name

_FINAL = ", ".join(str(int(status)) for status in sorted(TERMINAL_STATUSES))

INSERT_RUN = (
    "INSERT INTO diagnosis_run (run_id, tenant, status, verdict, question, scenario, created_at, updated_at, "
    "owner, heartbeat_at, payload, trigger_kind, trigger_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
RUN_STATUS = "SELECT status FROM diagnosis_run WHERE run_id = ?"
LOCK_RUN = "SELECT status, tenant, created_at FROM diagnosis_run WHERE run_id = ?"
# The run's row replaced, but for run_id, tenant and created_at: a run keeps them (``stamp_run_update``), and
# setting them to the same values would rewrite the two indexes they lead for nothing.
UPDATE_RUN = (
    "UPDATE diagnosis_run SET status = ?, verdict = ?, question = ?, scenario = ?, "
    "updated_at = ?, owner = ?, heartbeat_at = ?, payload = ? WHERE run_id = ?"
)
INSERT_STEP = "INSERT INTO node_step (run_id, node, attempt, payload) VALUES (?, ?, ?, ?)"
INSERT_EVENT = "INSERT INTO orchestration_event (run_id, sequence, node, outcome, payload) VALUES (?, ?, ?, ?, ?)"
# A node commit's first event goes in only while its run exists and is not final: the commit's status check.
INSERT_EVENT_IF_RUNNING = (
    "INSERT INTO orchestration_event (run_id, sequence, node, outcome, payload) SELECT ?, ?, ?, ?, ? "
    f"WHERE EXISTS (SELECT 1 FROM diagnosis_run WHERE run_id = ? AND status NOT IN ({_FINAL}))"
)
# One statement for a tool call: the row goes in only while its run exists and is not final.
INSERT_INVOCATION = (
    "INSERT INTO tool_invocation (run_id, invocation_id, tool_name, payload) SELECT ?, ?, ?, ? "
    f"WHERE EXISTS (SELECT 1 FROM diagnosis_run WHERE run_id = ? AND status NOT IN ({_FINAL}))"
)
GET_RUN = "SELECT payload FROM diagnosis_run WHERE run_id = ?"
GET_RUN_OF_TENANT = "SELECT payload FROM diagnosis_run WHERE run_id = ? AND tenant = ?"
LIST_EVENTS = "SELECT payload FROM orchestration_event WHERE run_id = ? AND sequence > ? ORDER BY sequence LIMIT ?"
LIST_INVOCATIONS = "SELECT payload FROM tool_invocation WHERE run_id = ? ORDER BY seq"


def stamp(moment: datetime) -> str:
    """A point in time as the SQLite store keeps it: naive UTC, microseconds always written."""
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


def parse_stamp(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def _refuse(run_id: str, status: int | None) -> None:
    if status is None:
        raise RunNotFound(f"no run {run_id!r}")
    if status in TERMINAL_STATUSES:
        raise RunAlreadyFinished(f"run {run_id!r} is {status_name(status)}; its record is final")


def _status(conn: sqlite3.Connection, run_id: str) -> int | None:
    row = conn.execute(RUN_STATUS, (run_id,)).fetchone()
    return None if row is None else int(row[0])


# ---------------------------------------------------------------------- writes


def create_run(conn: sqlite3.Connection, values: dict[str, Any]) -> None:
    conn.execute(
        INSERT_RUN,
        (
            values["run_id"],
            values["tenant"],
            values["status"],
            values["verdict"],
            values["question"],
            values["scenario"],
            stamp(values["created_at"]),
            stamp(values["updated_at"]),
            values["owner"],
            stamp(values["heartbeat_at"]),
            values["payload"],
            values["trigger_kind"],
            values["trigger_key"],
        ),
    )


def commit_node(
    conn: sqlite3.Connection, commit: NodeCommit, *, owner: str, now: datetime
) -> run_pb2.DiagnosisRun | None:
    """One node's rows; with ``commit.run``, the run's record replaced too (and returned as stored).

    The transaction holds the write lock from its start (BEGIN IMMEDIATE): the status read here cannot
    be overtaken by another writer before this transaction's rows are in.
    """
    run_id, run = commit.run_id, commit.run
    events = [(run_id, e.sequence, int(e.node), int(e.outcome), payload(e)) for e in commit.events]
    stored: run_pb2.DiagnosisRun | None = None
    if run is None and events:
        # The usual node commit: its event row is the status check (one statement, not two).
        if not conn.execute(INSERT_EVENT_IF_RUNNING, (*events.pop(0), run_id)).rowcount:
            _refuse(run_id, _status(conn, run_id))
            raise RunNotFound(f"run {run_id!r} took no event")  # unreachable: a run not final takes it
    elif run is None:
        _refuse(run_id, _status(conn, run_id))
    else:
        row = conn.execute(LOCK_RUN, (run_id,)).fetchone()
        _refuse(run_id, None if row is None else int(row[0]))
        stored = stamp_run_update(run, tenant=row[1], created_at=parse_stamp(row[2]), now=now)
        at = stamp(now)
        conn.execute(
            UPDATE_RUN,
            (
                int(stored.status),
                int(stored.verdict),
                stored.question,
                stored.scenario,
                at,
                owner,
                at,
                payload(stored),
                run_id,
            ),
        )
    if commit.steps:
        conn.executemany(INSERT_STEP, [(run_id, int(step.node), step.attempt, payload(step)) for step in commit.steps])
    if events:
        conn.executemany(INSERT_EVENT, events)
    return stored


def add_tool_invocation(conn: sqlite3.Connection, row: tuple[str, str, str, bytes]) -> None:
    """The invocation's row (``records.invocation_row``), in one conditional insert; why not, when its run is
    missing or final."""
    run_id = row[0]
    if not conn.execute(INSERT_INVOCATION, (*row, run_id)).rowcount:
        _refuse(run_id, _status(conn, run_id))
        raise RunNotFound(f"run {run_id!r} took no invocation")  # unreachable: a run not final takes it


# ---------------------------------------------------------------------- reads


def get_run(conn: sqlite3.Connection, run_id: str, tenant: str | None) -> bytes | None:
    if tenant is None:
        row = conn.execute(GET_RUN, (run_id,)).fetchone()
    else:
        row = conn.execute(GET_RUN_OF_TENANT, (run_id, tenant)).fetchone()
    return None if row is None else bytes(row[0])


def list_events(conn: sqlite3.Connection, run_id: str, after_sequence: int, limit: int) -> list[bytes]:
    return [row[0] for row in conn.execute(LIST_EVENTS, (run_id, after_sequence, limit))]


def list_tool_invocations(conn: sqlite3.Connection, run_id: str) -> list[bytes]:
    return [row[0] for row in conn.execute(LIST_INVOCATIONS, (run_id,))]
