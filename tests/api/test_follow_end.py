"""The end of a followed run: a subscriber that got every event live reads nothing more from the store.

When a run ends, its manager reads the store once (is every stored event published? the run as stored) and
hands that end to the hub; a follower that yielded up to the last event then needs no final replay, and
the servicers no final read of the run. A follower that lagged, overflowed or missed an event still
catches up from the store, in order, without gaps or duplicates.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import run_pb2
from diagnosis_server.api.follow import RunFollower
from diagnosis_server.api.hub import EventHub, RunEnd, Signal
from diagnosis_server.api.metrics import Metrics
from diagnosis_server.api.runs import RunManager
from diagnosis_server.store import open_repository

from .conftest import ApiFactory
from .fakes import PassProvider
from .helpers import read_rest
from .test_hub import RUN, FakeStore, event

FINISHED_EVENTS = 6


def _final(status: int = run_pb2.RUN_STATUS_SUCCESS) -> run_pb2.DiagnosisRun:
    return run_pb2.DiagnosisRun(run_id=RUN, status=status, failure_reason="as stored")  # type: ignore[arg-type]


async def test_the_end_reaches_every_subscriber_with_end() -> None:
    hub = EventHub()
    hub.open(RUN)
    subscriptions = [hub.subscribe(RUN) for _ in range(3)]
    end = RunEnd(_final(), 0)
    hub.close(RUN, end)
    for subscription in subscriptions:
        assert await subscription.next() is Signal.END
        assert subscription.end is end


async def test_a_follower_that_saw_every_event_reads_nothing_at_the_end() -> None:
    hub = EventHub()
    store = FakeStore()
    hub.open(RUN)
    follower = RunFollower(store, hub.subscribe(RUN))
    seen: list[int] = []

    async def follow() -> None:
        async for e in follower.events():
            seen.append(e.sequence)

    task = asyncio.create_task(follow())
    await asyncio.sleep(0)  # the first replay (empty) is done
    for sequence in range(1, 6):
        store.commit(hub, sequence)
        await asyncio.sleep(0)
    end = RunEnd(_final(), 5)
    hub.close(RUN, end)
    await asyncio.wait_for(task, timeout=5)
    assert seen == [1, 2, 3, 4, 5]
    assert store.reads == 1  # the first replay only
    assert follower.ended is end


async def test_a_follower_that_overflowed_catches_up_then_ends_without_another_read() -> None:
    hub = EventHub(queue_size=1)
    store = FakeStore()
    hub.open(RUN)
    follower = RunFollower(store, hub.subscribe(RUN))
    for sequence in range(1, 41):
        store.commit(hub, sequence)  # the follower is not reading: its queue overflows
    end = RunEnd(_final(), 40)
    hub.close(RUN, end)
    assert [e.sequence async for e in follower.events()] == list(range(1, 41))
    assert follower.ended is end


async def test_an_end_past_what_the_follower_yielded_is_read_from_the_store() -> None:
    """A stored event the feed never carried: the follower reads it at the end, and the run too."""
    hub = EventHub()
    store = FakeStore()
    hub.open(RUN)
    follower = RunFollower(store, hub.subscribe(RUN))
    events = follower.events()
    store.commit(hub, 1)
    assert (await anext(events)).sequence == 1  # from the first replay
    store.events.append(event(2))  # stored, never published
    hub.close(RUN, RunEnd(_final(), 2))
    assert [e.sequence async for e in events] == [2]
    assert store.reads == 2
    assert follower.ended is None  # the servicer reads the run from the store


async def test_an_end_the_hub_cannot_vouch_for_is_read_from_the_store() -> None:
    hub = EventHub()
    store = FakeStore()
    hub.open(RUN)
    follower = RunFollower(store, hub.subscribe(RUN))
    store.commit(hub, 1)
    hub.close(RUN)
    assert [e.sequence async for e in follower.events()] == [1]
    assert store.reads == 2  # the first replay and the final one
    assert follower.ended is None


async def test_the_manager_vouches_for_an_end_only_when_every_stored_event_was_published(tmp_path: Path) -> None:
    repository = await open_repository(f"sqlite+aiosqlite:///{tmp_path / 'end.db'}", owner="instance-a")
    try:
        manager = RunManager(None, repository, EventHub(), Metrics(), max_concurrent_runs=1)  # type: ignore[arg-type]
        await repository.create_run(run_pb2.DiagnosisRun(run_id=RUN, question="q"))
        for sequence in (1, 2, 3):
            await repository.commit_node(RUN, events=[event(sequence)])
        assert await manager._stored_end(RUN, 2) is None  # event 3 is stored but was never published
        end = await manager._stored_end(RUN, 3)
        assert end is not None and end.last_sequence == 3
        assert end.run == await repository.get_run(RUN)
        assert await manager._stored_end("run-missing", 0) is None
    finally:
        await repository.close()


async def test_many_watchers_of_a_live_run_cost_the_store_no_read_at_its_end(api_factory: ApiFactory) -> None:
    provider = PassProvider(gate=asyncio.Event(), gate_role="composer")
    api = await api_factory(provider=provider)
    diagnose = api.diagnosis.Diagnose(pb.DiagnoseRequest(question="Why is checkout-api failing?"))
    run_id = (await diagnose.read()).run_id
    await provider.entered.acquire()
    watches = [api.diagnosis.WatchRun(pb.WatchRunRequest(run_id=run_id)) for _ in range(20)]
    firsts = await asyncio.gather(*(w.read() for w in watches))
    assert {m.event.sequence for m in firsts} == {1}
    rests_of_replay = await asyncio.gather(*(asyncio.gather(*(w.read() for _ in range(4))) for w in watches))
    assert all([m.event.sequence for m in rest] == [2, 3, 4, 5] for rest in rests_of_replay)

    repository = api.running.repository
    reads: list[str] = []
    for name in ("get_run", "list_events"):
        real = getattr(repository, name)

        async def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            reads.append(_name)
            return await _real(*args, **kwargs)

        setattr(repository, name, counted)

    provider.gate.set()  # type: ignore[union-attr]
    rests = await asyncio.gather(*(read_rest(w) for w in watches))
    for rest in rests:
        assert [m.WhichOneof("kind") for m in rest] == ["event", "ended"]
        assert rest[0].event.sequence == FINISHED_EVENTS
        assert rest[1].ended.status == run_pb2.RUN_STATUS_SUCCESS
        assert rest[1].ended.last_sequence == FINISHED_EVENTS
    final = (await read_rest(diagnose))[-1].run
    stored = await repository.get_run(run_id)
    assert final == stored
    # The manager's one look at the store's end; before, every watcher read the events and the run again.
    assert sorted(reads[:-1]) == ["get_run", "list_events"]
