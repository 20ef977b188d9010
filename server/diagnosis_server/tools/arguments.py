"""Tool arguments: declared once as ``Param``s, which make the pydantic model that checks every call and whose
JSON Schema agents are given (``input_schema``).

An optional argument given as ``null`` counts as absent; anything else that breaks the schema is a
``ToolError`` saying what is wrong (the tool, the argument, what it must be and what it got).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal, cast

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, create_model
from pydantic_core import ErrorDetails

from diagnosis_server.conversions import JsonObject, JsonValue, json_copy
from diagnosis_server.json_schema import schema_of
from diagnosis_server.tools.base import ToolError

ArgType = Literal["string", "integer", "boolean"]
Args = dict[str, str | int | bool]

_TYPES = {"string": str, "integer": int, "boolean": bool}


@dataclass(frozen=True, slots=True)
class Param:
    """One tool argument, declared once: its pydantic field (hence its JSON Schema) and its check.

    A string is stripped and may be given as a JSON number, unless ``verbatim``: then it must be a JSON
    string and is kept as given (a search text such as ``' 502 '``). ``enum`` words match in any case.
    ``time`` marks an ISO 8601 time (``format: date-time``).
    """

    name: str
    type: ArgType
    description: str
    required: bool = False
    enum: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    time: bool = False
    verbatim: bool = False

    def field(self) -> tuple[Any, Any]:
        """The pydantic field: annotation and ``Field``."""
        extra: dict[str, JsonValue] = {"format": "date-time"} if self.time else {}
        info = Field(
            default=... if self.required else None,
            description=self.description,
            ge=self.minimum,
            le=self.maximum,
            min_length=1 if self.type == "string" else None,
            json_schema_extra=extra or None,
        )
        if self.type != "string":
            return _TYPES[self.type], info
        kind: Any = Literal[self.enum] if self.enum else str
        if self.verbatim:
            return Annotated[kind, BeforeValidator(self._word), AfterValidator(_not_blank)], info
        return Annotated[kind, BeforeValidator(self._text)], info

    def _word(self, value: object) -> object:
        if not isinstance(value, str) or not self.enum:
            return value
        return next((e for e in self.enum if e.lower() == value.strip().lower()), value)

    def _text(self, value: object) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        return self._word(value.strip()) if isinstance(value, str) else value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("blank")
    return value


@lru_cache(maxsize=256)
def arguments_model(params: tuple[Param, ...]) -> type[BaseModel]:
    """The pydantic model of a tool's arguments (strict, unknown arguments refused)."""
    config = ConfigDict(strict=True, extra="forbid")
    fields: dict[str, Any] = {p.name: p.field() for p in params}
    return create_model("Arguments", __config__=config, **fields)


def input_schema(params: Sequence[Param]) -> JsonObject:
    """The arguments' JSON Schema for agents: the model's, every object closed (a copy of the one made once for
    these parameters: pydantic builds a schema in milliseconds, and every run lists every tool's)."""
    return cast(JsonObject, json_copy(_input_schema(tuple(params))))


@lru_cache(maxsize=256)
def _input_schema(params: tuple[Param, ...]) -> JsonObject:
    schema: JsonObject = schema_of(arguments_model(params))
    schema.setdefault("required", [])
    return schema


def check_arguments(tool: str, params: Sequence[Param], arguments: Mapping[str, JsonValue]) -> Args:
    """The arguments checked against ``params``; absent and null optional ones are left out."""
    if not isinstance(arguments, Mapping):
        raise ToolError(f"{tool}: arguments must be a JSON object, got {type(arguments).__name__}")
    by_name = {p.name: p for p in params}
    unknown = sorted(str(key) for key in arguments if key not in by_name)
    if unknown:
        raise ToolError(f"{tool}: unknown argument(s) {', '.join(unknown)}; allowed: {', '.join(by_name)}")
    given = {key: value for key, value in arguments.items() if value is not None}
    try:
        checked = arguments_model(tuple(params)).model_validate(given)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        raise ToolError(f"{tool}: {_problem(by_name[str(error['loc'][0])], error)}") from None
    out: Args = checked.model_dump(exclude_unset=True)
    return out


def _problem(param: Param, error: ErrorDetails) -> str:
    name, value, kind = param.name, error["input"], error["type"]
    if kind == "missing":
        return f"missing required argument {name!r}"
    if kind in ("string_too_short", "value_error"):
        return f"argument {name!r} must not be empty"
    if kind == "literal_error":
        return f"argument {name!r} must be one of {', '.join(param.enum)}, got {value!r}"
    if kind == "greater_than_equal":
        return f"argument {name!r} must be at least {param.minimum}, got {value}"
    if kind == "less_than_equal":
        return f"argument {name!r} must be at most {param.maximum}, got {value}"
    if param.type == "boolean":
        return f"argument {name!r} must be true or false, got {value!r}"
    return f"argument {name!r} must be {'an integer' if param.type == 'integer' else 'a string'}, got {value!r}"
