"""Callers that go away or never read: a run belongs to the server, not to the stream that asked for it.

A Diagnose caller that cancels, closes its channel or dies mid-stream ends only its own stream: the run
goes on, is stored whole and SUCCESS. WatchRun subscribers that never read hold nothing up: the run
ends as fast as without them, and every other subscriber gets every event (R-S-3).
"""

from __future__ import annotations

import asyncio
import sys
import time

import grpc
import grpc.aio
import pytest

from diagnosis.v1 import contracts_pb2, diagnosis_service_pb2_grpc, run_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from tests.support.fakes import PassProvider
from tests.support.rpc import collect, eventually, next_message, read_rest

from .conftest import Api, ApiFactory
from .helpers import assert_consistent, read_stored_run

EVENTS = list(range(1, 7))  # planner, executor, gatekeeper, builder, verifier, composer
# A client in a process of its own: starts a Diagnose, prints the run id, then waits to be killed.
CLIENT = """
import sys, time
import grpc
from diagnosis.v1 import diagnosis_service_pb2 as pb, diagnosis_service_pb2_grpc as rpc
channel = grpc.insecure_channel(sys.argv[1])
call = rpc.DiagnosisServiceStub(channel).Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
print(next(call).run_id, flush=True)
time.sleep(60)
"""


async def _assert_completes(api: Api, run_id: str) -> None:
    """The run, held in its Planner, is still RUNNING; released, it is stored whole and SUCCESS."""
    stored = await api.running.repository.get_run(run_id)
    assert stored is not None and stored.status == run_pb2.RUN_STATUS_RUNNING
    assert api.provider is not None and api.provider.gate is not None
    api.provider.gate.set()
    await asyncio.wait_for(api.running.runs.wait(run_id), timeout=10)
    stored = await api.running.repository.get_run(run_id)
    assert stored is not None
    assert stored.status == run_pb2.RUN_STATUS_SUCCESS
    assert stored.verdict == contracts_pb2.VERDICT_PASS
    on_disk = read_stored_run(api.database, run_id)
    assert [event.sequence for event in on_disk.events] == EVENTS
    assert_consistent(on_disk)


async def _gated(api_factory: ApiFactory) -> Api:
    return await api_factory(provider=PassProvider(gate=asyncio.Event()))


@pytest.mark.parametrize("how", ["cancel", "close-channel", "deadline"])
async def test_a_diagnose_caller_leaving_mid_stream_does_not_stop_the_run(api_factory: ApiFactory, how: str) -> None:
    api = await _gated(api_factory)
    assert api.provider is not None
    channel = grpc.aio.insecure_channel(api.running.target)
    stub = diagnosis_service_pb2_grpc.DiagnosisServiceStub(channel)
    call = stub.Diagnose(
        pb.DiagnoseRequest(question="Why is checkout-api failing?"), timeout=0.5 if how == "deadline" else None
    )
    run_id = (await next_message(call)).run_id
    await api.provider.entered.acquire()
    if how == "cancel":
        call.cancel()
    elif how == "close-channel":
        await channel.close(grace=None)
    else:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await read_rest(call)
        assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # The server has let go of the stream (its subscription is gone) while the run waits.
    await eventually(lambda: api.running.hub.subscriber_count(run_id) == 0)
    await _assert_completes(api, run_id)
    await channel.close()


async def test_a_diagnose_caller_killed_mid_stream_does_not_stop_the_run(api_factory: ApiFactory) -> None:
    """The client process dies (SIGKILL): its connection drops without a goodbye."""
    api = await _gated(api_factory)
    assert api.provider is not None
    client = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CLIENT, api.running.target, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert client.stdout is not None
        run_id = (await asyncio.wait_for(client.stdout.readline(), timeout=20)).decode().strip()
        assert run_id.startswith("run-")
        await api.provider.entered.acquire()
        assert api.running.hub.subscriber_count(run_id) == 1
    finally:
        client.kill()
        await client.wait()
    await eventually(lambda: api.running.hub.subscriber_count(run_id) == 0, within_s=10)
    await _assert_completes(api, run_id)


async def test_diagnose_callers_that_never_read_still_get_their_runs_done(api_factory: ApiFactory) -> None:
    api = await api_factory()
    finished: list[run_pb2.DiagnosisRun] = []
    all_done = asyncio.Event()
    count = 20

    def on_finished(run: run_pb2.DiagnosisRun) -> None:
        finished.append(run)
        if len(finished) == count:
            all_done.set()

    api.running.runs.on_finished.append(on_finished)
    calls = [api.diagnosis.Diagnose(pb.DiagnoseRequest(question=f"question {n}")) for n in range(count)]
    await asyncio.wait_for(all_done.wait(), timeout=10)
    assert all(run.status == run_pb2.RUN_STATUS_SUCCESS for run in finished)
    assert await api.running.repository.count_runs(status=run_pb2.RUN_STATUS_SUCCESS) == count
    for call in calls:
        call.cancel()


async def test_watchers_that_never_read_hold_up_neither_the_run_nor_other_subscribers(api_factory: ApiFactory) -> None:
    # Queues of two events: every idle watcher's queue overflows, and must catch up from the store.
    gate = asyncio.Event()
    provider = PassProvider(gate=gate)
    api = await api_factory(provider=provider, start_kwargs={"subscriber_queue_size": 2})
    diagnose = api.diagnosis.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
    run_id = (await next_message(diagnose)).run_id
    await provider.entered.acquire()

    idle = [api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=run_id)) for _ in range(200)]
    readers = [
        asyncio.ensure_future(collect(api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=run_id)))) for _ in range(5)
    ]
    await eventually(lambda: api.running.hub.subscriber_count(run_id) == 1 + len(idle) + len(readers), within_s=10)

    released = time.perf_counter()
    gate.set()
    await asyncio.wait_for(api.running.runs.wait(run_id), timeout=10)
    assert time.perf_counter() - released < 2.0
    stored = await api.running.repository.get_run(run_id)
    assert stored is not None and stored.status == run_pb2.RUN_STATUS_SUCCESS

    for messages in await asyncio.wait_for(asyncio.gather(*readers), timeout=10):
        assert [m.event.sequence for m in messages[:-1] if m.WhichOneof("kind") == "event"] == EVENTS
        assert messages[-1].ended.last_sequence == EVENTS[-1]
    rest = await read_rest(diagnose)
    assert [m.event.sequence for m in rest[:-1] if m.WhichOneof("kind") == "event"] == EVENTS
    assert rest[-1].run.run_id == run_id

    # Read at last, each idle stream still holds every event once, in order, then the end.
    for messages in await asyncio.wait_for(asyncio.gather(*(read_rest(call) for call in idle)), timeout=20):
        assert [m.event.sequence for m in messages[:-1] if m.WhichOneof("kind") == "event"] == EVENTS
        assert messages[-1].ended.status == run_pb2.RUN_STATUS_SUCCESS
    await eventually(lambda: api.running.hub.subscriber_count(run_id) == 0)
