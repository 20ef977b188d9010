"""Runs one diagnosis end to end: creates the run, drives the graph, persists every node, stores the result."""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from diagnosis.v1 import run_pb2
from diagnosis_server.agents.base import AgentProvider
from diagnosis_server.agents.prompts import PromptCatalog, default_catalog
from diagnosis_server.conversions import JsonObject, to_struct
from diagnosis_server.graph.context import InvocationStore, Limits, RunContext, ToolEnvironment
from diagnosis_server.graph.engine import EventSink, GraphEngine
from diagnosis_server.graph.nodes import Node, default_nodes
from diagnosis_server.graph.result import complete_run
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.store import Checkpoint, RunAlreadyFinished, StoreError

log = structlog.get_logger(__name__)


class RunStore(InvocationStore, Protocol):
    async def create_run(self, run: run_pb2.DiagnosisRun) -> None: ...

    async def commit_node(
        self,
        run_id: str,
        *,
        events: Sequence[run_pb2.OrchestrationEvent] = (),
        steps: Sequence[run_pb2.NodeStep] = (),
        checkpoint: Checkpoint | None = None,
        run: run_pb2.DiagnosisRun | None = None,
    ) -> None: ...

    async def finish_run(self, run: run_pb2.DiagnosisRun) -> None: ...


def new_run_id() -> str:
    return f"run-{uuid.uuid4().hex}"


def checkpoint_state(state: DiagnosisState) -> bytes:
    """The compact control state after a node (ids, counters, verdicts; never text or tool output)."""
    last = state.routed_by
    snapshot = {
        "step": state.steps,
        "cycle": state.cycle,
        "evidence_retry_count": state.evidence_retry_count,
        "technical_retries": [list(pair) for pair in state.technical_retries],
        "last_node": last.node if last is not None else 0,
        "last_outcome": last.outcome if last is not None else 0,
        "executor_parse_status": state.executor_parse_status,
        "verdict_ceiling": state.verdict_ceiling,
        "model_verdict": state.model_verdict,
        "effective_verdict": state.effective_verdict,
        "events": len(state.orchestration_events),
        "dropped_events": state.dropped_events,
    }
    return json.dumps(snapshot, sort_keys=True, separators=(",", ":")).encode()


