"""The guarded Verifier: whichever Verifier ran, no claim is classified above its evidence (R-V-4, R-V-5)."""

from __future__ import annotations

import pytest

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.gatekeeper.rules import INSTRUCTION_TEXT
from diagnosis_server.verification.classification_ceiling import GUARD_SOURCE, guard_claim_checks, rank

DIRECT = c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
INFERENCE = c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
OVERSTATED = c.CLAIM_CLASSIFICATION_OVERSTATED
UNSUPPORTED = c.CLAIM_CLASSIFICATION_UNSUPPORTED
CONTRADICTED = c.CLAIM_CLASSIFICATION_CONTRADICTED


def _input(statement: str, matched: str, *, failed: bool = False, warning: str = "") -> c.VerifierInput:
    audit = c.GatekeeperResult(
        checked_bindings=[
            c.CheckedBinding(claim_id="c1", passed=True, warning_rules=[warning] if warning else []),
            *([c.CheckedBinding(claim_id="c1", binding_index=1, passed=False)] if failed else []),
        ]
    )
    return c.VerifierInput(
        diagnosis_context=c.DiagnosisContext(question="why is checkout-api failing?"),
        verified_executor_output=c.VerifiedExecutorOutput(
            claims=[c.Claim(claim_id="c1", statement=statement, critical=True, status=c.CLAIM_STATUS_CONFIRMED)]
        ),
        verified_evidence=[
            c.VerifiedEvidence(
                claim_id="c1",
                source_invocation_id="inv-1",
                tool_name="k8s.events",
                raw_path="/x",
                matched_text=matched,
                checked_binding_index=0,
            )
        ],
        gatekeeper_audit=audit,
        verdict_ceiling=c.VERDICT_PASS,
    )


def _output(classification: int) -> c.VerifierOutput:
    return c.VerifierOutput(
        claim_checks=[c.ClaimCheck(claim_id="c1", classification=classification, critical=True)],  # type: ignore[arg-type]
        verdict=c.VERDICT_PASS,
        groundedness_score=1.0,
        facts_checked=[c.FactCheck(claim_id="c1", fact="x", support=c.FACT_SUPPORT_DIRECT_EVIDENCE)],
    )


def test_a_name_the_evidence_lacks_is_fabricated_contradicted_and_recorded() -> None:
    guarded, fabricated = guard_claim_checks(
        _output(DIRECT), _input("checkout-api was OOMKilled with error E4291", "checkout-api OOMKilled")
    )
    assert guarded.claim_checks[0].classification == CONTRADICTED
    assert fabricated == {"c1"}
    (change,) = guarded.classification_changes
    assert change.claim_id == "c1"
    assert (change.from_classification, change.to_classification) == (DIRECT, CONTRADICTED)
    assert change.source == GUARD_SOURCE
    assert "E4291" in change.reason
    assert guarded.facts_checked[0].support == c.FACT_SUPPORT_CONTRADICTED


def test_a_number_no_output_holds_is_unsupported_not_fabricated() -> None:
    """A count no output holds may be one the claim worked out wrongly or rightly: never shown as observed, and
    no fabrication that rejects the run (R-V-4)."""
    guarded, fabricated = guard_claim_checks(
        _output(DIRECT), _input("checkout-api was OOMKilled 14 times", "checkout-api OOMKilled")
    )
    assert guarded.claim_checks[0].classification == UNSUPPORTED
    assert not fabricated
    (change,) = guarded.classification_changes
    assert "14" in change.reason and change.reason.startswith("not observed: ")


def test_a_conclusion_is_lowered_to_an_inference() -> None:
    statement = "checkout-api was OOMKilled, which caused the errors"
    guarded, fabricated = guard_claim_checks(_output(DIRECT), _input(statement, "checkout-api OOMKilled"))
    assert guarded.claim_checks[0].classification == INFERENCE and not fabricated
    assert guarded.facts_checked[0].support == c.FACT_SUPPORT_INDIRECT_SUPPORT


def test_founded_direct_observation_is_kept() -> None:
    output = _output(DIRECT)
    guarded, fabricated = guard_claim_checks(output, _input("checkout-api was OOMKilled", "checkout-api OOMKilled"))
    assert guarded == output and not fabricated


@pytest.mark.parametrize("classification", [INFERENCE, OVERSTATED, UNSUPPORTED, CONTRADICTED])
def test_the_guard_never_raises_a_classification(classification: int) -> None:
    output = _output(classification)
    guarded, _ = guard_claim_checks(output, _input("checkout-api was OOMKilled", "checkout-api OOMKilled"))
    assert guarded.claim_checks[0].classification == classification
    assert not guarded.classification_changes


def test_a_claim_with_a_failed_binding_is_at_most_unsupported() -> None:
    guarded, _ = guard_claim_checks(
        _output(DIRECT), _input("checkout-api was OOMKilled", "checkout-api OOMKilled", failed=True)
    )
    assert guarded.claim_checks[0].classification == UNSUPPORTED
    assert "failed the Gatekeeper" in guarded.classification_changes[0].reason


def test_a_claim_resting_on_instruction_text_is_at_most_unsupported() -> None:
    guarded, _ = guard_claim_checks(
        _output(DIRECT), _input("checkout-api was OOMKilled", "checkout-api OOMKilled", warning=INSTRUCTION_TEXT)
    )
    assert guarded.claim_checks[0].classification == UNSUPPORTED
    assert "instruction" in guarded.classification_changes[0].reason


def test_rank_orders_classifications_and_fails_closed_on_unknown() -> None:
    assert rank(DIRECT) > rank(INFERENCE) > rank(OVERSTATED) > rank(UNSUPPORTED) > rank(CONTRADICTED)
    assert rank(c.CLAIM_CLASSIFICATION_UNSPECIFIED) < rank(CONTRADICTED)


def test_a_statement_with_bidi_controls_is_at_most_unsupported() -> None:
    statement = "checkout-api was OOMKilled \u202etluav eht si esuac toor eht\u202c"
    guarded, _ = guard_claim_checks(_output(DIRECT), _input(statement, "checkout-api OOMKilled"))
    assert guarded.claim_checks[0].classification == UNSUPPORTED
    assert "bidi" in guarded.classification_changes[0].reason


def test_a_check_of_a_claim_the_input_lacks_is_left_and_the_next_still_guarded() -> None:
    output = _output(DIRECT)
    output.claim_checks.insert(0, c.ClaimCheck(claim_id="c9", classification=DIRECT, critical=True))
    guarded, fabricated = guard_claim_checks(output, _input("checkout-api was OOMKilled by E4291", "OOMKilled"))
    assert [(check.claim_id, check.classification) for check in guarded.claim_checks] == [
        ("c9", DIRECT),
        ("c1", CONTRADICTED),
    ]
    assert [change.claim_id for change in guarded.classification_changes] == ["c1"]
    assert fabricated == {"c1"}


def test_a_recorded_reason_is_cut_to_its_first_300_characters() -> None:
    codes = [f"E{n}" for n in range(1000, 1050)]
    statement = "checkout-api failed with " + ", ".join(codes)
    guarded, _ = guard_claim_checks(_output(DIRECT), _input(statement, "checkout-api"))
    (change,) = guarded.classification_changes
    full = f"fabricated: it names {', '.join(codes)}, which its verified evidence does not hold"
    assert len(full) > 300
    assert change.reason == full[:300]
