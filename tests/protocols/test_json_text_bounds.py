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


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (42, "agent output is not text"),
        ('{"a": "\ud800"}', "agent output is not valid UTF-8 text"),
        (" \n\t ", "agent output is empty"),
        ('{"a": "\\ud800"}', "agent output is not valid Unicode text: it escapes an unpaired surrogate"),
        ('{"a": "x\\uDC00y"}', "agent output is not valid Unicode text: it escapes an unpaired surrogate"),
    ],
    ids=["not-text", "lone-surrogate", "blank", "escaped-high-surrogate", "escaped-low-surrogate"],
)
def test_unusable_agent_text_is_refused_in_these_words(raw: object, reason: str) -> None:
    assert parse_json_object(raw) == (None, reason)  # type: ignore[arg-type]


def test_an_escaped_surrogate_pair_is_one_character() -> None:
    assert parse_json_object('{"a": "\\ud83d\\ude00"}') == ({"a": "\U0001f600"}, "")


def test_the_size_bound_is_inclusive() -> None:
    """Exactly MAX_TEXT_BYTES bytes of UTF-8 is accepted; one byte more is refused, naming the size."""
    doc = '{"a": "\u00e9"}'  # the é is 2 bytes
    at_bound = doc + " " * (MAX_TEXT_BYTES - len(doc.encode("utf-8")))
    assert parse_json_object(at_bound) == ({"a": "\u00e9"}, "")
    over = at_bound + " "
    assert parse_json_object(over) == (None, f"agent output is {MAX_TEXT_BYTES + 1} bytes, over the 1048576-byte bound")


def test_depth_is_measured_past_a_scalar_sibling() -> None:
    """The too-deep value is found even when a scalar member is looked at before it."""
    raw = '{"deep": ' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + ', "s": 1}'
    assert parse_json_object(raw) == (None, "agent output is nested deeper than 32")
