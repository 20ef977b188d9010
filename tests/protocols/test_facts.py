"""facts_checked mapping and derivation (R-V-6)."""

from __future__ import annotations

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.protocols.facts import FACT_SUPPORT_BY_CLASSIFICATION, derive_facts_checked, fact_support_for

C = contracts_pb2.ClaimClassification
F = contracts_pb2.FactSupport

EXPECTED = {
    "CLAIM_CLASSIFICATION_DIRECT_OBSERVATION": "FACT_SUPPORT_DIRECT_EVIDENCE",
    "CLAIM_CLASSIFICATION_REASONABLE_INFERENCE": "FACT_SUPPORT_INDIRECT_SUPPORT",
    "CLAIM_CLASSIFICATION_OVERSTATED": "FACT_SUPPORT_INDIRECT_SUPPORT",
    "CLAIM_CLASSIFICATION_UNSUPPORTED": "FACT_SUPPORT_NO_EVIDENCE",
    "CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN": "FACT_SUPPORT_NO_EVIDENCE",
    "CLAIM_CLASSIFICATION_CONTRADICTED": "FACT_SUPPORT_CONTRADICTED",
}


@pytest.mark.requirement("R-V-6")
def test_mapping_covers_every_classification_exactly() -> None:
    """Exhaustive over the enum: every specified classification maps as the spec says; nothing else is mapped."""
    specified = {name for name in C.DESCRIPTOR.values_by_name if name != "CLAIM_CLASSIFICATION_UNSPECIFIED"}
    assert specified == set(EXPECTED)
    assert {C.Name(k): F.Name(v) for k, v in FACT_SUPPORT_BY_CLASSIFICATION.items()} == EXPECTED


@pytest.mark.requirement("R-V-6")
@pytest.mark.parametrize("name", sorted(C.DESCRIPTOR.values_by_name))
def test_fact_support_for_each_classification(name: str) -> None:
    expected = EXPECTED.get(name, "FACT_SUPPORT_NO_EVIDENCE")  # unspecified claims no evidence (fail closed)
    assert F.Name(fact_support_for(C.Value(name))) == expected


def test_fact_support_for_unknown_number_claims_no_evidence() -> None:
    assert fact_support_for(C.ValueType(99)) == F.FACT_SUPPORT_NO_EVIDENCE


def test_mapping_is_read_only() -> None:
    with pytest.raises(TypeError):
        FACT_SUPPORT_BY_CLASSIFICATION[C.CLAIM_CLASSIFICATION_UNSUPPORTED] = F.FACT_SUPPORT_DIRECT_EVIDENCE  # type: ignore[index]


@pytest.mark.requirement("R-V-6")
def test_derive_facts_checked_one_fact_a_check_with_the_claims_statement() -> None:
    claims = [
        contracts_pb2.Claim(claim_id="c1", statement="500s since 10:02", critical=True),
        contracts_pb2.Claim(claim_id="c2", statement="pool saturated", critical=True),
    ]
    checks = [
        contracts_pb2.ClaimCheck(claim_id="c2", classification=C.CLAIM_CLASSIFICATION_EXTERNAL_UNKNOWN),
        contracts_pb2.ClaimCheck(claim_id="c1", classification=C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION),
        contracts_pb2.ClaimCheck(claim_id="c9", classification=C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION),
    ]
    facts = derive_facts_checked(checks, claims)
    assert [(f.claim_id, f.fact, f.support) for f in facts] == [
        ("c2", "pool saturated", F.FACT_SUPPORT_NO_EVIDENCE),
        ("c1", "500s since 10:02", F.FACT_SUPPORT_DIRECT_EVIDENCE),
    ]


@pytest.mark.requirement("R-V-6")
@pytest.mark.parametrize(("classification", "support"), list(FACT_SUPPORT_BY_CLASSIFICATION.items()))
def test_derive_uses_the_mapping(classification: int, support: int) -> None:
    claims = [contracts_pb2.Claim(claim_id="c1", statement="s")]
    checks = [contracts_pb2.ClaimCheck(claim_id="c1", classification=classification)]  # type: ignore[arg-type]
    assert derive_facts_checked(checks, claims)[0].support == support


@pytest.mark.requirement("R-V-6")
def test_a_check_of_an_unknown_claim_gives_no_fact_and_the_later_checks_still_do() -> None:
    claims = [contracts_pb2.Claim(claim_id="c1", statement="500s since 10:02", critical=True)]
    checks = [
        contracts_pb2.ClaimCheck(claim_id="c9", classification=C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION),
        contracts_pb2.ClaimCheck(claim_id="c1", classification=C.CLAIM_CLASSIFICATION_CONTRADICTED),
    ]
    facts = derive_facts_checked(checks, claims)
    assert [(f.claim_id, f.fact, f.support) for f in facts] == [("c1", "500s since 10:02", F.FACT_SUPPORT_CONTRADICTED)]
