"""Diagnose: stream order, persistence, bad input, cancellation, deadlines and limits (R-T-2 API controller)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import grpc
import grpc.aio
import pytest
from structlog.testing import capture_logs

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.agents.base import Agent, AgentReply, AgentRequest, AgentRole
from tests.support.bad_input import BAD_DIAGNOSE_INPUTS
from tests.support.fakes import PassProvider
from tests.support.rpc import error_reason, eventually, field_violations, next_message, read_rest, retry_delay_s

from .conftest import Api, ApiFactory


@pytest.mark.requirement("R-S-3")
async def test_diagnose_streams_started_then_events_then_the_stored_run(api: Api) -> None:
    messages = await api.diagnose()

    kinds = [m.WhichOneof("kind") for m in messages]
    assert kinds[0] == "started"
    assert kinds[-1] == "run"
    # Between them: node events, and the progress of the Executor's tool calls (tool_call) before its own.
    assert set(kinds[1:-1]) == {"event", "tool_call"}
    run_id = messages[0].run_id
    assert run_id.startswith("run-") and len(run_id) == 36
    assert all(m.run_id == run_id for m in messages)
    assert messages[0].started.run_id == run_id
    assert messages[0].started.created_at.seconds > 0

    events = [m.event for m in messages[1:-1] if m.WhichOneof("kind") == "event"]
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert all(e.run_id == run_id for e in events)

    run = messages[-1].run
    assert run.status == run_pb2.RUN_STATUS_SUCCESS  # R-A-6
    assert run.verdict == contracts_pb2.VERDICT_PASS
    assert run.tenant == "default"
    assert run.scenario == "checkout-oom"  # the default scenario
    assert run.created_at == messages[0].started.created_at
    assert list(run.orchestration_trace.path) == [e.node for e in events]

    stored = await api.running.repository.get_run(run_id)
    assert stored == run
    assert await api.running.repository.list_events(run_id) == events


async def test_diagnose_runs_on_the_named_scenario(api: Api) -> None:
    request = pb.DiagnoseRequest(question="Why are orders slow?", context=pb.RequestContext(scenario="orders-db-pool"))
    messages = [m async for m in api.diagnosis.Diagnose(request)]
    assert messages[-1].run.scenario == "orders-db-pool"
    assert messages[-1].run.question == "Why are orders slow?"


@dataclass
class _PlannerInputs(PassProvider):
    """A PassProvider that keeps what its planner is given."""

    inputs: list[bytes] = field(default_factory=list)

    def agent(self, role: AgentRole) -> Agent:
        agent = super().agent(role)
        return _KeptInputs(agent, self.inputs) if role == "planner" else agent


class _KeptInputs:
    def __init__(self, agent: Agent, inputs: list[bytes]) -> None:
        self._agent, self._inputs = agent, inputs

    async def run(self, request: AgentRequest) -> AgentReply:
        self._inputs.append(request.input_bytes)
        return await self._agent.run(request)


@pytest.mark.requirement("R-C-2")
async def test_a_secret_pasted_into_the_question_is_redacted_before_the_run_exists(api_factory: ApiFactory) -> None:
    """The run is created from the redacted question: what is stored, streamed and given to the planner (a model
    needs no credential to plan, and what it is given it may quote)."""
    provider = _PlannerInputs()
    api = await api_factory(provider=provider)
    key = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" * 2
    question = f"Why is checkout-api failing? I ran curl -u deploy:Pw-pasted-42 https://pay.acme.io with {key}"
    messages = await api.diagnose(question)
    run = messages[-1].run
    stored = await api.running.repository.get_run(run.run_id)
    assert stored is not None
    for text in (run.question, run.trigger.question, stored.question, stored.trigger.question):
        assert "Pw-pasted-42" not in text and key not in text
        assert text.startswith("Why is checkout-api failing? I ran curl -u deploy:[REDACTED] https://pay.acme.io")
    assert provider.inputs and all(b"Why is checkout-api failing?" in given for given in provider.inputs)
    assert all(b"Pw-pasted-42" not in given and key.encode() not in given for given in provider.inputs)


@pytest.mark.requirement("R-T-2")
@pytest.mark.parametrize(("question", "scenario", "field"), BAD_DIAGNOSE_INPUTS)
async def test_bad_diagnose_input_is_invalid_argument_and_creates_no_run(
    api: Api, question: str, scenario: str, field: str
) -> None:
    request = pb.DiagnoseRequest(question=question, context=pb.RequestContext(scenario=scenario))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        _ = [m async for m in api.diagnosis.Diagnose(request)]
    violations = field_violations(caught.value)
    assert [f for f, _ in violations] == [field]
    assert (caught.value.details() or "").startswith(f"{field}: ")
    assert await api.running.repository.count_runs() == 0
    assert api.running.runs.active_run_ids == []


async def test_question_limit_follows_the_setting(api_factory: ApiFactory) -> None:
    api = await api_factory(max_question_chars=10)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.diagnose("eleven char")
    assert field_violations(caught.value)[0][0] == "question"
    messages = await api.diagnose("ten chars!")
    assert messages[-1].run.status == run_pb2.RUN_STATUS_SUCCESS


async def test_client_cancel_mid_stream_leaves_the_run_running_to_completion(api_factory: ApiFactory) -> None:
    provider = PassProvider(gate=asyncio.Event())
    api = await api_factory(provider=provider)
    call = api.diagnosis.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
    first = await next_message(call)
    run_id = first.run_id
    await provider.entered.acquire()
    call.cancel()
    assert await call.code() == grpc.StatusCode.CANCELLED
    # The server has dropped the stream (its subscription is gone) while the run waits in its Planner.
    await eventually(lambda: api.running.hub.subscriber_count(run_id) == 0)

    stored = await api.running.repository.get_run(run_id)
    assert stored is not None and stored.status == run_pb2.RUN_STATUS_RUNNING
    provider.gate.set()  # type: ignore[union-attr]
    await asyncio.wait_for(api.running.runs.wait(run_id), timeout=10)

    stored = await api.running.repository.get_run(run_id)
    assert stored is not None
    assert stored.status == run_pb2.RUN_STATUS_SUCCESS
    assert stored.verdict == contracts_pb2.VERDICT_PASS


async def test_deadline_ends_the_stream_but_not_the_run(api_factory: ApiFactory) -> None:
    provider = PassProvider(gate=asyncio.Event())
    api = await api_factory(provider=provider)
    with capture_logs() as logs:
        call = api.diagnosis.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"), timeout=0.5)
        first = await next_message(call)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await read_rest(call)
        assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        await eventually(lambda: any(entry["event"] == "rpc" for entry in logs))
    assert [entry["code"] for entry in logs if entry["event"] == "rpc"] == ["DEADLINE_EXCEEDED"]

    provider.gate.set()  # type: ignore[union-attr]
    await asyncio.wait_for(api.running.runs.wait(first.run_id), timeout=10)
    stored = await api.running.repository.get_run(first.run_id)
    assert stored is not None and stored.status == run_pb2.RUN_STATUS_SUCCESS


async def test_concurrent_run_limit_is_resource_exhausted(api_factory: ApiFactory) -> None:
    provider = PassProvider(gate=asyncio.Event())
    api = await api_factory(provider=provider, max_concurrent_runs=1)
    first = api.diagnosis.Diagnose(pb.DiagnoseRequest(question="first"))
    started = await next_message(first)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.diagnose("second")
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert error_reason(caught.value) == "TOO_MANY_RUNS"
    assert retry_delay_s(caught.value) == 1.0  # google.rpc.RetryInfo: when to try again
    assert await api.running.repository.count_runs() == 1

    provider.gate.set()  # type: ignore[union-attr]
    rest = await read_rest(first)
    assert rest[-1].run.run_id == started.run_id
    assert (await api.diagnose("third"))[-1].run.status == run_pb2.RUN_STATUS_SUCCESS


async def test_refusals_at_the_run_cap_answer_while_the_cap_is_held(api_factory: ApiFactory) -> None:
    """Callers beyond the cap, in waves of ten at once, while the cap's runs are in flight: each refusal is
    RESOURCE_EXHAUSTED with a RetryInfo, costs no run or store write and waits for no run (the held runs never
    end until the gate opens). How fast, under load, is measured by ``make bench`` (``responsive``)."""
    provider = PassProvider(gate=asyncio.Event())
    api = await api_factory(provider=provider, max_concurrent_runs=4)
    held = [api.diagnosis.Diagnose(pb.DiagnoseRequest(question=f"held {n}")) for n in range(4)]
    for stream in held:
        await next_message(stream)

    async def refused() -> float:
        started = time.perf_counter()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await api.diagnose("one too many")
        elapsed = time.perf_counter() - started
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert retry_delay_s(caught.value) > 0
        return elapsed

    latencies = [latency for _ in range(5) for latency in await asyncio.gather(*(refused() for _ in range(10)))]
    assert max(latencies) < 2.0, sorted(latencies)[-5:]
    assert await api.running.repository.count_runs() == 4
    provider.gate.set()  # type: ignore[union-attr]
    for stream in held:
        assert (await read_rest(stream))[-1].run.status == run_pb2.RUN_STATUS_SUCCESS


async def test_message_over_the_size_limit_is_resource_exhausted_by_grpc(api_factory: ApiFactory) -> None:
    api = await api_factory(max_message_bytes=1024)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await api.diagnose("x" * 2000)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert await api.running.repository.count_runs() == 0
