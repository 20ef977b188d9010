"""A tool's own phrase (``Toolset.next_step``) words a next step only for a tool the fixed phrases do not know,
on one line and bounded; a fixed phrase is never replaced by a tool's (R-A-2)."""

from __future__ import annotations

from collections.abc import Mapping

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.suggestions import render_call
from diagnosis_server.conversions import JsonValue, to_struct


def _own(tool: str, arguments: Mapping[str, JsonValue]) -> str | None:
    return f"Check\n  the {tool}   page" if arguments.get("wordy") is None else "x" * 500


def _call(tool: str, **arguments: JsonValue) -> contracts_pb2.SuggestedCall:
    return contracts_pb2.SuggestedCall(tool_name=tool, arguments=to_struct(dict(arguments)))


def test_an_unknown_tool_reads_in_its_own_words_on_one_line() -> None:
    assert render_call(_call("statuspage.components"), _own) == (
        "Check the statuspage.components page (statuspage.components)."
    )


def test_an_own_phrase_is_bounded() -> None:
    text = render_call(_call("statuspage.components", wordy=True), _own)
    assert text == "x" * 200 + " (statuspage.components wordy=true)."


def test_a_fixed_phrase_is_never_replaced_by_a_tools_own() -> None:
    assert render_call(_call("kubernetes.events", namespace="shop"), _own) == (
        "List the Kubernetes events in namespace shop (kubernetes.events namespace=shop)."
    )
    assert render_call(_call("prometheus.query", query="up"), _own) == "Query Prometheus (prometheus.query query=up)."


def test_without_an_own_phrase_an_unknown_tool_is_called_by_name() -> None:
    assert render_call(_call("statuspage.components"), lambda _tool, _args: None) == (
        "Call statuspage.components (statuspage.components)."
    )
    assert render_call(_call("statuspage.components")) == "Call statuspage.components (statuspage.components)."
