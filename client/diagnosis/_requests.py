"""Request building and stream bookkeeping shared by the sync and the async client (no I/O)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any, TypeAlias

import grpc
from google.protobuf import json_format, struct_pb2, timestamp_pb2

from diagnosis.errors import DeadlineExceededError, ProtocolError
from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2, gatekeeper_service_pb2, run_pb2

RunStatusLike: TypeAlias = "run_pb2.RunStatus.ValueType | int | str | None"
VerdictLike: TypeAlias = "contracts_pb2.Verdict.ValueType | int | str | None"
TriggerLike: TypeAlias = "run_pb2.TriggerKind.ValueType | int | str | None"
ToolInvocationLike: TypeAlias = "contracts_pb2.ToolInvocation | Mapping[str, Any]"
ExecutorOutputLike: TypeAlias = "str | Mapping[str, Any] | struct_pb2.Struct"


def run_status(value: RunStatusLike) -> run_pb2.RunStatus.ValueType:
    """``"success"``, ``"RUN_STATUS_SUCCESS"``, ``2`` -> ``RUN_STATUS_SUCCESS``; ``None`` -> unspecified."""
    return run_pb2.RunStatus.ValueType(_enum_number(run_pb2.RunStatus.DESCRIPTOR, "RUN_STATUS_", "status", value))


def verdict(value: VerdictLike) -> contracts_pb2.Verdict.ValueType:
    """``"low_confid"``, ``"VERDICT_LOW_CONFID"``, ``2`` -> ``VERDICT_LOW_CONFID``; ``None`` -> unspecified."""
    return contracts_pb2.Verdict.ValueType(_enum_number(contracts_pb2.Verdict.DESCRIPTOR, "VERDICT_", "verdict", value))


def trigger_kind(value: TriggerLike) -> run_pb2.TriggerKind.ValueType:
    """``"alert"``, ``"TRIGGER_KIND_ALERT"``, ``2`` -> ``TRIGGER_KIND_ALERT``; ``None`` -> unspecified."""
    number = _enum_number(run_pb2.TriggerKind.DESCRIPTOR, "TRIGGER_KIND_", "trigger", value)
    return run_pb2.TriggerKind.ValueType(number)


def _enum_number(descriptor: Any, prefix: str, what: str, value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected a name or number, got {value!r}")
    if isinstance(value, int):
        if value not in descriptor.values_by_number:
            raise ValueError(f"{what}: unknown value {value}")
        return value
    if isinstance(value, str):
        name = value.strip().upper()
        if not name.startswith(prefix):
            name = prefix + name
        if name in descriptor.values_by_name:
            return int(descriptor.values_by_name[name].number)
        known = ", ".join(v.name[len(prefix) :].lower() for v in descriptor.values if v.number)
        raise ValueError(f"{what}: unknown value {value!r} (expected one of: {known})")
    raise ValueError(f"{what}: expected a name or number, got {type(value).__name__}")


# A run's window: (start, end) as datetimes (timezone-aware) or Unix seconds.
WindowLike: TypeAlias = "tuple[datetime | float, datetime | float] | None"


def _timestamp(value: datetime | float) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    if isinstance(value, datetime):
        # timezone.utc, not datetime.UTC (3.11 and later): the client runs on Python 3.10 too.
        stamp.FromDatetime(value if value.tzinfo else value.replace(tzinfo=timezone.utc))  # noqa: UP017
    else:
        stamp.FromMicroseconds(int(value * 1_000_000))
    return stamp


def diagnose_request(
    question: str, scenario: str, environment: str = "", time_window: WindowLike = None
) -> diagnosis_service_pb2.DiagnoseRequest:
    context = diagnosis_service_pb2.RequestContext(scenario=scenario, environment=environment)
    if time_window is not None:
        context.time_window.start.CopyFrom(_timestamp(time_window[0]))
        context.time_window.end.CopyFrom(_timestamp(time_window[1]))
    return diagnosis_service_pb2.DiagnoseRequest(question=question, context=context)


def list_runs_request(
    page_size: int, page_token: str, status: RunStatusLike, verdict_: VerdictLike, trigger: TriggerLike = None
) -> diagnosis_service_pb2.ListRunsRequest:
    return diagnosis_service_pb2.ListRunsRequest(
        page_size=page_size,
        page_token=page_token,
        status=run_status(status),
        verdict=verdict(verdict_),
        trigger=trigger_kind(trigger),
    )


def check_evidence_request(
    request: gatekeeper_service_pb2.CheckEvidenceRequest | None,
    *,
    run_id: str,
    tool_invocations: Iterable[ToolInvocationLike],
    executor_output: ExecutorOutputLike | None,
) -> gatekeeper_service_pb2.CheckEvidenceRequest:
    """A ready request, or one built from keyword arguments (not both)."""
    tool_invocations = list(tool_invocations)
    if request is not None:
        if run_id or tool_invocations or executor_output is not None:
            raise TypeError("check_evidence: pass a CheckEvidenceRequest or keyword arguments, not both")
        return request
    built = gatekeeper_service_pb2.CheckEvidenceRequest(run_id=run_id)
    for position, item in enumerate(tool_invocations):
        if isinstance(item, contracts_pb2.ToolInvocation):
            built.tool_invocations.append(item)
            continue
        try:
            json_format.ParseDict(dict(item), built.tool_invocations.add())
        except (json_format.ParseError, TypeError, ValueError) as exc:
            raise ValueError(f"tool_invocations[{position}]: {exc}") from None
    if isinstance(executor_output, str):
        built.executor_output_text = executor_output
    elif isinstance(executor_output, struct_pb2.Struct):
        built.executor_output_json.CopyFrom(executor_output)
    elif isinstance(executor_output, Mapping):
        try:
            json_format.ParseDict(dict(executor_output), built.executor_output_json)
        except (json_format.ParseError, TypeError, ValueError) as exc:
            raise ValueError(f"executor_output: {exc}") from None
    elif executor_output is not None:
        raise TypeError("executor_output: expected raw text, a JSON object (mapping) or a Struct")
    return built


class Deadline:
    """One deadline over several attempts (a stream and its reconnects)."""

    def __init__(self, timeout: float | None) -> None:
        self._at = None if timeout is None else time.monotonic() + timeout

    def remaining(self) -> float | None:
        """Seconds left, or None with no deadline; raises DeadlineExceededError once past it."""
        if self._at is None:
            return None
        left = self._at - time.monotonic()
        if left <= 0:
            raise DeadlineExceededError("deadline exceeded while resuming the stream")
        return left

    def allows(self, delay: float) -> bool:
        return self._at is None or time.monotonic() + delay < self._at


class WatchCursor:
    """Where a watch stands: the last sequence seen, so a resumed stream skips what was already yielded."""

    def __init__(self, run_id: str, after_sequence: int) -> None:
        if after_sequence < 0:
            raise ValueError(f"after_sequence: must be 0 or more, got {after_sequence}")
        self.run_id = run_id
        self.last_sequence = after_sequence
        self.failures = 0

    def request(self) -> diagnosis_service_pb2.WatchRunRequest:
        return diagnosis_service_pb2.WatchRunRequest(run_id=self.run_id, after_sequence=self.last_sequence)

    def accept(self, response: diagnosis_service_pb2.WatchRunResponse) -> bool:
        """True when the response is new (and records it); False for an event already yielded."""
        if response.WhichOneof("kind") == "event":
            if response.event.sequence <= self.last_sequence:
                return False
            self.last_sequence = response.event.sequence
            self.failures = 0
        return True

    def may_resume(self, code: grpc.StatusCode | None, max_attempts: int, codes: tuple[grpc.StatusCode, ...]) -> bool:
        """Counts one failure; True when a reconnect is allowed (``code`` None: the stream ended early)."""
        if code is not None and code not in codes:
            return False
        self.failures += 1
        return self.failures <= max_attempts

    def incomplete(self) -> ProtocolError:
        return ProtocolError(
            f"WatchRun stream for {self.run_id!r} ended without saying how the run ended "
            f"(last sequence {self.last_sequence})"
        )


def final_run(response: diagnosis_service_pb2.DiagnoseResponse | None) -> run_pb2.DiagnosisRun:
    """The run of the last Diagnose message, or ProtocolError when the stream had none."""
    if response is None or response.WhichOneof("kind") != "run":
        raise ProtocolError("Diagnose stream ended without the final run")
    return response.run
