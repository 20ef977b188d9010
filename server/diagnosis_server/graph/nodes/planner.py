"""Planner node: plans the tool calls of a cycle; in an evidence retry, only what the gaps name."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.v1 import run_pb2
from diagnosis_server.composition.notes import NOTHING_TO_CALL
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.nodes.base import CycleInput, NodeResult, ask_agent, projection, with_outcome
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.offload import off_loop
from diagnosis_server.protocols.planner import PlannerMode, parse_planner_output, plans_nothing


@dataclass(frozen=True, slots=True)
class PlannerInput(CycleInput):
    """The cycle's question and mode, and in an evidence retry the gaps to fill (R-R-4)."""


class PlannerNode:
    name = run_pb2.NODE_NAME_PLANNER

    def project(self, state: DiagnosisState) -> PlannerInput:
        mode = PlannerMode.EVIDENCE_GAP_ONLY if state.retry_context is not None else PlannerMode.FULL
        return projection(PlannerInput, state, cycle=state.evidence_retry_count + 1, mode=mode)

    async def run(self, inputs: PlannerInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        payload = inputs.payload(ctx, context=ctx.tools.context)
        call = await ask_agent(ctx, self.name, payload, attempt=attempt, cycle=cycle)
        if call.reply is None:
            return NodeResult(call.outcome, call.reason, step=call.step)
        if plans_nothing(call.reply.text):
            if inputs.mode == PlannerMode.EVIDENCE_GAP_ONLY:
                # Nothing the gaps name can be called here: the retry ends, the earlier cycle's answer stands.
                return NodeResult(run_pb2.NODE_OUTCOME_NOTHING_TO_CALL, "RETRY_NOTHING_TO_CALL", step=call.step)
            # A first plan of no step: no tool of the run is one the Planner can call (said so by the fallback).
            invalid = run_pb2.NODE_OUTCOME_INVALID_OUTPUT
            return NodeResult(invalid, NOTHING_TO_CALL, step=with_outcome(call.step, invalid))
        allowed = ctx.allowed_tools if ctx.allowed_tools is not None else ctx.tools.toolset.names
        parsed = await off_loop(parse_planner_output, call.reply.text, allowed_tools=allowed)  # CPU: off the loop
        if not parsed.ok:
            outcome = run_pb2.NODE_OUTCOME_INVALID_OUTPUT
            return NodeResult(outcome, "PLANNER_INVALID_OUTPUT", step=with_outcome(call.step, outcome))
        return NodeResult(
            run_pb2.NODE_OUTCOME_OK,
            "PLANNED",
            updates={"plan": parsed.steps, "cycle": inputs.cycle, "planner_mode": inputs.mode},
            step=call.step,
        )
