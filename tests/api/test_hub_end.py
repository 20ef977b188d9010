"""The hub's end and live items: followers end without reading the store, and an event is serialized once."""

from __future__ import annotations

from typing import cast

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis_server.api.follow import RunFollower
from diagnosis_server.api.hub import EventHub
from diagnosis_server.store import RunStore

from . import hub_store
from .hub_store import FakeStore

RUN = "run-end"


def event(sequence: int) -> run_pb2.OrchestrationEvent:
    return hub_store.event(sequence, RUN)


def counting_store() -> FakeStore:
    return FakeStore(RUN, count_status_reads=True)


def final_run() -> run_pb2.DiagnosisRun:
    return run_pb2.DiagnosisRun(
        run_id=RUN, status=run_pb2.RUN_STATUS_SUCCESS, verdict=contracts_pb2.Verdict.ValueType(1)
    )


async def test_a_follower_from_the_start_ends_with_the_hubs_record_and_reads_nothing() -> None:
    hub, store = EventHub(), counting_store()
    hub.open(RUN)
    follower = RunFollower(cast(RunStore, store), hub.subscribe(RUN))
    for sequence in (1, 2, 3):
        store.commit(hub, sequence)
    store.status = run_pb2.RUN_STATUS_SUCCESS
    hub.close(RUN, final=final_run())
    assert [e.sequence async for e in follower.events()] == [1, 2, 3]
    assert store.reads == 0  # no replay (it saw every event), no read at the end
    assert follower.final == final_run() and follower.end_sequence == 3


async def test_a_late_follower_replays_then_ends_with_the_hubs_record() -> None:
    hub, store = EventHub(), counting_store()
    hub.open(RUN)
    store.commit(hub, 1)
    subscription = hub.subscribe(RUN)
    assert subscription.published_before == 1
    follower = RunFollower(cast(RunStore, store), subscription)
    store.commit(hub, 2)
    hub.close(RUN, final=final_run())
    assert [e.sequence async for e in follower.events()] == [1, 2]
    assert store.reads == 1  # the replay of what came before it subscribed; nothing at the end


async def test_an_end_without_a_stored_record_falls_back_to_the_store() -> None:
    hub, store = EventHub(), counting_store()
    hub.open(RUN)
    follower = RunFollower(cast(RunStore, store), hub.subscribe(RUN))
    store.status = run_pb2.RUN_STATUS_SUCCESS
    hub.close(RUN)  # the run's final write failed, or nobody said: the store decides
    assert [e async for e in follower.events()] == []
    assert store.reads >= 1 and follower.final is not None and follower.end_sequence is None


async def test_a_live_event_is_serialized_once_for_all_its_subscribers() -> None:
    hub = EventHub()
    hub.open(RUN)
    first, second = hub.subscribe(RUN), hub.subscribe(RUN)
    hub.publish(event(1))
    a, b = await first.next_live(), await second.next_live()
    assert a is b  # one item shared by every subscriber
    assert not isinstance(a, type(None))
    wire = a.watch_bytes()  # type: ignore[union-attr]
    assert wire is b.watch_bytes()  # type: ignore[union-attr]
    assert pb.WatchRunResponse.FromString(wire) == pb.WatchRunResponse(event=event(1))
