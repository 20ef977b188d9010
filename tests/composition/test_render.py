"""Deterministic safe renderings and the answer text (R-A-2..5, R-R-3, R-R-5)."""

from __future__ import annotations

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.material import AllowedMaterial, allowed_material, excluded_statements
from diagnosis_server.composition.render import answer_text, render_pre_verification_fallback, render_verified

from ._inputs import ONE_OF_EACH, STATEMENT, V, verifier_pair

S = contracts_pb2.ComposerSource

GAPS = [
    contracts_pb2.EvidenceGap(claim_id="c-un", description="no disk usage metrics for db-1", critical=True),
    contracts_pb2.EvidenceGap(description="no traces of checkout requests", critical=False),
]


def material(effective: int, gaps: list[contracts_pb2.EvidenceGap] | None = None) -> AllowedMaterial:
    vin, vout = verifier_pair(ONE_OF_EACH, gaps=GAPS if gaps is None else gaps)
    return allowed_material(verifier_input=vin, verifier_output=vout, effective=effective)  # type: ignore[arg-type]


def cited(items: object) -> list[list[str]]:
    return [list(i.claim_ids) for i in items]  # type: ignore[attr-defined]


def test_r_a_5_post_verification_rendering_uses_allowed_material_only() -> None:
    for effective in (V.VERDICT_PASS, V.VERDICT_LOW_CONFID, V.VERDICT_REJECT):
        vin, vout = verifier_pair(ONE_OF_EACH, gaps=GAPS)
        m = allowed_material(verifier_input=vin, verifier_output=vout, effective=effective)
        out = render_verified(m)
        assert out.source == S.COMPOSER_SOURCE_POST_VERIFICATION_FALLBACK
        assert out.verdict == effective
        text = answer_text(out).lower()
        for statement in excluded_statements(verifier_input=vin, material=m):
            assert statement.lower() not in text
        for field in ("confirmed_facts", "possible_directions"):
            for item in getattr(out, field):
                assert set(item.claim_ids) <= m.allowed_claim_ids()
        for field in ("evidence_gaps", "next_steps"):
            for item in getattr(out, field):
                assert set(item.claim_ids) <= m.allowed_claim_ids() | m.gap_claim_ids()


def test_r_r_3_pass_states_the_confirmed_diagnosis() -> None:
    out = render_verified(material(V.VERDICT_PASS, gaps=[]))
    assert out.verdict == V.VERDICT_PASS
    assert "Confirmed diagnosis" in out.summary
    assert STATEMENT["c-do"] in out.summary
    assert STATEMENT["c-ri"] in out.summary
    assert cited(out.confirmed_facts) == [["c-do"], ["c-ri"]]
    assert [i.text for i in out.confirmed_facts] == [STATEMENT["c-do"], STATEMENT["c-ri"]]
    assert cited(out.possible_directions) == [["c-ov"]]
    assert STATEMENT["c-ov"] not in out.summary  # an overstated claim is never part of the diagnosis


def test_r_a_2_low_confid_separates_facts_directions_gaps_and_next_steps() -> None:
    out = render_verified(material(V.VERDICT_LOW_CONFID))
    assert "partial" in out.summary
    assert "no diagnosis is confirmed" in out.summary
    assert cited(out.confirmed_facts) == [["c-do"]]
    assert cited(out.possible_directions) == [["c-ri"], ["c-ov"]]
    assert [i.text for i in out.evidence_gaps] == ["no disk usage metrics for db-1", "no traces of checkout requests"]
    # Nothing unsupported is presented as confirmed: the summary holds no claim statement at all.
    for statement in STATEMENT.values():
        assert statement not in out.summary
    text = answer_text(out)
    sections = [line for line in text.splitlines() if line.endswith(":")]
    assert sections == ["Confirmed facts:", "Possible directions:", "Evidence gaps:", "Next steps:"]


