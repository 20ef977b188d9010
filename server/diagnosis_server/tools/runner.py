"""The tool runner: allow-list, time-out, output bound, and a recorded tool_invocation for every call.

An output over the bound is trimmed (``trim``: trailing array elements dropped, so bindings into what is
kept still resolve) and recorded TRUNCATED with ``error`` saying what was trimmed; one that cannot be
trimmed under the bound is recorded ERROR without output.

Every call is recorded as a ``tool_invocation`` row of this run *before* the Executor sees its result
(R-C-2), whether it succeeded, failed, timed out, was truncated or was blocked.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from google.protobuf import struct_pb2, timestamp_pb2

from diagnosis.v1 import contracts_pb2
from diagnosis_server import telemetry
from diagnosis_server.conversions import (
    MAX_JSON_DEPTH,
    JsonObject,
    JsonTooDeep,
    JsonValue,
    JsonValueError,
    canonical_json_bytes,
    json_depth,
    to_struct,
    to_value,
    too_deep_message,
)
from diagnosis_server.tools.base import ToolError, Toolset
from diagnosis_server.tools.trim import Untrimmable, describe_trims, trim_to_fit

Recorder = Callable[[contracts_pb2.ToolInvocation], Awaitable[None]]

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024


class ToolBlockedError(Exception):
    """The tool is not on the run's allow-list (the Executor's outcome becomes TOOL_BLOCKED)."""

    def __init__(self, tool_name: str, invocation_id: str) -> None:
        super().__init__(f"tool {tool_name!r} is not allowed in this run")
        self.tool_name = tool_name
        self.invocation_id = invocation_id


@dataclass(frozen=True, slots=True)
class ToolCallResult:
    invocation_id: str
    tool_name: str
    status: contracts_pb2.ToolInvocationStatus.ValueType
    output: JsonValue
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK


class ToolRunner:
    """Calls tools for one run of one cycle and records each call through ``recorder``."""

    def __init__(
        self,
        *,
        run_id: str,
        toolset: Toolset,
        recorder: Recorder,
        allowed: Collection[str] | None = None,
        cycle: int = 1,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        max_calls: int = 64,
    ) -> None:
        self._run_id = run_id
        self._toolset = toolset
        self._recorder = recorder
        self._allowed = frozenset(allowed) if allowed is not None else frozenset(toolset.names)
        self._cycle = cycle
        self._timeout_s = timeout_s
        self._max_output_bytes = max_output_bytes
        self._max_calls = max_calls
        self._calls = 0
        self.invocation_ids: list[str] = []

    def with_cycle(self, cycle: int) -> ToolRunner:
        runner = ToolRunner(
            run_id=self._run_id,
            toolset=self._toolset,
            recorder=self._recorder,
            allowed=self._allowed,
            cycle=cycle,
            timeout_s=self._timeout_s,
            max_output_bytes=self._max_output_bytes,
            max_calls=self._max_calls,
        )
        return runner

    async def call(self, tool_name: str, arguments: JsonObject) -> ToolCallResult:
        """Calls the tool (allow-list, call limit, time-out, output bounds) and records the call (R-C-2).

        Traced as an ``execute_tool`` span carrying the invocation id, tool name, status and duration, so
        a binding's source invocation id leads to its span.
        """
        invocation_id = f"inv-{uuid.uuid4().hex[:16]}"
        attributes: dict[str, str | int] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool_name,
            "gen_ai.tool.call.id": invocation_id,
            "diagnosis.invocation_id": invocation_id,
            "diagnosis.run_id": self._run_id,
        }
        started = time.perf_counter()
        with telemetry.span(f"execute_tool {tool_name}", attributes) as span:
            try:
                result = await self._call(invocation_id, tool_name, arguments)
            except ToolBlockedError:
                span.set_attribute("diagnosis.tool.status", "BLOCKED")
                raise
            finally:
                span.set_attribute("diagnosis.tool.duration_ms", int((time.perf_counter() - started) * 1000))
            status = contracts_pb2.ToolInvocationStatus.Name(result.status).removeprefix("TOOL_INVOCATION_STATUS_")
            span.set_attribute("diagnosis.tool.status", status)
            if not result.ok:
                span.set_attribute("error.type", status)
            return result

    async def _call(self, invocation_id: str, tool_name: str, arguments: JsonObject) -> ToolCallResult:
        started = time.time()
        recorded_arguments, arguments_error = _recordable_arguments(arguments)
        if tool_name not in self._allowed or self._toolset.get(tool_name) is None:
            await self._record(
                invocation_id, tool_name, recorded_arguments, None, "BLOCKED", "not on the allow-list", started
            )
            raise ToolBlockedError(tool_name, invocation_id)
        if self._calls >= self._max_calls:
            await self._record(
                invocation_id, tool_name, recorded_arguments, None, "BLOCKED", "call limit reached", started
            )
            raise ToolBlockedError(tool_name, invocation_id)
        self._calls += 1
        if arguments_error:
            # Arguments that cannot be recorded are never run: the call is recorded as an error (R-C-2).
            await self._record(invocation_id, tool_name, recorded_arguments, None, "ERROR", arguments_error, started)
            return ToolCallResult(
                invocation_id, tool_name, contracts_pb2.TOOL_INVOCATION_STATUS_ERROR, None, arguments_error
            )
        tool = self._toolset.get(tool_name)
        assert tool is not None
        status, output, error = "OK", None, ""
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancellation of this task.
            async with asyncio.timeout(self._timeout_s):
                output = await tool.call(arguments)
        except TimeoutError:
            status, error = "TIMEOUT", f"no output within {self._timeout_s:g}s"
        except ToolError as exc:
            status, error = "ERROR", str(exc)[:500]
        except Exception as exc:  # a broken tool must not break the run; it is recorded
            status, error = "ERROR", f"{type(exc).__name__}: {str(exc)[:400]}"
        if status == "OK" and json_depth(output) > MAX_JSON_DEPTH:
            # Checked first: deeper than any message holding it could be decoded (the call is still recorded).
            status, output, error = "ERROR", None, too_deep_message("output")
        if status == "OK":
            try:
                size = len(canonical_json_bytes(output))
            except (TypeError, ValueError, RecursionError) as exc:
                status, output, error = "ERROR", None, f"output is not JSON: {str(exc)[:400]}"
            else:
                if size > self._max_output_bytes:
                    status, output, error = _trimmed(output, size, self._max_output_bytes)
        recorded_output, unrecordable = _recordable_output(output)
        if recorded_output is None:
            # Not recordable (nested deeper than a protobuf Value may be, or a non-finite number): an error.
            status, output, error = "ERROR", None, unrecordable
        await self._record(invocation_id, tool_name, recorded_arguments, recorded_output, status, error, started)
        return ToolCallResult(
            invocation_id=invocation_id,
            tool_name=tool_name,
            status=contracts_pb2.ToolInvocationStatus.Value(f"TOOL_INVOCATION_STATUS_{status}"),
            output=output,
            error=error,
        )

    async def record(self, tool_name: str, arguments: JsonObject, output: JsonValue, *, invocation_id: str) -> None:
        """Record an output produced elsewhere (a scripted replay) as this run's invocation.

        An output or arguments that cannot be recorded (nested deeper than the bound, not JSON) are recorded
        as an ERROR invocation saying why, like a live call's.
        """
        started = time.time()
        recorded_arguments, arguments_error = _recordable_arguments(arguments)
        if json_depth(output) > MAX_JSON_DEPTH:
            recorded_output, output_error = None, too_deep_message("output")
        else:
            recorded_output, output_error = _recordable_output(output)
        error = arguments_error or output_error
        status = "ERROR" if error else "OK"
        await self._record(invocation_id, tool_name, recorded_arguments, recorded_output, status, error, started)

    async def _record(
        self,
        invocation_id: str,
        tool_name: str,
        arguments: struct_pb2.Struct,
        output: struct_pb2.Value | None,
        status: str,
        error: str,
        started: float,
    ) -> None:
        ts = timestamp_pb2.Timestamp()
        ts.FromNanoseconds(int(started * 1e9))
        invocation = contracts_pb2.ToolInvocation(
            invocation_id=invocation_id,
            run_id=self._run_id,
            tool_name=tool_name,
            arguments=arguments,
            output=output if output is not None else to_value(None),
            status=contracts_pb2.ToolInvocationStatus.Value(f"TOOL_INVOCATION_STATUS_{status}"),
            started_at=ts,
            duration_ms=int((time.time() - started) * 1000),
            error=error,
            cycle=self._cycle,
        )
        await self._recorder(invocation)
        self.invocation_ids.append(invocation_id)


def _trimmed(output: JsonValue, size: int, max_bytes: int) -> tuple[str, JsonValue, str]:
    """An over-size output trimmed to the bound (TRUNCATED, still the upstream's JSON), or ERROR when it cannot be."""
    try:
        trimmed, trims = trim_to_fit(output, max_bytes)
    except Untrimmable as exc:
        return "ERROR", None, f"output of {size} bytes is over the {max_bytes} byte bound and cannot be trimmed: {exc}"
    return "TRUNCATED", trimmed, describe_trims(trims, max_bytes)[:500]


def _recordable_arguments(arguments: JsonObject) -> tuple[struct_pb2.Struct, str]:
    """The arguments as recorded, and why they cannot be recorded ("" when they can)."""
    if json_depth(arguments) > MAX_JSON_DEPTH:
        return struct_pb2.Struct(), f"{too_deep_message('arguments')}: the tool was not run"
    try:
        return to_struct(arguments), ""
    except Exception as exc:  # nested too deeply, not JSON, or not valid Unicode: recorded as such
        return struct_pb2.Struct(), f"arguments cannot be recorded ({type(exc).__name__}): the tool was not run"


def _recordable_output(output: JsonValue) -> tuple[struct_pb2.Value | None, str]:
    """The output as recorded, or None and why it cannot be (deeper than a protobuf Value may nest, not JSON)."""
    try:
        return to_value(output), ""
    except JsonTooDeep:
        return None, too_deep_message("output")
    except JsonValueError as exc:
        return None, f"output is not JSON: {str(exc)[:400]}"
    except Exception as exc:  # RecursionError
        return None, f"output cannot be recorded ({type(exc).__name__})"
