"""Live orchestration events of the runs this process is running, fanned out to any number of subscribers.

Publishing never waits: each subscriber has a bounded queue, and a subscriber whose queue is full
loses its queued events and is told ``OVERFLOW`` instead; it catches up from the store, where every
event is committed before it is published. When a run ends its subscribers are told ``END``.

A subscription taken for a run this process is not running is *detached*: it never receives
anything, and its reader follows the store instead.
"""

from __future__ import annotations

import asyncio
import enum
from collections import deque

from diagnosis.v1 import run_pb2

DEFAULT_QUEUE_SIZE = 128


class Signal(enum.Enum):
    OVERFLOW = "overflow"
    END = "end"


class Subscription:
    def __init__(self, hub: EventHub, run_id: str, *, attached: bool, maxsize: int) -> None:
        self._hub = hub
        self.run_id = run_id
        self.attached = attached
        self._maxsize = maxsize
        self._items: deque[run_pb2.OrchestrationEvent] = deque()
        self._overflowed = False
        self._ended = False
        self._wakeup = asyncio.Event()

    def _offer(self, event: run_pb2.OrchestrationEvent) -> None:
        if self._ended or self._overflowed:
            return
        if len(self._items) >= self._maxsize:
            # The store has every event: drop ours and let the reader catch up from there.
            self._items.clear()
            self._overflowed = True
        else:
            self._items.append(event)
        self._wakeup.set()

    def _end(self) -> None:
        self._ended = True
        self._wakeup.set()

    @property
    def queued(self) -> int:
        return len(self._items)

    async def next(self) -> run_pb2.OrchestrationEvent | Signal:
        """The next live event, OVERFLOW (catch up from the store, then go on), or END (no more events)."""
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

    def open(self, run_id: str) -> None:
        """Marks ``run_id`` live in this process (before its first event can be published)."""
        self._channels.setdefault(run_id, set())

    def is_live(self, run_id: str) -> bool:
        return run_id in self._channels

    def subscribe(self, run_id: str) -> Subscription:
        channel = self._channels.get(run_id)
        subscription = Subscription(self, run_id, attached=channel is not None, maxsize=self._queue_size)
        if channel is not None:
            channel.add(subscription)
        return subscription

    def subscriber_count(self, run_id: str) -> int:
        return len(self._channels.get(run_id, ()))

    def publish(self, event: run_pb2.OrchestrationEvent) -> None:
        for subscription in tuple(self._channels.get(event.run_id, ())):
            subscription._offer(event)

    def close(self, run_id: str) -> None:
        """The run ended (its final state is stored): every subscriber gets END."""
        for subscription in self._channels.pop(run_id, set()):
            subscription._end()

    def _unsubscribe(self, subscription: Subscription) -> None:
        channel = self._channels.get(subscription.run_id)
        if channel is not None:
            channel.discard(subscription)
