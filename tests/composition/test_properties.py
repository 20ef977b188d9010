"""Properties: whatever the classifications, statuses, bindings, gaps, verdict and Composer reply, the answer
holds only allowed statements and the service's own words (R-A-1..5, R-R-3, R-R-5)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.composer_rules import composer_output_findings
from diagnosis_server.composition.material import allowed_material, excluded_statements
from diagnosis_server.composition.notes import RunRecord, pre_verification_notes
from diagnosis_server.composition.render import answer_text, render_answer, render_pre_verification_fallback
from diagnosis_server.protocols.composer import parse_composer_output
from diagnosis_server.text.normalize import compact

from ._inputs import Spec, claim_pair

C = contracts_pb2.ClaimClassification
V = contracts_pb2.Verdict
CLASSIFICATIONS = [None, *range(1, 7)]
SHOWABLE = {C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION, C.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE}
MARKERS = ("quokka-9Z", "E4291", "zebra-db")


@dataclass
class Case:
    specs: list[Spec]
    verdict: int
    gaps: list[contracts_pb2.EvidenceGap]
    reply: str


@st.composite
def cases(draw: st.DrawFn) -> Case:
    count = draw(st.integers(min_value=1, max_value=6))
    specs: list[Spec] = []
    for i in range(count):
        # Two shared values let inferences rest on facts; «i» keeps each statement distinct.
        bindings = draw(
            st.lists(
                st.sampled_from([("inv-1", "/a", "x"), ("inv-1", "/b", "y"), (f"inv-{i + 2}", "/c", "z")]),
                min_size=1,
                max_size=2,
                unique=True,
            )
        )
        specs.append(
            Spec(
                f"c{i}",
                f"«{i}» claim {draw(st.sampled_from(['one', 'two', 'three']))}",
                draw(st.sampled_from(CLASSIFICATIONS)),
                tuple(bindings),
                hypothesis=draw(st.booleans()),
                critical=draw(st.booleans()),
            )
        )
    gaps = [
        contracts_pb2.EvidenceGap(
            claim_id=draw(st.sampled_from(["", "c0", f"c{count - 1}", "c-unknown"])),
            description=draw(st.sampled_from(["", f"root cause is {MARKERS[0]}", specs[0].statement])),
            critical=draw(st.booleans()),
        )
        for _ in range(draw(st.integers(min_value=0, max_value=3)))
    ]
    ids = [s.claim_id for s in specs] + ["c-unknown"]
    item = st.fixed_dictionaries(
        {
            "text": st.sampled_from([*MARKERS, specs[0].statement, "fine"]),
            "claim_ids": st.lists(st.sampled_from(ids), max_size=2),
        }
    )
    reply = {
        "summary": draw(st.sampled_from([f"the root cause is {MARKERS[1]}", "answer"])),
        "headline": draw(st.sampled_from(["", *ids])),
        "confirmed_facts": draw(st.lists(item, max_size=3)),
        "possible_directions": draw(st.lists(item, max_size=3)),
        "evidence_gaps": draw(st.lists(item, max_size=2)),
        "next_steps": draw(st.lists(item, max_size=2)),
    }
    verdict = draw(st.sampled_from([V.VERDICT_PASS, V.VERDICT_LOW_CONFID, V.VERDICT_REJECT, V.VERDICT_UNSPECIFIED]))
    return Case(specs, verdict, gaps, json.dumps(reply))


def _material(case: Case):  # type: ignore[no-untyped-def]
    verifier_input, output = claim_pair(case.specs, gaps=case.gaps)
    material = allowed_material(verifier_input=verifier_input, verifier_output=output, effective=case.verdict)  # type: ignore[arg-type]
    return verifier_input, material


@pytest.mark.requirement("R-A-1")
@settings(max_examples=400, deadline=None)
@given(case=cases())
def test_the_answer_holds_only_allowed_statements_and_no_composer_text(case: Case) -> None:
    verifier_input, material = _material(case)
    parsed = parse_composer_output(case.reply)
    assert parsed.ok
    output = render_answer(material, parsed)
    shown = compact(answer_text(output) + " " + str(output))
    allowed = material.allowed_claim_ids()
    for spec in case.specs:
        if spec.claim_id not in allowed:
            assert compact(spec.statement) not in shown, spec
        else:
            assert spec.classification in SHOWABLE
    for marker in MARKERS:
        assert compact(marker) not in shown
    if material.verdict != V.VERDICT_PASS:
        assert not output.HasField("likely_cause")
    if material.verdict == V.VERDICT_REJECT:
        assert not output.possible_directions
    # A confirmed fact is a confirmed direct observation, whatever the reply cited there.
    by_id = {s.claim_id: s for s in case.specs}
    for item in output.confirmed_facts:
        (claim_id,) = item.claim_ids
        assert by_id[claim_id].classification == C.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
        assert not by_id[claim_id].hypothesis
    excluded = excluded_statements(verifier_input=verifier_input, material=material)
    composer_output_findings(parsed, material, excluded_statements=excluded)  # never raises


@pytest.mark.requirement("R-A-4")
@settings(max_examples=200, deadline=None)
@given(
    case=cases(),
    code=st.sampled_from(["GATEKEEPER_REJECT", "VERIFIER_FAILED", "PLANNER_FAILED"]) | st.just(f"ROOT {MARKERS[2]}"),
)
def test_a_pre_verification_fallback_holds_no_claim_whatever_it_knows(case: Case, code: str) -> None:
    _, material = _material(case)
    output = render_pre_verification_fallback(pre_verification_notes(RunRecord(code)), known=material)
    text = compact(answer_text(output) + " " + str(output))
    for spec in case.specs:
        assert compact(spec.statement) not in text
    assert not output.confirmed_facts and not output.possible_directions
    assert not any(item.claim_ids for field in ("evidence_gaps", "next_steps") for item in getattr(output, field))
    assert compact(MARKERS[2]) not in text  # a reason code is never echoed
