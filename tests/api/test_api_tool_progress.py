"""Tool call progress through the real gRPC server: the heuristic provider on a live environment (a slow loopback
Prometheus), each call's start and end on the Diagnose stream, replayed by WatchRun from the recorded calls, and
a source that hangs failing the run's remaining calls at once."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc.aio
import pytest

from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2_grpc, run_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.api import RunningServer, start_server
from diagnosis_server.settings import load_settings
from tests.sources.slow_prometheus import SlowPrometheus
from tests.support.rpc import eventually

STARTED = run_pb2.TOOL_CALL_PHASE_STARTED
ENDED = run_pb2.TOOL_CALL_PHASE_ENDED
QUESTION = "Why is checkout-api returning 500s?"


@pytest.fixture
def prometheus() -> Iterator[SlowPrometheus]:
    server = SlowPrometheus(0.05)
    yield server
    server.upstream.close()


async def _serve(tmp_path: Path, url: str, *, timeout_s: float = 5.0, **settings: Any) -> RunningServer:
    (tmp_path / "environments.toml").write_text(
        f'[environments.prod]\ndefault = true\nprometheus = {{ url = "{url}", timeout_s = {timeout_s} }}\n'
    )
    return await start_server(
        load_settings(
            address="127.0.0.1:0",
            database_url=f"sqlite+aiosqlite:///{tmp_path / 'api.db'}",
            metrics_address="",
            http_address="",
            agent_provider="heuristic",
            environments_file=str(tmp_path / "environments.toml"),
            **settings,
        )
    )


@pytest.fixture
async def stub(tmp_path: Path, prometheus: SlowPrometheus) -> AsyncIterator[Any]:
    running = await _serve(tmp_path, prometheus.upstream.url)
    channel = grpc.aio.insecure_channel(running.target)
    try:
        yield diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
    finally:
        await channel.close()
        await running.stop(grace=2.0)


async def _diagnose(stub: Any) -> list[pb.DiagnoseResponse]:
    request = pb.DiagnoseRequest(question=QUESTION, context=pb.RequestContext(environment="prod"))
    return [m async for m in stub.Diagnose(request)]


def _tool_calls(messages: list[Any]) -> list[run_pb2.ToolCallEvent]:
    return [m.tool_call for m in messages if m.WhichOneof("kind") == "tool_call"]


def _key(event: run_pb2.ToolCallEvent) -> tuple[str, int, int, int, int, str]:
    return (event.invocation_id, event.phase, event.sequence, event.status, event.duration_ms, event.error)


async def test_diagnose_streams_each_tool_calls_start_and_end_before_the_executor_event(stub: Any) -> None:
    messages = await _diagnose(stub)
    run = messages[-1].run
    assert run.status == run_pb2.RUN_STATUS_SUCCESS, run.failure_reason
    listed = await stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=run.run_id, page_size=100))
    invocations = list(listed.invocations)
    assert len(invocations) >= 2

    kinds = [m.WhichOneof("kind") for m in messages]
    events = [m.event for m in messages if m.WhichOneof("kind") == "event"]
    executor = next(e for e in events if e.node == run_pb2.NODE_NAME_EXECUTOR)
    first_call = kinds.index("tool_call")
    executor_at = next(i for i, m in enumerate(messages) if m.WhichOneof("kind") == "event" and m.event == executor)
    # All of them after the Planner's event and before the Executor's, under the Executor's sequence.
    assert messages[first_call - 1].event.node == run_pb2.NODE_NAME_PLANNER
    assert set(kinds[first_call:executor_at]) == {"tool_call"}
    calls = _tool_calls(messages)
    assert {c.sequence for c in calls} == {executor.sequence}
    assert all(c.run_id == run.run_id and c.cycle == 1 for c in calls)

    # One start and one end a recorded call, started in recording order, each start before its end.
    started = [c.invocation_id for c in calls if c.phase == STARTED]
    ended = {c.invocation_id: c for c in calls if c.phase == ENDED}
    assert started == [i.invocation_id for i in invocations]
    assert set(ended) == set(started)
    for position, call in enumerate(calls):
        if call.phase == ENDED:
            assert started.index(call.invocation_id) < position
    for invocation in invocations:
        end = ended[invocation.invocation_id]
        assert end.tool_name == invocation.tool_name
        assert (end.status, end.duration_ms, end.error) == (invocation.status, invocation.duration_ms, invocation.error)
        assert end.status == contracts_pb2.TOOL_INVOCATION_STATUS_OK
        assert end.duration_ms >= 50  # the upstream answers after 50 ms


async def test_watch_replays_the_tool_calls_from_the_store_under_the_executor_sequence(stub: Any) -> None:
    live = await _diagnose(stub)
    run_id = live[-1].run.run_id
    executor = next(m.event for m in live if m.WhichOneof("kind") == "event" and m.event.node == 2)

    async def watch(after: int) -> list[pb.WatchRunResponse]:
        return [m async for m in stub.WatchRun(pb.WatchRunRequest(run_id=run_id, after_sequence=after))]

    replayed = await watch(0)
    assert sorted(_key(c) for c in _tool_calls(replayed)) == sorted(_key(c) for c in _tool_calls(live))
    # A replay gives each call's start and end together, then the Executor's event.
    pairs = [(c.invocation_id, c.phase) for c in _tool_calls(replayed)]
    assert pairs == [(i, p) for i in dict.fromkeys(i for i, _ in pairs) for p in (STARTED, ENDED)]
    kinds = [m.WhichOneof("kind") for m in replayed]
    assert replayed[kinds.index("tool_call") - 1].event.sequence == executor.sequence - 1
    assert replayed[len(pairs) + kinds.index("tool_call")].event == executor
    # After the Planner's sequence the Executor's calls come again; after the Executor's, none.
    assert len(_tool_calls(await watch(executor.sequence - 1))) == len(pairs)
    assert _tool_calls(await watch(executor.sequence)) == []


async def test_a_hung_source_is_waited_out_once_and_its_other_calls_fail_at_once(tmp_path: Path) -> None:
    hung = SlowPrometheus(3.0)
    running = await _serve(tmp_path, hung.upstream.url, timeout_s=0.3, max_concurrent_calls_per_source=1)
    channel = grpc.aio.insecure_channel(running.target)
    try:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        messages = await _diagnose(stub)
        run = messages[-1].run
        listed = await stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=run.run_id, page_size=100))
    finally:
        await channel.close()
        await running.stop(grace=2.0)
        hung.upstream.close()
    invocations = list(listed.invocations)
    assert len(invocations) >= 2
    first, rest = invocations[0], invocations[1:]
    assert first.error.startswith("prometheus.query") and "no answer from http://127.0.0.1:" in first.error
    # Only the first call reached the upstream (its request and the client's retries of it).
    assert hung.requests == 3
    for invocation in rest:
        assert invocation.status == contracts_pb2.TOOL_INVOCATION_STATUS_ERROR
        assert invocation.error.startswith(
            f"not called: source 'prometheus' failed earlier in this run ({first.invocation_id}: "
        )
        assert invocation.duration_ms < 100
    ended = {c.invocation_id: c for c in _tool_calls(messages) if c.phase == ENDED}
    assert [ended[i.invocation_id].error for i in rest] == [i.error[:200] for i in rest]


async def test_a_watcher_that_comes_during_the_executor_gets_every_calls_end(tmp_path: Path) -> None:
    # One call at a time, 200 ms each: the watcher subscribes with some calls recorded and others to come.
    slow = SlowPrometheus(0.2)
    running = await _serve(tmp_path, slow.upstream.url, max_concurrent_calls_per_source=1)
    channel = grpc.aio.insecure_channel(running.target)
    try:
        stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
        request = pb.DiagnoseRequest(question=QUESTION, context=pb.RequestContext(environment="prod"))
        diagnose: Any = stub.Diagnose(request)
        run_id = (await diagnose.read()).run_id
        await eventually(lambda: slow.requests >= 2, within_s=10)
        before = len((await stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=run_id))).invocations)
        watched = [m async for m in stub.WatchRun(pb.WatchRunRequest(run_id=run_id))]
        rest: list[Any] = []
        while (message := await diagnose.read()) != grpc.aio.EOF:
            rest.append(message)
        listed = await stub.ListToolInvocations(pb.ListToolInvocationsRequest(run_id=run_id, page_size=100))
    finally:
        await channel.close()
        await running.stop(grace=2.0)
        slow.upstream.close()
    invocations = [i.invocation_id for i in listed.invocations]
    assert 1 <= before < len(invocations)
    executor = next(m.event for m in rest if m.WhichOneof("kind") == "event" and m.event.node == 2)
    calls = _tool_calls(watched)
    assert [c.invocation_id for c in calls if c.phase == ENDED] == invocations
    assert {c.sequence for c in calls} == {executor.sequence}
    # The calls recorded before the watcher came: replayed, each start with its end.
    early = [(c.invocation_id, c.phase) for c in calls[: 2 * before]]
    assert early == [(i, p) for i in invocations[:before] for p in (STARTED, ENDED)]
