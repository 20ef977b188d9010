"""Follow one run's events: replay from the store after a sequence number, then live until the run ends.

The caller subscribes to the hub BEFORE the follower first reads the store, so no event falls between
the replay and the live feed; every event is yielded once, in sequence order (duplicates are dropped
by sequence number, and a gap or an overflow is filled from the store, where each event is committed
before it is published). A run this process is not running (another instance's) is followed through
the store: woken by the run's commits (PostgreSQL LISTEN/NOTIFY, ``RunStore.watch_run``), polling every
``poll_interval_s`` at the latest (the only way on SQLite).

The events end only when the store holds the run's final record (``final``), so no stream ends as if a
RUNNING run were over. A run whose task here ended without one (its final write was given up while the store
was down) ends its live followers with UNAVAILABLE and a retry hint instead of holding them open until the
orphan sweep: watched again later (WatchRun), it ends with the record the sweep stored (INTERRUPTED).

A tool call's progress events (``ToolCallEvent``) come live before their Executor attempt's event, and carry
its sequence number. A replay derives them from the recorded tool_invocation rows: before an Executor event,
each call of its cycle started and ended, in recording order (a call's two events together); after a Planner
event, with the run live here, the calls its Executor has recorded so far; the hub gives a new subscription the
attempt's events published so far, so the calls in flight come too. Each is yielded once (by invocation id and
phase): a follower that starts during an Executor attempt gets every call's start and end.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.api.errors import STORE_RETRY_AFTER_S, ApiError, unavailable
from diagnosis_server.api.hub import Event, Live, Signal, Subscription
from diagnosis_server.store import RunStore, Watch
from diagnosis_server.tools.runner import progress_event

REPLAY_BATCH = 500
DEFAULT_POLL_INTERVAL_S = 0.5
TERMINAL_STATUSES = frozenset({run_pb2.RUN_STATUS_SUCCESS, run_pb2.RUN_STATUS_FAILED})


def final_record_missing(run_id: str) -> ApiError:
    """UNAVAILABLE for a follower of a run whose task ended here without storing its final record."""
    return unavailable(
        "RUN_NOT_STORED",
        f"run {run_id} ended but its final record could not be stored; watch it again later (WatchRun)",
        retry_after_s=STORE_RETRY_AFTER_S,
    )


class RunFollower:
    def __init__(
        self,
        store: RunStore,
        subscription: Subscription,
        *,
        after_sequence: int = 0,
        poll_interval_s: float = DEFAULT_POLL_INTERVAL_S,
    ) -> None:
        self._store = store
        self._subscription = subscription
        self._run_id = subscription.run_id
        self._poll_interval_s = poll_interval_s
        # The highest sequence number yielded (or skipped by the caller's after_sequence).
        self.last_sequence = after_sequence
        self.yielded = 0
        # The run's final record once ``events`` has ended (None: the run is not in the store).
        self.final: run_pb2.DiagnosisRun | None = None
        self._live = subscription.attached
        # Wake-ups on the run's commits by another instance (PostgreSQL NOTIFY), for a follower of the store.
        self._watch: Watch | None = None
        self._check_status = True
        # The run's last event sequence, when the hub's end said it (None: not known without the store).
        self.end_sequence: int | None = None
        # The tool call events yielded: (invocation id, phase).
        self._tool_calls: set[tuple[str, int]] = set()

    async def events(self) -> AsyncIterator[Event]:
        async for event, _ in self.events_live():
            yield event

    async def events_live(self) -> AsyncIterator[tuple[Event, Live | None]]:
        """``events``, each with its published form when it came live (None: replayed from the store)."""
        if not self._live:
            self._watch = self._store.watch_run(self._run_id)
        try:
            async for item in self._events_live():
                yield item
        finally:
            if self._watch is not None:
                self._watch.close()
                self._watch = None

    async def _events_live(self) -> AsyncIterator[tuple[Event, Live | None]]:
        subscription = self._subscription
        # An attached subscription taken before any event after ``after_sequence`` was published receives
        # them all: nothing to replay (a Diagnose stream, a watcher that came early).
        if not (self._live and subscription.published_before <= self.last_sequence):
            async for event in self._replay():
                yield event, None
        while True:
            if self._live:
                item = await subscription.next_live()
            else:
                item = await self._poll()
            if isinstance(item, Signal):
                if item is Signal.END and self._live and self._ended_here():
                    return
                async for event in self._replay():
                    yield event, None
                if item is Signal.END:
                    if self._live:
                        # The run's task is over: its final record should be stored. If it is not, the task
                        # gave it up: nothing here will write it, so the caller is told to come back.
                        self._live = False
                        run = await self._store.get_run(self._run_id)
                        if run is not None and run.status not in TERMINAL_STATUSES:
                            raise final_record_missing(self._run_id)
                        self.final = run
                    return
                continue
            event = item.event
            if event.sequence <= self.last_sequence:
                continue
            if event.sequence != self.last_sequence + 1:
                async for replayed in self._replay():
                    yield replayed, None
                if not isinstance(event, run_pb2.ToolCallEvent) or event.sequence != self.last_sequence + 1:
                    continue
            if isinstance(event, run_pb2.ToolCallEvent):
                if self._first_time(event):
                    yield event, item
                continue
            if event.node == run_pb2.NODE_NAME_EXECUTOR:
                # A call's live progress may have overflowed the queue before its Executor event came: each recorded
                # call of the attempt is yielded once, before the event that ends it.
                recorded = await self._store.list_tool_invocations(self._run_id)
                for tool_call in _tool_calls_of(recorded, event.cycle, event.sequence):
                    if self._first_time(tool_call):
                        yield tool_call, None
            self._advance(event)
            yield event, item

    def _first_time(self, event: run_pb2.ToolCallEvent) -> bool:
        key = (event.invocation_id, int(event.phase))
        if key in self._tool_calls:
            return False
        self._tool_calls.add(key)
        return True

    def _ended_here(self) -> bool:
        """At END: True when the hub gave the run's stored final record and nothing is left to replay."""
        final = self._subscription.final
        if final is None or final.status not in TERMINAL_STATUSES:
            return False
        if self.last_sequence < self._subscription.end_sequence:
            return False
        self.final = final
        self.end_sequence = self._subscription.end_sequence
        self._live = False
        return True

    async def _poll(self) -> Signal:
        if self._watch is None:
            run = await self._store.get_run(self._run_id)
            if run is None or run.status in TERMINAL_STATUSES:
                self.final = run
                return Signal.END
            await asyncio.sleep(self._poll_interval_s)
            return Signal.OVERFLOW
        if self._check_status:
            run = await self._store.get_run(self._run_id)
            if run is None or run.status in TERMINAL_STATUSES:
                self.final = run
                return Signal.END
        # Woken by the run's next commit (NOTIFY): its events are read (OVERFLOW), and its status only when the
        # commit was the final one or nothing came within the poll interval.
        woke = await self._watch.wait(self._poll_interval_s)
        self._check_status = not woke or self._watch_ended()
        return Signal.OVERFLOW

    def _watch_ended(self) -> bool:
        return bool(getattr(self._watch, "ended", True))

    async def _replay(self) -> AsyncIterator[Event]:
        invocations: list[contracts_pb2.ToolInvocation] | None = None
        last: run_pb2.OrchestrationEvent | None = None
        while True:
            batch = await self._store.list_events(self._run_id, after_sequence=self.last_sequence, limit=REPLAY_BATCH)
            for event in batch:
                if event.sequence <= self.last_sequence:
                    continue
                if event.node == run_pb2.NODE_NAME_EXECUTOR:
                    if invocations is None:
                        invocations = await self._store.list_tool_invocations(self._run_id)
                    for tool_call in _tool_calls_of(invocations, event.cycle, event.sequence):
                        if self._first_time(tool_call):
                            yield tool_call
                self._advance(event)
                last = event
                yield event
            if len(batch) < REPLAY_BATCH:
                break
        if last is not None and last.node == run_pb2.NODE_NAME_PLANNER and self._live:
            # The Executor may be running: the calls it has recorded so far, under its coming sequence (the
            # later ones come live; the subscription was taken before this read).
            recorded = await self._store.list_tool_invocations(self._run_id)
            for tool_call in _tool_calls_of(recorded, last.cycle, last.sequence + 1):
                if self._first_time(tool_call):
                    yield tool_call

    def _advance(self, event: run_pb2.OrchestrationEvent) -> None:
        self.last_sequence = event.sequence
        self.yielded += 1


def _tool_calls_of(
    invocations: list[contracts_pb2.ToolInvocation], cycle: int, sequence: int
) -> list[run_pb2.ToolCallEvent]:
    """The progress events of the calls an Executor attempt made (its cycle's, in recording order), under the
    attempt's ``sequence``."""
    out: list[run_pb2.ToolCallEvent] = []
    for invocation in invocations:
        if invocation.cycle != cycle:
            continue
        for phase in (run_pb2.TOOL_CALL_PHASE_STARTED, run_pb2.TOOL_CALL_PHASE_ENDED):
            tool_call = progress_event(invocation, phase)
            tool_call.sequence = sequence
            out.append(tool_call)
    return out
