"""The heuristic Composer: it chooses from the allowed material; the guard accepts its choice and the service
renders the answer (R-R-3, R-A-1..R-A-3)."""

from __future__ import annotations

import json

import pytest

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.agents.heuristic import compose, create_provider
from diagnosis_server.composition.composer_rules import composer_output_violations
from diagnosis_server.composition.material import AllowedMaterial, allowed_material, excluded_statements
from diagnosis_server.composition.render import answer_text, render_answer
from diagnosis_server.protocols.composer import parse_composer_output

from ._support import request

V = c.Verdict
OOM = "checkout-api containers were OOMKilled"
ERRORS = "checkout-api returns 503 to its callers"
CAUSE = "checkout-api containers were OOMKilled, which explains the observed symptoms"
HYPOTHESIS = "a deploy of checkout-api may be involved"
HIDDEN = "the orders-db disk is full"
# claim id, statement, classification, status, the (invocation, path) it is bound to
CLAIMS = [
    ("c1", OOM, c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION, c.CLAIM_STATUS_CONFIRMED, ("inv-1", "/events/0/reason")),
    ("c2", ERRORS, c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION, c.CLAIM_STATUS_CONFIRMED, ("inv-2", "/lines/0")),
    ("c3", CAUSE, c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE, c.CLAIM_STATUS_CONFIRMED, ("inv-1", "/events/0/reason")),
    ("c4", HYPOTHESIS, c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION, c.CLAIM_STATUS_HYPOTHESIS, ("inv-3", "/deploys/0")),
    ("c5", HIDDEN, c.CLAIM_CLASSIFICATION_UNSUPPORTED, c.CLAIM_STATUS_CONFIRMED, ("inv-4", "/x")),
]


def _material(verdict: int) -> tuple[AllowedMaterial, tuple[str, ...]]:
    vi = c.VerifierInput(diagnosis_context=c.DiagnosisContext(question="Why are checkouts failing?"))
    vo = c.VerifierOutput(verdict=verdict, groundedness_score=1.0)  # type: ignore[arg-type]
    for claim_id, statement, classification, status, (invocation, path) in CLAIMS:
        vi.verified_executor_output.claims.add(claim_id=claim_id, statement=statement, critical=True, status=status)
        vi.verified_evidence.add(claim_id=claim_id, source_invocation_id=invocation, raw_path=path, matched_text="x")
        vo.claim_checks.add(claim_id=claim_id, classification=classification, critical=True)
    vo.evidence_gaps.add(claim_id="c4", description="the deploy history was not read", critical=True)
    material = allowed_material(verifier_input=vi, verifier_output=vo, effective=verdict)  # type: ignore[arg-type]
    return material, excluded_statements(verifier_input=vi, material=material)


@pytest.mark.parametrize("verdict", [V.VERDICT_PASS, V.VERDICT_LOW_CONFID, V.VERDICT_REJECT])
def test_its_choice_passes_the_guard_under_every_verdict(verdict: int) -> None:
    material, excluded = _material(verdict)
    parsed = parse_composer_output(json.dumps(compose(material.to_json())))
    assert parsed.ok, parsed.error
    assert composer_output_violations(parsed, material, excluded_statements=excluded) == []


@pytest.mark.requirement("R-R-3")
def test_pass_leads_with_the_likely_cause_and_shows_every_allowed_item() -> None:
    material, _ = _material(V.VERDICT_PASS)
    parsed = parse_composer_output(json.dumps(compose(material.to_json())))
    assert parsed.headline == "c3"
    output = render_answer(material, parsed)
    assert output.summary == f"Likely cause (inferred from c1): {CAUSE}"
    assert [list(i.claim_ids) for i in output.confirmed_facts] == [["c1"], ["c2"]]
    assert [list(i.claim_ids) for i in output.possible_directions] == [["c4"]]
    assert [g.claim_ids for g in output.evidence_gaps] == [["c4"]]


@pytest.mark.requirement("R-A-2")
def test_low_confid_keeps_inferences_and_hypotheses_as_directions() -> None:
    material, _ = _material(V.VERDICT_LOW_CONFID)
    reply = compose(material.to_json())
    assert "headline" not in reply
    output = render_answer(material, parse_composer_output(json.dumps(reply)))
    assert [list(i.claim_ids) for i in output.possible_directions] == [["c3"], ["c4"]]
    assert CAUSE not in answer_text(output).split("Possible directions:")[0]


@pytest.mark.requirement("R-A-3")
def test_reject_chooses_facts_gaps_and_steps_only() -> None:
    material, _ = _material(V.VERDICT_REJECT)
    reply = compose(material.to_json())
    assert reply["possible_directions"] == [] and "headline" not in reply
    text = answer_text(render_answer(material, parse_composer_output(json.dumps(reply))))
    assert "cannot support a reliable conclusion" in text
    assert OOM in text and CAUSE not in text and HYPOTHESIS not in text and HIDDEN not in text


async def test_the_agent_replies_with_its_choice_as_json() -> None:
    material, _ = _material(V.VERDICT_PASS)
    reply = await create_provider().agent("composer").run(request("composer", material.to_json()))
    assert json.loads(reply.text) == compose(material.to_json())
    assert reply.model == "heuristic"
