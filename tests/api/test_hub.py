"""The event hub and the run follower: bounded queues, overflow catch-up, no duplicate or missing sequence."""

from __future__ import annotations

import asyncio
from typing import cast

import grpc
import pytest

from diagnosis.v1 import run_pb2
from diagnosis_server.api.errors import ApiError
from diagnosis_server.api.follow import RunFollower
from diagnosis_server.api.hub import EventHub, Signal
from diagnosis_server.store import RunStore

from . import hub_store
from .hub_store import FakeStore

RUN = "run-hub"


def event(sequence: int, run_id: str = RUN) -> run_pb2.OrchestrationEvent:
    return hub_store.event(sequence, run_id)


def follow_in_background(follower: RunFollower) -> tuple[asyncio.Task[None], list[int]]:
    """A task reading ``follower``'s events to their end, and the sequences it has read so far."""
    seen: list[int] = []

    async def follow() -> None:
        async for e in follower.events():
            seen.append(e.sequence)

    return asyncio.create_task(follow()), seen


async def test_publish_never_waits_and_a_full_queue_overflows() -> None:
    hub = EventHub(queue_size=2)
    hub.open(RUN)
    subscription = hub.subscribe(RUN)
    for sequence in range(1, 1001):
        hub.publish(event(sequence))  # synchronous: no subscriber can hold the publisher
    assert subscription.queued == 0  # what overflowed was dropped: the store has it
    assert await subscription.next() is Signal.OVERFLOW
    hub.publish(event(1001))
    assert (await subscription.next()) == event(1001)
    hub.close(RUN)
    assert await subscription.next() is Signal.END


async def test_a_subscription_for_a_run_not_live_here_is_detached() -> None:
    hub = EventHub()
    subscription = hub.subscribe("run-elsewhere")
    assert not subscription.attached
    hub.publish(event(1, "run-elsewhere"))
    assert subscription.queued == 0


async def test_other_runs_events_never_reach_a_subscription() -> None:
    hub = EventHub()
    hub.open(RUN)
    hub.open("run-other")
    subscription = hub.subscribe(RUN)
    hub.publish(event(1, "run-other"))
    hub.publish(event(1))
    assert (await subscription.next()).run_id == RUN  # type: ignore[union-attr]
    assert subscription.queued == 0


async def test_follower_catches_up_from_the_store_after_an_overflow() -> None:
    hub = EventHub(queue_size=1)
    store = FakeStore(RUN)
    hub.open(RUN)
    subscription = hub.subscribe(RUN)
    follower = RunFollower(cast(RunStore, store), subscription)
    task, seen = follow_in_background(follower)
    for sequence in range(1, 41):
        store.commit(hub, sequence)
        if sequence % 10 == 0:
            await asyncio.sleep(0)  # let the follower run now and then
    store.status = run_pb2.RUN_STATUS_SUCCESS  # the final record is stored before the hub closes
    hub.close(RUN)
    await asyncio.wait_for(task, timeout=5)
    assert seen == list(range(1, 41))
    assert store.reads > 2  # the first replay, catch-ups after overflows, the final replay


async def test_follower_drops_live_duplicates_of_replayed_events() -> None:
    hub = EventHub()
    store = FakeStore(RUN)
    hub.open(RUN)
    subscription = hub.subscribe(RUN)  # before the store is read
    for sequence in (1, 2, 3):
        store.commit(hub, sequence)  # both stored and queued: the replay and the live feed overlap
    follower = RunFollower(cast(RunStore, store), subscription, after_sequence=1)
    store.status = run_pb2.RUN_STATUS_SUCCESS  # the final record is stored before the hub closes
    hub.close(RUN)
    assert [e.sequence async for e in follower.events()] == [2, 3]
    assert follower.last_sequence == 3


async def test_follower_fills_a_gap_in_the_live_feed_from_the_store() -> None:
    hub = EventHub()
    store = FakeStore(RUN)
    hub.open(RUN)
    subscription = hub.subscribe(RUN)
    follower = RunFollower(cast(RunStore, store), subscription)
    store.events.append(event(1))  # stored, never published (the feed skips it)
    store.commit(hub, 2)
    store.status = run_pb2.RUN_STATUS_SUCCESS  # the final record is stored before the hub closes
    hub.close(RUN)
    assert [e.sequence async for e in follower.events()] == [1, 2]


async def test_follower_polls_the_store_for_a_run_of_another_instance() -> None:
    hub = EventHub()
    store = FakeStore(RUN)
    store.events.append(event(1))
    follower = RunFollower(cast(RunStore, store), hub.subscribe(RUN), poll_interval_s=0.001)
    task, seen = follow_in_background(follower)
    await asyncio.sleep(0.01)
    store.events.append(event(2))
    store.status = run_pb2.RUN_STATUS_FAILED
    await asyncio.wait_for(task, timeout=5)
    assert seen == [1, 2]


async def test_follower_of_a_run_whose_task_ended_without_a_final_record_ends_unavailable() -> None:
    """The final write was given up (store down): the live feed ends and the store still says RUNNING. The
    follower yields what was committed, then ends UNAVAILABLE with a retry hint: never as if a RUNNING run were
    over, and not held open until a sweep that waits for the store to come back. (It used to follow the store
    until the run was final there.)"""
    hub = EventHub()
    store = FakeStore(RUN)
    hub.open(RUN)
    follower = RunFollower(cast(RunStore, store), hub.subscribe(RUN), poll_interval_s=0.001)
    store.commit(hub, 1)
    hub.close(RUN)  # the task is gone; status RUNNING
    task, seen = follow_in_background(follower)
    with pytest.raises(ApiError) as ended:
        await asyncio.wait_for(task, timeout=5)
    assert ended.value.code == grpc.StatusCode.UNAVAILABLE
    assert "final record could not be stored" in ended.value.message
    assert seen == [1]
    assert follower.final is None


def test_queue_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="queue_size"):
        EventHub(queue_size=0)


def tool_call(invocation_id: str, phase: run_pb2.ToolCallPhase.ValueType, sequence: int) -> run_pb2.ToolCallEvent:
    return run_pb2.ToolCallEvent(run_id=RUN, invocation_id=invocation_id, phase=phase, sequence=sequence)


async def test_a_subscription_taken_during_an_attempt_gets_the_calls_already_in_flight() -> None:
    # Queues of one event: the attempt's calls so far are given whole, never lost to the queue's size.
    hub = EventHub(queue_size=1)
    hub.open(RUN)
    hub.publish(event(1))
    hub.publish(tool_call("inv-1", run_pb2.TOOL_CALL_PHASE_STARTED, 2))
    hub.publish(tool_call("inv-2", run_pb2.TOOL_CALL_PHASE_STARTED, 2))
    hub.publish(tool_call("inv-1", run_pb2.TOOL_CALL_PHASE_ENDED, 2))
    during = hub.subscribe(RUN)
    assert during.published_before == 1
    assert during.queued == 3
    got = [cast(run_pb2.ToolCallEvent, await asyncio.wait_for(during.next(), 1)) for _ in range(3)]
    assert [(c.invocation_id, c.phase) for c in got] == [
        ("inv-1", run_pb2.TOOL_CALL_PHASE_STARTED),
        ("inv-2", run_pb2.TOOL_CALL_PHASE_STARTED),
        ("inv-1", run_pb2.TOOL_CALL_PHASE_ENDED),
    ]
    hub.publish(event(2))  # the attempt's own event: its calls are over
    assert (await during.next()) == event(2)
    after = hub.subscribe(RUN)
    assert after.queued == 0
    hub.close(RUN)
    assert await during.next() is Signal.END and await after.next() is Signal.END
