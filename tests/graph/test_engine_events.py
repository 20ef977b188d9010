"""The engine's events: one per node attempt, numbered without gaps even when dropped, timed, stamped, and the
same events to the sink and the store (R-S-3, R-S-1, R-R-7)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.engine import GraphEngine, GraphProgrammingError
from diagnosis_server.graph.nodes import default_nodes
from diagnosis_server.graph.nodes.base import NodeResult
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.store import Repository

from .test_engine import _ctx, _Looping

N = run_pb2.NodeName
O = run_pb2.NodeOutcome  # noqa: E741


async def _ready(repository: Repository) -> RunContext:
    """The engine tests' context, with its run created (the Executor records its calls under it)."""
    run = run_pb2.DiagnosisRun(run_id="run-engine", status=run_pb2.RUN_STATUS_RUNNING, question="q")
    run.created_at.GetCurrentTime()
    await repository.create_run(run)
    return _ctx(repository)


class _Crashing:
    def __init__(self, name: int = N.NODE_NAME_VERIFIER) -> None:
        self.name = name

    def project(self, state: DiagnosisState) -> None:
        return None

    async def run(self, inputs: Any, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        raise RuntimeError("bug")


class _Slow:
    name = N.NODE_NAME_PLANNER

    def project(self, state: DiagnosisState) -> None:
        return None

    async def run(self, inputs: Any, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        await asyncio.sleep(0.05)
        return NodeResult(O.NODE_OUTCOME_NON_RETRYABLE_FAILED, "SLOW_FAIL")


async def test_the_default_bound_keeps_64_events_and_numbers_every_attempt(repository: Repository) -> None:
    nodes = default_nodes()
    nodes[N.NODE_NAME_VERIFIER] = _Looping()
    committed: list[run_pb2.OrchestrationEvent] = []
    sunk: list[run_pb2.OrchestrationEvent] = []

    async def commit(_: DiagnosisState, event: run_pb2.OrchestrationEvent, step: object) -> None:
        committed.append(event)

    async def sink(event: run_pb2.OrchestrationEvent) -> None:
        sunk.append(event)

    state = DiagnosisState(run_id="run-engine", question="q", scenario="")
    before = time.time_ns()
    final = await GraphEngine(nodes, recursion_limit=80).run(
        state, await _ready(repository), commit=commit, on_event=sink
    )
    after = time.time_ns()
    assert final.steps == 81 and len(final.orchestration_events) == 64 and final.dropped_events == 17
    assert [e.sequence for e in committed] == list(range(1, 82))
    assert sunk == list(final.orchestration_events) == committed[:64]
    assert all(e.run_id == "run-engine" for e in committed)
    for event in committed:
        stamp = event.timestamp.seconds * 1_000_000_000 + event.timestamp.nanos
        assert before <= stamp <= after and 0 <= event.timestamp.nanos < 1_000_000_000
    assert committed[-1].node == N.NODE_NAME_PRE_VERIFICATION_FALLBACK
    assert final.routed_by is committed[-1]


async def test_a_crash_is_the_nodes_fail_closed_outcome_with_its_reason(repository: Repository) -> None:
    nodes = default_nodes()
    nodes[N.NODE_NAME_VERIFIER] = _Crashing()
    final = await GraphEngine(nodes).run(
        DiagnosisState(run_id="run-engine", question="q", scenario=""), await _ready(repository)
    )
    (event,) = [e for e in final.orchestration_events if e.node == N.NODE_NAME_VERIFIER]
    assert (event.outcome, event.reason_code, event.attempt) == (
        O.NODE_OUTCOME_NON_RETRYABLE_FAILED,
        "VERIFIER_ERROR",
        1,
    )
    assert final.fallback_reason == "VERIFIER_FAILED"


async def test_an_attempt_is_timed_in_milliseconds(repository: Repository) -> None:
    nodes = default_nodes()
    nodes[N.NODE_NAME_PLANNER] = _Slow()
    final = await GraphEngine(nodes).run(
        DiagnosisState(run_id="run-engine", question="q", scenario=""), await _ready(repository)
    )
    first = final.orchestration_events[0]
    assert first.reason_code == "SLOW_FAIL" and 40 <= first.duration_ms < 1000


def test_an_engine_missing_a_node_names_it() -> None:
    nodes = default_nodes()
    del nodes[N.NODE_NAME_GATEKEEPER]
    with pytest.raises(GraphProgrammingError, match=r"routing table names nodes with no implementation: \[3\]"):
        GraphEngine(nodes)


async def test_a_crash_of_a_node_that_is_no_agent_fails_closed_without_a_step(repository: Repository) -> None:
    nodes = default_nodes()
    nodes[N.NODE_NAME_GATEKEEPER] = _Crashing(N.NODE_NAME_GATEKEEPER)
    final = await GraphEngine(nodes).run(
        DiagnosisState(run_id="run-engine", question="q", scenario=""), await _ready(repository)
    )
    (event,) = [e for e in final.orchestration_events if e.node == N.NODE_NAME_GATEKEEPER]
    # The Gatekeeper fails closed as a rejection: nothing of the claims goes on.
    assert (event.outcome, event.reason_code) == (O.NODE_OUTCOME_CEILING_REJECT, "GATEKEEPER_ERROR")
    assert not [s for s in await repository.list_node_steps("run-engine") if s.node == N.NODE_NAME_GATEKEEPER]
