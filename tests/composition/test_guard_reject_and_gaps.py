"""The Composer guard under REJECT and with the Verifier's gaps: each refusal names exactly its rule.

R-A-3: a REJECT answer holds no root-cause conclusion: wherever a reply's text concludes a cause (summary,
a confirmed fact's text, a gap, a next step), or names a headline, it is refused. R-A-2: gaps come only from
the Verifier: an extra gap beside the Verifier's, or one in place of one of them, is refused. No Composer text
is shown, but the guard is the record of what the Composer tried, so each must still be refused.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.composer_rules import (
    CAUSE_UNDER_REJECT,
    CITATION,
    INVENTED_GAP,
    composer_output_findings,
)
from diagnosis_server.composition.material import excluded_statements
from diagnosis_server.protocols.composer import parse_composer_output

from ._inputs import ERRORS, OOM, V, build

GAPS = [
    contracts_pb2.EvidenceGap(claim_id="c1", description="memory of checkout-api against its limit", critical=True),
    contracts_pb2.EvidenceGap(description="the deploy history of checkout-api was not read", critical=True),
]
SAFE_SUMMARY = "The current evidence cannot support a reliable conclusion; no root cause is given."


def _reply(**overrides: Any) -> dict[str, Any]:
    reply: dict[str, Any] = {
        "summary": SAFE_SUMMARY,
        "confirmed_facts": [
            {"text": OOM.statement, "claim_ids": ["c1"]},
            {"text": ERRORS.statement, "claim_ids": ["c2"]},
        ],
        "possible_directions": [],
        "evidence_gaps": [{"text": "memory against the limit", "ref": "g1"}, {"text": "deploy history", "ref": "g2"}],
        "next_steps": [{"text": "collect more evidence", "ref": "s1"}],
    }
    reply.update(overrides)
    return reply


def _rules(reply: dict[str, Any], verdict: int = V.VERDICT_REJECT) -> list[str]:
    built = build([OOM, ERRORS], verdict, gaps=GAPS)
    assert [g.gap_id for g in built.material.evidence_gaps] == ["g1", "g2"]
    parsed = parse_composer_output(json.dumps(reply))
    assert parsed.ok, parsed.error
    excluded = excluded_statements(verifier_input=built.verifier_input, material=built.material)
    return sorted(
        {
            v.rule
            for v in composer_output_findings(parsed, built.material, excluded_statements=excluded, tool_names=[])
        }
    )


@pytest.mark.parametrize("verdict", [V.VERDICT_REJECT, V.VERDICT_LOW_CONFID, V.VERDICT_PASS])
def test_the_safe_reply_is_accepted(verdict: int) -> None:
    assert _rules(_reply(), verdict) == []


ROOT_CAUSES = [
    "The root cause is the memory limit of checkout-api.",
    "checkout-api containers were OOMKilled, which caused the 503s.",
    "OOMKilled containers led to the errors.",
    "checkout-api returns 503 because its containers were OOMKilled.",
]


@pytest.mark.parametrize("text", ROOT_CAUSES)
@pytest.mark.parametrize("where", ["summary", "confirmed_facts", "evidence_gaps", "next_steps"])
def test_a_reject_reply_naming_a_root_cause_is_refused_in_every_section(where: str, text: str) -> None:
    """R-A-3: the refusal is composer.cause_under_reject, wherever the conclusion stands."""
    if where == "summary":
        reply = _reply(summary=text)
    elif where == "confirmed_facts":
        reply = _reply(
            confirmed_facts=[{"text": OOM.statement, "claim_ids": ["c1"]}, {"text": text, "claim_ids": ["c2"]}]
        )
    elif where == "evidence_gaps":
        reply = _reply(evidence_gaps=[{"text": text, "ref": "g1"}, {"text": "deploy history", "ref": "g2"}])
    else:
        reply = _reply(next_steps=[{"text": text, "ref": "s1"}])
    assert _rules(reply) == [CAUSE_UNDER_REJECT]
    # The same words under LOW_CONFID are not a REJECT conclusion (the guard judges per verdict).
    assert CAUSE_UNDER_REJECT not in _rules(reply, V.VERDICT_LOW_CONFID)


def test_a_reject_reply_with_a_headline_is_refused() -> None:
    """R-A-3: REJECT material has no likely cause, so no headline can name one."""
    assert _rules(_reply(headline="c1")) == [CITATION]


def test_an_invented_gap_beside_the_verifiers_is_refused() -> None:
    """R-A-2: the Verifier named two gaps; a third, of the Composer's own, is refused."""
    gaps = [*_reply()["evidence_gaps"], {"text": "the network between the zones was never checked"}]
    assert _rules(_reply(evidence_gaps=gaps)) == [INVENTED_GAP]
    assert _rules(_reply(evidence_gaps=gaps), V.VERDICT_LOW_CONFID) == [INVENTED_GAP]


def test_an_invented_gap_in_place_of_one_of_the_verifiers_is_refused() -> None:
    """R-A-2: as many gaps as the Verifier named, but one is not among them."""
    gaps = [
        {"text": "memory against the limit", "ref": "g1"},
        {"text": "the network between the zones was never checked"},
    ]
    assert _rules(_reply(evidence_gaps=gaps)) == [INVENTED_GAP]
    assert _rules(_reply(evidence_gaps=[{"text": "nobody looked at the network between the zones"}])) == [INVENTED_GAP]


def test_a_verifiers_gap_named_by_its_claim_or_its_words_is_accepted() -> None:
    by_claim = [{"text": "more on c1", "claim_ids": ["c1"]}]
    by_words = [{"text": "the deploy history of checkout-api was not read"}]
    assert _rules(_reply(evidence_gaps=by_claim)) == []
    assert _rules(_reply(evidence_gaps=by_words)) == []
    assert _rules(_reply(evidence_gaps=[])) == []


def test_a_gap_when_the_verifier_named_none_is_refused() -> None:
    built = build([OOM, ERRORS], V.VERDICT_REJECT)
    parsed = parse_composer_output(json.dumps(_reply(evidence_gaps=[{"text": "memory against the limit"}])))
    assert {v.rule for v in composer_output_findings(parsed, built.material)} == {INVENTED_GAP}
