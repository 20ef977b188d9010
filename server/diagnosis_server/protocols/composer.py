"""Composer protocol: raw Composer text -> the Composer's choice (strict shape).

Pinned shape::

    {"summary", "headline"?, "confirmed_facts": [{"text", "claim_ids"}],
     "possible_directions": [{"text", "claim_ids"}], "evidence_gaps": [{"text", "claim_ids"?, "ref"?}],
     "next_steps": [{"text", "claim_ids"?, "ref"?}]}

``summary`` is required and non-blank; each list is optional (empty when absent); every item needs a
non-blank ``text``; ``claim_ids`` is a list of claim ids (``protocols.fields.CLAIM_ID``). ``headline``
names the likely cause the answer leads with; ``ref`` names the material's gap (``g1``) or next step
(``s1``) an item stands for. The shape is ``ComposerReply`` (``protocols.shapes``); unknown keys and
wrong types are INVALID_OUTPUT.

The Composer chooses and orders; it writes nothing the user reads. Its texts are kept only as the record
of what it tried (``composition.composer_rules`` refuses texts that name material it may not use); the answer is
rendered by ``composition.render`` from the material it chose.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import Field

from diagnosis.v1 import contracts_pb2
from diagnosis_server.protocols import shapes
from diagnosis_server.protocols.json_text import parse_json_object
from diagnosis_server.protocols.shapes import ClaimId, NonBlank, Reference, Shape

_LISTS = ("confirmed_facts", "possible_directions", "evidence_gaps", "next_steps")


class ComposedFact(Shape):
    """A fact or direction the answer leads with; its ``ref`` is accepted, not offered under strict mode."""

    text: NonBlank
    claim_ids: list[ClaimId] = Field(default_factory=list)
    ref: Annotated[Reference, Field(json_schema_extra={shapes.UNOFFERED: True})] = ""


class ComposedChoice(ComposedFact):
    """A gap or next step of the material: ``ref`` names which (``g1``, ``s1``)."""

    ref: Reference = ""


class ComposerReply(Shape):
    summary: NonBlank
    headline: Reference = ""
    confirmed_facts: list[ComposedFact] = Field(default_factory=list)
    possible_directions: list[ComposedFact] = Field(default_factory=list)
    evidence_gaps: list[ComposedChoice] = Field(default_factory=list)
    next_steps: list[ComposedChoice] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ComposerParse:
    ok: bool
    # The Composer's own texts and citations: the record of what it tried, never shown.
    output: contracts_pb2.ComposerOutput | None
    error: str
    headline: str = ""
    # (list name, item index) -> the gap or next step the item stands for.
    refs: Mapping[tuple[str, int], str] = field(default_factory=dict)


def _invalid(error: str) -> ComposerParse:
    return ComposerParse(ok=False, output=None, error=error)


def parse_composer_output(raw: str) -> ComposerParse:
    """Parse a Composer reply; any deviation from the pinned shape is INVALID_OUTPUT. Never raises."""
    obj, error = parse_json_object(raw)
    if obj is None:
        return _invalid(error)
    reply = shapes.validate(ComposerReply, obj)
    if isinstance(reply, str):
        return _invalid(reply)
    output = contracts_pb2.ComposerOutput(summary=reply.summary, source=contracts_pb2.COMPOSER_SOURCE_COMPOSER)
    refs: dict[tuple[str, int], str] = {}
    for name in _LISTS:
        items: list[ComposedFact] = getattr(reply, name)
        for index, item in enumerate(items):
            getattr(output, name).add(text=item.text, claim_ids=item.claim_ids)
            if item.ref:
                refs[(name, index)] = item.ref
    return ComposerParse(ok=True, output=output, error="", headline=reply.headline, refs=refs)
