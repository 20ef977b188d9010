"""The Composer guard in detail: what each refusal says, which claims a gap or step may cite beside it, what
each section may name, and the edges of the excluded-statement and conclusion checks (R-R-3, R-A-1..3).

A refusal's message names where the reply went wrong; it is part of the record of what the Composer tried
(the golden pipeline snapshots keep ``rule: message``), so the messages are pinned word for word.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.composer_rules import (
    CAUSE_UNDER_REJECT,
    CITATION,
    EXCLUDED_MATERIAL,
    INVENTED_GAP,
    UNGROUNDED_IDENTIFIER,
    composer_output_findings,
)
from diagnosis_server.composition.material import excluded_statements
from diagnosis_server.protocols.composer import parse_composer_output
from tests.support.verdicts import DIRECT, UNSUPPORTED

from ._inputs import ALL, ERRORS, HYPOTHESIS, OOM, Built, Spec, V, build
from .test_composer_rules import GAP as RULES_GAP
from .test_composer_rules import _good, _rules


def _violations(reply: dict[str, Any], built: Built, tools: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(rule, message) of every violation of ``reply`` against the built material and its excluded statements."""
    parsed = parse_composer_output(json.dumps(reply))
    assert parsed.ok, parsed.error
    excluded = excluded_statements(verifier_input=built.verifier_input, material=built.material)
    found = composer_output_findings(parsed, built.material, excluded_statements=excluded, tool_names=tools)
    return [(v.rule, v.message) for v in found]


def _messages(reply: dict[str, Any], verdict: int) -> list[tuple[str, str]]:
    """Against the material of ``test_composer_rules``: every claim class, and its one gap."""
    return _violations(reply, build(ALL, verdict, gaps=[RULES_GAP]), ("k8s.events",))


