"""The graph engine: runs nodes by the graph specification, one event per node attempt, bounded and fail-closed.

Shaped like LangGraph's StateGraph (state, nodes, route map, Replace/Append, recursion limit, thread =
run_id) but small: the graph is fixed in ``spec.GRAPH``, and an engine is built (checked against its node
implementations) once, then runs any number of runs.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import structlog

from diagnosis.v1 import run_pb2
from diagnosis_server import telemetry
from diagnosis_server.graph.context import Limits, RunContext
from diagnosis_server.graph.nodes.base import Node, NodeResult, attempt_step, clip_text
from diagnosis_server.graph.spec import GRAPH, GraphSpec, _End, node_label, outcome_label
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.store.errors import DuplicateRecord, StoreError

N = run_pb2.NodeName
O = run_pb2.NodeOutcome  # noqa: E741

log = structlog.get_logger(__name__)

EventSink = Callable[[run_pb2.OrchestrationEvent], Awaitable[None]]
Committer = Callable[[DiagnosisState, run_pb2.OrchestrationEvent, run_pb2.NodeStep | None], Awaitable[None]]

RECURSION_LIMIT = "RECURSION_LIMIT"

# Technical retries of a transient failure (RETRYABLE_FAILED) wait first: a jittered exponential backoff,
# at least what the endpoint asked for (Retry-After), at most the node's own timeout.
_MAX_BACKOFF_S = 30.0


def technical_retry_delay(node: int, result: NodeResult, limits: Limits, *, attempt: int) -> float:
    """Seconds to wait before retrying ``node`` after ``result`` (its ``attempt``-th attempt); 0: at once."""
    if result.outcome != O.NODE_OUTCOME_RETRYABLE_FAILED or limits.retry_backoff_s <= 0:
        return 0.0
    ceiling = min(limits.retry_backoff_s * 2 ** (attempt - 1), _MAX_BACKOFF_S)
    delay = random.uniform(ceiling / 2, ceiling)
    if result.step is not None and result.step.retry_after_ms > 0:
        delay = max(delay, result.step.retry_after_ms / 1000.0)
    timeout = limits.executor_timeout_s if node == N.NODE_NAME_EXECUTOR else limits.agent_timeout_s
    return min(delay, timeout)


class GraphProgrammingError(RuntimeError):
    """A node wrote a field it does not own, or returned an outcome with no route."""


class GraphEngine:
    def __init__(
        self,
        nodes: Mapping[int, Node[Any]],
        *,
        spec: GraphSpec = GRAPH,
        recursion_limit: int = GRAPH.limits.recursion_limit,
        max_events: int = GRAPH.limits.max_events,
    ) -> None:
        missing = spec.names - set(nodes)
        if missing:
            raise GraphProgrammingError(f"routing table names nodes with no implementation: {sorted(missing)}")
        extra = set(nodes) - spec.names
        if extra:
            raise GraphProgrammingError(f"nodes the graph specification does not name: {sorted(extra)}")
        self._spec = spec
        self._nodes = dict(nodes)
        self._recursion_limit = recursion_limit
        self._max_events = max_events

    async def run(
        self,
        state: DiagnosisState,
        ctx: RunContext,
        *,
        commit: Committer | None = None,
        on_event: EventSink | None = None,
    ) -> DiagnosisState:
        """Run the graph from START to END. The engine owns ``state`` from here on and writes it in place."""
        spec = self._spec
        current: int = spec.start
        retries: dict[tuple[int, int], int] = {}
        retry_delay_s = 0.0
        while True:
            if state.steps >= self._recursion_limit and current != spec.recursion_fallback:
                # The business limits make this unreachable by design; the limit still ends every path.
                state.routed_by = run_pb2.OrchestrationEvent(
                    run_id=state.run_id,
                    node=current,  # type: ignore[arg-type]
                    reason_code=RECURSION_LIMIT,
                )
                current = spec.recursion_fallback
            cycle = state.evidence_retry_count + 1
            attempt = retries.get((current, cycle), 0) + 1
            if attempt > 1 and retry_delay_s:
                await asyncio.sleep(retry_delay_s)
            result, duration_ms = await self._attempt(current, state, ctx, attempt=attempt, cycle=cycle)
            self._apply(current, state, result)
            nxt = spec.next_node(current, result.outcome, retries_used=attempt - 1)
            retry_delay_s = 0.0
            if nxt == current:
                retries[(current, cycle)] = attempt
                state.technical_retries = _count_retries(state.technical_retries, current)
                retry_delay_s = technical_retry_delay(current, result, ctx.limits, attempt=attempt)
            event = self._event(state, current, result, attempt=attempt, cycle=cycle, duration_ms=duration_ms)
            kept = len(state.orchestration_events) < self._max_events
            if kept:
                state.orchestration_events = (*state.orchestration_events, event)
            else:
                state.dropped_events += 1
            state.steps += 1
            state.routed_by = event
            if commit is not None:
                await commit(state, event, result.step)
            if on_event is not None and kept:
                await on_event(event)
            if isinstance(nxt, _End):
                return state
            current = nxt

    async def _attempt(
        self, name: int, state: DiagnosisState, ctx: RunContext, *, attempt: int, cycle: int
    ) -> tuple[NodeResult, int]:
        node = self._nodes[name]
        started = time.perf_counter()
        label = node_label(name).lower()
        attributes: dict[str, str | int] = {
            "diagnosis.run_id": state.run_id,
            "diagnosis.node": label,
            "diagnosis.attempt": attempt,
        }
        with telemetry.span(f"node {label}", attributes) as span:
            result = await self._attempt_in_span(name, node, state, ctx, attempt=attempt, cycle=cycle, started=started)
            span.set_attribute("diagnosis.cycle", cycle)
            span.set_attribute("diagnosis.outcome", outcome_label(result.outcome))
            if result.reason_code:
                span.set_attribute("diagnosis.reason_code", result.reason_code)
            if result.step is not None and result.step.failure_class:
                span.set_attribute("error.type", result.step.failure_class)
        if result.outcome not in self._spec.node(name).routes:
            raise GraphProgrammingError(
                f"{node_label(name)} returned {outcome_label(result.outcome)}, which has no route"
            )
        return result, int((time.perf_counter() - started) * 1000)

    async def _attempt_in_span(
        self,
        name: int,
        node: Node[Any],
        state: DiagnosisState,
        ctx: RunContext,
        *,
        attempt: int,
        cycle: int,
        started: float,
    ) -> NodeResult:
        try:
            result: NodeResult = await node.run(node.project(state), ctx, attempt=attempt, cycle=cycle)
        except Exception as exc:
            if store_fault(exc):
                # The store failed under the node (a tool call it could not record): a store fault ends the run
                # as one at a node commit does, never as the node's own failure that a fallback answers past.
                raise
            spec = self._spec.node(name)
            crash = spec.crash_outcome
            if crash is None:
                raise
            log.exception("node_failed", run_id=state.run_id, node=node_label(name), error=type(exc).__name__)
            step = None
            if spec.role is not None:  # a crashed agent attempt gets its step record like any other
                failure = {"failure_class": "crash", "failure": clip_text(f"{type(exc).__name__}: {exc}")}
                elapsed = time.perf_counter() - started
                step = attempt_step(
                    ctx, node=name, attempt=attempt, cycle=cycle, outcome=crash, elapsed_s=elapsed, **failure
                )
            result = NodeResult(crash, f"{node_label(name)}_ERROR", step=step)
        return result

    def _apply(self, name: int, state: DiagnosisState, result: NodeResult) -> None:
        if not result.updates:
            return
        foreign = result.updates.keys() - self._spec.node(name).owns
        if foreign:
            raise GraphProgrammingError(f"{node_label(name)} wrote fields it does not own: {sorted(foreign)}")
        state.write(result.updates)

    def _event(
        self, state: DiagnosisState, node: int, result: NodeResult, *, attempt: int, cycle: int, duration_ms: int
    ) -> run_pb2.OrchestrationEvent:
        now = time.time_ns()
        event = run_pb2.OrchestrationEvent(
            run_id=state.run_id,
            sequence=len(state.orchestration_events) + state.dropped_events + 1,
            node=node,  # type: ignore[arg-type]
            outcome=result.outcome,  # type: ignore[arg-type]
            reason_code=result.reason_code,
            attempt=attempt,
            cycle=cycle,
            duration_ms=duration_ms,
        )
        event.timestamp.seconds, event.timestamp.nanos = divmod(now, 1_000_000_000)
        return event


def _count_retries(counts: tuple[tuple[int, int], ...], node: int) -> tuple[tuple[int, int], ...]:
    table = dict(counts)
    table[node] = table.get(node, 0) + 1
    return tuple(sorted(table.items()))


def store_fault(exc: BaseException) -> bool:
    """A failure of the store itself (not a record an agent named twice: that is the node's own failure)."""
    return isinstance(exc, StoreError) and not isinstance(exc, DuplicateRecord)
