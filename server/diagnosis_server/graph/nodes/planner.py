"""Planner node: plans the tool calls of a cycle; in an evidence retry, only what the gaps name."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.conversions import JsonObject, canonical_json_bytes, message_to_dict
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.nodes.base import NodeResult, call_agent, with_outcome
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.protocols.planner import parse_planner_output

FULL = "FULL"
EVIDENCE_GAP_ONLY = "EVIDENCE_GAP_ONLY"


@dataclass(frozen=True, slots=True)
class PlannerInput:
    question: str
    scenario: str
    cycle: int
    mode: str
    retry_context: contracts_pb2.RetryContext | None


class PlannerNode:
    name = run_pb2.NODE_NAME_PLANNER

    def project(self, state: DiagnosisState) -> PlannerInput:
        retry = state.retry_context
        return PlannerInput(
            question=state.question,
            scenario=state.scenario,
            cycle=state.evidence_retry_count + 1,
            mode=EVIDENCE_GAP_ONLY if retry is not None else FULL,
            retry_context=retry,
        )

    async def run(self, inputs: PlannerInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        payload: JsonObject = {
            "question": inputs.question,
            "scenario": inputs.scenario,
            "cycle": inputs.cycle,
            "mode": inputs.mode,
            "tools": [spec.to_json() for spec in ctx.tools.toolset.specs()],
            "context": ctx.tools.context,
        }
        if inputs.retry_context is not None:
            payload["retry_context"] = message_to_dict(inputs.retry_context)
        call = await call_agent(
            ctx,
            node=self.name,
            role="planner",
            input_bytes=canonical_json_bytes(payload),
            attempt=attempt,
            cycle=cycle,
        )
        if call.reply is None:
            return NodeResult(call.outcome, call.reason, step=call.step)
        allowed = ctx.allowed_tools if ctx.allowed_tools is not None else ctx.tools.toolset.names
        parsed = parse_planner_output(call.reply.text, allowed_tools=allowed)
        if not parsed.ok:
            outcome = run_pb2.NODE_OUTCOME_INVALID_OUTPUT
            return NodeResult(outcome, "PLANNER_INVALID_OUTPUT", step=with_outcome(call.step, outcome))
        return NodeResult(
            run_pb2.NODE_OUTCOME_OK,
            "PLANNED",
            updates={"plan": parsed.steps, "cycle": inputs.cycle, "planner_mode": inputs.mode},
            step=call.step,
        )
