"""Verifier node: classifies each verified claim; the effective verdict is computed here, capped by the ceiling."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.composition.material import allowed_material, excluded_statements
from diagnosis_server.composition.suggestions import RecordedCall, json_strings
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.nodes.base import NodeResult, ProjectedNode, call_agent, with_outcome
from diagnosis_server.graph.verified_cycle import VerifiedCycle
from diagnosis_server.offload import off_loop
from diagnosis_server.protocols.verifier import parse_verifier_output
from diagnosis_server.verification.classification_ceiling import guard_claim_checks
from diagnosis_server.verification.verdict import (
    effective_verdict,
    evidence_retry_eligible,
    lowest_verdict,
    retry_context_for,
)

_OUTCOME_BY_VERDICT = {
    contracts_pb2.VERDICT_PASS: (run_pb2.NODE_OUTCOME_VERDICT_PASS, "VERDICT_PASS"),
    contracts_pb2.VERDICT_LOW_CONFID: (run_pb2.NODE_OUTCOME_VERDICT_LOW_CONFID, "VERDICT_LOW_CONFID"),
}


@dataclass(frozen=True, slots=True)
class VerifierNodeInput:
    verifier_input: contracts_pb2.VerifierInput | None
    verifier_input_bytes: bytes
    evidence_retry_count: int
    # For the guard and the allowed material only (words' grounding, quotes' times, next steps not already
    # made); never sent to the Verifier.
    recorded_calls: tuple[RecordedCall, ...] = ()
    bound_values: Mapping[tuple[str, str], str] = field(default_factory=dict)


def known_values(ctx: RunContext) -> list[str]:
    """What the run knows besides its evidence: the environment's names and the tools' enumerated values."""
    values = list(json_strings(ctx.tools.context))
    for tool in ctx.tools.toolset.as_mapping().values():
        properties = tool.input_schema.get("properties")
        for prop in properties.values() if isinstance(properties, dict) else ():
            enum = prop.get("enum") if isinstance(prop, dict) else None
            values.extend(v for v in enum if isinstance(v, str)) if isinstance(enum, list) else None
    return values


class VerifierNode(ProjectedNode[VerifierNodeInput]):
    name = run_pb2.NODE_NAME_VERIFIER

    async def run(self, inputs: VerifierNodeInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        verifier_input = inputs.verifier_input
        if verifier_input is None or not inputs.verifier_input_bytes:
            raise RuntimeError("the Verifier runs only on a built verified input")
        # The same bytes on every attempt (R-VI-4): nothing before the Verifier reruns.
        call = await call_agent(
            ctx,
            node=self.name,
            role="verifier",
            input_bytes=inputs.verifier_input_bytes,
            input_message=verifier_input,
            attempt=attempt,
            cycle=cycle,
        )
        if call.reply is None:
            return NodeResult(call.outcome, call.reason, updates={"verifier_status": call.outcome}, step=call.step)
        # The parse, the guard and the allowed material are CPU work: off the event loop.
        return await off_loop(_judged, inputs, verifier_input, call.reply.text, call.step, ctx)


def _judged(
    inputs: VerifierNodeInput,
    verifier_input: contracts_pb2.VerifierInput,
    reply: str,
    step: run_pb2.NodeStep,
    ctx: RunContext,
) -> NodeResult:
    """The Verifier's reply parsed, guarded and capped: the node's outcome and writes."""
    parsed = parse_verifier_output(reply, verifier_input)
    if not parsed.ok or parsed.output is None:
        invalid = run_pb2.NODE_OUTCOME_INVALID_OUTPUT
        return NodeResult(
            invalid,
            "VERIFIER_INVALID_OUTPUT",
            updates={"verifier_status": invalid},
            step=with_outcome(step, invalid),
        )
    # No Verifier can raise a classification above what the evidence shows; a fabricated fact is REJECT (R-V-4).
    output, fabricated = guard_claim_checks(parsed.output, verifier_input, inputs.bound_values)
    ceiling = verifier_input.verdict_ceiling
    effective = effective_verdict(
        model_verdict=output.verdict,
        checks=output.claim_checks,
        groundedness_score=output.groundedness_score,
        ceiling=ceiling,
    )
    if fabricated:
        effective = lowest_verdict(effective, contracts_pb2.VERDICT_REJECT)
    verified_output = verifier_input.verified_executor_output
    material = allowed_material(
        verifier_input=verifier_input,
        verifier_output=output,
        effective=effective,
        recorded_calls=inputs.recorded_calls,
        known_values=known_values(ctx),
        tool_names=ctx.tools.toolset.names,
        own_phrase=ctx.tools.toolset.next_step,
    )
    updates: dict[str, object] = {
        "verifier_status": run_pb2.NODE_OUTCOME_OK,
        "verifier_output": output,
        "model_verdict": output.verdict,
        "effective_verdict": effective,
        "allowed_material": material,
    }
    if evidence_retry_eligible(
        effective=effective,
        ceiling=ceiling,
        gaps=output.evidence_gaps,
        verified_output=verified_output,
        evidence_retry_count=inputs.evidence_retry_count,
    ):
        count = inputs.evidence_retry_count + 1
        updates["evidence_retry_count"] = count
        updates["retry_context"] = retry_context_for(output.evidence_gaps, verified_output, evidence_retry_count=count)
        # The answer this cycle verified is kept: no failure of the retry discards it. (Its Executor's claims
        # that failed their bindings never reached the Verifier or the Composer; the Composer's guard still
        # excludes every claim of the retry that its material does not allow.)
        updates["verified_before_retry"] = VerifiedCycle(
            cycle=verifier_input.diagnosis_context.cycle,
            verifier_input=verifier_input,
            verifier_output=output,
            model_verdict=output.verdict,
            effective_verdict=effective,
            allowed_material=material,
            excluded_statements=excluded_statements(verifier_input=verifier_input, material=material),
        )
        return NodeResult(run_pb2.NODE_OUTCOME_VERDICT_LOW_CONFID_EVIDENCE_GAP, "EVIDENCE_GAP_RETRY", updates, step)
    outcome, reason = _OUTCOME_BY_VERDICT.get(effective, (run_pb2.NODE_OUTCOME_VERDICT_REJECT, "VERDICT_REJECT"))
    return NodeResult(outcome, reason, updates, step)
