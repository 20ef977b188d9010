"""Rows from protos, protos from rows: the one place payload bytes and indexed columns are derived."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from google.protobuf.timestamp_pb2 import Timestamp

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.store.base import MAX_EVENTS_LIMIT, NodeCommit
from diagnosis_server.store.errors import InvalidRecord, StoreError

_M = TypeVar("_M", bound=Message)

TERMINAL_STATUSES = frozenset({run_pb2.RUN_STATUS_SUCCESS, run_pb2.RUN_STATUS_FAILED})


def status_name(status: int) -> str:
    """``RUN_STATUS_SUCCESS`` -> ``"SUCCESS"``; the number itself when it names no status."""
    value = run_pb2.RunStatus.DESCRIPTOR.values_by_number.get(status)
    return str(status) if value is None else value.name.removeprefix("RUN_STATUS_")


def utc_now() -> datetime:
    return datetime.now(UTC)


def truncate_to_micros(stamp: Timestamp) -> None:
    """Databases keep microseconds: the payload keeps no more, so it agrees with its column."""
    stamp.nanos -= stamp.nanos % 1000


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_timestamp(moment: datetime) -> Timestamp:
    """``Timestamp.FromDatetime`` (a naive datetime is UTC), without its round trip through a time tuple."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    since = moment - _EPOCH
    return Timestamp(seconds=since.days * 86400 + since.seconds, nanos=since.microseconds * 1000)


def from_timestamp(stamp: Timestamp) -> datetime:
    return stamp.ToDatetime(tzinfo=UTC)


def payload(message: Message) -> bytes:
    return message.SerializeToString(deterministic=True)


def parse_run(data: bytes) -> run_pb2.DiagnosisRun:
    return _parse(run_pb2.DiagnosisRun(), data)


def parse_invocation(data: bytes) -> contracts_pb2.ToolInvocation:
    return _parse(contracts_pb2.ToolInvocation(), data)


def parse_invocations(rows: Iterable[bytes]) -> list[contracts_pb2.ToolInvocation]:
    parse = contracts_pb2.ToolInvocation.FromString
    try:
        return [parse(data) for data in rows]
    except DecodeError as exc:
        raise StoreError("stored ToolInvocation does not parse") from exc


def parse_event(data: bytes) -> run_pb2.OrchestrationEvent:
    return _parse(run_pb2.OrchestrationEvent(), data)


def parse_step(data: bytes) -> run_pb2.NodeStep:
    return _parse(run_pb2.NodeStep(), data)


def _parse(message: _M, data: bytes) -> _M:
    try:
        message.ParseFromString(data)
    except DecodeError as exc:
        raise StoreError(f"stored {message.DESCRIPTOR.name} does not parse") from exc
    return message


def require_id(value: str, what: str) -> None:
    if not value:
        raise InvalidRecord(f"{what} is empty")
    if len(value) > 128:
        raise InvalidRecord(f"{what} is longer than 128 characters")


def run_columns(run: run_pb2.DiagnosisRun) -> dict[str, Any]:
    """The run row's columns other than ownership and heartbeat, all taken from ``run``."""
    return {
        "run_id": run.run_id,
        "tenant": run.tenant,
        "status": int(run.status),
        "verdict": int(run.verdict),
        "question": run.question,
        "scenario": run.scenario,
        "trigger_kind": int(run.trigger.kind),
        "trigger_key": run.trigger.alert.dedupe_key or None,
        "created_at": from_timestamp(run.created_at),
        "updated_at": from_timestamp(run.updated_at),
        "payload": payload(run),
    }


def stamp_new_run(run: run_pb2.DiagnosisRun, now: datetime) -> run_pb2.DiagnosisRun:
    """A copy of a run being created: RUNNING, created_at (kept if given) and updated_at set."""
    require_id(run.run_id, "run_id")
    if len(run.tenant) > 128:
        raise InvalidRecord("tenant is longer than 128 characters")
    if len(run.scenario) > 256:
        raise InvalidRecord("scenario is longer than 256 characters")
    if run.status not in (run_pb2.RUN_STATUS_UNSPECIFIED, run_pb2.RUN_STATUS_RUNNING):
        raise InvalidRecord(f"a new run is RUNNING, not {status_name(run.status)}")
    stored = run_pb2.DiagnosisRun()
    stored.CopyFrom(run)
    stored.status = run_pb2.RUN_STATUS_RUNNING
    if stored.HasField("created_at"):
        truncate_to_micros(stored.created_at)
    else:
        stored.created_at.CopyFrom(to_timestamp(now))
    stored.updated_at.CopyFrom(to_timestamp(now))
    stored.ClearField("completed_at")
    return stored


