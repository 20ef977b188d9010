"""The Composer protocol parser: strict shape, source COMPOSER (R-A-1, R-A-2)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.protocols.composer import parse_composer_output


def answer(**overrides: Any) -> str:
    body: dict[str, Any] = {
        "summary": "The evidence is partial.",
        "confirmed_facts": [{"text": "checkout returns 500s", "claim_ids": ["c1"]}],
        "possible_directions": [{"text": "the pool may be exhausted", "claim_ids": ["c2"]}],
        "evidence_gaps": [{"text": "no pool metrics before 10:00"}],
        "next_steps": [{"text": "collect pool metrics"}],
    }
    body.update(overrides)
    return json.dumps(body)


def test_well_formed_answer_parses() -> None:
    result = parse_composer_output(answer())
    assert result.ok, result.error
    out = result.output
    assert out is not None
    assert out.summary == "The evidence is partial."
    assert [(i.text, list(i.claim_ids)) for i in out.confirmed_facts] == [("checkout returns 500s", ["c1"])]
    assert [(i.text, list(i.claim_ids)) for i in out.possible_directions] == [("the pool may be exhausted", ["c2"])]
    assert [i.text for i in out.evidence_gaps] == ["no pool metrics before 10:00"]
    assert [i.text for i in out.next_steps] == ["collect pool metrics"]
    assert out.source == contracts_pb2.COMPOSER_SOURCE_COMPOSER
    assert out.verdict == contracts_pb2.VERDICT_UNSPECIFIED


def test_lists_are_optional() -> None:
    result = parse_composer_output(json.dumps({"summary": "All clear."}))
    assert result.ok
    assert result.output is not None
    assert not result.output.confirmed_facts
    assert not result.output.next_steps


def test_claim_ids_are_optional_and_allowed_on_any_item() -> None:
    result = parse_composer_output(
        answer(confirmed_facts=[{"text": "x"}], next_steps=[{"text": "verify", "claim_ids": ["c2"]}])
    )
    assert result.ok
    assert result.output is not None
    assert list(result.output.confirmed_facts[0].claim_ids) == []
    assert list(result.output.next_steps[0].claim_ids) == ["c2"]


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("Here is the answer: checkout is down", "not valid JSON"),
        ("[]", "not an object"),
        (json.dumps({"confirmed_facts": []}), "summary"),
        (answer(summary="   "), "summary"),
        (answer(summary=["a"]), "summary"),
        (answer(user_facing_answer="x"), "user_facing_answer: unknown field"),
        (answer(confirmed_facts="c1"), "confirmed_facts: expected an array, got string"),
        (answer(confirmed_facts=["checkout returns 500s"]), "confirmed_facts[0]: expected an object, got string"),
        (answer(confirmed_facts=[{"text": "x", "claim_ids": "c1"}]), "claim_ids"),
        (answer(confirmed_facts=[{"text": "x", "claim_ids": [1]}]), "claim_ids"),
        (answer(confirmed_facts=[{"text": "x", "claim_ids": [""]}]), "claim_ids"),
        (answer(possible_directions=[{"claim_ids": ["c2"]}]), "text"),
        (answer(evidence_gaps=[{"text": ""}]), "text"),
        (answer(next_steps=[{"text": "x", "priority": 1}]), "next_steps[0].priority: unknown field"),
    ],
)
def test_malformed_answer_is_invalid_output(raw: str, fragment: str) -> None:
    result = parse_composer_output(raw)
    assert not result.ok
    assert result.output is None
    assert fragment in result.error
