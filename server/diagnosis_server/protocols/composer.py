"""Composer protocol: raw Composer text -> ComposerOutput (strict shape).

Pinned shape::

    {"summary", "confirmed_facts": [{"text", "claim_ids"}], "possible_directions": [{"text", "claim_ids"}],
     "evidence_gaps": [{"text"}], "next_steps": [{"text"}]}

``summary`` is required and non-blank; each list is optional (empty when absent); every item needs a
non-blank ``text``; ``claim_ids`` is a list of strings (any item may carry one). Unknown keys and
wrong types are INVALID_OUTPUT. What the answer may cite is judged by ``composition.guard``.
"""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import JsonValue
from diagnosis_server.protocols.json_text import parse_json_object

_LISTS = ("confirmed_facts", "possible_directions", "evidence_gaps", "next_steps")
_TOP_KEYS = frozenset({"summary", *_LISTS})
_ITEM_KEYS = frozenset({"text", "claim_ids"})


@dataclass(frozen=True, slots=True)
class ComposerParse:
    ok: bool
    output: contracts_pb2.ComposerOutput | None
    error: str


def _item(value: JsonValue, where: str) -> contracts_pb2.ComposedItem | str:
    if not isinstance(value, dict):
        return f"{where} is not an object"
    unknown = sorted(set(value) - _ITEM_KEYS)
    if unknown:
        return f"{where} has unknown keys: {', '.join(unknown)}"
    text = value.get("text")
    if not isinstance(text, str) or not text.strip():
        return f"{where}.text is missing or blank"
    claim_ids = value.get("claim_ids", [])
    if not isinstance(claim_ids, list) or not all(isinstance(c, str) and c for c in claim_ids):
        return f"{where}.claim_ids is not a list of claim ids"
    return contracts_pb2.ComposedItem(text=text, claim_ids=[c for c in claim_ids if isinstance(c, str)])


def _invalid(error: str) -> ComposerParse:
    return ComposerParse(ok=False, output=None, error=error)


def parse_composer_output(raw: str) -> ComposerParse:
    """Parse a Composer reply; any deviation from the pinned shape is INVALID_OUTPUT. Never raises."""
    obj, error = parse_json_object(raw)
    if obj is None:
        return _invalid(error)
    unknown = sorted(set(obj) - _TOP_KEYS)
    if unknown:
        return _invalid(f"unknown keys: {', '.join(unknown)}")
    summary = obj.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        return _invalid("summary is missing or blank")
    output = contracts_pb2.ComposerOutput(summary=summary, source=contracts_pb2.COMPOSER_SOURCE_COMPOSER)
    for field in _LISTS:
        values = obj.get(field, [])
        if not isinstance(values, list):
            return _invalid(f"{field} is not a list")
        for index, value in enumerate(values):
            item = _item(value, f"{field}[{index}]")
            if isinstance(item, str):
                return _invalid(item)
            getattr(output, field).append(item)
    return ComposerParse(ok=True, output=output, error="")