@dataclass(slots=True)
class Orchestrator:
    store: RunStore
    provider: AgentProvider
    # The tools of a recorded scenario, by name.
    tools_for: Callable[[str], ToolEnvironment]
    catalog: PromptCatalog = field(default_factory=default_catalog)
    limits: Limits = field(default_factory=Limits)
    allowed_tools: Sequence[str] | None = None
    nodes: dict[int, Node[Any]] = field(default_factory=default_nodes)
    # The tools of a configured environment, by name (a run is given a scenario or an environment).
    environment_tools: Callable[[str], ToolEnvironment] | None = None

    def tools_of(self, *, scenario: str, environment: str) -> ToolEnvironment:
        """The run's tools: the environment's when one is named, else the scenario's."""
        if environment:
            if self.environment_tools is None:
                raise LookupError(f"no environments are configured (asked for {environment!r})")
            return self.environment_tools(environment)
        return self.tools_for(scenario)

    def new_run(
        self,
        *,
        question: str,
        scenario: str,
        tenant: str = "",
        run_id: str | None = None,
        rule_evaluation: JsonObject | None = None,
        aiops_rule_evaluation: JsonObject | None = None,
        environment: str = "",
    ) -> run_pb2.DiagnosisRun:
        """A new RUNNING run; the rule channels given here are preserved beside the verifier evaluation (R-P-7)."""
        run = run_pb2.DiagnosisRun(
            run_id=run_id or new_run_id(),
            tenant=tenant,
            status=run_pb2.RUN_STATUS_RUNNING,
            question=question,
            scenario=scenario,
            agent_provider=self.provider.name,
            environment=environment,
        )
        run.created_at.GetCurrentTime()
        run.updated_at.CopyFrom(run.created_at)
        run.self_evaluation.verifier_evaluation.prompt_audit.CopyFrom(self.catalog.audit())
        if rule_evaluation is not None:
            run.self_evaluation.rule_evaluation.CopyFrom(to_struct(rule_evaluation))
        if aiops_rule_evaluation is not None:
            run.self_evaluation.aiops_rule_evaluation.CopyFrom(to_struct(aiops_rule_evaluation))
        return run

    async def run(
        self,
        *,
        question: str,
        scenario: str,
        tenant: str = "",
        run_id: str | None = None,
        on_event: EventSink | None = None,
        on_started: Callable[[run_pb2.DiagnosisRun], Awaitable[None]] | None = None,
        rule_evaluation: JsonObject | None = None,
        aiops_rule_evaluation: JsonObject | None = None,
        environment: str = "",
    ) -> run_pb2.DiagnosisRun:
        """Create, run and store one run. The stored run is returned; it is never left RUNNING by a failure here.

        The run observes ``environment`` when given (its live sources), else the recorded ``scenario``.
        """
        tools = self.tools_of(scenario=scenario, environment=environment)
        run = self.new_run(
            question=question,
            scenario=scenario,
            tenant=tenant,
            run_id=run_id,
            rule_evaluation=rule_evaluation,
            aiops_rule_evaluation=aiops_rule_evaluation,
            environment=environment,
        )
        await self.store.create_run(run)
        if on_started is not None:
            await on_started(run)
        return await self.execute(run, tools, on_event=on_event)

    async def execute(
        self, run: run_pb2.DiagnosisRun, tools: ToolEnvironment, *, on_event: EventSink | None = None
    ) -> run_pb2.DiagnosisRun:
        ctx = RunContext(
            run_id=run.run_id,
            provider=self.provider,
            catalog=self.catalog,
            tools=tools,
            invocations=self.store,
            limits=self.limits,
            allowed_tools=self.allowed_tools,
        )
        engine = GraphEngine(self.nodes, recursion_limit=self.limits.recursion_limit, max_events=self.limits.max_events)
        state = DiagnosisState(run_id=run.run_id, question=run.question, scenario=run.scenario)

        async def commit(
            after: DiagnosisState, event: run_pb2.OrchestrationEvent, step: run_pb2.NodeStep | None
        ) -> None:
            kept = bool(after.orchestration_events) and after.orchestration_events[-1] is event
            await self.store.commit_node(
                run.run_id,
                events=[event] if kept else [],
                steps=[step] if step is not None else [],
                checkpoint=Checkpoint(
                    run_id=run.run_id, step=after.steps, node=event.node, state=checkpoint_state(after)
                ),
            )

        try:
            final = await engine.run(state, ctx, commit=commit, on_event=on_event)
            done = complete_run(run, final, self.catalog.audit())
        except Exception as exc:
            # A node that cannot be recorded ends the run: the graph never runs past an unrecorded node.
            log.exception("run_failed", run_id=run.run_id)
            reason = "STORE_ERROR" if isinstance(exc, StoreError) else "INTERNAL_ERROR"
            done = failed_run(run, f"{reason}: {type(exc).__name__}")
        return await self._finish(run, done)

    async def _finish(self, run: run_pb2.DiagnosisRun, done: run_pb2.DiagnosisRun) -> run_pb2.DiagnosisRun:
        """Stores the run's final record; if that write fails, the run as created, FAILED (once), so that it is
        never left RUNNING while the store takes writes. Only when that fails too does the StoreError reach
        the caller; the run stays RUNNING until ``interrupt_owned`` (shutdown) or ``interrupt_orphans`` (a
        restart, or another instance) marks it INTERRUPTED.
        """
        try:
            await self.store.finish_run(done)
            return done
        except RunAlreadyFinished:
            raise  # someone else ended it (e.g. an orphan sweep): its stored record stands
        except StoreError as exc:
            log.warning("run_finish_failed", run_id=run.run_id, error=str(exc)[:300])
            failed = failed_run(run, done.failure_reason or f"STORE_ERROR: {type(exc).__name__}")
            await self.store.finish_run(failed)
            return failed


def failed_run(run: run_pb2.DiagnosisRun, reason: str) -> run_pb2.DiagnosisRun:
    """The run as first created, FAILED with ``reason``: no answer, nothing of the graph's state."""
    failed = run_pb2.DiagnosisRun()
    failed.CopyFrom(run)
    failed.status = run_pb2.RUN_STATUS_FAILED
    failed.failure_reason = reason
    failed.updated_at.GetCurrentTime()
    failed.completed_at.CopyFrom(failed.updated_at)
    return failed
