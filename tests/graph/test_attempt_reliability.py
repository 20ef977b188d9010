"""Agent and tool attempts under cancellation, crashes and transient failures."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import AgentReply, AgentRequest, AgentRetryableError, AgentRole
from diagnosis_server.agents.prompts import default_catalog
from diagnosis_server.graph.context import Limits, RunContext
from diagnosis_server.graph.engine import technical_retry_delay
from diagnosis_server.graph.nodes.base import NodeResult, call_agent
from diagnosis_server.graph.orchestrator import Orchestrator
from diagnosis_server.store import MemoryStore, Repository
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.runner import ToolRunner

from .fakes import PLAN, FnProvider, compose, executor_calling, plan, tools, verify_pass


class _CancelsItsCaller:
    """Answers at once, and in the same turn has the task that awaits it cancelled: the race in which
    asyncio.wait_for (3.11) returns the answer and swallows the cancellation."""

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self.task = task

    async def run(self, request: AgentRequest) -> AgentReply:
        asyncio.get_running_loop().call_soon(self.task.cancel)
        return AgentReply(text=PLAN)

    async def call(self, arguments: dict[str, object]) -> object:
        asyncio.get_running_loop().call_soon(self.task.cancel)
        return {"ok": True}


class _Provider:
    name = "cancelling"

    def __init__(self, agent: _CancelsItsCaller) -> None:
        self._agent = agent

    def agent(self, role: AgentRole) -> _CancelsItsCaller:
        return self._agent


async def test_a_cancellation_that_races_the_agents_answer_is_not_swallowed() -> None:
    async def attempt() -> None:
        task = asyncio.current_task()
        assert task is not None
        ctx = RunContext(
            run_id="run-1",
            provider=_Provider(_CancelsItsCaller(task)),
            catalog=default_catalog(),
            tools=tools(),
            invocations=MemoryStore(),
        )
        await call_agent(ctx, node=run_pb2.NODE_NAME_PLANNER, role="planner", input_bytes=b"{}", attempt=1, cycle=1)
        await asyncio.sleep(0)  # where a cancellation that was not swallowed lands
        await asyncio.sleep(0)

    with pytest.raises(asyncio.CancelledError):
        await asyncio.create_task(attempt())


async def test_a_cancellation_that_races_a_tools_answer_is_not_swallowed() -> None:
    async def attempt() -> None:
        task = asyncio.current_task()
        assert task is not None
        tool = _CancelsItsCaller(task)
        tool.name = "k8s.events"  # type: ignore[attr-defined]
        tool.description = "events"  # type: ignore[attr-defined]
        tool.input_schema = {"type": "object"}  # type: ignore[attr-defined]
        recorded: list[contracts_pb2.ToolInvocation] = []

        async def record(invocation: contracts_pb2.ToolInvocation) -> None:
            recorded.append(invocation)

        runner = ToolRunner(run_id="run-1", toolset=Toolset([tool]), recorder=record)  # type: ignore[list-item]
        await runner.call("k8s.events", {})
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    with pytest.raises(asyncio.CancelledError):
        await asyncio.create_task(attempt())


async def test_a_crashed_agent_attempt_gets_a_step_record(repository: Repository) -> None:
    async def crash(_: AgentRequest) -> str:
        raise RuntimeError("the agent's own bug")

    provider = FnProvider(
        {"planner": crash, "executor": executor_calling("k8s.events"), "verifier": verify_pass, "composer": compose}
    )
    orchestrator = Orchestrator(store=repository, provider=provider, tools_for=lambda _s: tools())
    run = await orchestrator.run(question="Why is checkout-api failing?", scenario="")
    assert run.status == run_pb2.RUN_STATUS_SUCCESS
    steps = await repository.list_node_steps(run.run_id)
    planner = [s for s in steps if s.node == run_pb2.NODE_NAME_PLANNER]
    assert len(planner) == 1
    assert planner[0].failure_class == "crash"
    assert planner[0].failure == "RuntimeError: the agent's own bug"
    assert planner[0].outcome == run_pb2.NODE_OUTCOME_NON_RETRYABLE_FAILED
    assert planner[0].attempt == 1 and planner[0].cycle == 1 and planner[0].HasField("started_at")
    assert 0 <= planner[0].latency_ms < 60_000  # the attempt's own time, not a clock reading


async def test_a_transient_failure_is_retried_after_a_backoff_of_at_least_retry_after(repository: Repository) -> None:
    calls: list[float] = []

    async def flaky(request: AgentRequest) -> str:
        calls.append(time.monotonic())
        if len(calls) == 1:
            raise AgentRetryableError("503", failure_class="http_503", endpoint=True, retry_after_s=0.3)
        return await plan(request)

    provider = FnProvider(
        {"planner": flaky, "executor": executor_calling("k8s.events"), "verifier": verify_pass, "composer": compose}
    )
    orchestrator = Orchestrator(
        store=repository, provider=provider, tools_for=lambda _s: tools(), limits=Limits(retry_backoff_s=0.01)
    )
    started = time.monotonic()
    run = await orchestrator.run(question="Why is checkout-api failing?", scenario="")
    assert run.verdict == contracts_pb2.VERDICT_PASS
    assert calls[0] - started < 0.2  # the first attempt does not wait
    assert 0.3 <= calls[1] - calls[0] < 2.0


def _result(outcome: int, retry_after_ms: int = 0) -> NodeResult:
    return NodeResult(outcome, step=run_pb2.NodeStep(retry_after_ms=retry_after_ms))


def test_backoff_is_jittered_bounded_by_the_node_timeout_and_only_for_transient_failures() -> None:
    limits = Limits(retry_backoff_s=1.0, agent_timeout_s=5.0)
    retryable = run_pb2.NODE_OUTCOME_RETRYABLE_FAILED
    delays = {
        technical_retry_delay(run_pb2.NODE_NAME_PLANNER, _result(retryable), limits, attempt=1) for _ in range(50)
    }
    assert all(0.5 <= d <= 1.0 for d in delays) and len(delays) > 1  # jittered
    honoured = technical_retry_delay(run_pb2.NODE_NAME_PLANNER, _result(retryable, 3000), limits, attempt=1)
    assert honoured == 3.0
    capped = technical_retry_delay(run_pb2.NODE_NAME_PLANNER, _result(retryable, 600_000), limits, attempt=1)
    assert capped == 5.0  # never past the node's timeout
    invalid = run_pb2.NODE_OUTCOME_INVALID_OUTPUT
    assert technical_retry_delay(run_pb2.NODE_NAME_PLANNER, _result(invalid), limits, attempt=1) == 0.0
    assert technical_retry_delay(run_pb2.NODE_NAME_PLANNER, _result(retryable), Limits(), attempt=1) == 0.0


def test_backoff_doubles_per_attempt_up_to_its_cap_and_reads_the_executors_own_timeout() -> None:
    retryable = run_pb2.NODE_OUTCOME_RETRYABLE_FAILED
    limits = Limits(retry_backoff_s=1.0, agent_timeout_s=100.0, executor_timeout_s=2.5)

    def delays(node: int, attempt: int, retry_after_ms: int = 0) -> set[float]:
        return {
            technical_retry_delay(node, _result(retryable, retry_after_ms), limits, attempt=attempt) for _ in range(60)
        }

    # attempt n waits within [b * 2^(n-1) / 2, b * 2^(n-1)], never past 30 s
    assert (
        all(2.0 <= d <= 4.0 for d in delays(run_pb2.NODE_NAME_PLANNER, 3))
        and max(delays(run_pb2.NODE_NAME_PLANNER, 3)) > 3.0
    )
    assert all(15.0 <= d <= 30.0 for d in delays(run_pb2.NODE_NAME_PLANNER, 7))
    # The Executor's bound is its own (longer or shorter) timeout, not the agents'.
    assert delays(run_pb2.NODE_NAME_EXECUTOR, 7) == {2.5}
    assert delays(run_pb2.NODE_NAME_VERIFIER, 1, retry_after_ms=60_000) == {60.0}
    # A Retry-After of 1 ms is honoured like any other; a step without one leaves the jittered backoff.
    tiny = Limits(retry_backoff_s=0.0001)
    assert technical_retry_delay(run_pb2.NODE_NAME_PLANNER, _result(retryable, 1), tiny, attempt=1) == 0.001
    no_step = NodeResult(retryable)
    assert 0.5 <= technical_retry_delay(run_pb2.NODE_NAME_PLANNER, no_step, limits, attempt=1) <= 1.0
    # No backoff configured: a retry goes at once, whatever Retry-After the failure carried.
    assert technical_retry_delay(run_pb2.NODE_NAME_PLANNER, _result(retryable, 3000), Limits(), attempt=1) == 0.0
    # A negative backoff setting is no backoff.
    assert (
        technical_retry_delay(run_pb2.NODE_NAME_PLANNER, _result(retryable), Limits(retry_backoff_s=-1.0), attempt=1)
        == 0.0
    )
