"""diagnosis.v1.DiagnosisService: start runs, read them, follow them live.

Every method runs behind the interceptor: the caller's tenant is ``current_call().tenant``, and a run
of another tenant is NOT_FOUND, exactly like a run that does not exist.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import grpc.aio
from google.protobuf import timestamp_pb2

from diagnosis.v1 import diagnosis_service_pb2 as pb
from diagnosis.v1 import diagnosis_service_pb2_grpc, run_pb2
from diagnosis_server.alerts.scope import group_key_of
from diagnosis_server.api.alert_runs import AlertInvestigator
from diagnosis_server.api.alert_validation import check_alerts, check_group_key, check_trigger_filter
from diagnosis_server.api.calls import current_call
from diagnosis_server.api.errors import invalid_argument, run_not_found, unavailable
from diagnosis_server.api.follow import (
    DEFAULT_POLL_INTERVAL_S,
    TERMINAL_STATUSES,
    RunFollower,
    final_record_missing,
)
from diagnosis_server.api.hub import EventHub, watch_response
from diagnosis_server.api.invocation_pages import BadPageToken, decode_token, encode_token, page
from diagnosis_server.api.runs import RunManager, StartedRun
from diagnosis_server.api.validation import (
    check_after_sequence,
    check_question,
    check_run_id,
    check_status_filter,
    check_target,
    check_time_window,
    check_verdict_filter,
    page_size,
)
from diagnosis_server.sources.registry import EnvironmentRegistry
from diagnosis_server.store import InvalidPageToken, RunStore
from diagnosis_server.text.redaction import redact_text
from diagnosis_server.tools.scenario import Scenario

Context = grpc.aio.ServicerContext[Any, Any]


class DiagnosisServicer(diagnosis_service_pb2_grpc.DiagnosisServiceServicer):
    def __init__(
        self,
        *,
        repository: RunStore,
        runs: RunManager,
        hub: EventHub,
        scenarios: Mapping[str, Scenario],
        default_scenario: str,
        max_question_chars: int,
        poll_interval_s: float = DEFAULT_POLL_INTERVAL_S,
        environments: EnvironmentRegistry | None = None,
        alerts: AlertInvestigator | None = None,
    ) -> None:
        self._alerts = alerts
        # The run viewer's base URL (set once the HTTP server has its port; empty: no viewer).
        self.viewer_base = ""
        self._environments = environments or EnvironmentRegistry.empty()
        self._repository = repository
        self._runs = runs
        self._hub = hub
        self._scenarios = dict(scenarios)
        self._default_scenario = default_scenario
        self._max_question_chars = max_question_chars
        self._poll_interval_s = poll_interval_s

    async def Diagnose(self, request: pb.DiagnoseRequest, context: Context) -> AsyncIterator[pb.DiagnoseResponse]:
        call = current_call()
        # At the cap, refused before anything else is done (start() asks again: nothing awaits in between).
        self._runs.refuse_if_full()
        # Every check comes before the run exists: bad input never leaves a run behind.
        # A secret pasted into the question (a connection URL with its password) is never stored or echoed.
        question = redact_text(check_question(request.question, max_chars=self._max_question_chars))
        scenario, environment = check_target(
            request.context.scenario,
            request.context.environment,
            scenarios=set(self._scenarios),
            default_scenario=self._default_scenario,
            environments=self._environments.names,
            default_environment=self._environments.default,
        )
        window = check_time_window(request.context.time_window)
        trigger = run_pb2.RunTrigger(kind=run_pb2.TRIGGER_KIND_QUESTION, question=question)
        if window is not None:
            given = window.to_proto()
            trigger.window_start.CopyFrom(given.start)
            trigger.window_end.CopyFrom(given.end)
        started = self._runs.start(
            question=question,
            scenario=scenario,
            environment=environment,
            tenant=call.tenant,
            trigger=trigger,
            time_window=window,
        )
        async for run_id, kind, value in self._follow(started):
            yield pb.DiagnoseResponse(run_id=run_id, **{kind: value})

    async def InvestigateAlert(
        self, request: pb.InvestigateAlertRequest, context: Context
    ) -> AsyncIterator[pb.InvestigateAlertResponse]:
        call = current_call()
        if self._alerts is None:
            raise unavailable("ALERTS_OFF", "this server investigates no alerts")
        firing = check_alerts(request.alerts)
        group_key = check_group_key(request.group_key) or group_key_of(firing)
        window = check_time_window(request.context.time_window)
        outcome = await self._alerts.investigate(
            group_key,
            list(request.alerts),
            tenant=call.tenant,
            scenario=request.context.scenario,
            environment=request.context.environment,
            window=window.to_proto() if window is not None else None,
        )
        assert outcome is not None  # check_alerts found a firing alert
        run_id = call.bind_run(outcome.run_id)
        if outcome.started is None:
            assert outcome.existing is not None
            yield pb.InvestigateAlertResponse(run_id=run_id, run=outcome.existing, deduplicated=True)
            return
        async for run_id, kind, value in self._follow(outcome.started):
            yield pb.InvestigateAlertResponse(run_id=run_id, **{kind: value})

    async def _follow(self, started: StartedRun) -> AsyncIterator[tuple[str, str, Any]]:
        """A started run's stream: ``started``, each ``event``, then the final ``run`` (as (run_id, kind, value))."""
        call = current_call()
        run_id = call.bind_run(started.run_id)
        try:
            stored = await started.wait_started()
            created_at = timestamp_pb2.Timestamp()
            created_at.CopyFrom(stored.created_at)
            created_at.nanos -= created_at.nanos % 1000  # the store keeps microseconds
            viewer_url = f"{self.viewer_base}/runs/{run_id}" if self.viewer_base else ""
            yield run_id, "started", pb.RunStarted(run_id=run_id, created_at=created_at, viewer_url=viewer_url)
            follower = RunFollower(self._repository, started.subscription, poll_interval_s=self._poll_interval_s)
            async for event in follower.events():
                if isinstance(event, run_pb2.ToolCallEvent):
                    yield run_id, "tool_call", event
                else:
                    yield run_id, "event", event
            final = follower.final
            if final is None:
                raise RuntimeError(f"run {run_id} vanished from the store")
            if final.status not in TERMINAL_STATUSES:  # the follower ends on a final record only
                raise RuntimeError(f"run {run_id} ended its stream while {final.status}")
            yield run_id, "run", final
        finally:
            started.subscription.close()

    async def GetRun(self, request: pb.GetRunRequest, context: Context) -> pb.GetRunResponse:
        call = current_call()
        run_id = call.bind_run(check_run_id(request.run_id))
        run = await self._repository.get_run(run_id, tenant=call.tenant)
        if run is None:
            raise run_not_found(run_id)
        return pb.GetRunResponse(run=run)

    async def ListRuns(self, request: pb.ListRunsRequest, context: Context) -> pb.ListRunsResponse:
        call = current_call()
        size = page_size(request.page_size)
        status = check_status_filter(request.status)
        verdict = check_verdict_filter(request.verdict)
        trigger = check_trigger_filter(request.trigger)
        try:
            page = await self._repository.list_runs(
                tenant=call.tenant,
                page_size=size,
                page_token=request.page_token,
                status=status,
                verdict=verdict,
                trigger=trigger,
            )
        except InvalidPageToken as exc:
            raise invalid_argument("page_token", str(exc)) from None
        return pb.ListRunsResponse(runs=page.runs, next_page_token=page.next_page_token)

    async def WatchRun(self, request: pb.WatchRunRequest, context: Context) -> AsyncIterator[pb.WatchRunResponse]:
        call = current_call()
        run_id = call.bind_run(check_run_id(request.run_id))
        after = check_after_sequence(request.after_sequence)
        # Subscribe before the first read of the store: nothing can fall between replay and live.
        subscription = self._hub.subscribe(run_id)
        try:
            stored_run = await self._repository.get_run(run_id, tenant=call.tenant)
            if stored_run is None:
                raise run_not_found(run_id)
            if stored_run.status not in TERMINAL_STATUSES and self._runs.abandoned(run_id):
                raise final_record_missing(run_id)
            follower = RunFollower(
                self._repository, subscription, after_sequence=after, poll_interval_s=self._poll_interval_s
            )
            # A live event goes out as the bytes serialized once for all its watchers (``Live.watch_bytes``;
            # the method's serializer passes bytes through, see ``api.server``).
            async for event, live in follower.events_live():
                yield live.watch_bytes() if live is not None else watch_response(event)  # type: ignore[misc]
            final = follower.final
            if final is None:
                raise RuntimeError(f"run {run_id} vanished from the store")
            last_sequence = follower.last_sequence
            if follower.yielded == 0:
                if follower.end_sequence is not None:
                    last_sequence = follower.end_sequence
                else:
                    stored = await self._repository.list_events(run_id)
                    last_sequence = stored[-1].sequence if stored else 0
            yield pb.WatchRunResponse(ended=_ended(final, last_sequence))
        finally:
            subscription.close()

    async def ListScenarios(self, request: pb.ListScenariosRequest, context: Context) -> pb.ListScenariosResponse:
        return pb.ListScenariosResponse(
            scenarios=[
                pb.Scenario(
                    name=name,
                    title=scenario.title,
                    services=list(scenario.service_names),
                    is_default=name == self._default_scenario,
                )
                for name, scenario in sorted(self._scenarios.items())
            ]
        )

    async def ListEnvironments(
        self, request: pb.ListEnvironmentsRequest, context: Context
    ) -> pb.ListEnvironmentsResponse:
        environments = []
        for name in self._environments.names:
            env = self._environments.get(name)
            sources = [pb.EnvironmentSource(kind=s.kind, name=s.name, endpoint=s.endpoint) for s in env.sources]
            environments.append(
                pb.Environment(
                    name=name, is_default=env.is_default, tool_names=list(env.toolset.names), sources=sources
                )
            )
        return pb.ListEnvironmentsResponse(environments=environments)

    async def ListToolInvocations(
        self, request: pb.ListToolInvocationsRequest, context: Context
    ) -> pb.ListToolInvocationsResponse:
        call = current_call()
        run_id = call.bind_run(check_run_id(request.run_id))
        size = page_size(request.page_size)
        offset = 0
        if request.page_token:
            try:
                offset = decode_token(request.page_token, run_id=run_id, tenant=call.tenant)
            except BadPageToken as exc:
                raise invalid_argument("page_token", str(exc)) from None
        # Tenant-scoped like GetRun: another tenant's run is NOT_FOUND, like one that does not exist.
        if await self._repository.get_run(run_id, tenant=call.tenant) is None:
            raise run_not_found(run_id)
        invocations = await self._repository.list_tool_invocations(run_id)
        kept, next_offset = page(invocations, offset=offset, page_size=size)
        token = encode_token(run_id, call.tenant, next_offset) if next_offset is not None else ""
        return pb.ListToolInvocationsResponse(invocations=kept, next_page_token=token)


def _ended(run: run_pb2.DiagnosisRun, last_sequence: int) -> pb.RunEnded:
    reason = run.failure_reason or run.orchestration_trace.end_reason
    return pb.RunEnded(status=run.status, verdict=run.verdict, reason=reason, last_sequence=last_sequence)
