"""Next steps are rendered by template, one fixed phrase per tool, then the call itself (R-A-2, R-A-3).

Every phrase is pinned in ``suggestion_phrases.jsonl``, with and without its optional arguments, so a next
step's text is exactly what the template says and nothing an agent wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.suggestions import call_text, render_call
from diagnosis_server.conversions import to_struct

# One row a line: the tool, the call's arguments, the next step's text.
PHRASES_FILE = Path(__file__).resolve().parent / "suggestion_phrases.jsonl"
PHRASES: list[tuple[str, dict[str, Any], str]] = [
    (tool, arguments, text)
    for tool, arguments, text in map(json.loads, PHRASES_FILE.read_text(encoding="utf-8").splitlines())
]


@pytest.mark.parametrize(
    ("tool", "arguments", "text"), PHRASES, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(PHRASES)]
)
def test_each_tool_has_its_fixed_phrase(tool: str, arguments: dict[str, Any], text: str) -> None:
    call = contracts_pb2.SuggestedCall(tool_name=tool, arguments=to_struct(arguments))
    assert render_call(call) == text
    assert text.endswith(f" ({call_text(call)}).")
