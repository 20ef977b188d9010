"""Tool arguments of the sources: their times and durations (the declarations are in ``tools.arguments``).

Times are what Prometheus and Loki accept themselves, RFC 3339 (``2024-11-29T13:30:00Z``) or Unix seconds
(``1732887000``, ``"1732887000.5"``), plus ``now`` and ``now-15m`` (resolved when the call is made).
Durations are ``30s``, ``5m``, ``1h``, ``1d`` or seconds. An optional argument given as ``null`` counts as
absent; anything else that breaks the schema is a ``ToolError`` saying what is wrong.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

from diagnosis_server.tools.arguments import Args, Param, check_arguments, input_schema
from diagnosis_server.tools.base import ToolError

__all__ = ["Args", "Param", "check_arguments", "input_schema", "parse_duration", "parse_time", "rfc3339"]

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, None: 1}
_RELATIVE = re.compile(r"^now(?:\s*-\s*(\S+))?$")


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