def stamp_run_update(
    run: run_pb2.DiagnosisRun, *, tenant: str, created_at: datetime, now: datetime
) -> run_pb2.DiagnosisRun:
    """A copy of a run replacing its stored row: tenant and created_at kept, updated_at (and completed_at) set."""
    if run.tenant != tenant:
        raise InvalidRecord(f"run {run.run_id!r} belongs to another tenant; a run's tenant never changes")
    if run.status == run_pb2.RUN_STATUS_UNSPECIFIED:
        raise InvalidRecord(f"run {run.run_id!r} has no status")
    stored = run_pb2.DiagnosisRun()
    stored.CopyFrom(run)
    stored.created_at.CopyFrom(to_timestamp(created_at))
    stored.updated_at.CopyFrom(to_timestamp(now))
    if stored.status in TERMINAL_STATUSES:
        if stored.HasField("completed_at"):
            truncate_to_micros(stored.completed_at)
        else:
            stored.completed_at.CopyFrom(to_timestamp(now))
    else:
        stored.ClearField("completed_at")
    return stored


def stamp_interrupted(run: run_pb2.DiagnosisRun, reason: str, now: datetime) -> run_pb2.DiagnosisRun:
    stored = run_pb2.DiagnosisRun()
    stored.CopyFrom(run)
    stored.status = run_pb2.RUN_STATUS_FAILED
    stored.failure_reason = reason
    stored.updated_at.CopyFrom(to_timestamp(now))
    stored.completed_at.CopyFrom(to_timestamp(now))
    return stored


def invocation_columns(invocation: contracts_pb2.ToolInvocation) -> dict[str, Any]:
    run_id, invocation_id, tool_name, data = invocation_row(invocation)
    return {"run_id": run_id, "invocation_id": invocation_id, "tool_name": tool_name, "payload": data}


def invocation_row(invocation: contracts_pb2.ToolInvocation) -> tuple[str, str, str, bytes]:
    """The invocation's row (run_id, invocation_id, tool_name, payload), its ids checked first."""
    run_id, invocation_id = invocation.run_id, invocation.invocation_id
    require_id(run_id, "tool invocation run_id")
    require_id(invocation_id, "invocation_id")
    return run_id, invocation_id, invocation.tool_name, invocation.SerializeToString(deterministic=True)


def check_event(run_id: str, event: run_pb2.OrchestrationEvent) -> None:
    if event.run_id != run_id:
        raise InvalidRecord(f"event {event.sequence} belongs to run {event.run_id!r}, not {run_id!r}")
    if event.sequence < 1:
        raise InvalidRecord(f"event sequence {event.sequence} is not positive")


def check_step(run_id: str, step: run_pb2.NodeStep) -> None:
    if step.run_id != run_id:
        raise InvalidRecord(f"node step belongs to run {step.run_id!r}, not {run_id!r}")


def event_columns(run_id: str, event: run_pb2.OrchestrationEvent) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "sequence": event.sequence,
        "node": int(event.node),
        "outcome": int(event.outcome),
        "payload": payload(event),
    }


def step_columns(run_id: str, step: run_pb2.NodeStep) -> dict[str, Any]:
    return {"run_id": run_id, "node": int(step.node), "attempt": step.attempt, "payload": payload(step)}


def events_limit(limit: int) -> int:
    """The number of events one ``list_events`` call reads: ``limit``, at most MAX_EVENTS_LIMIT."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    return min(limit, MAX_EVENTS_LIMIT)


def check_commit(commit: NodeCommit) -> None:
    """Every record of a node commit belongs to its run (R-S-4); InvalidRecord before anything is written."""
    require_id(commit.run_id, "run_id")
    if commit.run is not None and commit.run.run_id != commit.run_id:
        raise InvalidRecord(f"run {commit.run.run_id!r} given to commit_node of run {commit.run_id!r}")
    for step in commit.steps:
        check_step(commit.run_id, step)
    for event in commit.events:
        check_event(commit.run_id, event)


def final_commit(run: run_pb2.DiagnosisRun) -> NodeCommit:
    """The commit of a run's final record (``finish_run``): SUCCESS or FAILED, else InvalidRecord."""
    if run.status not in TERMINAL_STATUSES:
        raise InvalidRecord(f"finish_run needs status SUCCESS or FAILED, not {status_name(run.status)}")
    return NodeCommit(run.run_id, run=run)
