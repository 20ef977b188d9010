"""Live orchestration events of the runs this process is running, fanned out to any number of subscribers.

Publishing never waits: each subscriber has a bounded queue, and a subscriber whose queue is full
loses its queued events and is told ``OVERFLOW`` instead; it catches up from the store, where every
event is committed before it is published. When a run ends its subscribers are told ``END``. A tool
call's progress events are published the same way; they are not stored as such (the store has the calls'
tool_invocation rows, from which a replay derives them); those of the node attempt under way are kept until its
own event is published, and a subscription taken meanwhile gets them first, so a watcher that comes during an
Executor attempt sees the start of every call, even one in flight before it came.

A subscription taken for a run this process is not running is *detached*: it never receives
anything, and its reader follows the store instead.

Each event is published once as a ``Live`` item shared by every subscriber: its ``WatchRunResponse`` bytes
are serialized once, by the first subscriber that sends them, and reused by the others. The end carries
what the followers need so that none reads the store at a run's end: the run's final record as stored
(when it was), and the last sequence published. A subscription also knows the last sequence published
before it was taken (``published_before``): it receives every event after that one.
"""

from __future__ import annotations

import asyncio
import enum
from collections import deque

from diagnosis.v1 import diagnosis_service_pb2, run_pb2

DEFAULT_QUEUE_SIZE = 128


Event = run_pb2.OrchestrationEvent | run_pb2.ToolCallEvent


class Live:
    """One published event (a node attempt's, or a tool call's progress), shared by the subscribers; its wire
    form made once, on first use."""

    __slots__ = ("_watch_bytes", "event")

    def __init__(self, event: Event) -> None:
        self.event = event
        self._watch_bytes: bytes | None = None

    def watch_bytes(self) -> bytes:
        """The serialized ``WatchRunResponse`` of this event."""
        data = self._watch_bytes
        if data is None:
            data = self._watch_bytes = watch_response(self.event).SerializeToString()
        return data


def watch_response(event: Event) -> diagnosis_service_pb2.WatchRunResponse:
    if isinstance(event, run_pb2.ToolCallEvent):
        return diagnosis_service_pb2.WatchRunResponse(tool_call=event)
    return diagnosis_service_pb2.WatchRunResponse(event=event)


class Signal(enum.Enum):
    OVERFLOW = "overflow"
    END = "end"


class Subscription:
    def __init__(self, hub: EventHub, run_id: str, *, attached: bool, maxsize: int, published_before: int = 0) -> None:
        self._hub = hub
        self.run_id = run_id
        self.attached = attached
        # The last sequence published before this subscription was taken (attached ones receive all after it).
        self.published_before = published_before
        # Set at the end: the run's final record as stored (None: not known here) and the last sequence published.
        self.final: run_pb2.DiagnosisRun | None = None
        self.end_sequence = 0
        self._maxsize = maxsize
        self._items: deque[Live] = deque()
        self._overflowed = False
        self._ended = False
        self._wakeup = asyncio.Event()

    def _offer(self, event: Live) -> None:
        if self._ended or self._overflowed:
            return
        if len(self._items) >= self._maxsize:
            # The store has every event: drop ours and let the reader catch up from there.
            self._items.clear()
            self._overflowed = True
        else:
            self._items.append(event)
        self._wakeup.set()

    def _end(self, final: run_pb2.DiagnosisRun | None, end_sequence: int) -> None:
        self.final = final
        self.end_sequence = end_sequence
        self._ended = True
        self._wakeup.set()

    @property
    def queued(self) -> int:
        return len(self._items)

    async def next(self) -> Event | Signal:
        """The next live event, OVERFLOW (catch up from the store, then go on), or END (no more events)."""
        item = await self.next_live()
        return item if isinstance(item, Signal) else item.event

    async def next_live(self) -> Live | Signal:
        """``next``, the event as published (with its shared wire form)."""
        while True:
            if self._items:
                return self._items.popleft()
            if self._overflowed:
                self._overflowed = False
                return Signal.OVERFLOW
            if self._ended:
                return Signal.END
            self._wakeup.clear()
            await self._wakeup.wait()

    def close(self) -> None:
        self._hub._unsubscribe(self)


class EventHub:
    def __init__(self, *, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        if queue_size < 1:
            raise ValueError("queue_size must be at least 1")
        self._queue_size = queue_size
        self._channels: dict[str, set[Subscription]] = {}
        # The last sequence published of each live run.
        self._published: dict[str, int] = {}
        # Each live run's tool call events published since its last node event (the attempt under way's).
        self._in_flight: dict[str, list[Live]] = {}

    def open(self, run_id: str) -> None:
        """Marks ``run_id`` live in this process (before its first event can be published)."""
        self._channels.setdefault(run_id, set())
        self._published.setdefault(run_id, 0)

    def is_live(self, run_id: str) -> bool:
        return run_id in self._channels

    def subscribe(self, run_id: str) -> Subscription:
        channel = self._channels.get(run_id)
        subscription = Subscription(
            self,
            run_id,
            attached=channel is not None,
            maxsize=self._queue_size,
            published_before=self._published.get(run_id, 0),
        )
        if channel is not None:
            # Bounded by the calls of one attempt (the Executor's limit), never dropped for the queue's size.
            subscription._items.extend(self._in_flight.get(run_id, ()))
            channel.add(subscription)
        return subscription

    def subscriber_count(self, run_id: str) -> int:
        return len(self._channels.get(run_id, ()))

    def publish(self, event: Event) -> None:
        """Offers ``event`` to the run's subscribers. A tool call's progress event moves no sequence: it carries
        its node attempt's, whose own event comes after it."""
        channel = self._channels.get(event.run_id)
        if channel is None:
            return
        live = Live(event)
        if isinstance(event, run_pb2.OrchestrationEvent):
            self._in_flight.pop(event.run_id, None)
            if event.sequence > self._published.get(event.run_id, 0):
                self._published[event.run_id] = event.sequence
        else:
            self._in_flight.setdefault(event.run_id, []).append(live)
        for subscription in tuple(channel):
            subscription._offer(live)

    def close(self, run_id: str, *, final: run_pb2.DiagnosisRun | None = None) -> None:
        """The run's task ended: every subscriber gets END, with ``final``, the run's record as stored (None
        when it could not be stored: the followers then read the store), and the last sequence published."""
        last = self._published.pop(run_id, 0)
        self._in_flight.pop(run_id, None)
        for subscription in self._channels.pop(run_id, set()):
            subscription._end(final, last)

    def _unsubscribe(self, subscription: Subscription) -> None:
        channel = self._channels.get(subscription.run_id)
        if channel is not None:
            channel.discard(subscription)
