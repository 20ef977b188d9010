"""Tool arguments of the sources: declared once (JSON Schema for agents), checked on every call.

Times are what Prometheus and Loki accept themselves, RFC 3339 (``2024-11-29T13:30:00Z``) or Unix seconds
(``1732887000``, ``"1732887000.5"``), plus ``now`` and ``now-15m`` (resolved when the call is made).
Durations are ``30s``, ``5m``, ``1h``, ``1d`` or seconds. An optional argument given as ``null`` counts as
absent; anything else that breaks the schema is a ``ToolError`` saying what is wrong.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.tools.base import ToolError

ArgType = Literal["string", "integer", "boolean"]
Args = dict[str, str | int | bool]

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, None: 1}
_RELATIVE = re.compile(r"^now(?:\s*-\s*(\S+))?$")


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: ArgType
    description: str
    required: bool = False
    enum: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None

    def schema(self) -> JsonObject:
        out: JsonObject = {"type": self.type, "description": self.description}
        if self.enum:
            out["enum"] = list(self.enum)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.type == "string":
            out["minLength"] = 1
        return out


def input_schema(params: Sequence[Param]) -> JsonObject:
    properties: JsonObject = {p.name: p.schema() for p in params}
    required: list[JsonValue] = [p.name for p in params if p.required]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def check_arguments(tool: str, params: Sequence[Param], arguments: Mapping[str, JsonValue]) -> Args:
    """The arguments checked against ``params``; absent and null optional ones are left out."""
    if not isinstance(arguments, Mapping):
        raise ToolError(f"{tool}: arguments must be a JSON object, got {type(arguments).__name__}")
    by_name = {p.name: p for p in params}
    unknown = sorted(str(key) for key in arguments if key not in by_name)
    if unknown:
        raise ToolError(f"{tool}: unknown argument(s) {', '.join(unknown)}; allowed: {', '.join(by_name)}")
    out: Args = {}
    for param in params:
        value = arguments.get(param.name)
        if value is None:
            if param.required:
                raise ToolError(f"{tool}: missing required argument {param.name!r}")
            continue
        out[param.name] = _checked(tool, param, value)
    return out


def _checked(tool: str, param: Param, value: JsonValue) -> str | int | bool:
    name = param.name
    if param.type == "boolean":
        if not isinstance(value, bool):
            raise ToolError(f"{tool}: argument {name!r} must be true or false, got {value!r}")
        return value
    if param.type == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ToolError(f"{tool}: argument {name!r} must be an integer, got {value!r}")
        if param.minimum is not None and value < param.minimum:
            raise ToolError(f"{tool}: argument {name!r} must be at least {param.minimum}, got {value}")
        if param.maximum is not None and value > param.maximum:
            raise ToolError(f"{tool}: argument {name!r} must be at most {param.maximum}, got {value}")
        return value
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ToolError(f"{tool}: argument {name!r} must be a string, got {value!r}")
    text = str(value).strip()
    if not text:
        raise ToolError(f"{tool}: argument {name!r} must not be empty")
    if param.enum:
        match = next((e for e in param.enum if e.lower() == text.lower()), None)
        if match is None:
            raise ToolError(f"{tool}: argument {name!r} must be one of {', '.join(param.enum)}, got {text!r}")
        return match
    return text


def parse_duration(tool: str, name: str, text: str) -> float:
    """``30s``, ``5m``, ``1h``, ``90`` -> seconds (positive)."""
    match = _DURATION.fullmatch(text.strip())
    seconds = float(match.group(1)) * _UNITS[match.group(2)] if match else 0.0
    if seconds <= 0:
        raise ToolError(f"{tool}: {name} {text!r} is not a duration (e.g. 30s, 5m, 1h)")
    return seconds


def parse_time(tool: str, name: str, text: str, *, now: float | None = None) -> float:
    """An RFC 3339 time, Unix seconds, ``now`` or ``now-<duration>`` -> Unix seconds."""
    text = text.strip()
    relative = _RELATIVE.fullmatch(text)
    if relative:
        current = time.time() if now is None else now
        return current - (parse_duration(tool, name, relative.group(1)) if relative.group(1) else 0.0)
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ToolError(
            f"{tool}: {name} {text!r} is not a time (RFC 3339 like 2024-11-29T13:30:00Z, Unix seconds, or now-1h)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def rfc3339(seconds: float) -> str:
    moment = datetime.fromtimestamp(seconds, tz=UTC)
    if moment.microsecond:
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
