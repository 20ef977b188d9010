"""Raw agent text -> one JSON object: whitespace, one fence, size and depth bounds, strict JSON."""

from __future__ import annotations

import pytest

from diagnosis_server.protocols.json_text import MAX_DEPTH, MAX_TEXT_BYTES, parse_json_object, strip_fence


@pytest.mark.parametrize(
    "raw",
    [
        '{"a": 1}',
        '  \n{"a": 1}\n\t',
        '```json\n{"a": 1}\n```',
        '```JSON\n{"a": 1}\n```\n',
        '```\n{"a": 1}\n```',
        '\n\n```json\n  {"a": 1}  \n```\n\n',
    ],
)
def test_object_with_whitespace_or_one_fence_parses(raw: str) -> None:
    assert parse_json_object(raw) == ({"a": 1}, "")


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("```json\n```", "empty"),
        ('Sure! {"a": 1}', "not valid JSON"),
        ('{"a": 1} and more', "not valid JSON"),
        ('```json\n{"a": 1}\n```\n```json\n{"b": 2}\n```', "not valid JSON"),
        ('{"a": 1}{"b": 2}', "not valid JSON"),
        ("[1, 2]", "not an object"),
        ('"text"', "not an object"),
        ("null", "not an object"),
        ('{"a": NaN}', "NaN"),
        ('{"a": Infinity}', "Infinity"),
        ('{"a": 1, "a": 2}', "duplicate key"),
    ],
)
def test_anything_else_is_refused_with_a_reason(raw: str, fragment: str) -> None:
    value, error = parse_json_object(raw)
    assert value is None
    assert fragment in error


def test_size_bound() -> None:
    padding = " " * (MAX_TEXT_BYTES - 10)
    assert parse_json_object('{"a": 1}' + padding)[0] == {"a": 1}
    value, error = parse_json_object('{"a": "' + "x" * MAX_TEXT_BYTES + '"}')
    assert value is None
    assert "byte" in error


def test_depth_bound() -> None:
    ok = '{"a": ' + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "}"
    assert parse_json_object(ok)[0] is not None
    too_deep = '{"a": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}"
    value, error = parse_json_object(too_deep)
    assert value is None
    assert "deeper" in error


def test_pathological_nesting_is_refused_not_crashing() -> None:
    raw = '{"a": ' + "[" * 200_000 + "]" * 200_000 + "}"
    value, error = parse_json_object(raw)
    assert value is None
    assert "deeper" in error


def test_strip_fence_leaves_unfenced_text_alone() -> None:
    assert strip_fence("  plain  ") == "plain"
    assert strip_fence("```json\n{}\n```") == "{}"


def test_agent_output_deeper_than_the_services_one_bound_says_so() -> None:
    from diagnosis_server.conversions import MAX_JSON_DEPTH

    assert MAX_DEPTH == MAX_JSON_DEPTH == 32
    value, reason = parse_json_object('{"a": ' + "[" * 40 + "]" * 40 + "}")
    assert value is None and reason == "agent output is nested deeper than 32"
