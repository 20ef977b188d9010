"""Fields every agent protocol shares: claim ids and suggested calls.

- A claim id is an identifier, never a sentence: ``^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$``. Anything else in
  an Executor's claim makes its output INVALID_OUTPUT; in a Verifier's or Composer's reply, the same.
- A suggested call (``{"tool_name", "arguments"}``) is what would close an evidence gap: a tool name of
  the same identifier alphabet and a JSON object of arguments, at most ``MAX_NEXT_CALLS`` a gap. It is
  structured data; the service renders it by template and never shows it as free text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import JsonValueError, to_struct

CLAIM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
TOOL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
MAX_NEXT_CALLS = 8
_CALL_KEYS = frozenset({"tool_name", "arguments"})


class FieldError(ValueError):
    """A field breaks its shape; the message names the field's path."""


def is_claim_id(value: object) -> bool:
    return isinstance(value, str) and CLAIM_ID.fullmatch(value) is not None


def claim_id(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise FieldError(f"{path}: expected a string")
    if CLAIM_ID.fullmatch(value) is None:
        raise FieldError(f"{path}: a claim id must match {CLAIM_ID.pattern} (an identifier of at most 64 characters)")
    return value


def next_calls(value: object, path: str) -> list[contracts_pb2.SuggestedCall]:
    """Parse a ``next_calls`` list; ``FieldError`` names what is wrong."""
    if not isinstance(value, list):
        raise FieldError(f"{path}: expected an array")
    if len(value) > MAX_NEXT_CALLS:
        raise FieldError(f"{path}: at most {MAX_NEXT_CALLS} calls")
    calls: list[contracts_pb2.SuggestedCall] = []
    for index, item in enumerate(value):
        where = f"{path}[{index}]"
        if not isinstance(item, Mapping):
            raise FieldError(f"{where}: expected an object")
        unknown = sorted(str(k) for k in item if k not in _CALL_KEYS)
        if unknown:
            raise FieldError(f"{where}: unknown keys: {', '.join(unknown)}")
        tool_name = item.get("tool_name")
        if not isinstance(tool_name, str) or TOOL_NAME.fullmatch(tool_name) is None:
            raise FieldError(f"{where}.tool_name: expected a tool name")
        arguments = item.get("arguments", {})
        if not isinstance(arguments, Mapping) or not all(isinstance(k, str) for k in arguments):
            raise FieldError(f"{where}.arguments: expected an object")
        try:
            struct = to_struct(dict(arguments))
        except (JsonValueError, TypeError, ValueError) as exc:
            raise FieldError(f"{where}.arguments: {exc}") from None
        call = contracts_pb2.SuggestedCall(tool_name=tool_name)
        if struct.fields:  # no empty Struct: the call reads back from its JSON as it was
            call.arguments.CopyFrom(struct)
        calls.append(call)
    return calls
