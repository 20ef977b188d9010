"""A recorded tool output as escaped HTML JSON, each bound value wrapped in place in a ``<mark>``.

A mark carries ``data-pointer`` (the binding's ``raw_path``, an RFC 6901 pointer) and ``data-claim`` (the claim
id) and is followed by a link to its claim; every text of the output is escaped, so a recorded ``<script>`` is text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape

from diagnosis_server.conversions import JsonValue

INDENT = "  "


def pointer_part(key: str | int) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def mark_id(invocation_id: str, pointer: str, claim_id: str) -> str:
    return "m-" + "".join(ch if ch.isalnum() else "_" for ch in f"{invocation_id}{pointer}-{claim_id}")


def claim_anchor(claim_id: str) -> str:
    return "claim-" + "".join(ch if ch.isalnum() else "_" for ch in claim_id)


def _wrap(text: str, pointer: str, claims: Sequence[str], invocation_id: str) -> str:
    for claim_id in claims:
        # The link follows the mark (anchors never nest, even where a bound object holds bound values).
        text = (
            f'<mark id="{escape(mark_id(invocation_id, pointer, claim_id))}" data-pointer="{escape(pointer)}" '
            f'data-claim="{escape(claim_id)}">{text}</mark><sup><a class="to-claim" '
            f'href="#{escape(claim_anchor(claim_id))}">{escape(claim_id)}</a></sup>'
        )
    return text


def render_json(value: JsonValue, marks: Mapping[str, Sequence[str]], invocation_id: str) -> str:
    """``value`` pretty-printed as escaped HTML, the values at ``marks``' pointers marked for their claims."""
    out: list[str] = []
    _render(value, "", 0, marks, invocation_id, out)
    return "".join(out)


def _render(
    value: JsonValue, pointer: str, depth: int, marks: Mapping[str, Sequence[str]], invocation_id: str, out: list[str]
) -> None:
    pad = INDENT * (depth + 1)
    if isinstance(value, dict) and value:
        inner: list[str] = ["{\n"]
        items = list(value.items())
        for index, (key, item) in enumerate(items):
            inner.append(f"{pad}{escape(json.dumps(key, ensure_ascii=False))}: ")
            _render(item, f"{pointer}/{pointer_part(key)}", depth + 1, marks, invocation_id, inner)
            inner.append(",\n" if index < len(items) - 1 else "\n")
        inner.append(INDENT * depth + "}")
        text = "".join(inner)
    elif isinstance(value, list) and value:
        inner = ["[\n"]
        for index, item in enumerate(value):
            inner.append(pad)
            _render(item, f"{pointer}/{index}", depth + 1, marks, invocation_id, inner)
            inner.append(",\n" if index < len(value) - 1 else "\n")
        inner.append(INDENT * depth + "]")
        text = "".join(inner)
    else:
        text = escape(json.dumps(value, ensure_ascii=False))
    claims = marks.get(pointer)
    out.append(_wrap(text, pointer, claims, invocation_id) if claims else text)
