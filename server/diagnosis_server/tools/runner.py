"""The tool runner: allow-list, time-out, output bound, and a recorded tool_invocation for every call.

An output over the bound is trimmed (``trim``: trailing array elements dropped, so bindings into what is
kept still resolve) and recorded TRUNCATED with ``error`` saying what was trimmed; one that cannot be
trimmed under the bound is recorded ERROR without output.

Every call is recorded as a ``tool_invocation`` row of this run *before* the Executor sees its result
(R-C-2), whether it succeeded, failed, timed out, was truncated or was blocked. Independent calls run
concurrently, bounded per run and per source, and are recorded in plan order; a source that timed out or
refused fails the run's remaining calls to it at once (``breaker``).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass

from google.protobuf import struct_pb2

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server import telemetry
from diagnosis_server.conversions import (
    MAX_JSON_DEPTH,
    JsonObject,
    JsonTooDeep,
    JsonValue,
    JsonValueError,
    canonical_json_bytes,
    enum_short_name,
    fill_struct,
    fill_value,
    from_struct,
    from_value,
    holds_json,
    json_depth,
    too_deep_message,
)
from diagnosis_server.limits import DEFAULT_LIMITS
from diagnosis_server.text.redaction import DEFAULT as REDACTOR
from diagnosis_server.text.redaction import redact_text
from diagnosis_server.tools.base import CALL_DEADLINE, SourceUnreachable, Tool, ToolError, Toolset
from diagnosis_server.tools.breaker import SourceBreaker, source_of
from diagnosis_server.tools.trim import Untrimmable, describe_trims, trim_to_fit
from diagnosis_server.tools.window_arguments import within_window

Recorder = Callable[[contracts_pb2.ToolInvocation], Awaitable[None]]
# The run's recorded invocations so far (the store's list): what its earlier cycles read.
Recorded = Callable[[], Awaitable[Sequence[contracts_pb2.ToolInvocation]]]
ProgressSink = Callable[[run_pb2.ToolCallEvent], Awaitable[None]]
# Outputs with data: whole, or trimmed to the output bound (the kept part is the upstream's own JSON).
USABLE = frozenset({contracts_pb2.TOOL_INVOCATION_STATUS_OK, contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED})


class InvocationIds:
    """A run's invocation ids, numbered in call order (``inv-0001``, ...): unique within the run, which is
    all the store asks (its key is run_id and invocation_id), and cheaper than a random id a call.

    A runner made without the run's counter numbers under a random prefix of its own (``inv-1f3a9c0b-0001``),
    so that two such runners of one run never collide.
    """

    def __init__(self, prefix: str = "inv-") -> None:
        self._prefix = prefix
        self._count = itertools.count(1)

    @classmethod
    def unshared(cls) -> InvocationIds:
        return cls(f"inv-{os.urandom(4).hex()}-")

    def next(self) -> str:
        return f"{self._prefix}{next(self._count):04d}"


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
    # The call's arguments, where the result is read back from the store (``ToolRunner.earlier``).
    arguments: JsonObject | None = None

    @property
    def ok(self) -> bool:
        return self.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK


class ToolRunner:
    """Calls tools for one run of one cycle and records each call through ``recorder``.

    ``call_many`` runs independent calls concurrently: at most ``max_concurrency`` at once, at most
    ``max_per_source`` on one source (``breaker.source_of``). Their invocation ids are given in plan order when
    they are dispatched, and they are recorded in plan order (each as soon as those before it are), so ids and
    the store's order do not depend on which upstream answered first; every result is recorded before it is
    returned (R-C-2). Once a source timed out or refused, ``breaker`` fails the run's remaining calls to it at
    once, each recorded ERROR naming the source and its first failure. ``on_progress`` hears each call start
    (when dispatched, in plan order) and end (when recorded).
    """

    def __init__(
        self,
        *,
        run_id: str,
        toolset: Toolset,
        recorder: Recorder,
        allowed: Collection[str] | None = None,
        cycle: int = 1,
        timeout_s: float = DEFAULT_LIMITS.tool_timeout_s,
        max_output_bytes: int = DEFAULT_LIMITS.max_tool_output_bytes,
        max_calls: int = DEFAULT_LIMITS.max_tool_calls,
        ids: InvocationIds | None = None,
        max_concurrency: int = DEFAULT_LIMITS.max_concurrent_tool_calls,
        max_per_source: int = DEFAULT_LIMITS.max_concurrent_calls_per_source,
        breaker: SourceBreaker | None = None,
        on_progress: ProgressSink | None = None,
        window: tuple[str, str] | None = None,
        recorded: Recorded | None = None,
    ) -> None:
        self._run_id = run_id
        self._recorded = recorded
        # The run's window (RFC 3339 start, end): the span of every read that names none (``within_window``).
        self._window = window
        self._ids = ids if ids is not None else InvocationIds.unshared()
        self._toolset = toolset
        self._recorder = recorder
        self._allowed = frozenset(allowed) if allowed is not None else frozenset(toolset.names)
        self._cycle = cycle
        self._timeout_s = timeout_s
        self._max_output_bytes = max_output_bytes
        self._max_calls = max_calls
        self._calls = 0
        self._slots = asyncio.Semaphore(max(1, max_concurrency))
        self._max_per_source = max(1, max_per_source)
        self._source_slots: dict[str, asyncio.Semaphore] = {}
        self.breaker = breaker if breaker is not None else SourceBreaker()
        self._on_progress = on_progress
        self.invocation_ids: list[str] = []
        # The first call whose recording failed (the store's error): the run cannot go on past it, even if
        # the agent that made the call swallowed the error.
        self.recording_failed: Exception | None = None

    async def earlier(self) -> list[ToolCallResult]:
        """What the run's earlier cycles read: each call of theirs with an output (OK or TRUNCATED), as recorded,
        in the order recorded. An evidence retry reads them beside its own calls; nothing is called again."""
        if self._recorded is None or self._cycle <= 1:
            return []
        return [
            ToolCallResult(
                invocation.invocation_id,
                invocation.tool_name,
                invocation.status,
                from_value(invocation.output),
                arguments=from_struct(invocation.arguments),
            )
            for invocation in await self._recorded()
            if invocation.cycle < self._cycle
            and invocation.status in USABLE
            and invocation.run_id in ("", self._run_id)
        ]

    async def call(self, tool_name: str, arguments: JsonObject) -> ToolCallResult:
        """Calls the tool (allow-list, call limit, time-out, output bounds) and records the call (R-C-2).

        Traced as an ``execute_tool`` span carrying the invocation id, tool name, status and duration, so
        a binding's source invocation id leads to its span.
        """
        return (await self.call_many([(tool_name, arguments)]))[0]

    async def call_many(self, calls: Sequence[tuple[str, JsonObject]]) -> list[ToolCallResult]:
        """Runs independent calls concurrently; their results in plan order, each recorded first.

        The allow-list and the call limit are checked in plan order at dispatch: the first call refused
        (ToolBlockedError) is recorded BLOCKED after the calls before it, and the calls after it never run.
        """
        pending: list[_Pending] = []
        blocked: _Pending | None = None
        for tool_name, arguments in calls:
            call = self._admit(self._ids.next(), tool_name, arguments)
            if call.blocked:
                blocked = call
                break
            pending.append(call)
        for call in (*pending, *((blocked,) if blocked is not None else ())):
            await self._progress(call, run_pb2.TOOL_CALL_PHASE_STARTED)
        tasks: list[asyncio.Future[None]] = []
        for call in pending:
            if call.runnable:
                call.task = asyncio.ensure_future(self._run(call))
                tasks.append(call.task)
        results: list[ToolCallResult] = []
        try:
            for call in pending:
                if call.task is not None:
                    await call.task
                results.append(await self._finish(call))
        finally:
            for task in tasks:
                task.cancel()
        if blocked is not None:
            await self._finish(blocked)
            raise ToolBlockedError(blocked.tool_name, blocked.invocation_id)
        return results

    def _admit(self, invocation_id: str, tool_name: str, arguments: JsonObject) -> _Pending:
        """The call as dispatched: refused (BLOCKED), not runnable (its arguments cannot be recorded), or to run."""
        dispatched = time.time()
        window_tool = self._toolset.get(tool_name)
        if self._window is not None and window_tool is not None:
            arguments = within_window(window_tool.input_schema, arguments, self._window)
        invocation = self._invocation(invocation_id, tool_name, dispatched)
        call = _Pending(invocation, arguments, dispatched)
        arguments_error = _fill_arguments(invocation.arguments, arguments)
        tool = self._toolset.get(tool_name)
        if tool_name not in self._allowed or tool is None:
            call.end(contracts_pb2.TOOL_INVOCATION_STATUS_BLOCKED, "not on the allow-list", blocked=True)
            return call
        if self._calls >= self._max_calls:
            call.end(contracts_pb2.TOOL_INVOCATION_STATUS_BLOCKED, "call limit reached", blocked=True)
            return call
        self._calls += 1
        if arguments_error:
            # Arguments that cannot be recorded are never run: the call is recorded as an error (R-C-2).
            call.end(contracts_pb2.TOOL_INVOCATION_STATUS_ERROR, arguments_error)
            return call
        call.tool = tool
        call.source = source_of(tool_name, tool)
        return call

    async def _run(self, call: _Pending) -> None:
        """Runs one admitted call in its source's and the run's slots, unless its source's breaker is open."""
        attributes: dict[str, str | int] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.tool_name,
            "gen_ai.tool.call.id": call.invocation_id,
            "diagnosis.invocation_id": call.invocation_id,
            "diagnosis.run_id": self._run_id,
        }
        slot = self._source_slots.setdefault(call.source, asyncio.Semaphore(self._max_per_source))
        async with slot, self._slots:
            call.started = time.time()
            call.invocation.started_at.FromNanoseconds(int(call.started * 1e9))
            with telemetry.span(f"execute_tool {call.tool_name}", attributes) as span:
                try:
                    await self._execute(call)
                finally:
                    span.set_attribute("diagnosis.tool.duration_ms", int((time.time() - call.started) * 1000))
                status = enum_short_name(contracts_pb2.ToolInvocationStatus, call.status)
                span.set_attribute("diagnosis.tool.status", status)
                if call.status != contracts_pb2.TOOL_INVOCATION_STATUS_OK:
                    span.set_attribute("error.type", status)

    async def _execute(self, call: _Pending) -> None:
        tripped = self.breaker.tripped(call.source)
        if tripped is not None:
            call.end(contracts_pb2.TOOL_INVOCATION_STATUS_ERROR, tripped.message())
            return
        tool = call.tool
        assert tool is not None
        status, output, error = contracts_pb2.TOOL_INVOCATION_STATUS_OK, None, ""
        token = CALL_DEADLINE.set(time.monotonic() + self._timeout_s)
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancellation of this task.
            async with asyncio.timeout(self._timeout_s):
                output = await tool.call(call.arguments)
        except TimeoutError:
            status, error = contracts_pb2.TOOL_INVOCATION_STATUS_TIMEOUT, f"no output within {self._timeout_s:g}s"
            self.breaker.trip(call.source, call.invocation_id, error)
        except SourceUnreachable as exc:
            status, error = contracts_pb2.TOOL_INVOCATION_STATUS_ERROR, redact_text(str(exc)[:500])
            self.breaker.trip(call.source, call.invocation_id, error)
        except ToolError as exc:
            status, error = contracts_pb2.TOOL_INVOCATION_STATUS_ERROR, redact_text(str(exc)[:500])
        except Exception as exc:  # a broken tool must not break the run; it is recorded
            status, error = (
                contracts_pb2.TOOL_INVOCATION_STATUS_ERROR,
                redact_text(f"{type(exc).__name__}: {str(exc)[:400]}"),
            )
        finally:
            CALL_DEADLINE.reset(token)
        invocation = call.invocation
        if status == contracts_pb2.TOOL_INVOCATION_STATUS_OK:
            # Converted once, straight into the invocation the store serializes (no copy, no JSON text). The
            # conversion is the depth check too: deeper than MAX_JSON_DEPTH (than any message holding it could
            # be decoded) is JsonTooDeep, "output is nested deeper than 32", and the call is still recorded.
            unrecordable = _fill_output(invocation.output, output)
            if unrecordable:
                # Not recordable (nested deeper than a protobuf Value may be, or a non-finite number): an error.
                status, output, error = contracts_pb2.TOOL_INVOCATION_STATUS_ERROR, None, unrecordable
            elif not fits_without_measuring(invocation.output, self._max_output_bytes):
                size = len(canonical_json_bytes(output))
                if size > self._max_output_bytes:
                    status, output, error = _trimmed(output, size, self._max_output_bytes)
                    if output is not None:
                        _fill_output(invocation.output, output)
        if output is None:
            invocation.output.Clear()
            invocation.output.null_value = struct_pb2.NULL_VALUE
        call.output = output
        call.end(status, error)

    async def _finish(self, call: _Pending) -> ToolCallResult:
        """Records the ended call (in plan order), tells ``on_progress``, and gives its result."""
        if not call.runnable:
            # Never run (blocked, or arguments that cannot be recorded): traced as a call that ended at once.
            attributes: dict[str, str | int] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.tool_name,
                "gen_ai.tool.call.id": call.invocation_id,
                "diagnosis.invocation_id": call.invocation_id,
                "diagnosis.run_id": self._run_id,
            }
            with telemetry.span(f"execute_tool {call.tool_name}", attributes) as span:
                status = enum_short_name(contracts_pb2.ToolInvocationStatus, call.status)
                span.set_attribute("diagnosis.tool.status", status)
                span.set_attribute("diagnosis.tool.duration_ms", 0)
                if call.status != contracts_pb2.TOOL_INVOCATION_STATUS_BLOCKED:
                    span.set_attribute("error.type", status)
        await self._record(call.invocation, call.status, call.error, call.started, ended=call.ended_at)
        await self._progress(call, run_pb2.TOOL_CALL_PHASE_ENDED)
        return ToolCallResult(
            invocation_id=call.invocation_id,
            tool_name=call.tool_name,
            status=call.invocation.status,
            output=call.output,
            error=call.error,
        )

    async def _progress(self, call: _Pending, phase: run_pb2.ToolCallPhase.ValueType) -> None:
        if self._on_progress is None:
            return
        await self._on_progress(progress_event(call.invocation, phase))

    async def record(self, recorded: contracts_pb2.ToolInvocation) -> None:
        """Record an invocation made elsewhere (a scripted replay) as this run's, under its invocation id: its
        tool name, arguments and output as given, with this runner's run id, cycle and times.

        Both pass the redaction a live call's do (its arguments', and its source's on the output), so a replay
        stores no secret a live call would not. Arguments and an output that hold JSON (``holds_json``) are
        recorded redacted; any others are converted as a live call's would be, so that what cannot be recorded
        (nested deeper than the bound, not JSON) is an ERROR invocation saying why, as a live call's is.
        """
        started = time.time()
        invocation = self._invocation(recorded.invocation_id, recorded.tool_name, started)
        if self._on_progress is not None:
            await self._on_progress(progress_event(invocation, run_pb2.TOOL_CALL_PHASE_STARTED))
        if holds_json(recorded.arguments) and holds_json(recorded.output):
            fill_struct(invocation.arguments, REDACTOR.arguments(from_struct(recorded.arguments)))
            fill_value(invocation.output, REDACTOR.value(from_value(recorded.output)))
            await self._record(invocation, contracts_pb2.TOOL_INVOCATION_STATUS_OK, "", started)
        else:
            arguments_error = _fill_arguments(invocation.arguments, from_struct(recorded.arguments))
            output_error = _fill_output(invocation.output, REDACTOR.value(from_value(recorded.output)))
            error = arguments_error or output_error
            if output_error:
                invocation.output.Clear()
                invocation.output.null_value = struct_pb2.NULL_VALUE
            await self._record(
                invocation,
                contracts_pb2.TOOL_INVOCATION_STATUS_ERROR if error else contracts_pb2.TOOL_INVOCATION_STATUS_OK,
                error,
                started,
            )
        if self._on_progress is not None:
            await self._on_progress(progress_event(invocation, run_pb2.TOOL_CALL_PHASE_ENDED))

    def _invocation(self, invocation_id: str, tool_name: str, started: float) -> contracts_pb2.ToolInvocation:
        invocation = contracts_pb2.ToolInvocation(
            invocation_id=invocation_id, run_id=self._run_id, tool_name=tool_name, cycle=self._cycle
        )
        invocation.started_at.FromNanoseconds(int(started * 1e9))
        return invocation

    async def _record(
        self,
        invocation: contracts_pb2.ToolInvocation,
        status: contracts_pb2.ToolInvocationStatus.ValueType,
        error: str,
        started: float,
        *,
        ended: float = 0.0,
    ) -> None:
        invocation.status = status
        # The call's own duration: till it ended (``ended``), not till its turn to be recorded came.
        invocation.duration_ms = int(((ended or time.time()) - started) * 1000)
        invocation.error = error
        if not invocation.HasField("output"):
            invocation.output.null_value = struct_pb2.NULL_VALUE
        try:
            await self._recorder(invocation)
        except Exception as exc:
            if self.recording_failed is None:
                self.recording_failed = exc
            raise
        self.invocation_ids.append(invocation.invocation_id)


