"""Composer node: answers from Verifier-allowed material only; a guard refuses anything else (R-R-3, R-A-1)."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.composition.guard import guard_composer_output
from diagnosis_server.composition.material import AllowedMaterial, excluded_statements
from diagnosis_server.conversions import canonical_json_bytes
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.nodes.base import NodeResult, call_agent, with_outcome
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.protocols.composer import parse_composer_output


@dataclass(frozen=True, slots=True)
class ComposerInput:
    material: AllowedMaterial | None
    # Statements of verified claims the material does not allow: for the guard only, never sent.
    excluded_statements: tuple[str, ...]


def _excluded(state: DiagnosisState) -> tuple[str, ...]:
    if state.verifier_input is None or state.allowed_material is None:
        return ()
    return excluded_statements(verifier_input=state.verifier_input, material=state.allowed_material)


class ComposerNode:
    name = run_pb2.NODE_NAME_COMPOSER

    def project(self, state: DiagnosisState) -> ComposerInput:
        return ComposerInput(material=state.allowed_material, excluded_statements=_excluded(state))

    async def run(self, inputs: ComposerInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        material = inputs.material
        if material is None:
            raise RuntimeError("the Composer runs only on Verifier-allowed material")
        call = await call_agent(
            ctx,
            node=self.name,
            role="composer",
            input_bytes=canonical_json_bytes(material.to_json()),
            attempt=attempt,
            cycle=cycle,
        )
        if call.reply is None:
            return NodeResult(call.outcome, call.reason, step=call.step)
        parsed = parse_composer_output(call.reply.text)
        invalid = run_pb2.NODE_OUTCOME_INVALID_OUTPUT
        if not parsed.ok or parsed.output is None:
            return NodeResult(invalid, "COMPOSER_INVALID_OUTPUT", step=with_outcome(call.step, invalid))
        output = parsed.output
        if guard_composer_output(output, material, excluded_statements=inputs.excluded_statements):
            return NodeResult(invalid, "COMPOSER_GUARD_REJECTED", step=with_outcome(call.step, invalid))
        output.source = contracts_pb2.COMPOSER_SOURCE_COMPOSER
        output.verdict = material.verdict
        return NodeResult(run_pb2.NODE_OUTCOME_OK, "COMPOSED", updates={"composer_output": output}, step=call.step)
