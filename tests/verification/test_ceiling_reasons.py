"""Each claim's ceiling, with the reason the evaluation records for it: which check capped it, and only when
the cap lowers it (R-V-4, R-V-5, R-P-1)."""

from __future__ import annotations

import pytest

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.gatekeeper.rules import INSTRUCTION_TEXT
from diagnosis_server.verification.classification_ceiling import Ceiling, claim_ceiling

DIRECT = c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
UNSUPPORTED = c.CLAIM_CLASSIFICATION_UNSUPPORTED
CONTRADICTED = c.CLAIM_CLASSIFICATION_CONTRADICTED
NO_FACT = Ceiling(UNSUPPORTED, "nothing to check: the claim states no concrete fact", False)
FAILED = "a binding of this claim failed the Gatekeeper"


def _case(
    statement: str, matched: str = "checkout-api OOMKilled", *, failed: bool = False, warning: str = "", index: int = 0
) -> tuple[c.Claim, c.VerifierInput]:
    bindings = [c.CheckedBinding(claim_id="c1", passed=True, warning_rules=[warning] if warning else [])]
    if failed:
        bindings.append(c.CheckedBinding(claim_id="c1", binding_index=1, passed=False))
    claim = c.Claim(claim_id="c1", statement=statement, critical=True, status=c.CLAIM_STATUS_CONFIRMED)
    evidence = c.VerifiedEvidence(
        claim_id="c1",
        source_invocation_id="inv-1",
        tool_name="k8s.events",
        raw_path="/items/0/reason",
        matched_text=matched,
        checked_binding_index=index,
    )
    verifier_input = c.VerifierInput(
        diagnosis_context=c.DiagnosisContext(question="why is checkout-api failing?"),
        verified_executor_output=c.VerifiedExecutorOutput(claims=[claim]),
        verified_evidence=[evidence],
        gatekeeper_audit=c.GatekeeperResult(checked_bindings=bindings),
    )
    return claim, verifier_input


def test_a_claim_without_verified_evidence_is_unsupported_and_says_so() -> None:
    claim, verifier_input = _case("checkout-api was OOMKilled")
    other = c.Claim(claim_id="c2", statement="checkout-api was OOMKilled", critical=True)
    assert claim_ceiling(other, verifier_input) == Ceiling(UNSUPPORTED, "no verified evidence for this claim", False)
    assert claim_ceiling(claim, verifier_input) == Ceiling(
        DIRECT, "all of checkout-api, OOMKilled found in the verified evidence", False
    )


@pytest.mark.requirement("R-V-5")
def test_each_cap_names_its_check_and_is_not_a_fabrication() -> None:
    assert claim_ceiling(*_case("checkout-api was OOMKilled", failed=True)) == Ceiling(UNSUPPORTED, FAILED, False)
    assert claim_ceiling(*_case("checkout-api was OOMKilled", warning=INSTRUCTION_TEXT)) == Ceiling(
        UNSUPPORTED, "its evidence reads as an instruction to the diagnosis, not as an observation", False
    )
    assert claim_ceiling(*_case("checkout-api was OOMKilled \u202eabc\u202c")) == Ceiling(
        UNSUPPORTED, "its statement holds bidi control characters", False
    )


@pytest.mark.requirement("R-V-4")
def test_a_cap_never_raises_and_never_replaces_a_lower_reason() -> None:
    # Already unsupported (no fact to check), or contradicted: the cap leaves the derivation's own reason.
    assert claim_ceiling(*_case("something is wrong")) == NO_FACT
    assert claim_ceiling(*_case("something is wrong", failed=True)) == NO_FACT
    assert claim_ceiling(*_case("something is wrong", warning=INSTRUCTION_TEXT)) == NO_FACT
    assert claim_ceiling(*_case("something is wrong \u202eabc\u202c")) == NO_FACT
    fabricated = Ceiling(CONTRADICTED, "fabricated: it names E4291, which its verified evidence does not hold", True)
    assert claim_ceiling(*_case("checkout-api failed with code E4291", "checkout-api", failed=True)) == fabricated
    assert claim_ceiling(*_case("checkout-api failed with code E4291 \u202eabc\u202c", "checkout-api")) == fabricated


def test_an_evidence_index_outside_the_audit_is_no_instruction_and_no_error() -> None:
    for index in (1, 2, -1):
        assert claim_ceiling(*_case("checkout-api was OOMKilled", index=index)).classification == DIRECT
    # The instruction warning is read from the audited binding the evidence names, not from any other.
    warned = _case("checkout-api was OOMKilled", warning=INSTRUCTION_TEXT, index=1)
    assert claim_ceiling(*warned).classification == DIRECT


def test_the_question_grounds_words_beside_the_values_the_evidence_was_found_in() -> None:
    """The whole recorded values add to the words that may be grounded; they never replace the question's."""
    claim, verifier_input = _case("checkout-api was OOMKilled during the flash sale")
    verifier_input.diagnosis_context.question = "why did checkout-api fail during the flash sale?"
    values = {("inv-1", "/items/0/reason"): "Container checkout-api was OOMKilled"}
    assert claim_ceiling(claim, verifier_input, values) == Ceiling(
        DIRECT, "all of checkout-api, OOMKilled found in the verified evidence", False
    )