class _Pending:
    """One dispatched call: its invocation being filled in, and how it ended once it did."""

    __slots__ = (
        "arguments",
        "blocked",
        "ended_at",
        "error",
        "invocation",
        "output",
        "source",
        "started",
        "status",
        "task",
        "tool",
    )

    def __init__(self, invocation: contracts_pb2.ToolInvocation, arguments: JsonObject, dispatched: float) -> None:
        self.invocation = invocation
        self.arguments = arguments
        self.started = dispatched
        self.ended_at = 0.0
        self.tool: Tool | None = None
        self.source = ""
        self.status: contracts_pb2.ToolInvocationStatus.ValueType = contracts_pb2.TOOL_INVOCATION_STATUS_UNSPECIFIED
        self.error = ""
        self.output: JsonValue = None
        self.blocked = False
        self.task: asyncio.Future[None] | None = None

    @property
    def invocation_id(self) -> str:
        return self.invocation.invocation_id

    @property
    def tool_name(self) -> str:
        return self.invocation.tool_name

    @property
    def runnable(self) -> bool:
        return self.tool is not None

    def end(self, status: contracts_pb2.ToolInvocationStatus.ValueType, error: str, *, blocked: bool = False) -> None:
        self.status, self.error, self.blocked = status, error, blocked
        self.ended_at = time.time()


