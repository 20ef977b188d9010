"""The heuristic Composer: verdict-specific answers the composer guard accepts (R-R-3, R-A-1..R-A-3)."""

from __future__ import annotations

import json

import pytest

from diagnosis.v1 import contracts_pb2 as c
from diagnosis_server.agents.heuristic import compose, create_provider
from diagnosis_server.agents.heuristic.findings import HEALTHY_MARK, ROOT_CAUSE_CLAUSE, ROOT_CAUSE_MARK
from diagnosis_server.composition.guard import guard_composer_output
from diagnosis_server.composition.material import AllowedMaterial, allowed_material, excluded_statements
from diagnosis_server.protocols.composer import parse_composer_output

from ._support import request

DIRECT = c.CLAIM_CLASSIFICATION_DIRECT_OBSERVATION
INFERENCE = c.CLAIM_CLASSIFICATION_REASONABLE_INFERENCE
UNSUPPORTED = c.CLAIM_CLASSIFICATION_UNSUPPORTED

SYMPTOM = "checkout-api http_requests_error_rate rose above its baseline to a peak of 0.2457"
ROOT = "checkout-api containers were OOMKilled" + ROOT_CAUSE_CLAUSE
GUESS = "payments-api v1.42.1 was deployed at 13:20"
HIDDEN = "orders-db is out of connections"
GAP = "the cause of warehouse-gateway's failures is not established (next: k8s.events service=warehouse-gateway)"


def _material(
    claims: list[tuple[str, str, int]], verdict: int, gaps: list[c.EvidenceGap] | None = None
) -> tuple[AllowedMaterial, tuple[str, ...]]:
    vi = c.VerifierInput(diagnosis_context=c.DiagnosisContext(question="Why are checkouts failing?"))
    vo = c.VerifierOutput(verdict=verdict, groundedness_score=1.0)  # type: ignore[arg-type]
    for claim_id, statement, classification in claims:
        vi.verified_executor_output.claims.add(claim_id=claim_id, statement=statement, critical=True)
        vo.claim_checks.add(claim_id=claim_id, classification=classification, critical=True)  # type: ignore[arg-type]
    vo.evidence_gaps.extend(gaps or [])
    material = allowed_material(verifier_input=vi, verifier_output=vo, effective=verdict)  # type: ignore[arg-type]
    return material, excluded_statements(verifier_input=vi, material=material)


def _answer(material: AllowedMaterial, excluded: tuple[str, ...]) -> c.ComposerOutput:
    parsed = parse_composer_output(json.dumps(compose(material.to_json())))
    assert parsed.ok and parsed.output is not None, parsed.error
    assert guard_composer_output(parsed.output, material, excluded_statements=excluded) == []
    return parsed.output


def _text(output: c.ComposerOutput) -> str:
    items = [*output.confirmed_facts, *output.possible_directions, *output.evidence_gaps, *output.next_steps]
    return "\n".join([output.summary, *(item.text for item in items)])


def test_r_r_3_pass_names_the_confirmed_diagnosis() -> None:
    material, excluded = _material(
        [("c1", SYMPTOM, DIRECT), ("c2", ROOT, DIRECT), ("c3", HIDDEN, UNSUPPORTED)], c.VERDICT_PASS
    )
    output = _answer(material, excluded)
    assert output.summary.startswith("Diagnosis: ") and ROOT in output.summary and "[c2]" in output.summary
    assert [list(item.claim_ids) for item in output.confirmed_facts] == [["c1"], ["c2"]]
    assert HIDDEN not in _text(output)


def test_pass_without_anomaly_claims_is_no_incident_found() -> None:
    healthy = f"web-frontend http_requests_error_rate {HEALTHY_MARK} (peak 0.0046, baseline mean 0.0014)"
    material, excluded = _material([("c1", healthy, DIRECT)], c.VERDICT_PASS)
    output = _answer(material, excluded)
    assert output.summary.startswith("No incident found")
    assert ROOT_CAUSE_MARK not in _text(output)
    assert [item.text.rstrip(".") for item in output.confirmed_facts] == [healthy]


def test_r_a_2_low_confid_separates_facts_directions_gaps_and_next_steps() -> None:
    material, excluded = _material(
        [("c1", SYMPTOM, DIRECT), ("c2", ROOT, DIRECT), ("c3", GUESS, INFERENCE), ("c4", HIDDEN, UNSUPPORTED)],
        c.VERDICT_LOW_CONFID,
        [c.EvidenceGap(description=GAP, critical=True)],
    )
    output = _answer(material, excluded)
    assert output.summary.startswith("Partial diagnosis with low confidence")
    assert [list(i.claim_ids) for i in output.confirmed_facts] == [["c1"], ["c2"]]
    assert [list(i.claim_ids) for i in output.possible_directions] == [["c3"]]
    # Nothing is presented as a confirmed root cause; gaps are the Verifier's, next steps come from them.
    assert ROOT_CAUSE_MARK not in _text(output)
    assert [g.text for g in output.evidence_gaps] == ["the cause of warehouse-gateway's failures is not established."]
    assert [s.text for s in output.next_steps] == [
        "List the Kubernetes events of warehouse-gateway (k8s.events service=warehouse-gateway)."
    ]
    assert HIDDEN not in _text(output)


def test_r_a_3_reject_has_no_directions_and_no_root_cause_conclusion() -> None:
    material, excluded = _material(
        [("c1", SYMPTOM, DIRECT), ("c2", ROOT, DIRECT), ("c3", GUESS, INFERENCE)],
        c.VERDICT_REJECT,
        [c.EvidenceGap(description="claim c3 is contradicted", critical=True)],
    )
    output = _answer(material, excluded)
    assert "cannot support a reliable conclusion" in output.summary
    assert not output.possible_directions
    assert ROOT_CAUSE_MARK not in _text(output)
    assert GUESS not in _text(output)
    assert output.next_steps


@pytest.mark.parametrize("verdict", ["PASS", "LOW_CONFID", "REJECT"])
async def test_the_agent_answers_from_the_material_json(verdict: str) -> None:
    reply = (
        await create_provider()
        .agent("composer")
        .run(
            request(
                "composer",
                {
                    "verdict": verdict,
                    "question": "q",
                    "confirmed_facts": [{"claim_id": "c1", "statement": SYMPTOM}],
                    "possible_directions": [],
                    "evidence_gaps": [],
                },
            )
        )
    )
    parsed = parse_composer_output(reply.text)
    assert parsed.ok and parsed.output is not None
    assert [list(i.claim_ids) for i in parsed.output.confirmed_facts] == [["c1"]]
