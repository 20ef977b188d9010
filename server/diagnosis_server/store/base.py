"""What a store is: the ``RunStore`` protocol every backend implements, and the ``NodeCommit`` it takes.

Two backends implement it: ``Repository`` (SQLite or PostgreSQL, ``repository.py``) and ``MemoryStore``
(one process's dicts, ``memory.py``: tests and the bench). The store contract tests in ``tests/store`` run
against each. The server, the orchestrator, the nodes, the CLI's evaluation and the bench are typed
against the protocol, never against a backend.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.store.pagination import RunPage

INTERRUPTED = "INTERRUPTED"
# A RUNNING run of another instance whose heartbeat is older than this is an orphan (a setting of the server).
DEFAULT_STALE_AFTER_S = 30.0
MAX_EVENTS_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class NodeCommit:
    """One node's outcome, written whole or not at all (R-S-3): its event (none once the bounded append is
    full), its step (agent nodes), and the run's record when the commit replaces it (``run``: returned as
    stored, its owner and heartbeat taken over by the writing instance)."""

    run_id: str
    events: Sequence[run_pb2.OrchestrationEvent] = ()
    steps: Sequence[run_pb2.NodeStep] = ()
    run: run_pb2.DiagnosisRun | None = None


@dataclass(frozen=True, slots=True)
class LiveRuns:
    """The runs whose task is alive in this instance, as seen at ``at`` (``time.monotonic()``): the orphan
    sweep spares them, and the runs of this instance created since."""

    run_ids: frozenset[str]
    at: float


class Watch(Protocol):
    """Wake-ups on one run's commits by any instance."""

    async def wait(self, seconds: float) -> bool:
        """True when the run was committed to within ``seconds``, else False."""
        ...

    def close(self) -> None: ...


class RunStore(Protocol):
    """Runs, their nodes' events and steps, and their tool invocations, for one server instance (``owner``).

    Every write is whole or absent; a write once begun ends even when its caller is cancelled. A run SUCCESS
    or FAILED is final: writes to it raise RunAlreadyFinished; a run unknown raises RunNotFound; records
    inconsistent with their run raise InvalidRecord; a key taken raises DuplicateRecord; any other failure
    is a StoreError. Defaults are the backends' (``INTERRUPTED``, ``DEFAULT_STALE_AFTER_S``, no filter, the
    first page, 1,000 events).
    """

    owner: str

    @property
    def location(self) -> str:
        """Where the store is, for messages (never a password)."""
        ...

    async def close(self) -> None: ...

    async def create_run(self, run: run_pb2.DiagnosisRun) -> None:
        """Stores a new run as RUNNING, owned by this instance (created_at kept if set, else now)."""
        ...

    async def get_run(self, run_id: str, *, tenant: str | None = ...) -> run_pb2.DiagnosisRun | None:
        """The run, or None when there is none or it belongs to another tenant (tenant None: any)."""
        ...

    async def list_runs(
        self,
        *,
        tenant: str | None,
        page_size: int,
        page_token: str = ...,
        status: int = ...,
        verdict: int = ...,
        trigger: int = ...,
    ) -> RunPage:
        """Runs newest first (created_at, then run_id, descending), a page at a time (``pagination.py``)."""
        ...

    async def find_alert_run(self, *, tenant: str, dedupe_key: str, since: datetime) -> run_pb2.DiagnosisRun | None:
        """The newest run of ``tenant`` created at or after ``since`` for this alert group's dedupe key."""
        ...

    async def record_notifications(self, run_id: str, notifications: Sequence[run_pb2.RunNotification]) -> None:
        """Appends notification outcomes to a run, final or not (the one change a final record takes)."""
        ...

    async def count_runs(self, *, tenant: str | None = ..., status: int = ...) -> int: ...

    async def commit_node(self, commit: NodeCommit) -> run_pb2.DiagnosisRun | None:
        """Writes one node's outcome in one transaction; returns the run as stored when the commit has one."""
        ...

    async def finish_run(self, run: run_pb2.DiagnosisRun) -> run_pb2.DiagnosisRun:
        """Stores a run's final record (SUCCESS or FAILED); returns it as stored, what GetRun reads from now on."""
        ...

    async def list_events(
        self, run_id: str, *, after_sequence: int = ..., limit: int = ...
    ) -> list[run_pb2.OrchestrationEvent]:
        """The run's events with sequence > after_sequence, in sequence order, at most ``limit``."""
        ...

    async def list_node_steps(self, run_id: str) -> list[run_pb2.NodeStep]: ...

    def watch_run(self, run_id: str) -> Watch | None:
        """Wake-ups on the run's commits by other instances; None where followers poll."""
        ...

    async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        """Records one tool call of a RUNNING run, in its own transaction (R-C-2)."""
        ...

    async def list_tool_invocations(self, run_id: str) -> list[contracts_pb2.ToolInvocation]:
        """This run's invocations (and no other run's) in recording order."""
        ...

    async def heartbeat(self, run_ids: Collection[str]) -> None:
        """Touches the heartbeat of the given RUNNING runs of this instance: the runs whose task is alive."""
        ...

    async def interrupt_orphans(self, *, stale_after_s: float = ..., live: LiveRuns | None = ...) -> list[str]:
        """Marks FAILED (INTERRUPTED) the RUNNING runs nobody runs any more; returns their ids."""
        ...

    async def interrupt_owned(self, *, reason: str = ...) -> list[str]:
        """Marks FAILED (with ``reason``) this instance's RUNNING runs; returns their ids."""
        ...

    async def probe(self) -> None:
        """A cheap real write; StoreError (StoreFileLost for a SQLite file gone) when the store takes none."""
        ...