def progress_event(
    invocation: contracts_pb2.ToolInvocation, phase: run_pb2.ToolCallPhase.ValueType
) -> run_pb2.ToolCallEvent:
    """A tool call's progress event from its invocation (as dispatched, or as recorded once it ended); its
    sequence is the node attempt's, set by whoever knows it (the orchestrator)."""
    event = run_pb2.ToolCallEvent(
        run_id=invocation.run_id,
        invocation_id=invocation.invocation_id,
        tool_name=invocation.tool_name,
        phase=phase,
        cycle=invocation.cycle,
    )
    if phase == run_pb2.TOOL_CALL_PHASE_ENDED:
        event.status = invocation.status
        event.duration_ms = invocation.duration_ms
        event.error = invocation.error[:200]
        event.timestamp.FromNanoseconds(invocation.started_at.ToNanoseconds() + invocation.duration_ms * 1_000_000)
    else:
        event.timestamp.CopyFrom(invocation.started_at)
    return event


# A Value's canonical JSON is at most this many times its wire size (plus a few bytes): a string or key
# character of one byte may take six in JSON (a control character as \u0001); a number's 9 wire bytes at
# most 24 characters; null and booleans, two wire bytes, at most 5. So an output whose wire size times this
# is within the bound fits without its JSON being written out (the common case); only a larger one is measured.
JSON_EXPANSION = 6
_JSON_SLACK = 16


