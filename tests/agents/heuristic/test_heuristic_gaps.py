"""Gap descriptions name their next calls in a form the Planner parses back exactly."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from diagnosis_server.agents.heuristic.gaps import NextCall, arguments_json, format_next, parse_next, strip_next

_KEYS = st.sampled_from(["service", "metric", "query", "level", "limit"])
_VALUES = st.text(min_size=1, max_size=20).filter(lambda v: v.strip() == v and v)
_CALLS = st.builds(
    lambda tool, args: NextCall(tool, tuple(args.items())),
    st.sampled_from(["logs.search", "metrics.query", "k8s.events", "deploys.list"]),
    st.dictionaries(_KEYS, _VALUES, max_size=3),
)


@given(st.lists(_CALLS, min_size=1, max_size=5, unique=True), st.text(max_size=30).filter(lambda t: "(" not in t))
def test_format_then_parse_is_the_identity(calls: list[NextCall], prefix: str) -> None:
    description = f"{prefix} {format_next(calls)}"
    assert parse_next(description) == calls


def test_values_with_spaces_quotes_and_semicolons_are_quoted() -> None:
    call = NextCall.of("logs.search", service="web", query='" 5; (x)')
    text = format_next([call])
    assert text == '(next: logs.search service=web query="\\" 5; (x)")'
    assert parse_next(f"a gap {text}") == [call]
    assert strip_next(f"a gap {text}") == "a gap"


def test_unparseable_calls_are_skipped_and_no_next_means_no_calls() -> None:
    assert parse_next("no calls here") == []
    assert parse_next("(next: logs.search service=web =broken; k8s.events service=web)") == [
        NextCall.of("k8s.events", service="web")
    ]
    assert format_next([]) == ""


def test_integer_arguments_follow_the_input_schema() -> None:
    call = NextCall.of("logs.search", service="web", limit=20)
    schema = {"properties": {"limit": {"type": "integer"}, "service": {"type": "string"}}}
    assert arguments_json(call, schema) == {"service": "web", "limit": 20}
    assert arguments_json(call, None) == {"service": "web", "limit": "20"}
