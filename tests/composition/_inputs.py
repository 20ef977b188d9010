"""Builders of verified inputs and Verifier outputs for composition tests."""

from __future__ import annotations

from collections.abc import Sequence

from diagnosis.v1 import contracts_pb2

C = contracts_pb2.ClaimClassification
V = contracts_pb2.Verdict


def verifier_pair(
    claims: Sequence[tuple[str, str, int]],
    *,
    gaps: Sequence[contracts_pb2.EvidenceGap] = (),
    question: str = "why is checkout returning 500s?",
) -> tuple[contracts_pb2.VerifierInput, contracts_pb2.VerifierOutput]:
    """(claim_id, statement, classification) triples -> a VerifierInput and a VerifierOutput that checks them."""
    verified = contracts_pb2.VerifiedExecutorOutput(contract="executor_evidence_v2")
    output = contracts_pb2.VerifierOutput(verdict=V.VERDICT_PASS, groundedness_score=0.9)
    for claim_id, statement, classification in claims:
        verified.claims.add(claim_id=claim_id, statement=statement, critical=True)
        output.claim_checks.add(claim_id=claim_id, classification=classification, critical=True)  # type: ignore[arg-type]
    output.evidence_gaps.extend(gaps)
    verifier_input = contracts_pb2.VerifierInput(
        diagnosis_context=contracts_pb2.DiagnosisContext(question=question, scenario="checkout", cycle=1),
        verified_executor_output=verified,
        verdict_ceiling=V.VERDICT_PASS,
    )
    return verifier_input, output


# One claim of each classification, with distinctive statements.
ONE_OF_EACH = [
    ("c-do", "checkout-api logged HTTP 500 from 10:02", C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION),
    ("c-ri", "the 500s follow the 09:58 deploy", C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE),
    ("c-ov", "the deploy broke every region", C.CLAIM_CLASSIFICATION_OVERSTATED),
    ("c-un", "the database disk is full", C.CLAIM_CLASSIFICATION_UNSUPPORTED),
    ("c-eu", "the payment provider had an outage", C.CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN),
    ("c-co", "no errors were logged", C.CLAIM_CLASSIFICATION_CONTRADICTED),
]
STATEMENT = {claim_id: statement for claim_id, statement, _ in ONE_OF_EACH}
