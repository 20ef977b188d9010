"""Runs one diagnosis end to end: creates the run, drives the graph, persists every node, stores the result."""

from __future__ import annotations

import asyncio
import functools
import os
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Required, TypedDict, Unpack

import structlog

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import AgentProvider
from diagnosis_server.agents.prompts import PromptCatalog, default_catalog
from diagnosis_server.conversions import JsonObject, enum_short_name, to_struct
from diagnosis_server.graph.context import Limits, RunContext, ToolEnvironment
from diagnosis_server.graph.engine import EventSink, GraphEngine
from diagnosis_server.graph.nodes import Node, default_nodes
from diagnosis_server.graph.nodes.base import MODEL_ENDPOINT_FAILED
from diagnosis_server.graph.result import complete_run
from diagnosis_server.graph.source_report import report_sources
from diagnosis_server.graph.spec import GRAPH
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.offload import off_loop
from diagnosis_server.store import NodeCommit, RunAlreadyFinished, RunStore, StoreError
from diagnosis_server.text.redaction import redact_text
from diagnosis_server.time_window import Window, resolve_window
from diagnosis_server.tools.runner import ProgressSink

log = structlog.get_logger(__name__)

DEFAULT_FINISH_RETRY_S = 60.0
FINISH_RETRY_FIRST_S = 0.1
FINISH_RETRY_MAX_S = 2.0
# How much of the store's message a STORE_ERROR failure reason keeps.
STORE_REASON_CHARS = 300


class NewRun(TypedDict, total=False):
    """What a run is created from: its question and recorded scenario, and optionally the rest."""

    question: Required[str]
    scenario: Required[str]
    tenant: str
    run_id: str | None
    # The rule channels preserved beside the verifier evaluation (R-P-7).
    rule_evaluation: JsonObject | None
    aiops_rule_evaluation: JsonObject | None
    # A configured environment to observe live instead of the scenario.
    environment: str
    # What started the run (default: the question, TRIGGER_KIND_QUESTION), with its time window if any.
    trigger: run_pb2.RunTrigger
    # The window the request gives (else the question's dates and times, else the last hour).
    time_window: Window | None


def new_run_id() -> str:
    """One random id a run (128 bits from the OS); everything inside the run is numbered from it."""
    return f"run-{os.urandom(16).hex()}"