def test_next_steps_come_from_gaps_and_directions_by_template() -> None:
    out = render_verified(material(V.VERDICT_LOW_CONFID))
    assert [(i.text, list(i.claim_ids)) for i in out.next_steps] == [
        ("Collect evidence for: no disk usage metrics for db-1", ["c-un"]),
        ("Collect evidence for: no traces of checkout requests", []),
        (f"Verify with direct evidence: {STATEMENT['c-ri']}", ["c-ri"]),
        (f"Verify with direct evidence: {STATEMENT['c-ov']}", ["c-ov"]),
    ]


@pytest.mark.parametrize("effective", [V.VERDICT_REJECT, V.VERDICT_UNSPECIFIED])
def test_r_a_3_reject_says_no_reliable_conclusion_and_holds_only_facts_gaps_next_steps(effective: int) -> None:
    out = render_verified(material(effective))
    assert out.verdict == V.VERDICT_REJECT
    assert "cannot support a reliable conclusion" in out.summary
    assert "no root cause" in out.summary
    assert not out.possible_directions
    assert cited(out.confirmed_facts) == [["c-do"]]
    assert len(out.evidence_gaps) == 2
    text = answer_text(out)
    for claim_id in ("c-ri", "c-ov", "c-un", "c-eu", "c-co"):
        if claim_id != "c-un":  # c-un is named only by the Verifier's gap
            assert claim_id not in text
        assert STATEMENT[claim_id] not in text
    assert "Possible directions" not in text


def test_r_r_5_reject_without_gaps_still_suggests_a_next_step() -> None:
    out = render_verified(material(V.VERDICT_REJECT, gaps=[]))
    assert len(out.next_steps) == 1
    assert "Collect more evidence" in out.next_steps[0].text


def test_rendering_is_deterministic() -> None:
    for effective in (V.VERDICT_PASS, V.VERDICT_LOW_CONFID, V.VERDICT_REJECT):
        first = render_verified(material(effective)).SerializeToString(deterministic=True)
        assert render_verified(material(effective)).SerializeToString(deterministic=True) == first


@pytest.mark.parametrize(
    ("code", "fragment"),
    [
        ("EXECUTOR_INVALID_OUTPUT", "valid structured result"),
        ("TOOL_BLOCKED", "not allowed"),
        ("GATEKEEPER_REJECT", "recorded tool output"),
        ("NO_VERIFIED_EVIDENCE", "verified tool output"),
        ("VERIFIER_FAILED", "verification"),
        ("PLANNER_FAILED", "planned"),
        ("RECURSION_LIMIT", "step limit"),
        ("recursion_limit", "step limit"),
        ("SOMETHING_NEW", "did not complete"),
        ("", "did not complete"),
    ],
)
def test_r_a_4_pre_verification_fallback_is_generic(code: str, fragment: str) -> None:
    out = render_pre_verification_fallback(code)
    assert out.source == S.COMPOSER_SOURCE_PRE_VERIFICATION_FALLBACK
    assert out.verdict == V.VERDICT_UNSPECIFIED
    assert out.summary.startswith("No verified diagnosis could be produced")
    assert fragment in out.summary
    assert not out.confirmed_facts
    assert not out.possible_directions
    assert out.next_steps
    for field in ("confirmed_facts", "possible_directions", "evidence_gaps", "next_steps"):
        assert all(not item.claim_ids for item in getattr(out, field))


def test_r_a_4_unknown_reason_code_is_never_echoed() -> None:
    code = "the database disk is full"
    assert code not in answer_text(render_pre_verification_fallback(code))


def test_answer_text_lists_non_empty_sections_with_cited_claim_ids() -> None:
    out = contracts_pb2.ComposerOutput(summary="Summary.")
    out.confirmed_facts.add(text="fact one", claim_ids=["c1", "c2"])
    out.next_steps.add(text="do a thing")
    assert answer_text(out) == "Summary.\n\nConfirmed facts:\n- fact one [c1, c2]\n\nNext steps:\n- do a thing"
