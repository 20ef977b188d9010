"""``RunStore`` in one process's memory: for tests and the bench, never for a server (nothing survives it).

It keeps the SQL store's contract (the store contract tests in ``tests/store`` run against both): copies
in, copies out, a run's record final once SUCCESS or FAILED, the same validation and errors, pages and
tokens. Every operation completes without yielding to the event loop, so each is whole by construction.
``instance`` gives another server instance on the same data (its own owner and start), as a second
``open_repository`` on one database would.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from google.protobuf.message import Message

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.store.base import DEFAULT_STALE_AFTER_S, INTERRUPTED, LiveRuns, NodeCommit, Watch
from diagnosis_server.store.errors import DuplicateRecord, RunAlreadyFinished, RunNotFound
from diagnosis_server.store.liveness import OrphanJudge, Running
from diagnosis_server.store.pagination import Listing, RunPage
from diagnosis_server.store.records import (
    TERMINAL_STATUSES,
    check_commit,
    events_limit,
    final_commit,
    from_timestamp,
    require_id,
    stamp_interrupted,
    stamp_new_run,
    stamp_run_update,
    status_name,
    utc_now,
)

_M = TypeVar("_M", bound=Message)


def _copy(message: _M) -> _M:
    out = type(message)()
    out.CopyFrom(message)
    return out


def _same(message: _M) -> _M:
    return message


@dataclass(slots=True)
class _Run:
    record: run_pb2.DiagnosisRun
    owner: str
    heartbeat_at: datetime
    events: dict[int, run_pb2.OrchestrationEvent] = field(default_factory=dict)
    steps: list[run_pb2.NodeStep] = field(default_factory=list)
    invocations: dict[str, contracts_pb2.ToolInvocation] = field(default_factory=dict)

    @property
    def created_at(self) -> datetime:
        return from_timestamp(self.record.created_at)

    @property
    def running(self) -> bool:
        return self.record.status == run_pb2.RUN_STATUS_RUNNING


class MemoryStore:
    """The store in a dict, for ``owner`` (one server instance).

    ``copies=False`` keeps and hands out the records as given, uncopied (the bench's floor: a run that stores
    next to nothing); its callers must not change a record once written or read.
    """

    def __init__(self, *, owner: str = "memory", copies: bool = True, runs: dict[str, _Run] | None = None) -> None:
        if not owner or len(owner) > 64:
            raise ValueError("owner must be 1 to 64 characters")
        self.owner = owner
        self._judge = OrphanJudge(owner)
        self._copies = copies
        self._copy = _copy if copies else _same
        self._runs: dict[str, _Run] = {} if runs is None else runs

    def instance(self, owner: str) -> MemoryStore:
        """Another instance on the same data (a new life of this one when ``owner`` is the same)."""
        return MemoryStore(owner=owner, copies=self._copies, runs=self._runs)

    @property
    def location(self) -> str:
        return "memory"

    async def close(self) -> None:
        return None

    def watch_run(self, run_id: str) -> Watch | None:
        return None

    def _writable(self, run_id: str) -> _Run:
        held = self._runs.get(run_id)
        if held is None:
            raise RunNotFound(f"no run {run_id!r}")
        if held.record.status in TERMINAL_STATUSES:
            raise RunAlreadyFinished(f"run {run_id!r} is {status_name(held.record.status)}; its record is final")
        return held

    # ------------------------------------------------------------------ runs

    async def create_run(self, run: run_pb2.DiagnosisRun) -> None:
        now = utc_now()
        stored = stamp_new_run(run, now)
        if run.run_id in self._runs:
            raise DuplicateRecord(f"run {run.run_id!r} exists")
        self._runs[run.run_id] = _Run(stored, self.owner, now)
        self._judge.took(run.run_id)

    async def get_run(self, run_id: str, *, tenant: str | None = None) -> run_pb2.DiagnosisRun | None:
        held = self._runs.get(run_id)
        if held is None or (tenant is not None and held.record.tenant != tenant):
            return None
        return self._copy(held.record)

    async def list_runs(
        self,
        *,
        tenant: str | None,
        page_size: int,
        page_token: str = "",
        status: int = 0,
        verdict: int = 0,
        trigger: int = 0,
    ) -> RunPage:
        listing = Listing.of(
            tenant=tenant, page_size=page_size, page_token=page_token, status=status, verdict=verdict, trigger=trigger
        )
        rows = sorted(
            (
                (held.created_at, held.record.run_id, held)
                for held in self._select(tenant, status, verdict)
                if not trigger or held.record.trigger.kind == trigger
            ),
            key=lambda row: row[:2],
            reverse=True,
        )
        if listing.after is not None:
            rows = [row for row in rows if row[:2] < listing.after]
        return listing.page(
            [(self._copy(held.record), created, run_id) for created, run_id, held in rows[: listing.page_size + 1]]
        )

    def _select(self, tenant: str | None, status: int, verdict: int) -> Iterator[_Run]:
        for held in self._runs.values():
            record = held.record
            if tenant is not None and record.tenant != tenant:
                continue
            if (status and record.status != status) or (verdict and record.verdict != verdict):
                continue
            yield held

    async def find_alert_run(self, *, tenant: str, dedupe_key: str, since: datetime) -> run_pb2.DiagnosisRun | None:
        found = [
            held
            for held in self._runs.values()
            if held.record.tenant == tenant
            and held.record.trigger.alert.dedupe_key == dedupe_key
            and held.created_at >= since
        ]
        if not found:
            return None
        return self._copy(max(found, key=lambda held: (held.created_at, held.record.run_id)).record)

    async def record_notifications(self, run_id: str, notifications: Sequence[run_pb2.RunNotification]) -> None:
        held = self._runs.get(run_id)
        if held is None:
            raise RunNotFound(f"no run {run_id!r}")
        held.record.notifications.extend(notifications)

    async def count_runs(self, *, tenant: str | None = None, status: int = 0) -> int:
        return sum(1 for _ in self._select(tenant, status, 0))

    async def finish_run(self, run: run_pb2.DiagnosisRun) -> run_pb2.DiagnosisRun:
        stored = self._commit(final_commit(run))
        assert stored is not None
        return stored

    # ------------------------------------------------------------------ nodes

    async def commit_node(self, commit: NodeCommit) -> run_pb2.DiagnosisRun | None:
        return self._commit(commit)

    def _commit(self, commit: NodeCommit) -> run_pb2.DiagnosisRun | None:
        check_commit(commit)
        held = self._writable(commit.run_id)
        sequences = [event.sequence for event in commit.events]
        if len(set(sequences)) < len(sequences) or any(sequence in held.events for sequence in sequences):
            raise DuplicateRecord(f"run {commit.run_id!r} already has an event sequence given")
        stored: run_pb2.DiagnosisRun | None = None
        if commit.run is not None:
            now = utc_now()
            record = held.record
            stored = stamp_run_update(
                commit.run, tenant=record.tenant, created_at=from_timestamp(record.created_at), now=now
            )
            held.record, held.owner, held.heartbeat_at = stored, self.owner, now
            if stored.status == run_pb2.RUN_STATUS_RUNNING:
                self._judge.took(commit.run_id)
            else:
                self._judge.released([commit.run_id])
            stored = self._copy(stored)
        held.steps.extend(self._copy(step) for step in commit.steps)
        held.events.update((event.sequence, self._copy(event)) for event in commit.events)
        return stored

    async def list_events(
        self, run_id: str, *, after_sequence: int = 0, limit: int = 1000
    ) -> list[run_pb2.OrchestrationEvent]:
        limit = events_limit(limit)
        held = self._runs.get(run_id)
        if held is None:
            return []
        after = sorted(sequence for sequence in held.events if sequence > after_sequence)[:limit]
        return [self._copy(held.events[sequence]) for sequence in after]

    async def list_node_steps(self, run_id: str) -> list[run_pb2.NodeStep]:
        held = self._runs.get(run_id)
        return [] if held is None else [self._copy(step) for step in held.steps]

    # ------------------------------------------------------------------ tool invocations

    async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        require_id(invocation.run_id, "tool invocation run_id")
        require_id(invocation.invocation_id, "invocation_id")
        held = self._writable(invocation.run_id)
        if invocation.invocation_id in held.invocations:
            raise DuplicateRecord(f"run {invocation.run_id!r} already has invocation {invocation.invocation_id!r}")
        held.invocations[invocation.invocation_id] = self._copy(invocation)

    async def list_tool_invocations(self, run_id: str) -> list[contracts_pb2.ToolInvocation]:
        held = self._runs.get(run_id)
        return [] if held is None else [self._copy(invocation) for invocation in held.invocations.values()]

    # ------------------------------------------------------------------ liveness

    async def heartbeat(self, run_ids: Collection[str]) -> None:
        now = utc_now()
        for run_id in run_ids:
            held = self._runs.get(run_id)
            if held is not None and held.owner == self.owner and held.running:
                held.heartbeat_at = now

    async def interrupt_orphans(
        self, *, stale_after_s: float = DEFAULT_STALE_AFTER_S, live: LiveRuns | None = None
    ) -> list[str]:
        """The SQL store's sweep (``Repository.interrupt_orphans``) over the dict."""
        if stale_after_s < 0:
            raise ValueError("stale_after_s must not be negative")
        running = [
            Running(held.record.run_id, held.owner, held.heartbeat_at) for held in self._runs.values() if held.running
        ]
        found = {run.run_id for run in self._judge.orphans(running, stale_after_s=stale_after_s, live=live)}
        interrupted = self._interrupt(lambda held: held.record.run_id in found, INTERRUPTED, utc_now())
        self._judge.released(interrupted)
        return interrupted

    async def interrupt_owned(self, *, reason: str = INTERRUPTED) -> list[str]:
        interrupted = self._interrupt(lambda held: held.owner == self.owner, reason, utc_now())
        self._judge.released(interrupted)
        return interrupted

    def _interrupt(self, which: Callable[[_Run], bool], reason: str, now: datetime) -> list[str]:
        chosen = sorted(
            (held for held in self._runs.values() if held.running and which(held)),
            key=lambda held: (held.created_at, held.record.run_id),
        )
        for held in chosen:
            held.record = stamp_interrupted(held.record, reason, now)
            held.heartbeat_at = now
        return [held.record.run_id for held in chosen]

    async def probe(self) -> None:
        return None
