"""Composer protocol: raw Composer text -> the Composer's choice (strict shape).

Pinned shape::

    {"summary", "headline"?, "confirmed_facts": [{"text", "claim_ids"}],
     "possible_directions": [{"text", "claim_ids"}], "evidence_gaps": [{"text", "claim_ids"?, "ref"?}],
     "next_steps": [{"text", "claim_ids"?, "ref"?}]}

``summary`` is required and non-blank; each list is optional (empty when absent); every item needs a
non-blank ``text``; ``claim_ids`` is a list of claim ids (``protocols.fields.CLAIM_ID``). ``headline``
names the likely cause the answer leads with; ``ref`` names the material's gap (``g1``) or next step
(``s1``) an item stands for. Unknown keys and wrong types are INVALID_OUTPUT.

The Composer chooses and orders; it writes nothing the user reads. Its texts are kept only as the record
of what it tried (``composition.composer_rules`` refuses texts that name material it may not use); the answer is
rendered by ``composition.render`` from the material it chose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import JsonValue
from diagnosis_server.protocols import fields
from diagnosis_server.protocols.json_text import parse_json_object

_LISTS = ("confirmed_facts", "possible_directions", "evidence_gaps", "next_steps")
_TOP_KEYS = frozenset({"summary", "headline", *_LISTS})
_ITEM_KEYS = frozenset({"text", "claim_ids", "ref"})


@dataclass(frozen=True, slots=True)
class ComposerParse:
    ok: bool
    # The Composer's own texts and citations: the record of what it tried, never shown.
    output: contracts_pb2.ComposerOutput | None
    error: str
    headline: str = ""
    # (list name, item index) -> the gap or next step the item stands for.
    refs: Mapping[tuple[str, int], str] = field(default_factory=dict)


def _item(value: JsonValue, where: str) -> tuple[contracts_pb2.ComposedItem, str] | str:
    if not isinstance(value, dict):
        return f"{where} is not an object"
    unknown = sorted(set(value) - _ITEM_KEYS)
    if unknown:
        return f"{where} has unknown keys: {', '.join(unknown)}"
    text = value.get("text")
    if not isinstance(text, str) or not text.strip():
        return f"{where}.text is missing or blank"
    claim_ids = value.get("claim_ids", [])
    if not isinstance(claim_ids, list) or not all(fields.is_claim_id(c) for c in claim_ids):
        return f"{where}.claim_ids is not a list of claim ids"
    ref = value.get("ref", "")
    if not isinstance(ref, str) or (ref and not fields.is_claim_id(ref)):
        return f"{where}.ref is not a gap (g1) or next step (s1) reference"
    return contracts_pb2.ComposedItem(text=text, claim_ids=[c for c in claim_ids if isinstance(c, str)]), ref


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
    headline = obj.get("headline", "")
    if not isinstance(headline, str) or (headline and not fields.is_claim_id(headline)):
        return _invalid("headline is not a claim id")
    output = contracts_pb2.ComposerOutput(summary=summary, source=contracts_pb2.COMPOSER_SOURCE_COMPOSER)
    refs: dict[tuple[str, int], str] = {}
    for name in _LISTS:
        values = obj.get(name, [])
        if not isinstance(values, list):
            return _invalid(f"{name} is not a list")
        for index, value in enumerate(values):
            parsed = _item(value, f"{name}[{index}]")
            if isinstance(parsed, str):
                return _invalid(parsed)
            item, ref = parsed
            getattr(output, name).append(item)
            if ref:
                refs[(name, index)] = ref
    return ComposerParse(ok=True, output=output, error="", headline=headline, refs=refs)