def fits_without_measuring(value: struct_pb2.Value, max_bytes: int) -> bool:
    """True when ``value``'s canonical JSON surely fits ``max_bytes`` (False: measure it)."""
    return JSON_EXPANSION * value.ByteSize() + _JSON_SLACK <= max_bytes


def _trimmed(
    output: JsonValue, size: int, max_bytes: int
) -> tuple[contracts_pb2.ToolInvocationStatus.ValueType, JsonValue, str]:
    """An over-size output trimmed to the bound (TRUNCATED, still the upstream's JSON), or ERROR when it cannot be."""
    try:
        trimmed, trims = trim_to_fit(output, max_bytes, size=size)
    except Untrimmable as exc:
        return (
            contracts_pb2.TOOL_INVOCATION_STATUS_ERROR,
            None,
            f"output of {size} bytes is over the {max_bytes} byte bound and cannot be trimmed: {exc}",
        )
    return contracts_pb2.TOOL_INVOCATION_STATUS_TRUNCATED, trimmed, describe_trims(trims, max_bytes)[:500]


def _fill_arguments(out: struct_pb2.Struct, arguments: JsonObject) -> str:
    """Fills ``out`` with the arguments as recorded (redacted: a token an agent put in a query is not stored);
    why they cannot be recorded ("" when they can)."""
    if json_depth(arguments) > MAX_JSON_DEPTH:
        out.Clear()
        out.SetInParent()
        return f"{too_deep_message('arguments')}: the tool was not run"
    try:
        fill_struct(out, REDACTOR.arguments(arguments))
    except Exception as exc:  # nested too deeply, not JSON, or not valid Unicode: recorded as such
        out.Clear()
        out.SetInParent()
        return f"arguments cannot be recorded ({type(exc).__name__}): the tool was not run"
    return ""


def _fill_output(out: struct_pb2.Value, output: JsonValue) -> str:
    """Fills ``out`` with the output as recorded; why it cannot be ("" when it can: deeper than a protobuf
    Value may nest, not JSON)."""
    try:
        fill_value(out, output)
    except JsonTooDeep:
        return too_deep_message("output")
    except JsonValueError as exc:
        return f"output is not JSON: {str(exc)[:400]}"
    except Exception as exc:  # RecursionError
        return f"output cannot be recorded ({type(exc).__name__})"
    return ""
