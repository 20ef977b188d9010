"""Raw agent text -> one JSON object, bounded.

Agents answer with JSON text. This tolerates surrounding whitespace and one Markdown code fence
(```` ```json ... ``` ````) around the object, and nothing else: no prose before or after, no second
object. The text is bounded in size (1 MiB of UTF-8) and the value in nesting depth (32, the service's one
bound); NaN and Infinity, duplicate keys and non-object top levels are refused. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

from diagnosis_server.conversions import MAX_JSON_DEPTH, JsonObject

MAX_TEXT_BYTES = 1 << 20
# The service's one JSON depth bound (conversions.MAX_JSON_DEPTH).
MAX_DEPTH = MAX_JSON_DEPTH

# A JSON escape of a UTF-16 surrogate: valid in pairs (an escaped emoji), never alone.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_FENCE = re.compile(r"\A```[ \t]*(?:json)?[ \t]*\r?\n(?P<body>.*?)\r?\n?[ \t]*```\Z", re.DOTALL | re.IGNORECASE)


class _JsonTextError(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _JsonTextError(f"{name} is not a JSON number")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _JsonTextError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _depth(value: object) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0, ``{}`` is 1), without recursion."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list):
            children = list(item)
        else:
            continue
        level += 1
        deepest = max(deepest, level)
        stack.extend((child, level) for child in children)
    return deepest


def unpaired_surrogate(body: str, value: object) -> bool:
    """Whether JSON ``body``, decoded to ``value``, escapes a lone surrogate: JSON, but not Unicode text."""
    if _SURROGATE_ESCAPE.search(body) is None:
        return False
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def strip_fence(text: str) -> str:
    """The text without surrounding whitespace and without one enclosing ```` ``` ```` / ```` ```json ```` fence."""
    stripped = text.strip()
    match = _FENCE.match(stripped)
    if match is not None:
        return match.group("body").strip()
    return stripped


def parse_json_object(raw: str) -> tuple[JsonObject | None, str]:
    """Parse agent text into a JSON object.

    Returns ``(object, "")`` on success and ``(None, reason)`` otherwise; never raises on bad input.
    """
    if not isinstance(raw, str):
        return None, "agent output is not text"
    try:
        size = len(raw.encode("utf-8"))
    except UnicodeEncodeError:
        return None, "agent output is not valid UTF-8 text"
    if size > MAX_TEXT_BYTES:
        return None, f"agent output is {size} bytes, over the {MAX_TEXT_BYTES}-byte bound"
    body = strip_fence(raw)
    if not body:
        return None, "agent output is empty"
    try:
        value = json.loads(body, parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys)
    except _JsonTextError as exc:
        return None, f"agent output is not valid JSON: {exc}"
    except RecursionError:
        return None, f"agent output nests deeper than {MAX_DEPTH} levels"
    except ValueError as exc:
        return None, f"agent output is not valid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"agent output is JSON {type(value).__name__}, not an object"
    if _depth(value) > MAX_DEPTH:
        return None, f"agent output is nested deeper than {MAX_DEPTH}"
    if unpaired_surrogate(body, value):
        return None, "agent output is not valid Unicode text: it escapes an unpaired surrogate"
    result: JsonObject = value
    return result, ""
