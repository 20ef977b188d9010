"""What the Composer's reply chooses in the rendered answer, and how the answer names its claims (R-A-1, R-A-6).

The reply chooses the headline among the likely causes and the next steps by their refs; without a choice
the first critical cause heads the answer. Every item cites a claim by its label, and the answer carries
the verdict it was rendered under.
"""

from __future__ import annotations

import json

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.material import AllowedMaterial, MaterialClaim
from diagnosis_server.composition.render import answer_text, render_answer, render_verified
from diagnosis_server.protocols.composer import parse_composer_output
from tests.support.verdicts import DIRECT, INFERENCE

from ._inputs import CAUSE, HYPOTHESIS, OOM, Spec, V, build

RESTARTS = Spec(
    "c5",
    "checkout-api containers were OOMKilled, which explains the restarts",
    INFERENCE,
    (("inv-1", "/events/0/reason", "OOMKilled"),),
)


def _reply(**fields: object) -> str:
    return json.dumps({"summary": "s", **fields})


def test_the_headline_is_the_likely_cause_the_reply_names() -> None:
    material = build([OOM, CAUSE, RESTARTS], V.VERDICT_PASS).material
    output = render_answer(material, parse_composer_output(_reply(headline="c5")))
    assert output.summary == f"Likely cause (inferred from c1): {RESTARTS.statement}"
    assert output.likely_cause.claim_ids == ["c5"]


def test_without_a_choice_the_first_critical_cause_is_the_headline() -> None:
    minor = Spec(CAUSE.claim_id, CAUSE.statement, INFERENCE, CAUSE.bindings, critical=False)
    output = render_verified(build([OOM, minor, RESTARTS], V.VERDICT_PASS).material)
    assert output.likely_cause.claim_ids == ["c5"]
    assert output.summary == f"Likely cause (inferred from c1): {RESTARTS.statement}"


def test_the_reply_chooses_next_steps_only_by_the_refs_of_its_next_steps() -> None:
    """A step's ref among the reply's gaps chooses no step; the step the reply names is the only one shown."""
    material = build([OOM, CAUSE, HYPOTHESIS], V.VERDICT_PASS).material
    assert [s.step_id for s in material.next_steps] == ["s1", "s2"]
    reply = _reply(evidence_gaps=[{"text": "g", "ref": "s1"}], next_steps=[{"text": "n", "ref": "s2"}])
    output = render_answer(material, parse_composer_output(reply))
    assert [item.text for item in output.next_steps] == [
        "Address the likely cause (c3) and check that the symptoms clear."
    ]


@pytest.mark.requirement("R-A-6")
@pytest.mark.parametrize("verdict", [V.VERDICT_PASS, V.VERDICT_LOW_CONFID, V.VERDICT_REJECT])
def test_the_answer_carries_the_verdict_it_was_rendered_under(verdict: int) -> None:
    material = build([OOM], verdict).material
    assert render_verified(material).verdict == verdict
    assert render_answer(material, parse_composer_output(_reply())).verdict == verdict


def test_a_claim_without_a_label_is_cited_by_the_materials_label_for_it() -> None:
    fact = MaterialClaim("the oom claim", OOM.statement, DIRECT)
    direction = MaterialClaim("c4", HYPOTHESIS.statement, DIRECT, hypothesis=True)
    material = AllowedMaterial(
        verdict=V.VERDICT_LOW_CONFID,
        question="q",
        confirmable=(fact,),
        directions=(direction,),
        labels={"the oom claim": "#1"},
    )
    output = render_verified(material)
    assert [item.claim_ids for item in output.confirmed_facts] == [["#1"]]
    assert [item.claim_ids for item in output.possible_directions] == [["c4"]]


def test_an_item_citing_several_claims_lists_them_comma_separated() -> None:
    output = contracts_pb2.ComposerOutput(summary="s")
    output.next_steps.add(text="Look at both.", claim_ids=["c1", "#2"])
    assert answer_text(output) == "s\n\nNext steps:\n- Look at both. [c1, #2]"
