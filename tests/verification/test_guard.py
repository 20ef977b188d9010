"""The guarded Verifier: the model can never raise a classification (issue: guarded Verifier; R-V-5)."""

from __future__ import annotations

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.verification.guard import GUARD_SOURCE, guard_claim_checks

DIRECT = c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
INFERENCE = c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE


def _input(statement: str, matched: str) -> c.VerifierInput:
    return c.VerifierInput(
        verified_executor_output=c.VerifiedExecutorOutput(
            claims=[c.Claim(claim_id="c1", statement=statement, critical=True, status=c.CLAIM_STATUS_CONFIRMED)]
        ),
        verified_evidence=[
            c.VerifiedEvidence(
                claim_id="c1", source_invocation_id="inv-1", tool_name="k8s.events", raw_path="/x", matched_text=matched
            )
        ],
        verdict_ceiling=c.VERDICT_PASS,
    )


def _output(classification: int) -> c.VerifierOutput:
    return c.VerifierOutput(
        claim_checks=[c.ClaimCheck(claim_id="c1", classification=classification, critical=True)],  # type: ignore[arg-type]
        verdict=c.VERDICT_PASS,
        groundedness_score=1.0,
        facts_checked=[c.FactCheck(claim_id="c1", fact="x", support=c.FACT_SUPPORT_DIRECT_EVIDENCE)],
    )


def test_unfounded_direct_observation_is_downgraded_and_recorded() -> None:
    guarded = guard_claim_checks(_output(DIRECT), _input("checkout-api was OOMKilled 14 times", "OOMKilled"))
    assert guarded.claim_checks[0].classification == INFERENCE
    (change,) = guarded.classification_changes
    assert change.claim_id == "c1"
    assert (change.from_classification, change.to_classification) == (DIRECT, INFERENCE)
    assert change.source == GUARD_SOURCE
    assert "14" in change.reason
    assert guarded.facts_checked[0].support == c.FACT_SUPPORT_INDIRECT_SUPPORT


def test_founded_direct_observation_is_kept() -> None:
    output = _output(DIRECT)
    guarded = guard_claim_checks(output, _input("checkout-api was OOMKilled", "checkout-api OOMKilled"))
    assert guarded == output


def test_the_guard_never_raises_a_classification() -> None:
    for classification in (INFERENCE, c.CLAIM_CLASSIFICATION_UNSUPPORTED, c.CLAIM_CLASSIFICATION_CONTRADICTED):
        output = _output(classification)
        guarded = guard_claim_checks(output, _input("checkout-api was OOMKilled", "checkout-api OOMKilled"))
        assert guarded.claim_checks[0].classification == classification
        assert not guarded.classification_changes
