"""Fields every agent protocol shares: claim ids and suggested calls.

- A claim id is an identifier, never a sentence: ``^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$``. Anything else in
  an Executor's claim makes its output INVALID_OUTPUT; in a Verifier's or Composer's reply, the same.
- A suggested call (``{"tool_name", "arguments"}``) is what would close an evidence gap: a tool name of
  the same identifier alphabet and a JSON object of arguments, at most ``MAX_NEXT_CALLS`` a gap. It is
  structured data; the service renders it by template and never shows it as free text.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, PlainValidator, field_validator

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import JsonValueError, to_struct
from diagnosis_server.protocols.shapes import CLAIM_ID, UNOFFERED, Shape, invalid, shown, validate

__all__ = ["CLAIM_ID", "MAX_NEXT_CALLS", "TOOL_NAME", "FieldError", "NextCalls", "SuggestedCall", "next_calls"]

TOOL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
MAX_NEXT_CALLS = 8


class FieldError(ValueError):
    """A field breaks its shape; the message names the field's path."""


def is_claim_id(value: object) -> bool:
    return isinstance(value, str) and CLAIM_ID.fullmatch(value) is not None


def _tool_name(value: object) -> str:
    if not isinstance(value, str) or TOOL_NAME.fullmatch(value) is None:
        raise invalid(f"expected a tool name, got {shown(value)}")
    return value


class SuggestedCall(Shape):
    """``{"tool_name", "arguments"?}``: a call that would close a gap (``contracts_pb2.SuggestedCall``)."""

    tool_name: Annotated[str, PlainValidator(_tool_name)]
    arguments: dict[str, Any] = Field(default_factory=dict)

    @field_validator("arguments")
    @classmethod
    def _json_object(cls, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            to_struct(arguments)
        except (JsonValueError, TypeError, ValueError) as exc:
            raise invalid(str(exc)) from None
        return arguments

    def to_proto(self) -> contracts_pb2.SuggestedCall:
        call = contracts_pb2.SuggestedCall(tool_name=self.tool_name)
        if self.arguments:  # no empty Struct: the call reads back from its JSON as it was
            call.arguments.CopyFrom(to_struct(self.arguments))
        return call


NextCalls = Annotated[
    list[SuggestedCall], Field(default_factory=list, max_length=MAX_NEXT_CALLS, json_schema_extra={UNOFFERED: True})
]
"""A gap's suggested calls; not offered under strict mode (their arguments are free-form)."""


class _Calls(Shape):
    calls: NextCalls


def next_calls(value: object, path: str) -> list[contracts_pb2.SuggestedCall]:
    """Parse a ``next_calls`` list; ``FieldError`` names what is wrong."""
    parsed = validate(_Calls, {"calls": value})
    if isinstance(parsed, str):
        raise FieldError(path + parsed.removeprefix("calls"))
    return [call.to_proto() for call in parsed.calls]