@dataclass(slots=True)
class Orchestrator:
    store: RunStore
    provider: AgentProvider
    # The tools of a recorded scenario, by name.
    tools_for: Callable[[str], ToolEnvironment]
    catalog: PromptCatalog = field(default_factory=default_catalog)
    limits: Limits = GRAPH.limits
    allowed_tools: Sequence[str] | None = None
    nodes: dict[int, Node[Any]] = field(default_factory=default_nodes)
    # The tools of a configured environment, by name (a run is given a scenario or an environment).
    environment_tools: Callable[[str], ToolEnvironment] | None = None
    # How long a run's final write is retried while the store is failing.
    finish_retry_s: float = DEFAULT_FINISH_RETRY_S
    # Sees the step of each attempt whose model endpoint failed (metrics).
    on_endpoint_failure: Callable[[run_pb2.NodeStep], None] | None = None
    # Sees each tool call once it is recorded (metrics).
    on_invocation: Callable[[contracts_pb2.ToolInvocation], None] | None = None
    # Built once with the orchestrator: the graph, and what every run's context shares.
    _engine: GraphEngine = field(init=False, repr=False)
    _context: Callable[..., RunContext] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._engine = GraphEngine(
            self.nodes, recursion_limit=self.limits.recursion_limit, max_events=self.limits.max_events
        )
        self._context = functools.partial(
            RunContext,
            provider=self.provider,
            catalog=self.catalog,
            invocations=self.store,
            limits=self.limits,
            allowed_tools=self.allowed_tools,
            on_invocation=self.on_invocation,
        )

    def tools_of(self, *, scenario: str, environment: str) -> ToolEnvironment:
        """The run's tools: the environment's when one is named, else the scenario's."""
        if environment:
            if self.environment_tools is None:
                raise LookupError(f"no environments are configured (asked for {environment!r})")
            return self.environment_tools(environment)
        return self.tools_for(scenario)

    def new_run(self, **request: Unpack[NewRun]) -> run_pb2.DiagnosisRun:
        """A new RUNNING run; the rule channels given here are preserved beside the verifier evaluation (R-P-7)."""
        run = run_pb2.DiagnosisRun(
            run_id=request.get("run_id") or new_run_id(),
            tenant=request.get("tenant", ""),
            status=run_pb2.RUN_STATUS_RUNNING,
            # Redacted before the run is recorded, logged or shown (a pasted DSN, header or key never is).
            question=redact_text(request["question"]),
            scenario=request["scenario"],
            agent_provider=self.provider.name,
            environment=request.get("environment", ""),
        )
        trigger = request.get("trigger")
        if trigger is not None:
            run.trigger.CopyFrom(trigger)
        else:
            run.trigger.kind = run_pb2.TRIGGER_KIND_QUESTION
        run.trigger.question = redact_text(run.trigger.question) if run.trigger.question else run.question
        run.created_at.GetCurrentTime()
        run.updated_at.CopyFrom(run.created_at)
        run.self_evaluation.verifier_evaluation.prompt_audit.CopyFrom(self.catalog.audit())
        rules, aiops_rules = request.get("rule_evaluation"), request.get("aiops_rule_evaluation")
        if rules is not None:
            run.self_evaluation.rule_evaluation.CopyFrom(to_struct(rules))
        if aiops_rules is not None:
            run.self_evaluation.aiops_rule_evaluation.CopyFrom(to_struct(aiops_rules))
        return run

    async def run(
        self,
        *,
        on_event: EventSink | None = None,
        on_tool_call: ProgressSink | None = None,
        on_started: Callable[[run_pb2.DiagnosisRun], Awaitable[None]] | None = None,
        **request: Unpack[NewRun],
    ) -> run_pb2.DiagnosisRun:
        """Create, run and store one run. The stored run is returned; it is never left RUNNING by a failure here.

        The run observes ``environment`` when given (its live sources), else the recorded ``scenario``.
        """
        environment = request.get("environment", "")
        tools = self.tools_of(scenario=request["scenario"], environment=environment)
        run = self.new_run(**request)
        if environment:
            # Live reads cover the run's window; a recorded scenario reads its own.
            window = resolve_window(request.get("time_window"), request["question"], time.time())
            run.time_window.CopyFrom(window.to_proto())
            tools = replace(tools, context={**tools.context, "window": window.to_json()})
        await self.store.create_run(run)
        if on_started is not None:
            await on_started(run)
        return await self.execute(run, tools, on_event=on_event, on_tool_call=on_tool_call)

    async def execute(
        self,
        run: run_pb2.DiagnosisRun,
        tools: ToolEnvironment,
        *,
        on_event: EventSink | None = None,
        on_tool_call: ProgressSink | None = None,
    ) -> run_pb2.DiagnosisRun:
        state = DiagnosisState(run_id=run.run_id, question=run.question, scenario=run.scenario)
        progress: ProgressSink | None = None
        if on_tool_call is not None:
            listener = on_tool_call

            async def progress(event: run_pb2.ToolCallEvent) -> None:
                # The node attempt making the call is the next event's: its sequence, known before it ends.
                event.sequence = len(state.orchestration_events) + state.dropped_events + 1
                await listener(event)

        ctx = self._context(run_id=run.run_id, tools=tools, on_tool_call=progress)

        endpoint_failures: list[run_pb2.NodeStep] = []

        async def commit(
            after: DiagnosisState, event: run_pb2.OrchestrationEvent, step: run_pb2.NodeStep | None
        ) -> None:
            if step is not None and event.reason_code == MODEL_ENDPOINT_FAILED:
                endpoint_failures.append(step)
                if self.on_endpoint_failure is not None:
                    self.on_endpoint_failure(step)
            kept = bool(after.orchestration_events) and after.orchestration_events[-1] is event
            await self.store.commit_node(
                NodeCommit(run.run_id, events=(event,) if kept else (), steps=(step,) if step is not None else ())
            )

        try:
            final = await self._engine.run(state, ctx, commit=commit, on_event=on_event)
            invocations = await self._recorded_calls(run.run_id)
            # The final record and its source report are CPU work: off the event loop.
            done = await off_loop(
                _final_record, run, final, self.catalog.audit(), endpoint_failures, invocations, tools.context
            )
        except Exception as exc:
            # A node that cannot be recorded ends the run: the graph never runs past an unrecorded node.
            log.exception("run_failed", run_id=run.run_id)
            reason = store_error_reason(exc) if isinstance(exc, StoreError) else f"INTERNAL_ERROR: {type(exc).__name__}"
            done = failed_run(run, reason)
        return await self._finish(run, done)

    async def _recorded_calls(self, run_id: str) -> list[contracts_pb2.ToolInvocation] | None:
        """The run's recorded calls, for its source report; None when the store cannot be read (the run is then
        left as it is: its answer stands)."""
        try:
            return await self.store.list_tool_invocations(run_id)
        except StoreError:
            log.warning("run_source_report_skipped", run_id=run_id)
            return None

    async def _finish(self, run: run_pb2.DiagnosisRun, done: run_pb2.DiagnosisRun) -> run_pb2.DiagnosisRun:
        """Stores the run's final record, retrying with a jittered backoff while the store recovers; returns
        the record as stored (what GetRun reads: the Diagnose stream sends it without reading it back).

        Each round writes ``done`` and, if that fails, the run as created FAILED (a record the store takes
        even when ``done`` is what it refuses). Rounds go on for ``finish_retry_s``; after that the
        StoreError reaches the caller and the run stays RUNNING in the store, with nobody heartbeating
        it: the orphan sweep (of this instance or another) marks it INTERRUPTED once the store is back.
        A cancellation (shutdown) ends the retries at once.
        """
        deadline = time.monotonic() + self.finish_retry_s
        delay = FINISH_RETRY_FIRST_S
        failed: run_pb2.DiagnosisRun | None = None
        rounds = 0
        while True:
            rounds += 1
            try:
                stored = await self.store.finish_run(done)
                if rounds > 1:
                    log.info("run_finish_recovered", run_id=run.run_id, attempts=rounds)
                return stored
            except RunAlreadyFinished:
                raise  # someone else ended it (e.g. an orphan sweep): its stored record stands
            except StoreError as exc:
                error = exc
            if failed is None:
                failed = failed_run(run, done.failure_reason or store_error_reason(error))
            try:
                stored = await self.store.finish_run(failed)
                log.warning("run_finish_failed", run_id=run.run_id, error=str(error)[:300], stored="FAILED")
                return stored
            except RunAlreadyFinished:
                raise
            except StoreError as exc:
                error = exc
            left = deadline - time.monotonic()
            if left <= 0:
                log.error(
                    "run_finish_abandoned",
                    run_id=run.run_id,
                    attempts=rounds,
                    error=str(error)[:300],
                    hint="the orphan sweep marks the run INTERRUPTED once the store takes writes again",
                )
                raise error
            if rounds == 1:
                log.warning("run_finish_retrying", run_id=run.run_id, error=str(error)[:300])
            await asyncio.sleep(min(left, random.uniform(delay / 2, delay)))
            delay = min(delay * 2, FINISH_RETRY_MAX_S)