def _with(verdict: int, **fields: Any) -> dict[str, Any]:
    return {**_good(verdict), **fields}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        pytest.param(
            _with(
                V.VERDICT_PASS,
                possible_directions=[
                    {"text": HYPOTHESIS.statement, "claim_ids": ["c1"]},
                    {"text": HYPOTHESIS.statement, "claim_ids": []},
                ],
            ),
            [
                (CITATION, "possible_directions[0] cites a claim that is not an allowed direction"),
                (CITATION, "possible_directions[1] cites no claim"),
            ],
            id="direction-citations",
        ),
        pytest.param(
            _with(V.VERDICT_PASS, headline="c1"),
            [(CITATION, "the headline is not one of the likely causes the material allows")],
            id="headline",
        ),
        pytest.param(
            _with(
                V.VERDICT_PASS,
                evidence_gaps=[{"text": "deploy history missing", "ref": "g7"}],
                next_steps=[{"text": "look at the deploys", "ref": "s9"}],
            ),
            [
                (CITATION, "evidence_gaps[0] refers to 'g7', which the material does not hold"),
                (CITATION, "next_steps[0] refers to 's9', which the material does not hold"),
                (INVENTED_GAP, "evidence_gaps[0] is not one of the Verifier's gaps"),
            ],
            id="refs",
        ),
    ],
)
def test_each_refusal_names_where_the_reply_went_wrong(reply: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert _messages(reply, V.VERDICT_PASS) == expected


@pytest.mark.requirement("R-A-2")
def test_gaps_listed_when_the_verifier_identified_none_are_refused_as_such() -> None:
    reply = {"summary": OOM.statement, "confirmed_facts": [{"text": OOM.statement, "claim_ids": ["c1"]}]}
    reply["evidence_gaps"] = [{"text": "a gap"}]
    assert _violations(reply, build([OOM], V.VERDICT_PASS)) == [
        (INVENTED_GAP, "evidence gaps are listed but the Verifier identified none")
    ]


@pytest.mark.parametrize("section", ["evidence_gaps", "next_steps"])
def test_a_gap_or_step_may_cite_any_shown_claim_not_only_a_gaps_own(section: str) -> None:
    """Beside a gap or step, a reply may name a shown claim (c1, a confirmed fact) or a gap's claim (c4)."""
    reply = _good(V.VERDICT_PASS)
    reply[section][0]["claim_ids"] = ["c1", "c4"]
    assert _rules(reply, V.VERDICT_PASS) == set()


def test_a_confirmed_fact_that_says_more_than_a_direction_is_not_that_direction() -> None:
    """The direction "checkout-api returns 503" lies inside the confirmed "checkout-api returns 503 to its
    callers": stating the confirmed fact is not stating the direction as confirmed."""
    weaker = Spec("c4", "checkout-api returns 503", DIRECT, ERRORS.bindings, hypothesis=True)
    built = build([OOM, ERRORS, weaker], V.VERDICT_LOW_CONFID)
    assert [c.claim_id for c in built.material.directions] == ["c4"]
    reply = {
        "summary": OOM.statement,
        "confirmed_facts": [{"text": ERRORS.statement, "claim_ids": ["c2"]}],
        "possible_directions": [{"text": weaker.statement, "claim_ids": ["c4"]}],
    }
    assert _violations(reply, built) == []
    reply["confirmed_facts"] = [{"text": weaker.statement, "claim_ids": ["c2"]}]
    assert _violations(reply, built) == [(CITATION, "confirmed_facts[0] states a claim that is not confirmed")]


def test_an_excluded_statement_inside_an_allowed_one_is_not_held_by_stating_the_allowed_one() -> None:
    """The unsupported "containers were OOMKilled" lies inside the confirmed "checkout-api containers were
    OOMKilled": a reply stating the confirmed fact, in any of its texts, does not hold the excluded one."""
    built = build([OOM, ERRORS, Spec("c7", "containers were OOMKilled", UNSUPPORTED)], V.VERDICT_PASS)
    assert built.material.excluded == ("containers were OOMKilled",)
    reply = {"summary": OOM.statement, "confirmed_facts": [{"text": OOM.statement, "claim_ids": ["c1"]}]}
    assert _violations(reply, built) == []


def test_an_excluded_statement_of_three_content_words_is_refused_in_other_words() -> None:
    """ "the ingress is misconfigured" (the unchecked c10) holds three words of three letters or more ("the"
    counts): a text holding all of them holds the statement, whatever else it says."""
    reply = dict(_good(V.VERDICT_LOW_CONFID), summary="The ingress looks misconfigured")
    assert _messages(reply, V.VERDICT_LOW_CONFID) == [
        (EXCLUDED_MATERIAL, "the reply holds the statement of a claim that is not allowed")
    ]


def test_a_three_character_identifier_only_an_excluded_claim_names_is_refused() -> None:
    built = build([OOM, ERRORS, Spec("c7", "checkout-api logs error E42", UNSUPPORTED)], V.VERDICT_LOW_CONFID)
    reply = {
        "summary": "Something about E42 is going on",
        "confirmed_facts": [{"text": OOM.statement, "claim_ids": ["c1"]}],
    }
    assert _violations(reply, built) == [
        (EXCLUDED_MATERIAL, "the reply names a fact that only excluded claims name"),
        (UNGROUNDED_IDENTIFIER, "summary names what no allowed material holds"),
    ]


GAP = contracts_pb2.EvidenceGap(claim_id="c2", description="the logs of payments-gw7 were not read", critical=True)


_FACT = {"text": OOM.statement, "claim_ids": ["c1"]}


@pytest.mark.parametrize(
    ("reply", "where"),
    [
        pytest.param({"summary": "payments-gw7 returns 503", "confirmed_facts": [_FACT]}, "summary", id="summary"),
        pytest.param(
            {"summary": OOM.statement, "confirmed_facts": [{"text": "payments-gw7 returns 503", "claim_ids": ["c1"]}]},
            "confirmed_facts[0]",
            id="confirmed_facts",
        ),
        pytest.param(
            {"summary": OOM.statement, "evidence_gaps": [{"text": "logs of payments-gw7 not read", "ref": "g1"}]},
            None,
            id="evidence_gaps",
        ),
        pytest.param(
            {"summary": OOM.statement, "next_steps": [{"text": "read the logs of payments-gw7", "ref": "s1"}]},
            None,
            id="next_steps",
        ),
    ],
)
def test_only_a_gap_or_step_may_name_what_only_a_gap_names(reply: dict[str, Any], where: str | None) -> None:
    """A gap's description grounds the identifiers of the reply's gaps and steps, never of its claim sections."""
    built = build([OOM, ERRORS], V.VERDICT_LOW_CONFID, gaps=[GAP])
    assert [(g.gap_id, g.description) for g in built.material.evidence_gaps] == [("g1", GAP.description)]
    expected = [] if where is None else [(UNGROUNDED_IDENTIFIER, f"{where} names what no allowed material holds")]
    assert _violations(reply, built) == expected


@pytest.mark.requirement("R-A-3")
@pytest.mark.parametrize(
    ("text", "concludes"),
    [
        # "not" begins 40 characters before "root cause": it negates it.
        ("the logs do not hold a single useful line about the root cause of the 503s", False),
        # 41 characters: beyond the window, the phrase concludes (the guard fails closed).
        ("the logs do not hold a single helpful line about the root cause of the 503s", True),
    ],
)
def test_a_negation_counts_within_forty_characters_before_the_phrase(text: str, concludes: bool) -> None:
    reply = dict(_good(V.VERDICT_REJECT), summary=text)
    assert (CAUSE_UNDER_REJECT in _rules(reply, V.VERDICT_REJECT)) is concludes
