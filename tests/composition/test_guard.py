"""The Composer guard: only allowed material reaches the user (R-R-3, R-A-1..3)."""

from __future__ import annotations

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.guard import guard_composer_output
from diagnosis_server.composition.material import AllowedMaterial, allowed_material, excluded_statements
from diagnosis_server.composition.render import render_verified

from ._inputs import ONE_OF_EACH, STATEMENT, V, verifier_pair

GAPS = [contracts_pb2.EvidenceGap(claim_id="c-un", description="no disk usage metrics", critical=True)]


def setup(effective: int, gaps: list[contracts_pb2.EvidenceGap] = GAPS) -> tuple[AllowedMaterial, tuple[str, ...]]:
    vin, vout = verifier_pair(ONE_OF_EACH, gaps=gaps)
    m = allowed_material(verifier_input=vin, verifier_output=vout, effective=effective)  # type: ignore[arg-type]
    return m, excluded_statements(verifier_input=vin, material=m)


def answer(
    summary: str = "The evidence is partial.", **lists: list[tuple[str, list[str]]]
) -> contracts_pb2.ComposerOutput:
    out = contracts_pb2.ComposerOutput(summary=summary, source=contracts_pb2.COMPOSER_SOURCE_COMPOSER)
    for field, items in lists.items():
        for text, claim_ids in items:
            getattr(out, field).add(text=text, claim_ids=claim_ids)
    return out


def test_well_behaved_low_confid_answer_is_accepted() -> None:
    m, excluded = setup(V.VERDICT_LOW_CONFID)
    out = answer(
        confirmed_facts=[("checkout-api returned 500s from 10:02", ["c-do"])],
        possible_directions=[("the errors may follow the deploy", ["c-ri"]), ("maybe all regions", ["c-ov"])],
        evidence_gaps=[("disk usage of db-1 is unknown", ["c-un"])],
        next_steps=[("collect disk metrics", ["c-un"]), ("check the deploy diff", ["c-ri"])],
    )
    assert guard_composer_output(out, m, excluded_statements=excluded) == []


@pytest.mark.parametrize("effective", [V.VERDICT_PASS, V.VERDICT_LOW_CONFID, V.VERDICT_REJECT])
def test_the_deterministic_rendering_passes_the_guard(effective: int) -> None:
    m, excluded = setup(effective)
    assert guard_composer_output(render_verified(m), m, excluded_statements=excluded) == []


def test_confirmed_fact_citing_no_claim_is_a_violation() -> None:
    m, _ = setup(V.VERDICT_LOW_CONFID)
    (violation,) = guard_composer_output(answer(confirmed_facts=[("the root cause is the deploy", [])]), m)
    assert "cites no claim" in violation


@pytest.mark.parametrize("claim_id", ["c-ri", "c-ov", "c-un", "c-co", "c-missing"])
def test_r_a_2_confirmed_fact_citing_a_non_confirmable_claim_is_a_violation(claim_id: str) -> None:
    m, _ = setup(V.VERDICT_LOW_CONFID)
    violations = guard_composer_output(answer(confirmed_facts=[("something", [claim_id])]), m)
    assert any(claim_id in v and "not a confirmable claim" in v for v in violations)


def test_r_r_3_under_pass_reasonable_inference_may_be_confirmed() -> None:
    m, _ = setup(V.VERDICT_PASS)
    assert guard_composer_output(answer(confirmed_facts=[("deploy link", ["c-ri"])]), m) == []


@pytest.mark.parametrize("claim_id", ["c-do", "c-un", "c-eu"])
def test_possible_direction_outside_the_directions_is_a_violation(claim_id: str) -> None:
    m, _ = setup(V.VERDICT_LOW_CONFID)
    violations = guard_composer_output(answer(possible_directions=[("perhaps", [claim_id])]), m)
    assert any("not an allowed direction" in v for v in violations)


def test_uncited_possible_direction_is_a_violation() -> None:
    m, _ = setup(V.VERDICT_LOW_CONFID)
    violations = guard_composer_output(answer(possible_directions=[("maybe cosmic rays", [])]), m)
    assert any("cites no claim" in v for v in violations)


def test_r_a_3_any_possible_direction_under_reject_is_a_violation() -> None:
    m, _ = setup(V.VERDICT_REJECT)
    violations = guard_composer_output(answer(possible_directions=[("the deploy", ["c-ri"])]), m)
    assert violations == ["possible directions are not allowed under REJECT"]


@pytest.mark.parametrize("field", ["evidence_gaps", "next_steps"])
def test_claim_id_outside_the_allowed_material_is_a_violation(field: str) -> None:
    m, _ = setup(V.VERDICT_LOW_CONFID)
    violations = guard_composer_output(answer(**{field: [("look at it", ["c-co"])]}), m)
    assert any("outside the allowed material" in v for v in violations)


def test_r_a_2_gaps_without_verifier_gaps_are_a_violation() -> None:
    m, _ = setup(V.VERDICT_LOW_CONFID, gaps=[])
    violations = guard_composer_output(answer(evidence_gaps=[("an invented gap", [])]), m)
    assert violations == ["evidence gaps are listed but the Verifier identified none"]


# A cited claim id the material allows in each place, so that only the leaked text is at fault.
_CITES = {"confirmed_facts": ["c-do"], "possible_directions": ["c-ri"], "evidence_gaps": ["c-un"], "next_steps": []}


@pytest.mark.parametrize("where", ["summary", *_CITES])
@pytest.mark.parametrize("claim_id", ["c-un", "c-eu", "c-co"])
def test_r_a_1_excluded_statement_anywhere_is_a_violation(where: str, claim_id: str) -> None:
    m, excluded = setup(V.VERDICT_LOW_CONFID)
    leaked = f"Note: {STATEMENT[claim_id].upper()}."
    out = answer(summary=leaked) if where == "summary" else answer(**{where: [(leaked, _CITES[where])]})
    violations = guard_composer_output(out, m, excluded_statements=excluded)
    assert len(violations) == 1
    assert violations[0].startswith(where)
    assert "not allowed" in violations[0]


def test_excluded_statement_inside_an_allowed_statement_is_not_a_violation() -> None:
    claims = [
        ("c1", "pool exhausted at 10:02 on db-1", contracts_pb2.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION),
        ("c2", "pool exhausted", contracts_pb2.CLAIM_CLASSIFICATION_UNSUPPORTED),
    ]
    vin, vout = verifier_pair(claims)
    m = allowed_material(verifier_input=vin, verifier_output=vout, effective=V.VERDICT_LOW_CONFID)
    excluded = excluded_statements(verifier_input=vin, material=m)
    ok = answer(confirmed_facts=[("pool exhausted at 10:02 on db-1", ["c1"])])
    assert guard_composer_output(ok, m, excluded_statements=excluded) == []
    leak = answer(summary="The pool exhausted; pool exhausted at 10:02 on db-1.")
    assert guard_composer_output(leak, m, excluded_statements=excluded)


def test_blank_summary_is_a_violation() -> None:
    m, _ = setup(V.VERDICT_PASS)
    assert "summary is empty" in guard_composer_output(answer(summary="  "), m)
