"""WatchRun: replay after a sequence number, live follow, many subscribers, slow subscribers, other instances."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import grpc.aio
import pytest

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.agents.base import AgentRole
from diagnosis_server.store import NodeCommit, open_repository
from tests.support.fakes import PassProvider
from tests.support.rpc import eventually, field_violations, next_message, read_rest

from .conftest import Api, ApiFactory

FINISHED_EVENTS = 6  # planner, executor, gatekeeper, builder, verifier, composer


def _split(messages: list[pb.WatchRunResponse]) -> tuple[list[int], pb.RunEnded]:
    """The node events' sequences and the end; tool call progress (before its Executor's event) left out."""
    assert messages and messages[-1].WhichOneof("kind") == "ended"
    assert all(m.WhichOneof("kind") in {"event", "tool_call"} for m in messages[:-1])
    return [m.event.sequence for m in messages[:-1] if m.WhichOneof("kind") == "event"], messages[-1].ended


async def _invocations(api: Api, run_id: str) -> list[contracts_pb2.ToolInvocation]:
    return await api.running.repository.list_tool_invocations(run_id)


async def _watch(api: Api, run_id: str, after: int = 0) -> list[pb.WatchRunResponse]:
    return [m async for m in api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=run_id, after_sequence=after))]


async def _start_gated_run(
    api_factory: ApiFactory, role: AgentRole = "composer", **settings: Any
) -> tuple[Api, PassProvider, str, Any]:
    """A run held in its ``role`` agent (Composer: five events stored, the sixth comes once ``provider.gate``
    is set; Planner: no event yet)."""
    provider = PassProvider(gate=asyncio.Event(), gate_role=role)
    api = await api_factory(provider=provider, **settings)
    diagnose = api.diagnosis.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
    run_id = (await next_message(diagnose)).run_id
    await provider.entered.acquire()
    return api, provider, run_id, diagnose


async def test_watch_of_a_finished_run_replays_then_ends_at_once(api: Api) -> None:
    run = (await api.diagnose())[-1].run
    sequences, ended = _split(await _watch(api, run.run_id))
    assert sequences == list(range(1, FINISHED_EVENTS + 1))
    assert ended.status == run_pb2.RUN_STATUS_SUCCESS
    assert ended.verdict == contracts_pb2.VERDICT_PASS
    assert ended.reason == run.orchestration_trace.end_reason == "COMPOSED"
    assert ended.last_sequence == FINISHED_EVENTS


@pytest.mark.parametrize(("after", "expected"), [(2, [3, 4, 5, 6]), (6, []), (50, [])])
async def test_watch_replays_only_events_after_the_given_sequence(api: Api, after: int, expected: list[int]) -> None:
    run = (await api.diagnose())[-1].run
    sequences, ended = _split(await _watch(api, run.run_id, after))
    assert sequences == expected
    assert ended.last_sequence == FINISHED_EVENTS


async def test_watch_follows_a_running_run_live_to_its_end(api_factory: ApiFactory) -> None:
    api, provider, run_id, diagnose = await _start_gated_run(api_factory)
    watch = api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=run_id, after_sequence=1))
    replayed = [await next_message(watch) for _ in range(4 + 2 * len(await _invocations(api, run_id)))]
    # The Executor's calls (replayed from their tool_invocation rows) come before its event, under its sequence.
    kinds = [m.WhichOneof("kind") for m in replayed]
    assert kinds.index("event") == kinds.count("tool_call") > 0
    assert {m.tool_call.sequence for m in replayed if m.WhichOneof("kind") == "tool_call"} == {2}
    assert [m.event.sequence for m in replayed if m.WhichOneof("kind") == "event"] == [2, 3, 4, 5]
    assert api.running.runs.active_run_ids == [run_id]

    provider.gate.set()  # type: ignore[union-attr]
    sequences, ended = _split(await read_rest(watch))
    assert sequences == [6]
    assert ended.status == run_pb2.RUN_STATUS_SUCCESS
    assert ended.last_sequence == 6
    assert (await read_rest(diagnose))[-1].run.status == run_pb2.RUN_STATUS_SUCCESS


async def test_fifty_subscribers_see_identical_sequences(api_factory: ApiFactory) -> None:
    api, provider, run_id, _ = await _start_gated_run(api_factory)
    watches = [api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=run_id)) for _ in range(50)]
    # A replayed event proves the server subscribed that watcher before it read the store.
    firsts = await asyncio.gather(*(next_message(w) for w in watches))
    assert {m.event.sequence for m in firsts} == {1}
    assert api.running.hub.subscriber_count(run_id) == 51  # 50 watchers and the Diagnose stream

    provider.gate.set()  # type: ignore[union-attr]
    rests = await asyncio.gather(*(read_rest(w) for w in watches))
    for first, rest in zip(firsts, rests, strict=True):
        sequences, ended = _split([first, *rest])
        assert sequences == list(range(1, FINISHED_EVENTS + 1))
        assert ended.status == run_pb2.RUN_STATUS_SUCCESS


async def test_a_subscriber_that_never_reads_does_not_block_the_run(api_factory: ApiFactory) -> None:
    # Queues of one event, and every event still to come: whatever the idle watcher's stream cannot take
    # overflows its queue, and it must catch up from the store (the overflow itself: test_hub.py).
    api, provider, run_id, diagnose = await _start_gated_run(
        api_factory, "planner", start_kwargs={"subscriber_queue_size": 1}
    )
    idle = api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=run_id))
    await eventually(lambda: api.running.hub.subscriber_count(run_id) == 2)

    provider.gate.set()  # type: ignore[union-attr]
    await asyncio.wait_for(api.running.runs.wait(run_id), timeout=10)
    stored = await api.running.repository.get_run(run_id)
    assert stored is not None and stored.status == run_pb2.RUN_STATUS_SUCCESS

    watched = await read_rest(idle)
    sequences, ended = _split(watched)
    assert sequences == list(range(1, FINISHED_EVENTS + 1))
    assert ended.last_sequence == FINISHED_EVENTS
    rest = await read_rest(diagnose)
    assert [m.event.sequence for m in rest[:-1] if m.WhichOneof("kind") == "event"] == list(
        range(1, FINISHED_EVENTS + 1)
    )
    # Caught up from the store, each recorded call's start and end still came once, on both streams.
    invocations = [i.invocation_id for i in await api.running.repository.list_tool_invocations(run_id)]
    assert invocations
    for messages in (watched, rest):
        calls = [
            (m.tool_call.invocation_id, m.tool_call.phase) for m in messages if m.WhichOneof("kind") == "tool_call"
        ]
        assert sorted(calls) == sorted(
            (i, phase)
            for i in invocations
            for phase in (run_pb2.TOOL_CALL_PHASE_STARTED, run_pb2.TOOL_CALL_PHASE_ENDED)
        )


async def test_watch_follows_a_run_of_another_instance_through_the_store(api_factory: ApiFactory) -> None:
    api = await api_factory(start_kwargs={"poll_interval_s": 0.02})
    other = await open_repository(api.running.settings.database_url.get_secret_value(), owner="other-instance")
    try:
        run = run_pb2.DiagnosisRun(run_id="run-elsewhere", tenant="default", question="q", scenario="checkout-oom")
        await other.create_run(run)
        event = run_pb2.OrchestrationEvent(run_id=run.run_id, sequence=1, node=run_pb2.NODE_NAME_PLANNER)
        await other.commit_node(NodeCommit(run.run_id, events=[event]))
        watch = api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=run.run_id))
        assert (await next_message(watch)).event.sequence == 1

        second = run_pb2.OrchestrationEvent(run_id=run.run_id, sequence=2, node=run_pb2.NODE_NAME_EXECUTOR)
        await other.commit_node(NodeCommit(run.run_id, events=[second]))
        run.status = run_pb2.RUN_STATUS_FAILED
        run.failure_reason = "EXECUTOR_FAILED"
        await other.finish_run(run)
        sequences, ended = _split(await read_rest(watch))
        assert sequences == [2]
        assert ended.status == run_pb2.RUN_STATUS_FAILED
        assert ended.reason == "EXECUTOR_FAILED"
        assert ended.last_sequence == 2
    finally:
        await other.close()


async def test_watch_of_an_unknown_run_is_not_found(api: Api) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _watch(api, "run-" + "f" * 32)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert api.running.hub.subscriber_count("run-" + "f" * 32) == 0


@pytest.mark.parametrize(
    ("run_id", "after", "field"), [("", 0, "run_id"), ("bad id", 0, "run_id"), ("run-1", -1, "after_sequence")]
)
async def test_bad_watch_request_is_invalid_argument(api: Api, run_id: str, after: int, field: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _watch(api, run_id, after)
    assert [f for f, _ in field_violations(caught.value)] == [field]
