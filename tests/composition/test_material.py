"""The Verifier-allowed material (R-R-3, R-A-1..3)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.material import (
    AllowedMaterial,
    MaterialClaim,
    allowed_material,
    excluded_statements,
    mentions,
)

from ._inputs import ONE_OF_EACH, STATEMENT, C, V, verifier_pair


def material_for(effective: int, **kwargs: Any) -> AllowedMaterial:
    vin, vout = verifier_pair(ONE_OF_EACH, **kwargs)
    return allowed_material(verifier_input=vin, verifier_output=vout, effective=effective)  # type: ignore[arg-type]


def ids(claims: Iterable[MaterialClaim]) -> list[str]:
    return [c.claim_id for c in claims]


@pytest.mark.parametrize(
    ("effective", "confirmable", "directions"),
    [
        (V.VERDICT_PASS, ["c-do", "c-ri"], ["c-ov"]),
        (V.VERDICT_LOW_CONFID, ["c-do"], ["c-ri", "c-ov"]),
        (V.VERDICT_REJECT, ["c-do"], []),
        (V.VERDICT_UNSPECIFIED, ["c-do"], []),  # fail closed: treated as REJECT
    ],
)
def test_r_r_3_material_by_effective_verdict(effective: int, confirmable: list[str], directions: list[str]) -> None:
    m = material_for(effective)
    assert ids(m.confirmable) == confirmable
    assert ids(m.directions) == directions
    cited = set(confirmable) | set(directions)
    assert not cited & {"c-un", "c-eu", "c-co"}


def test_unknown_effective_verdict_is_material_for_reject() -> None:
    assert material_for(V.VERDICT_UNSPECIFIED).verdict == V.VERDICT_REJECT
    assert material_for(V.ValueType(9)).verdict == V.VERDICT_REJECT


def test_r_a_1_statements_come_from_the_verified_output_with_their_classification() -> None:
    m = material_for(V.VERDICT_PASS)
    assert [(c.claim_id, c.statement, c.classification) for c in m.confirmable] == [
        ("c-do", STATEMENT["c-do"], C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION),
        ("c-ri", STATEMENT["c-ri"], C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE),
    ]


def test_claim_without_a_check_is_never_material() -> None:
    vin, vout = verifier_pair(ONE_OF_EACH)
    vin.verified_executor_output.claims.add(claim_id="c-new", statement="an unchecked claim", critical=True)
    m = allowed_material(verifier_input=vin, verifier_output=vout, effective=V.VERDICT_PASS)
    assert "c-new" not in m.allowed_claim_ids()
    assert "an unchecked claim" in excluded_statements(verifier_input=vin, material=m)


def test_r_a_2_gaps_are_only_the_verifiers_valid_gaps() -> None:
    gaps = [
        contracts_pb2.EvidenceGap(claim_id="c-un", description="no disk metrics", critical=True),
        contracts_pb2.EvidenceGap(description="  ", critical=True),
        contracts_pb2.EvidenceGap(claim_id="c-zz", description="about no claim", critical=True),
    ]
    vin, vout = verifier_pair(ONE_OF_EACH, gaps=gaps)
    vin.verified_executor_output.evidence_gaps.add(description="an Executor-stated gap", critical=True)
    m = allowed_material(verifier_input=vin, verifier_output=vout, effective=V.VERDICT_LOW_CONFID)
    assert [(g.claim_id, g.description) for g in m.evidence_gaps] == [("c-un", "no disk metrics")]
    # A gap may name an unsupported claim; that never makes the claim citable as material.
    assert m.gap_claim_ids() == frozenset({"c-un"})
    assert "c-un" not in m.allowed_claim_ids()


def test_gap_quoting_a_disallowed_statement_is_redacted() -> None:
    gaps = [contracts_pb2.EvidenceGap(claim_id="c-un", description="Nothing shows THE DATABASE DISK IS FULL.")]
    vin, vout = verifier_pair(ONE_OF_EACH, gaps=gaps)
    m = allowed_material(verifier_input=vin, verifier_output=vout, effective=V.VERDICT_LOW_CONFID)
    (only,) = m.evidence_gaps
    assert "disk is full" not in only.description.lower()
    assert only.description.startswith("Nothing shows [")


def test_to_json_is_the_composer_input_projection() -> None:
    gaps = [contracts_pb2.EvidenceGap(claim_id="c-un", description="no disk metrics", critical=True)]
    m = material_for(V.VERDICT_LOW_CONFID, gaps=gaps)
    assert m.to_json() == {
        "verdict": "LOW_CONFID",
        "question": "why is checkout returning 500s?",
        "confirmed_facts": [{"claim_id": "c-do", "statement": STATEMENT["c-do"]}],
        "possible_directions": [
            {"claim_id": "c-ri", "statement": STATEMENT["c-ri"]},
            {"claim_id": "c-ov", "statement": STATEMENT["c-ov"]},
        ],
        "evidence_gaps": [{"claim_id": "c-un", "description": "no disk metrics", "critical": True}],
    }


@pytest.mark.parametrize("effective", [V.VERDICT_PASS, V.VERDICT_LOW_CONFID, V.VERDICT_REJECT])
def test_excluded_statements_are_the_verified_claims_not_allowed(effective: int) -> None:
    vin, vout = verifier_pair(ONE_OF_EACH)
    m = allowed_material(verifier_input=vin, verifier_output=vout, effective=effective)  # type: ignore[arg-type]
    excluded = set(excluded_statements(verifier_input=vin, material=m))
    assert m.allowed_claim_ids() == {c.claim_id for c in (*m.confirmable, *m.directions)}
    allowed = {c.statement for c in (*m.confirmable, *m.directions)}
    assert excluded | allowed == set(STATEMENT.values())
    assert not excluded & allowed


def test_repeated_claim_id_is_material_once_and_its_other_statement_is_excluded() -> None:
    vin, vout = verifier_pair(ONE_OF_EACH)
    vin.verified_executor_output.claims.add(claim_id="c-do", statement="a second statement under c-do")
    m = allowed_material(verifier_input=vin, verifier_output=vout, effective=V.VERDICT_PASS)
    assert [c.statement for c in m.confirmable if c.claim_id == "c-do"] == [STATEMENT["c-do"]]
    assert "a second statement under c-do" in excluded_statements(verifier_input=vin, material=m)


def test_mentions_is_case_insensitive_and_ignores_covered_occurrences() -> None:
    assert mentions("We saw: The Database Disk Is Full.", "the database disk is full")
    assert not mentions("anything", "   ")
    # An excluded statement inside an allowed statement that says more does not count...
    assert not mentions("pool exhausted at 10:02 on db-1", "pool exhausted", covering=["pool exhausted at 10:02"])
    # ...but a bare occurrence next to it does.
    assert mentions(
        "pool exhausted at 10:02; also pool exhausted", "pool exhausted", covering=["pool exhausted at 10:02"]
    )
