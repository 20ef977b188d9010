"""The verified answer a run stands on: the latest cycle whose Verifier completed, so no failed retry discards it.

An evidence retry (R-R-4) starts after a completed LOW_CONFID verification; the Verifier keeps that cycle as
``verified_before_retry``. The retry's Gatekeeper, builder and Verifier then replace the run's current fields as
they run; if the retry does not complete its own verification (a Planner, Executor, Gatekeeper, builder or
Verifier failure, or nothing to call), the answer, its persisted evaluation and its verdict are the earlier
cycle's, resting on the Gatekeeper result that cycle's evidence was checked by (R-C-5).
"""

from __future__ import annotations

from collections.abc import Iterable

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.composition.material import AllowedMaterial, excluded_statements
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.graph.verified_cycle import VerifiedCycle


def executor_claims(state: DiagnosisState) -> tuple[contracts_pb2.Claim, ...]:
    """The current cycle's parsed Executor claims (none without a legal parse)."""
    parse = state.executor_parse
    return tuple(parse.output.claims) if parse is not None and parse.output is not None else ()


def current_verification(state: DiagnosisState) -> VerifiedCycle | None:
    """The current fields as a completed verification: the Verifier completed on the input built from the
    current Gatekeeper result; None when it did not (it failed, or a later Gatekeeper result replaced it)."""
    verifier_input, output, material = state.verifier_input, state.verifier_output, state.allowed_material
    if (
        state.verifier_status != run_pb2.NODE_OUTCOME_OK
        or verifier_input is None
        or output is None
        or state.gatekeeper_result is None
        or verifier_input.gatekeeper_audit != state.gatekeeper_result
    ):
        return None
    return VerifiedCycle(
        cycle=verifier_input.diagnosis_context.cycle,
        verifier_input=verifier_input,
        verifier_output=output,
        model_verdict=state.model_verdict,
        effective_verdict=state.effective_verdict,
        allowed_material=material,
        excluded_statements=_excluded(verifier_input, material, executor_claims(state)),
    )


def standing_answer(state: DiagnosisState) -> VerifiedCycle | None:
    """The latest completed verification of the run: the current one if a later cycle completed its own, else
    the one kept before the evidence retry; None when no Verifier completed."""
    current = current_verification(state)
    earlier = state.verified_before_retry
    if current is None:
        return earlier
    if earlier is not None and current.cycle <= earlier.cycle:
        return earlier
    return current


def retry_failed(state: DiagnosisState) -> bool:
    """An evidence retry started and did not complete its own verification: the earlier answer stands."""
    earlier = state.verified_before_retry
    return earlier is not None and standing_answer(state) is earlier


def guarded_statements(state: DiagnosisState, answer: VerifiedCycle) -> tuple[str, ...]:
    """What an answer resting on ``answer`` must never state: that cycle's disallowed claims, and every claim of a
    later cycle (its Executor's, its verified input's) the material does not allow."""
    later = _excluded(state.verifier_input, answer.allowed_material, executor_claims(state))
    return tuple(dict.fromkeys([*answer.excluded_statements, *later]))


def _excluded(
    verifier_input: contracts_pb2.VerifierInput | None,
    material: AllowedMaterial | None,
    claims: Iterable[contracts_pb2.Claim],
) -> tuple[str, ...]:
    if material is None:
        return ()
    return excluded_statements(verifier_input=verifier_input, material=material, executor_claims=claims)
