"""Why raw agent text is refused, in the words a caller reads (``parse_error``), and the size bound counted in
characters and in UTF-8 bytes, inclusive (R-C-1)."""

from __future__ import annotations

from typing import Any

import pytest

from diagnosis.v1 import contracts_pb2
from diagnosis_server.protocols.executor import MAX_INPUT_BYTES, parse_executor_output

DOC = '{"contract": "executor_evidence_v2", "claims": []}'
OVER = f"output is over the {MAX_INPUT_BYTES} byte bound"


@pytest.mark.requirement("R-C-1")
@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("", "output is empty"),
        (" \n\t ", "output is empty"),
        ("\ud800", "output is not valid Unicode text: it holds an unpaired surrogate"),
        ('{"contract": "\\ud800"}', "output is not valid Unicode text: it escapes an unpaired surrogate"),
        ("```json\n{}\n```\nand more", "output is not JSON: a fenced block must be one ```json block and nothing else"),
        (
            '{"contract": "executor_evidence_v2", "claims": [], "claims": []}',
            "output is not JSON: duplicate key 'claims'",
        ),
    ],
)
def test_unusable_text_is_refused_saying_why(raw: str, error: str) -> None:
    parsed = parse_executor_output(raw)
    assert parsed.status == contracts_pb2.PARSE_STATUS_INVALID_OUTPUT
    assert parsed.error == error


@pytest.mark.requirement("R-C-1")
def test_the_size_bound_is_inclusive_in_characters_and_in_bytes() -> None:
    padding = MAX_INPUT_BYTES - len(DOC)
    assert parse_executor_output(DOC + " " * padding).ok
    assert parse_executor_output(DOC + " " * (padding + 1)).error == OVER
    wide = '{"contract": "executor_evidence_v2", "claims": [], "note": "é"}'  # é is 2 bytes
    at_bound = " " * (MAX_INPUT_BYTES - len(wide.encode())) + wide
    assert len(at_bound.encode()) == MAX_INPUT_BYTES
    assert parse_executor_output(at_bound).error != OVER
    assert parse_executor_output(" " + at_bound).error == OVER


@pytest.mark.requirement("R-C-1")
def test_a_decoded_mapping_with_a_key_that_is_not_text_is_refused_saying_so() -> None:
    document: dict[Any, object] = {"contract": "executor_evidence_v2", "claims": [], 7: "x"}
    parsed = parse_executor_output(document)
    assert parsed.status == contracts_pb2.PARSE_STATUS_INVALID_OUTPUT
    assert parsed.error == "object keys must be strings, got number"
