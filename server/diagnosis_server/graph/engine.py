"""The graph engine: runs nodes by the routing table, one event per node attempt, bounded and fail-closed.

Shaped like LangGraph's StateGraph (state, nodes, route map, Replace/Append, recursion limit, thread =
run_id) but small: the graph is fixed and every route is in ``routing.ROUTES``.
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
from diagnosis_server.graph import routing
from diagnosis_server.graph.context import Limits, RunContext
from diagnosis_server.graph.nodes.base import Node, NodeResult, clip_text
from diagnosis_server.graph.routing import node_label, outcome_label
from diagnosis_server.graph.state import DiagnosisState, owned_fields

N = run_pb2.NodeName
O = run_pb2.NodeOutcome  # noqa: E741

log = structlog.get_logger(__name__)

EventSink = Callable[[run_pb2.OrchestrationEvent], Awaitable[None]]
Committer = Callable[[DiagnosisState, run_pb2.OrchestrationEvent, run_pb2.NodeStep | None], Awaitable[None]]

RECURSION_LIMIT = "RECURSION_LIMIT"

# What an unexpected exception inside a node means for the route: fail closed.
_CRASH_OUTCOME: Mapping[int, int] = {
    N.NODE_NAME_PLANNER: O.NODE_OUTCOME_NON_RETRYABLE_FAILED,
    N.NODE_NAME_EXECUTOR: O.NODE_OUTCOME_FAILED,
    N.NODE_NAME_GATEKEEPER: O.NODE_OUTCOME_CEILING_REJECT,
    N.NODE_NAME_VERIFIED_INPUT_BUILDER: O.NODE_OUTCOME_NO_VERIFIED_EVIDENCE,
    N.NODE_NAME_VERIFIER: O.NODE_OUTCOME_NON_RETRYABLE_FAILED,
    N.NODE_NAME_COMPOSER: O.NODE_OUTCOME_NON_RETRYABLE_FAILED,
}


_AGENT_NODES = frozenset({N.NODE_NAME_PLANNER, N.NODE_NAME_EXECUTOR, N.NODE_NAME_VERIFIER, N.NODE_NAME_COMPOSER})
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


def _crash_step(
    node: int, ctx: RunContext, exc: Exception, *, attempt: int, cycle: int, started: float
) -> run_pb2.NodeStep:
    elapsed = time.perf_counter() - started
    step = run_pb2.NodeStep(
        run_id=ctx.run_id,
        node=node,  # type: ignore[arg-type]
        attempt=attempt,
        cycle=cycle,
        provider=ctx.provider.name,
        outcome=_CRASH_OUTCOME[node],  # type: ignore[arg-type]
        latency_ms=int(elapsed * 1000),
        failure_class="crash",
        failure=clip_text(f"{type(exc).__name__}: {exc}"),
    )
    step.started_at.FromNanoseconds(time.time_ns() - int(elapsed * 1e9))
    return step


class GraphProgrammingError(RuntimeError):
    """A node wrote a field it does not own, or returned an outcome with no route."""


class GraphEngine:
    def __init__(
        self,
        nodes: Mapping[int, Node[Any]],
        *,
        recursion_limit: int = routing.DEFAULT_RECURSION_LIMIT,
        max_events: int = 64,
    ) -> None:
        missing = {node for node, _ in routing.ROUTES} - set(nodes)
        if missing:
            raise GraphProgrammingError(f"routing table names nodes with no implementation: {sorted(missing)}")
        self._nodes = dict(nodes)
        self._owned = {name: owned_fields(name) for name in self._nodes}
        self._outcomes = {name: routing.outcomes_of(name) for name in self._nodes}
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
        current: int = routing.START
        retries: dict[tuple[int, int], int] = {}
        retry_delay_s = 0.0
        while True:
            if state.steps >= self._recursion_limit and current != routing.PRE_FALLBACK:
                # The business limits make this unreachable by design; the limit still ends every path.
                state.routed_by = run_pb2.OrchestrationEvent(
                    run_id=state.run_id,
                    node=current,  # type: ignore[arg-type]
                    reason_code=RECURSION_LIMIT,
                )
                current = routing.PRE_FALLBACK
            cycle = state.evidence_retry_count + 1
            attempt = retries.get((current, cycle), 0) + 1
            if attempt > 1 and retry_delay_s:
                await asyncio.sleep(retry_delay_s)
            result, duration_ms = await self._attempt(current, state, ctx, attempt=attempt, cycle=cycle)
            self._apply(current, state, result)
            nxt = routing.next_node(current, result.outcome, retries_used=attempt - 1)
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
            if isinstance(nxt, routing._End):
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
        if result.outcome not in self._outcomes[name]:
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
            crash = _CRASH_OUTCOME.get(name)
            if crash is None:
                raise
            log.exception("node_failed", run_id=state.run_id, node=node_label(name), error=type(exc).__name__)
            step = None
            if name in _AGENT_NODES:  # a crashed agent attempt gets its step record like any other
                step = _crash_step(name, ctx, exc, attempt=attempt, cycle=cycle, started=started)
            result = NodeResult(crash, f"{node_label(name)}_ERROR", step=step)
        return result

    def _apply(self, name: int, state: DiagnosisState, result: NodeResult) -> None:
        if not result.updates:
            return
        foreign = result.updates.keys() - self._owned[name]
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
