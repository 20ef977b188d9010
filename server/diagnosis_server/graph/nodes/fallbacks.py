"""The deterministic fallbacks: they always produce a safe answer and end the run (R-A-4, R-A-5)."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.v1 import run_pb2
from diagnosis_server.composition.material import AllowedMaterial
from diagnosis_server.composition.render import render_pre_verification_fallback, render_verified
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.nodes.base import NodeResult
from diagnosis_server.graph.state import DiagnosisState

_EXHAUSTED = {
    run_pb2.NODE_NAME_PLANNER: "PLANNER_FAILED",
    run_pb2.NODE_NAME_VERIFIER: "VERIFIER_FAILED",
}


@dataclass(frozen=True, slots=True)
class PreFallbackInput:
    reason_code: str


def fallback_reason(event: run_pb2.OrchestrationEvent | None) -> str:
    """Why the run came to the pre-verification fallback, in a stable reason code."""
    if event is None:
        return "UNKNOWN"
    if event.reason_code == "MODEL_ENDPOINT_FAILED":  # the answer says the model endpoint failed
        return event.reason_code
    if event.node in _EXHAUSTED and event.outcome in (
        run_pb2.NODE_OUTCOME_INVALID_OUTPUT,
        run_pb2.NODE_OUTCOME_RETRYABLE_FAILED,
        run_pb2.NODE_OUTCOME_NON_RETRYABLE_FAILED,
    ):
        return _EXHAUSTED[event.node]
    return event.reason_code or "UNKNOWN"


class PreVerificationFallbackNode:
    """No Executor claim reaches this answer at all: it reads only the reason code."""

    name = run_pb2.NODE_NAME_PRE_VERIFICATION_FALLBACK

    def project(self, state: DiagnosisState) -> PreFallbackInput:
        return PreFallbackInput(reason_code=fallback_reason(state.routed_by))

    async def run(self, inputs: PreFallbackInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        output = render_pre_verification_fallback(inputs.reason_code)
        return NodeResult(
            run_pb2.NODE_OUTCOME_OK,
            inputs.reason_code,
            updates={"pre_fallback_output": output, "fallback_reason": inputs.reason_code},
        )


@dataclass(frozen=True, slots=True)
class PostFallbackInput:
    material: AllowedMaterial | None


class PostVerificationFallbackNode:
    """Renders the Verifier-allowed material alone; never raw Executor or tool output."""

    name = run_pb2.NODE_NAME_POST_VERIFICATION_FALLBACK

    def project(self, state: DiagnosisState) -> PostFallbackInput:
        return PostFallbackInput(material=state.allowed_material)

    async def run(self, inputs: PostFallbackInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        if inputs.material is None:
            raise RuntimeError("the post-verification fallback runs only after the Verifier")
        output = render_verified(inputs.material)
        return NodeResult(run_pb2.NODE_OUTCOME_OK, "COMPOSER_FAILED", updates={"post_fallback_output": output})
