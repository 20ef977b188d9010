"""Composer node: the Composer chooses among the Verifier-allowed material; the service renders the answer
(R-R-3, R-A-1). A guard refuses a reply that cites or names anything else."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.composition.composer_rules import composer_output_violations
from diagnosis_server.composition.material import AllowedMaterial
from diagnosis_server.composition.render import render_answer
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.nodes.base import NodeResult, ask_agent, with_outcome
from diagnosis_server.graph.standing import guarded_statements, standing_answer
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.offload import off_loop
from diagnosis_server.protocols.composer import parse_composer_output


@dataclass(frozen=True, slots=True)
class ComposerInput:
    material: AllowedMaterial | None
    # Statements of claims the material does not allow: for the guard only, never sent.
    excluded_statements: tuple[str, ...]


class ComposerNode:
    name = run_pb2.NODE_NAME_COMPOSER

    def project(self, state: DiagnosisState) -> ComposerInput:
        # The latest completed verification: a failed evidence retry's Composer answers from the cycle before it.
        answer = standing_answer(state)
        if answer is None:
            return ComposerInput(material=None, excluded_statements=())
        return ComposerInput(material=answer.allowed_material, excluded_statements=guarded_statements(state, answer))

    async def run(self, inputs: ComposerInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        material = inputs.material
        if material is None:
            raise RuntimeError("the Composer runs only on Verifier-allowed material")
        call = await ask_agent(ctx, self.name, material.to_json(), attempt=attempt, cycle=cycle)
        if call.reply is None:
            return NodeResult(call.outcome, call.reason, step=call.step)
        # The parse, the guard and the rendering are CPU work: off the event loop.
        return await off_loop(
            guarded_answer, material, inputs.excluded_statements, call.reply.text, call.step, ctx.tools.toolset.names
        )


def guarded_answer(
    material: AllowedMaterial,
    excluded: tuple[str, ...],
    reply: str,
    step: run_pb2.NodeStep,
    tool_names: Collection[str],
) -> NodeResult:
    """The Composer's reply parsed, held to the material by the guard, and rendered: the node's outcome and writes."""
    parsed = parse_composer_output(reply)
    invalid = run_pb2.NODE_OUTCOME_INVALID_OUTPUT
    if not parsed.ok or parsed.output is None:
        return NodeResult(invalid, "COMPOSER_INVALID_OUTPUT", step=with_outcome(step, invalid))
    violations = composer_output_violations(parsed, material, excluded_statements=excluded, tool_names=tool_names)
    if violations:
        refusal = tuple(dict.fromkeys(v.rule for v in violations))
        return NodeResult(
            invalid,
            "COMPOSER_GUARD_REJECTED",
            updates={"composer_refusal": refusal},
            step=with_outcome(step, invalid),
        )
    output = render_answer(material, parsed, source=contracts_pb2.COMPOSER_SOURCE_COMPOSER)
    return NodeResult(run_pb2.NODE_OUTCOME_OK, "COMPOSED", updates={"composer_output": output}, step=step)
