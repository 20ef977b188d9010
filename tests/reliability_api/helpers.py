"""Helpers of the service-level reliability tests: google.rpc details of a failed call, store snapshots,
and the consistency rules a run's stored records obey whatever happened to the process writing them."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from diagnosis.v1 import run_pb2

# Every table of the store; a snapshot holds all their rows.
TABLES = ("diagnosis_run", "tool_invocation", "orchestration_event", "node_step")

RpcError = grpc.aio.AioRpcError | grpc.RpcError


def rich_status(error: Any) -> status_pb2.Status:
    """The google.rpc.Status of a failed call (``from_call`` also checks code and message agree)."""
    status = rpc_status.from_call(error)
    assert status is not None, f"no google.rpc.Status details on {error.code()}: {error.details()}"
    return status


def violation_fields(error: Any) -> list[str]:
    """The fields named by the BadRequest details of an INVALID_ARGUMENT call."""
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (error.code(), error.details())
    fields: list[str] = []
    for detail in rich_status(error).details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad_request = error_details_pb2.BadRequest()
            detail.Unpack(bad_request)
            fields += [violation.field for violation in bad_request.field_violations]
    return fields


def error_reason(error: Any) -> str:
    for detail in rich_status(error).details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info.reason
    return ""


async def read_rest(call: grpc.aio.UnaryStreamCall[Any, Any]) -> list[Any]:
    """The remaining messages of a stream already read with ``read()``."""
    messages: list[Any] = []
    while (message := await call.read()) is not grpc.aio.EOF:
        messages.append(message)
    return messages


async def collect(stream: AsyncIterator[Any]) -> list[Any]:
    return [message async for message in stream]


async def eventually(condition: Callable[[], bool], *, within_s: float = 5.0) -> None:
    """Until ``condition()`` holds (for state that has no event to await, such as a server-side subscription)."""
    async with asyncio.timeout(within_s):
        while True:
            if condition():
                return
            await asyncio.sleep(0.005)


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
    step_nodes: list[int]


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
