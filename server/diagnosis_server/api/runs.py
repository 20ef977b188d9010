"""The runs this process is running: each in a task of its own, never the task of the RPC that asked.

A caller that cancels, disconnects or misses its deadline ends only its own stream; the run goes on
and is stored. ``RunManager`` caps concurrent runs, keeps the store's heartbeat of its runs fresh,
interrupts orphans, and on shutdown waits a grace period before marking what is left INTERRUPTED.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from diagnosis.v1 import run_pb2
from diagnosis_server.api.errors import resource_exhausted, store_unavailable, unavailable
from diagnosis_server.api.hub import EventHub, Subscription
from diagnosis_server.api.metrics import Metrics
from diagnosis_server.api.periodic import Periodic
from diagnosis_server.api.store_health import StoreHealth
from diagnosis_server.graph.orchestrator import NewRun, Orchestrator, new_run_id
from diagnosis_server.store import DEFAULT_STALE_AFTER_S, INTERRUPTED, LiveRuns, RunStore, StoreError
from diagnosis_server.time_window import Window

log = structlog.get_logger(__name__)

DEFAULT_HEARTBEAT_INTERVAL_S = 10.0
# What a caller refused at the run cap is told to wait (google.rpc.RetryInfo): about a short run's length.
TOO_MANY_RUNS_RETRY_AFTER_S = 1.0
MAX_REMEMBERED_ABANDONED = 10_000


class RunStartError(RuntimeError):
    """The run could not be created (nothing was stored for it)."""


@dataclass(slots=True)
class StartedRun:
    run_id: str
    # Taken before the run's task exists: no event of the run can be missed.
    subscription: Subscription
    _started: asyncio.Future[run_pb2.DiagnosisRun]

    async def wait_started(self) -> run_pb2.DiagnosisRun:
        """The run as first stored (RUNNING); RunStartError if it could not be created."""
        return await asyncio.shield(self._started)


class RunManager:
    def __init__(
        self,
        orchestrator: Orchestrator,
        repository: RunStore,
        hub: EventHub,
        metrics: Metrics,
        *,
        max_concurrent_runs: int,
        heartbeat_interval_s: float = DEFAULT_HEARTBEAT_INTERVAL_S,
        stale_after_s: float = DEFAULT_STALE_AFTER_S,
        store_health: StoreHealth | None = None,
    ) -> None:
        self._orchestrator = orchestrator
        self._repository = repository
        self._hub = hub
        self._metrics = metrics
        self._max = max_concurrent_runs
        self._stale_after_s = stale_after_s
        self._store_health = store_health
        self._tasks: dict[str, asyncio.Task[run_pb2.DiagnosisRun | None]] = {}
        # The runs whose final record this instance gave up, oldest first (a WatchRun of one is UNAVAILABLE
        # while the store still holds it RUNNING).
        self._abandoned: dict[str, None] = {}
        self._closed = False
        self._maintenance = Periodic(
            self.maintain_once, interval_s=heartbeat_interval_s, name="run maintenance", failed="run_maintenance_failed"
        )
        self._idle = asyncio.Event()
        self._idle.set()
        # Set by a second shutdown signal: the grace ends now.
        self._hurry = asyncio.Event()
        # Called with the stored run after each run ends (tests and embedders may listen).
        self.on_finished: list[Callable[[run_pb2.DiagnosisRun], None]] = []

    def abandoned(self, run_id: str) -> bool:
        """Whether this instance ran ``run_id`` and gave up its final record (the store was down)."""
        return run_id in self._abandoned

    def _remember_abandoned(self, run_id: str) -> None:
        self._abandoned[run_id] = None
        while len(self._abandoned) > MAX_REMEMBERED_ABANDONED:
            del self._abandoned[next(iter(self._abandoned))]

    @property
    def active_run_ids(self) -> list[str]:
        return list(self._tasks)

    @property
    def accepting(self) -> bool:
        return not self._closed

    def refuse_if_full(self) -> None:
        """RESOURCE_EXHAUSTED (with a RetryInfo) while the cap's runs are running: a caller asks this before any
        work of its request, so that the refusal is decided at once, however busy the runs are (issue 34)."""
        if len(self._tasks) >= self._max:
            raise resource_exhausted(
                "TOO_MANY_RUNS",
                f"too many concurrent runs (limit {self._max}); retry later",
                {"limit": str(self._max)},
                retry_after_s=TOO_MANY_RUNS_RETRY_AFTER_S,
            )

    def start(
        self,
        *,
        question: str,
        scenario: str,
        tenant: str,
        environment: str = "",
        trigger: run_pb2.RunTrigger | None = None,
        time_window: Window | None = None,
    ) -> StartedRun:
        """Starts a run in the background (RESOURCE_EXHAUSTED at the cap, UNAVAILABLE when shutting down)."""
        if self._closed:
            raise unavailable("SHUTTING_DOWN", "the server is shutting down; retry on another instance")
        if self._store_health is not None and not self._store_health.writable:
            raise store_unavailable(self._store_health.problem)
        self.refuse_if_full()
        run_id = new_run_id()
        self._hub.open(run_id)
        subscription = self._hub.subscribe(run_id)
        started: asyncio.Future[run_pb2.DiagnosisRun] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(
            self._execute(
                run_id,
                question=question,
                scenario=scenario,
                tenant=tenant,
                environment=environment,
                started=started,
                trigger=trigger,
                time_window=time_window,
            ),
            name=f"run {run_id}",
        )
        self._tasks[run_id] = task
        self._metrics.runs_in_progress.set(len(self._tasks))
        self._idle.clear()
        return StartedRun(run_id, subscription, started)

    async def wait(self, run_id: str) -> None:
        """Until ``run_id`` (if this process runs it) has ended; cancelling the waiter never cancels the run."""
        task = self._tasks.get(run_id)
        if task is not None:
            await asyncio.wait({task})

    async def wait_idle(self) -> None:
        await self._idle.wait()

    async def _execute(
        self,
        run_id: str,
        *,
        question: str,
        scenario: str,
        tenant: str,
        started: asyncio.Future[run_pb2.DiagnosisRun],
        environment: str = "",
        trigger: run_pb2.RunTrigger | None = None,
        time_window: Window | None = None,
    ) -> run_pb2.DiagnosisRun | None:
        # This task's own context (a copy of the RPC's): every log line of the run names it and its tenant.
        structlog.contextvars.bind_contextvars(run_id=run_id, tenant=tenant)

        async def on_started(run: run_pb2.DiagnosisRun) -> None:
            if not started.done():
                started.set_result(run)

        async def on_event(event: run_pb2.OrchestrationEvent) -> None:
            self._metrics.observe_event(event)
            self._hub.publish(event)
            # A turn of the loop for the run's watchers: each takes the event (its stream sends it) before the
            # next node computes. A run whose nodes never wait would otherwise hold the loop from event to event,
            # and 1,000 watchers would get its events in a burst behind its CPU (p99 about twice the no-op's).
            await asyncio.sleep(0)

        async def on_tool_call(event: run_pb2.ToolCallEvent) -> None:
            self._hub.publish(event)

        cancelled = False
        stored: run_pb2.DiagnosisRun | None = None
        try:
            request: NewRun = {
                "question": question,
                "scenario": scenario,
                "environment": environment,
                "tenant": tenant,
                "run_id": run_id,
            }
            if trigger is not None:
                request["trigger"] = trigger
            if time_window is not None:
                request["time_window"] = time_window
            run = stored = await self._orchestrator.run(
                on_event=on_event, on_tool_call=on_tool_call, on_started=on_started, **request
            )
        except asyncio.CancelledError:
            # Shutdown past its grace: drain() marks the run INTERRUPTED and ends its streams.
            cancelled = True
            if not started.done():
                started.set_exception(RunStartError("the server shut down before the run started"))
            raise
        except StoreError as exc:
            # Not created (the caller gets UNAVAILABLE), or its final record could not be written: the run
            # is RUNNING in the store with no task; this instance's sweep marks it INTERRUPTED.
            log.error("run_store_failed", run_id=run_id, error=str(exc)[:300], created=started.done())
            if not started.done():
                started.set_exception(exc)
            else:
                self._remember_abandoned(run_id)
            return None
        except Exception as exc:
            log.exception("run_crashed", run_id=run_id, error=type(exc).__name__)
            if not started.done():
                started.set_exception(RunStartError(f"run {run_id} could not be created"))
            return None
        finally:
            self._tasks.pop(run_id, None)
            self._metrics.runs_in_progress.set(len(self._tasks))
            if not self._tasks:
                self._idle.set()
            if not cancelled:
                # The record the store holds now: every follower ends with it, none reads it back.
                self._hub.close(run_id, final=stored)
        self._metrics.observe_run(run)
        for listener in self.on_finished:
            listener(run)
        return run

    # ------------------------------------------------------------------ liveness

    def start_maintenance(self) -> None:
        self._maintenance.start()

    async def maintain_once(self) -> list[str]:
        """Heartbeats the runs whose task is alive, then sweeps orphans (this instance's dead runs too)."""
        snapshot_at = time.monotonic()
        alive = list(self._tasks)
        if alive:
            await self._repository.heartbeat(alive)
        orphans = await self._repository.interrupt_orphans(
            stale_after_s=self._stale_after_s, live=LiveRuns(frozenset(alive), snapshot_at)
        )
        if orphans:
            log.warning("orphan_runs_interrupted", run_ids=orphans)
            self._metrics.observe_interrupted(len(orphans), INTERRUPTED)
        return orphans

    async def stop_maintenance(self) -> None:
        await self._maintenance.stop()

    # ------------------------------------------------------------------ shutdown

    def close(self) -> None:
        """Refuse new runs from now on."""
        self._closed = True

    def hurry(self) -> None:
        """Ends a drain's grace at once (the runs left are cancelled and marked INTERRUPTED)."""
        self._hurry.set()

    @property
    def hurried(self) -> bool:
        return self._hurry.is_set()

    async def drain(self, grace_s: float) -> list[str]:
        """Waits up to ``grace_s`` for running runs; cancels the rest and marks them FAILED (INTERRUPTED)."""
        self._closed = True
        tasks = dict(self._tasks)
        pending: set[asyncio.Task[run_pb2.DiagnosisRun | None]] = set()
        if tasks:
            # Every run done, the grace over, or a second signal: whichever comes first.
            hurry = asyncio.ensure_future(self._hurry.wait())
            done = asyncio.ensure_future(asyncio.wait(set(tasks.values())))
            try:
                await asyncio.wait({done, hurry}, timeout=max(grace_s, 0.0), return_when=asyncio.FIRST_COMPLETED)
            finally:
                hurry.cancel()
                done.cancel()
            pending = {task for task in tasks.values() if not task.done()}
        left = [run_id for run_id, task in tasks.items() if task in pending]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        interrupted = await self._repository.interrupt_owned(reason=INTERRUPTED)
        if interrupted:
            log.warning("runs_interrupted", run_ids=interrupted)
        for run_id in left:
            self._tasks.pop(run_id, None)
            self._hub.close(run_id)
        self._metrics.runs_in_progress.set(len(self._tasks))
        if not self._tasks:
            self._idle.set()
        if interrupted:
            self._metrics.observe_interrupted(len(interrupted), INTERRUPTED)
        return interrupted