def _final_record(
    run: run_pb2.DiagnosisRun,
    final: DiagnosisState,
    prompt_audit: contracts_pb2.PromptAudit,
    endpoint_failures: Sequence[run_pb2.NodeStep],
    invocations: list[contracts_pb2.ToolInvocation] | None,
    context: JsonObject,
) -> run_pb2.DiagnosisRun:
    """The run's final record from its final state: its answer, why an endpoint failed it, which sources failed
    (from its recorded calls, when they could be read)."""
    done = complete_run(run, final, prompt_audit)
    _explain_endpoint_failure(done, endpoint_failures)
    if invocations is not None:
        report_sources(done, invocations, context)
    return done


def _explain_endpoint_failure(done: run_pb2.DiagnosisRun, failures: Sequence[run_pb2.NodeStep]) -> None:
    """A run that fell back because the model endpoint failed says how, in its failure reason (R-P-6):
    the node, the failure class and the endpoint's own message (redacted, clipped)."""
    evaluation = done.self_evaluation.verifier_evaluation
    if evaluation.failure_reason != MODEL_ENDPOINT_FAILED or not failures:
        return
    last = failures[-1]
    node = enum_short_name(run_pb2.NodeName, last.node, lower=True)
    evaluation.failure_reason = f"{MODEL_ENDPOINT_FAILED}: {node} {last.failure_class}: {last.failure}"[:600]


def store_error_reason(error: StoreError) -> str:
    """``STORE_ERROR: add_tool_invocation failed: OperationalError: database or disk is full``: the failure
    reason of a run the store failed, naming what failed and why (one line, clipped)."""
    cause = " ".join(str(error).split())[:STORE_REASON_CHARS] or type(error).__name__
    return f"STORE_ERROR: {cause}"


def failed_run(run: run_pb2.DiagnosisRun, reason: str) -> run_pb2.DiagnosisRun:
    """The run as first created, FAILED with ``reason``: no answer, nothing of the graph's state."""
    failed = run_pb2.DiagnosisRun()
    failed.CopyFrom(run)
    failed.status = run_pb2.RUN_STATUS_FAILED
    failed.failure_reason = reason
    failed.updated_at.GetCurrentTime()
    failed.completed_at.CopyFrom(failed.updated_at)
    return failed
