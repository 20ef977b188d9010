"""Executor node: runs the plan through the tool runner and parses executor_evidence_v2 (never retried, R-R-2)."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.nodes.base import (
    MODEL_ENDPOINT_FAILED,
    CycleInput,
    NodeResult,
    ask_agent,
    projection,
    with_outcome,
)
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.offload import off_loop
from diagnosis_server.protocols.executor import parse_executor_output
from diagnosis_server.protocols.planner import PlanStep, plan_to_json
from diagnosis_server.store.errors import DuplicateRecord, StoreError
from diagnosis_server.tools.runner import ToolBlockedError, ToolRunner
from diagnosis_server.tools.window_arguments import run_window


@dataclass(frozen=True, slots=True)
class ExecutorInput(CycleInput):
    plan: tuple[PlanStep, ...]
    # In an evidence retry: the claims the earlier cycle verified, to carry forward with the new ones.
    earlier_claims: tuple[contracts_pb2.Claim, ...] = ()


def _earlier_claims(state: DiagnosisState) -> tuple[contracts_pb2.Claim, ...]:
    """The verified claims of the cycle before an evidence retry (only their passed bindings)."""
    earlier = state.verified_before_retry
    if state.retry_context is None or earlier is None:
        return ()
    return tuple(earlier.verifier_input.verified_executor_output.claims)


def claim_json(claim: contracts_pb2.Claim) -> JsonObject:
    """A claim in the executor_evidence_v2 shape (what an Executor writes back to carry it forward)."""
    bindings: list[JsonValue] = [
        {
            "source_invocation_ids": list[JsonValue](b.source_invocation_ids),
            "tool_name": b.tool_name,
            "raw_path": b.raw_path,
            "matched_text": b.matched_text,
        }
        for b in claim.evidence_bindings
    ]
    return {
        "claim_id": claim.claim_id,
        "statement": claim.statement,
        "critical": claim.critical,
        "status": "hypothesis" if claim.status == contracts_pb2.CLAIM_STATUS_HYPOTHESIS else "confirmed",
        "evidence_bindings": bindings,
    }


def _raise_if_unrecorded(runner: ToolRunner) -> None:
    """The store's error when a tool call of this attempt could not be recorded because the store failed."""
    failed = runner.recording_failed
    if isinstance(failed, StoreError) and not isinstance(failed, DuplicateRecord):
        raise failed


class ExecutorNode:
    name = run_pb2.NODE_NAME_EXECUTOR

    def project(self, state: DiagnosisState) -> ExecutorInput:
        return projection(ExecutorInput, state, mode=state.planner_mode, earlier_claims=_earlier_claims(state))

    async def run(self, inputs: ExecutorInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        payload = inputs.payload(ctx, plan=plan_to_json(inputs.plan))
        if inputs.earlier_claims:
            payload["earlier_claims"] = [claim_json(claim) for claim in inputs.earlier_claims]
        runner = ToolRunner(
            run_id=ctx.run_id,
            toolset=ctx.tools.toolset,
            recorder=ctx.record_invocation,
            allowed=ctx.allowed_tools,
            cycle=inputs.cycle,
            timeout_s=ctx.limits.tool_timeout_s,
            max_output_bytes=ctx.limits.max_tool_output_bytes,
            max_calls=ctx.limits.max_tool_calls,
            ids=ctx.invocation_ids,
            max_concurrency=ctx.limits.max_concurrent_tool_calls,
            max_per_source=ctx.limits.max_concurrent_calls_per_source,
            breaker=ctx.breaker,
            on_progress=ctx.on_tool_call,
            window=run_window(ctx.tools.context),
            recorded=lambda: ctx.invocations.list_tool_invocations(ctx.run_id),
        )
        not_run = {"executor_parse": None, "executor_parse_status": contracts_pb2.PARSE_STATUS_NOT_RUN}
        try:
            call = await ask_agent(ctx, self.name, payload, attempt=attempt, cycle=cycle, tools=runner)
        except ToolBlockedError:
            _raise_if_unrecorded(runner)
            return NodeResult(run_pb2.NODE_OUTCOME_TOOL_BLOCKED, "TOOL_BLOCKED", updates=not_run)
        except Exception:
            _raise_if_unrecorded(runner)
            raise
        # A call that could not be recorded ends the run (R-C-2): whatever the agent made of the error.
        _raise_if_unrecorded(runner)
        if call.reply is None:
            failed = run_pb2.NODE_OUTCOME_FAILED
            reason = MODEL_ENDPOINT_FAILED if call.reason == MODEL_ENDPOINT_FAILED else "EXECUTOR_FAILED"
            return NodeResult(failed, reason, updates=not_run, step=with_outcome(call.step, failed))
        parsed = await off_loop(parse_executor_output, call.reply.text)  # CPU work: off the event loop
        if not parsed.ok:
            invalid = run_pb2.NODE_OUTCOME_INVALID_OUTPUT
            return NodeResult(
                invalid,
                "EXECUTOR_INVALID_OUTPUT",
                updates={"executor_parse": parsed, "executor_parse_status": contracts_pb2.PARSE_STATUS_INVALID_OUTPUT},
                step=with_outcome(call.step, invalid),
            )
        return NodeResult(
            run_pb2.NODE_OUTCOME_OK,
            "EXECUTOR_EVIDENCE_V2",
            updates={"executor_parse": parsed, "executor_parse_status": contracts_pb2.PARSE_STATUS_OK},
            step=call.step,
        )
