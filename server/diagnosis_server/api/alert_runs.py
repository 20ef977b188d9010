"""One run per alert group with firing alerts, once: deduplication, the run's scope, its notification."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import structlog

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import run_pb2
from diagnosis_server.alerts.notify import Notifier
from diagnosis_server.alerts.scope import AlertScope, scope_of
from diagnosis_server.api.runs import RunManager, StartedRun
from diagnosis_server.api.validation import check_question, check_target
from diagnosis_server.sources.registry import EnvironmentRegistry
from diagnosis_server.store import RunStore, StoreError
from diagnosis_server.store.records import utc_now
from diagnosis_server.time_window import from_trigger

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class AlertOutcome:
    """A group's run: started now (``started``), or the existing one (``deduplicated``, ``existing``)."""

    run_id: str
    group_key: str
    deduplicated: bool
    started: StartedRun | None = None
    existing: run_pb2.DiagnosisRun | None = None


@dataclass(slots=True)
class AlertSettings:
    scenarios: frozenset[str]
    default_scenario: str
    lookback_s: float = 1800.0
    dedupe_s: float = 3600.0
    max_question_chars: int = 4000


@dataclass(slots=True)
class AlertInvestigator:
    runs: RunManager
    repository: RunStore
    environments: EnvironmentRegistry
    settings: AlertSettings
    notifier: Notifier | None = None
    # Told of each group's outcome (deduplicated or not) and each notification sent: the service's metrics.
    on_group: Callable[[bool], None] | None = None
    on_notification: Callable[[run_pb2.RunNotification], None] | None = None
    _locks: dict[tuple[str, str], asyncio.Lock] = field(default_factory=dict)
    _notifying: set[asyncio.Task[None]] = field(default_factory=set)

    def scope(self, group_key: str, firing: Sequence[pb.Alert]) -> AlertScope:
        return scope_of(group_key, firing, lookback_s=self.settings.lookback_s)

    def target(self, scope: AlertScope, *, scenario: str = "", environment: str = "") -> tuple[str, str]:
        """(scenario, environment): the one asked for, else the environment the labels map to, else defaults."""
        if not scenario and not environment:
            environment = self.environments.for_alert_labels(scope.trigger.alert.labels) or ""
        return check_target(
            scenario,
            environment,
            scenarios=set(self.settings.scenarios),
            default_scenario=self.settings.default_scenario,
            environments=self.environments.names,
            default_environment=self.environments.default,
        )

    async def investigate(
        self,
        group_key: str,
        alerts: Sequence[pb.Alert],
        *,
        tenant: str,
        scenario: str = "",
        environment: str = "",
        window: run_pb2.TimeWindow | None = None,
    ) -> AlertOutcome | None:
        """The group's run (None when no alert fires: a resolved notification starts nothing).

        Raises ApiError for a bad target or question; the run's own failures are the run's.
        """
        firing = [alert for alert in alerts if alert.status == "firing"]
        if not firing:
            return None
        scope = self.scope(group_key, firing)
        if window is not None:
            scope.trigger.window_start.CopyFrom(window.start)
            scope.trigger.window_end.CopyFrom(window.end)
        target_scenario, target_environment = self.target(scope, scenario=scenario, environment=environment)
        question = check_question(
            scope.question[: self.settings.max_question_chars], max_chars=self.settings.max_question_chars
        )
        key = (tenant, scope.dedupe_key)
        lock = self._locks.setdefault(key, asyncio.Lock())
        try:
            async with lock:
                existing = await self._existing(tenant, scope.dedupe_key)
                if existing is not None:
                    log.info("alert_deduplicated", run_id=existing.run_id, group_key=group_key)
                    if self.on_group is not None:
                        self.on_group(True)
                    return AlertOutcome(existing.run_id, group_key, True, existing=existing)
                started = self.runs.start(
                    question=question,
                    scenario=target_scenario,
                    environment=target_environment,
                    tenant=tenant,
                    trigger=scope.trigger,
                    time_window=from_trigger(scope.trigger),
                )
                # Held until the run is in the store: a repeat that comes meanwhile finds it.
                await started.wait_started()
        finally:
            if not lock.locked() and self._locks.get(key) is lock:
                del self._locks[key]
        log.info("alert_run_started", run_id=started.run_id, group_key=group_key, alerts=len(firing))
        if self.on_group is not None:
            self.on_group(False)
        if self.notifier is not None and self.notifier.enabled:
            task = asyncio.create_task(self._notify_when_done(started.run_id), name=f"notify {started.run_id}")
            self._notifying.add(task)
            task.add_done_callback(self._notifying.discard)
        return AlertOutcome(started.run_id, group_key, False, started=started)

    async def _existing(self, tenant: str, dedupe_key: str) -> run_pb2.DiagnosisRun | None:
        if self.settings.dedupe_s <= 0:
            return None
        since = utc_now() - timedelta(seconds=self.settings.dedupe_s)
        return await self.repository.find_alert_run(tenant=tenant, dedupe_key=dedupe_key, since=since)

    async def _notify_when_done(self, run_id: str) -> None:
        assert self.notifier is not None
        await self.runs.wait(run_id)
        try:
            run = await self.repository.get_run(run_id)
            if run is None:
                return
            outcomes = await self.notifier.notify(run)
            if self.on_notification is not None:
                for outcome in outcomes:
                    self.on_notification(outcome)
            await self.repository.record_notifications(run_id, outcomes)
        except StoreError as exc:
            log.error("notification_not_recorded", run_id=run_id, error=str(exc)[:300])
        except Exception:
            log.exception("notification_crashed", run_id=run_id)

    async def drain(self, timeout_s: float) -> None:
        """Gives the notifications in flight ``timeout_s`` to end, then cancels them."""
        pending = set(self._notifying)
        if pending:
            _, left = await asyncio.wait(pending, timeout=timeout_s)
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)
        if self.notifier is not None:
            await self.notifier.aclose()
