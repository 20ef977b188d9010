"""Helpers of the service-level reliability tests: store snapshots and the consistency rules a run's stored
records obey whatever happened to the process writing them."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diagnosis.v1 import run_pb2

# Every table of the store; a snapshot holds all their rows.
TABLES = ("diagnosis_run", "tool_invocation", "orchestration_event", "node_step")


def store_snapshot(database: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table of the SQLite store, in a stable order (read beside the running server)."""
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=15)) as conn:
        return {table: sorted(conn.execute(f"SELECT * FROM {table}").fetchall()) for table in TABLES}


@dataclass(frozen=True)
class StoredRun:
    """One run as the store holds it, read straight from the SQLite file."""

    run: run_pb2.DiagnosisRun
    owner: str
    events: list[run_pb2.OrchestrationEvent]
    step_nodes: list[run_pb2.NodeName.ValueType]


def read_stored_run(database: Path, run_id: str) -> StoredRun:
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=15)) as conn:
        row = conn.execute("SELECT payload, owner FROM diagnosis_run WHERE run_id = ?", (run_id,)).fetchone()
        assert row is not None, f"run {run_id} is not stored"
        events = [
            run_pb2.OrchestrationEvent.FromString(payload)
            for (payload,) in conn.execute(
                "SELECT payload FROM orchestration_event WHERE run_id = ? ORDER BY sequence", (run_id,)
            )
        ]
        steps = conn.execute("SELECT node FROM node_step WHERE run_id = ? ORDER BY id", (run_id,))
        return StoredRun(
            run=run_pb2.DiagnosisRun.FromString(row[0]),
            owner=row[1],
            events=events,
            step_nodes=[node for (node,) in steps],
        )


def assert_consistent(stored: StoredRun) -> None:
    """Each node is committed whole (R-S-3, R-S-4): event and step together, in order, or none.

    Events are numbered 1..n without a gap; every event and step belongs to the run; no step was stored
    for a node without its event.
    """
    run_id = stored.run.run_id
    sequences = [event.sequence for event in stored.events]
    assert sequences == list(range(1, len(sequences) + 1)), sequences
    assert all(event.run_id == run_id for event in stored.events)
    event_nodes = [event.node for event in stored.events]
    remaining = list(event_nodes)
    for node in stored.step_nodes:
        assert node in remaining, f"a node step of {node} with no committed event: {stored.step_nodes} vs {event_nodes}"
        remaining.remove(node)
