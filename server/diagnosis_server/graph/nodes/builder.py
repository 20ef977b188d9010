"""Verified-input builder node: the Verifier's input from passed bindings only, as canonical bytes."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.nodes.base import NodeResult, projection
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.offload import off_loop
from diagnosis_server.verification.verified_input import build_verifier_input, serialize_verifier_input


@dataclass(frozen=True, slots=True)
class BuilderInput:
    question: str
    scenario: str
    cycle: int
    output: contracts_pb2.ExecutorEvidenceV2 | None
    gatekeeper_result: contracts_pb2.GatekeeperResult | None
    retry_context: contracts_pb2.RetryContext | None


class VerifiedInputBuilderNode:
    name = run_pb2.NODE_NAME_VERIFIED_INPUT_BUILDER

    def project(self, state: DiagnosisState) -> BuilderInput:
        parse = state.executor_parse
        return projection(BuilderInput, state, output=parse.output if parse is not None else None)

    async def run(self, inputs: BuilderInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        return await off_loop(built, inputs)  # all CPU work: off the event loop


def built(inputs: BuilderInput) -> NodeResult:
    """The Verifier's input from the passed bindings, and its canonical bytes: the node's outcome and writes."""
    if inputs.output is None or inputs.gatekeeper_result is None:
        raise RuntimeError("the verified-input builder runs only after the Gatekeeper")
    verifier_input = build_verifier_input(
        output=inputs.output,
        result=inputs.gatekeeper_result,
        context=contracts_pb2.DiagnosisContext(question=inputs.question, scenario=inputs.scenario, cycle=inputs.cycle),
        retry_context=inputs.retry_context,
    )
    if verifier_input is None:
        return NodeResult(run_pb2.NODE_OUTCOME_NO_VERIFIED_EVIDENCE, "NO_VERIFIED_EVIDENCE")
    return NodeResult(
        run_pb2.NODE_OUTCOME_OK,
        "VERIFIED_INPUT_BUILT",
        updates={
            "verifier_input": verifier_input,
            "verifier_input_bytes": serialize_verifier_input(verifier_input),
        },
    )
