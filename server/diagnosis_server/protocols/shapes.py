"""The pieces every agent contract is made of, as pydantic types; and the one way their errors are told.

Each agent's output shape is one pydantic model (strict, ``extra="forbid"``) in its protocol module. The
model is both the judge of a reply (after the raw-text gate in ``json_text``) and, through
``model_json_schema()``, the schema the endpoint is given (``agents.openai.schemas``). Enum words come
from the proto descriptors, never from a list written here. The proto messages stay the one definition
of what is stored: a parser converts the validated model to them.

Marks a field can carry in its JSON schema (read by ``agents.openai.schemas``):

- ``UNOFFERED``: the field is accepted but not offered under OpenAI's strict mode, where every property
  is required (free-form or optional extras such as a gap's ``next_calls``);
- ``TOOL_NAMES``: the field names a tool; the schema lists the run's tool names as its enum.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PlainValidator,
    ValidationError,
    WithJsonSchema,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, ErrorDetails, PydanticCustomError, core_schema

from diagnosis_server.conversions import EnumType, enum_from_name, enum_short_name

UNOFFERED: Final = "x-unoffered"
TOOL_NAMES: Final = "x-tool-names"

CLAIM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")


class Shape(BaseModel):
    """A contract's object: strict JSON types, unknown keys refused."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


def kind(value: object) -> str:
    """The JSON kind of a decoded value, for messages (``null``, ``number``, ``array``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def shown(value: object) -> str:
    """A value as the message shows it: its JSON, cut at 80 characters."""
    return json.dumps(value, default=str)[:80]


def invalid(message: str) -> PydanticCustomError:
    """A contract error with its own message (the formatter adds the field's path)."""
    return PydanticCustomError("contract", message)


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise invalid(f"expected a string, got {kind(value)}")
    return value


def _claim_id(value: object) -> str:
    text = _text(value)
    if CLAIM_ID.fullmatch(text) is None:
        raise invalid(f"a claim id must match {CLAIM_ID.pattern} (an identifier of at most 64 characters)")
    return text


def _reference(value: object) -> str:
    text = _text(value)
    if text and CLAIM_ID.fullmatch(text) is None:
        raise invalid(f"expected an identifier (c1, g1, s1) or an empty string, got {shown(text)}")
    return text


def _non_blank(value: object) -> str:
    text = _text(value)
    if not text.strip():
        raise invalid("expected a non-blank string")
    return text


_STRING = WithJsonSchema({"type": "string"})

ClaimId = Annotated[str, PlainValidator(_claim_id), _STRING]
"""An identifier, never a sentence (``CLAIM_ID``)."""
Reference = Annotated[str, PlainValidator(_reference), _STRING]
"""A claim id, or the empty string for none."""
NonBlank = Annotated[str, PlainValidator(_non_blank), _STRING]


def enum_names(enum_type: EnumType, *, lower: bool) -> list[str]:
    """The enum's short names from its descriptor, without the ``*_UNSPECIFIED`` zero value."""
    return [enum_short_name(enum_type, v.number, lower=lower) for v in enum_type.DESCRIPTOR.values if v.number]


@dataclass(frozen=True, eq=False)
class ProtoEnum:
    """``Annotated[int, ProtoEnum(contracts_pb2.Verdict, lower=False)]``: an enum read from its short name.

    Any case is accepted (``conversions.enum_from_name``); the schema lists the descriptor's names
    (lowercase with ``lower``); anything else, the ``*_UNSPECIFIED`` zero value too, is refused.
    """

    enum_type: EnumType
    lower: bool

    def _parse(self, value: object) -> int:
        number = enum_from_name(self.enum_type, value)
        if number is None:
            quoted = [f"'{name}'" for name in enum_names(self.enum_type, lower=self.lower)]
            expected = f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else quoted[0]
            raise invalid(f"expected {expected}, got {shown(value)}")
        return number

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_plain_validator_function(self._parse)

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {"type": "string", "enum": enum_names(self.enum_type, lower=self.lower)}


# ---------------------------------------------------------------- errors

_S = TypeVar("_S", bound=Shape)

_KINDS = {
    "string_type": "a string",
    "bool_type": "a boolean",
    "list_type": "an array",
    "model_type": "an object",
    "dict_type": "an object",
    "model_attributes_type": "an object",
    "float_type": "a number",
    "int_type": "an integer",
}


def _key(part: str | int) -> str:
    if isinstance(part, int):
        return f"[{part}]"
    return part if len(part) <= 80 else part[:77] + "..."


def path_of(loc: tuple[str | int, ...], prefix: str = "") -> str:
    """``("claims", 0, "critical")`` -> ``claims[0].critical``."""
    out = prefix
    for part in loc:
        key = _key(part)
        out += key if isinstance(part, int) or not out else f".{key}"
    return out


def _what(error: ErrorDetails) -> str:
    kind_of = error["type"]
    ctx = error.get("ctx", {})
    value = error["input"]
    if kind_of == "missing":
        return "missing"
    if kind_of == "extra_forbidden":
        return "unknown field"
    if kind_of in _KINDS:
        return f"expected {_KINDS[kind_of]}, got {kind(value)}"
    if kind_of == "literal_error":
        return f"expected {ctx['expected']}, got {shown(value)}"
    if kind_of == "finite_number":
        return "expected a finite number"
    if kind_of in ("greater_than_equal", "less_than_equal"):
        bound = "at least" if kind_of == "greater_than_equal" else "at most"
        return f"expected {bound} {ctx.get('ge', ctx.get('le'))}, got {shown(value)}"
    if kind_of == "too_long":
        return f"expected at most {ctx['max_length']} items, got {ctx['actual_length']}"
    if kind_of == "too_short":
        return f"expected at least {ctx['min_length']} item(s), got {ctx['actual_length']}"
    return error["msg"]


def first_error(exc: ValidationError) -> ErrorDetails:
    """The error a reply is refused for: the first, unless an enclosing object has an unknown key (told first)."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    enclosing = [
        e for e in errors if e["type"] == "extra_forbidden" and first["loc"][: len(e["loc"]) - 1] == e["loc"][:-1]
    ]
    return min(enclosing, key=lambda e: len(e["loc"]), default=first)


def describe(exc: ValidationError, prefix: str = "") -> str:
    """One line naming the offending field's path and what is wrong (``claims[0].critical: expected a boolean``)."""
    error = first_error(exc)
    where = path_of(error["loc"], prefix)
    what = _what(error)
    return f"{where}: {what}" if where else what


def validate(model: type[_S], document: object, prefix: str = "", context: Any = None) -> _S | str:
    """The document as ``model``, or the message of why not (never raises on bad input)."""
    try:
        return model.model_validate(document, context=context)
    except ValidationError as exc:
        return describe(exc, prefix)
