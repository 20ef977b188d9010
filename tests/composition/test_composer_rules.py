"""The Composer guard: a Composer may only choose among the allowed material (R-R-3, R-A-1..3).

No Composer text is shown, but a reply that cites or names anything else is refused: it is the record of
what the Composer tried, and a refused reply is retried once, then replaced by the deterministic rendering.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.composer_rules import (
    CAUSE_UNDER_REJECT,
    CITATION,
    DIRECTIONS_UNDER_REJECT,
    EXCLUDED_MATERIAL,
    INVENTED_GAP,
    UNGROUNDED_IDENTIFIER,
    composer_output_findings,
)
from diagnosis_server.composition.material import AllowedMaterial, excluded_statements
from diagnosis_server.protocols.composer import parse_composer_output

from ._inputs import ALL, CAUSE, ERRORS, HYPOTHESIS, OOM, UNSUPPORTED_CLAIM, V, build

GAP = contracts_pb2.EvidenceGap(
    claim_id="c4", description="the deploy history of checkout-api was not read", critical=True
)


def _material(verdict: int) -> tuple[AllowedMaterial, tuple[str, ...]]:
    built = build(ALL, verdict, gaps=[GAP])
    return built.material, excluded_statements(verifier_input=built.verifier_input, material=built.material)


def _good(verdict: int) -> dict[str, Any]:
    reply: dict[str, Any] = {
        "summary": "checkout-api containers were OOMKilled",
        "confirmed_facts": [
            {"text": OOM.statement, "claim_ids": ["c1"]},
            {"text": ERRORS.statement, "claim_ids": ["c2"]},
        ],
        "possible_directions": [{"text": HYPOTHESIS.statement, "claim_ids": ["c4"]}],
        "evidence_gaps": [{"text": "deploy history missing", "ref": "g1"}],
        "next_steps": [{"text": "look at the deploys", "ref": "s1"}],
    }
    if verdict == V.VERDICT_PASS:
        reply["headline"] = "c3"
    if verdict == V.VERDICT_REJECT:
        reply["summary"] = "The current evidence cannot support a reliable conclusion; no root cause is given."
        reply["possible_directions"] = []
    return reply


def _rules(reply: dict[str, Any], verdict: int) -> set[str]:
    material, excluded = _material(verdict)
    parsed = parse_composer_output(json.dumps(reply))
    assert parsed.ok, parsed.error
    return {
        v.rule
        for v in composer_output_findings(parsed, material, excluded_statements=excluded, tool_names=["k8s.events"])
    }


@pytest.mark.parametrize("verdict", [V.VERDICT_PASS, V.VERDICT_LOW_CONFID, V.VERDICT_REJECT])
def test_a_well_behaved_reply_is_accepted(verdict: int) -> None:
    assert _rules(_good(verdict), verdict) == set()


def test_today_s_composer_json_without_refs_or_headline_is_still_valid() -> None:
    reply = _good(V.VERDICT_LOW_CONFID)
    reply["evidence_gaps"] = [{"text": "the deploy history of checkout-api was not read", "claim_ids": ["c4"]}]
    reply["next_steps"] = [{"text": "check the deploys", "claim_ids": []}]
    assert _rules(reply, V.VERDICT_LOW_CONFID) == set()


@pytest.mark.parametrize(
    ("field", "claim_ids"),
    [
        ("confirmed_facts", ["c3"]),
        ("confirmed_facts", ["c4"]),
        ("confirmed_facts", ["c7"]),
        ("confirmed_facts", []),
        ("possible_directions", ["c7"]),
        ("possible_directions", ["c1"]),
        ("next_steps", ["c9"]),
    ],
)
def test_citing_outside_a_sections_allowed_claims_is_refused(field: str, claim_ids: list[str]) -> None:
    reply = _good(V.VERDICT_PASS)
    reply[field] = [{"text": "checkout-api", "claim_ids": claim_ids}]
    assert CITATION in _rules(reply, V.VERDICT_PASS)


def test_stating_a_direction_as_a_confirmed_fact_is_refused_whatever_it_cites() -> None:
    reply = _good(V.VERDICT_LOW_CONFID)
    reply["confirmed_facts"] = [{"text": f"{OOM.statement}; {HYPOTHESIS.statement}", "claim_ids": ["c1"]}]
    assert CITATION in _rules(reply, V.VERDICT_LOW_CONFID)


def test_a_headline_must_be_a_likely_cause() -> None:
    for headline, verdict in (("c1", V.VERDICT_PASS), ("c3", V.VERDICT_LOW_CONFID), ("c7", V.VERDICT_PASS)):
        reply = dict(_good(verdict), headline=headline)
        assert CITATION in _rules(reply, verdict), headline


def test_refs_must_name_the_materials_gaps_and_steps() -> None:
    reply = _good(V.VERDICT_PASS)
    reply["evidence_gaps"] = [{"text": "x", "ref": "g7"}]
    reply["next_steps"] = [{"text": "x", "ref": "s9"}]
    assert CITATION in _rules(reply, V.VERDICT_PASS)


@pytest.mark.requirement("R-A-3")
def test_directions_and_causes_are_refused_under_reject() -> None:
    reply = dict(_good(V.VERDICT_REJECT), possible_directions=[{"text": HYPOTHESIS.statement, "claim_ids": ["c4"]}])
    assert DIRECTIONS_UNDER_REJECT in _rules(reply, V.VERDICT_REJECT)
    for text in ("the root cause is the memory limit", "memory pressure caused the 503s", "OOMKills led to the errors"):
        reply = dict(_good(V.VERDICT_REJECT), summary=text)
        assert CAUSE_UNDER_REJECT in _rules(reply, V.VERDICT_REJECT), text
        reply = _good(V.VERDICT_REJECT)
        reply["next_steps"] = [{"text": text, "ref": "s1"}]
        assert CAUSE_UNDER_REJECT in _rules(reply, V.VERDICT_REJECT), text


def test_a_negated_cause_under_reject_is_not_a_conclusion() -> None:
    reply = dict(_good(V.VERDICT_REJECT), summary="No root cause can be given: the evidence cannot support one.")
    assert CAUSE_UNDER_REJECT not in _rules(reply, V.VERDICT_REJECT)


@pytest.mark.parametrize(
    "spelling",
    [
        "the orders-db disk is full",
        "the  orders-db disk   is full",
        "the\u00a0orders-db disk is full",
        "the orders-db\ndisk is full",
        "the orders\u200b-db disk is full",
        "the orders-db di\u00adsk is full",
        "ｔｈｅ ｏｒｄｅｒｓ-ｄｂ ｄｉｓｋ ｉｓ ｆｕｌｌ",
        "the оrders-db disk is full",
        "the **orders-db disk** is _full_",
        "full is disk orders-db the",
        "the disk of orders-db is full",
    ],
)
def test_an_excluded_statement_is_refused_however_it_is_spelled(spelling: str) -> None:
    reply = _good(V.VERDICT_LOW_CONFID)
    reply["summary"] = f"Note: {spelling}."
    assert EXCLUDED_MATERIAL in _rules(reply, V.VERDICT_LOW_CONFID)


def test_an_excluded_statement_split_across_two_items_is_refused() -> None:
    reply = _good(V.VERDICT_LOW_CONFID)
    reply["next_steps"] = [{"text": "the orders-db disk", "ref": "s1"}, {"text": "is full", "ref": "s2"}]
    assert EXCLUDED_MATERIAL in _rules(reply, V.VERDICT_LOW_CONFID)


def test_a_paraphrase_carrying_an_excluded_claims_identifier_is_refused() -> None:
    reply = _good(V.VERDICT_LOW_CONFID)
    reply["summary"] = "Something about vault-7Q is going on"  # only the excluded c5 names vault-7Q
    assert EXCLUDED_MATERIAL in _rules(reply, V.VERDICT_LOW_CONFID)


def test_a_failed_binding_claim_is_excluded_too() -> None:
    built = build([OOM], V.VERDICT_PASS)
    failed = contracts_pb2.Claim(claim_id="c9", statement="the payments-vault rejects every token")
    excluded = excluded_statements(
        verifier_input=built.verifier_input, material=built.material, executor_claims=[failed]
    )
    reply = {
        "summary": "the payments-vault rejects every token",
        "confirmed_facts": [{"text": "x", "claim_ids": ["c1"]}],
    }
    parsed = parse_composer_output(json.dumps(reply))
    rules = {v.rule for v in composer_output_findings(parsed, built.material, excluded_statements=excluded)}
    assert EXCLUDED_MATERIAL in rules


@pytest.mark.parametrize(
    "text", ["the zebra-db cluster is the problem", "fails with error code E4291", "see `ticket-7731`"]
)
def test_an_identifier_no_allowed_material_holds_is_refused(text: str) -> None:
    reply = _good(V.VERDICT_PASS)
    reply["next_steps"] = [{"text": text, "ref": "s1"}]
    assert UNGROUNDED_IDENTIFIER in _rules(reply, V.VERDICT_PASS)


def test_plain_hyphenated_words_are_not_identifiers() -> None:
    reply = dict(_good(V.VERDICT_PASS), summary="checkout-api is crash-looping and out-of-memory")
    assert UNGROUNDED_IDENTIFIER not in _rules(reply, V.VERDICT_PASS)


@pytest.mark.requirement("R-A-2")
def test_an_invented_gap_is_refused() -> None:
    reply = _good(V.VERDICT_LOW_CONFID)
    reply["evidence_gaps"] = [{"text": "deploy history missing", "ref": "g1"}, {"text": "the CDN was never checked"}]
    assert INVENTED_GAP in _rules(reply, V.VERDICT_LOW_CONFID)
    reply["evidence_gaps"] = [{"text": "nobody looked at the CDN edge nodes"}]
    assert INVENTED_GAP in _rules(reply, V.VERDICT_LOW_CONFID)
    built = build([OOM], V.VERDICT_PASS)
    parsed = parse_composer_output(json.dumps({"summary": "x", "evidence_gaps": [{"text": "a gap"}]}))
    assert INVENTED_GAP in {v.rule for v in composer_output_findings(parsed, built.material)}


def test_the_guard_sees_unsupported_claims_as_excluded() -> None:
    reply = _good(V.VERDICT_PASS)
    reply["confirmed_facts"].append({"text": UNSUPPORTED_CLAIM.statement, "claim_ids": ["c1"]})
    assert EXCLUDED_MATERIAL in _rules(reply, V.VERDICT_PASS)


def test_cause_and_conclusion_claims_may_be_cited_as_directions_when_not_the_headline() -> None:
    reply = _good(V.VERDICT_PASS)
    reply.pop("headline")
    reply["possible_directions"] = [{"text": CAUSE.statement, "claim_ids": ["c3"]}]
    assert _rules(reply, V.VERDICT_PASS) == set()
