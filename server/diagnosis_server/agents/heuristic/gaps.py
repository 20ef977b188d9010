"""Evidence gaps that say what to fetch next, in a form a planner can parse back.

A gap description ends with the calls that would close it::

    ... not established (next: k8s.events service=warehouse-gateway; metrics.query service=warehouse-gateway)

Each call is a tool name and ``key=value`` arguments; a value with a space, ``;``, ``(`` or ``)`` in it
is written as a JSON string (``query="\\" 5"``). A ``metrics.query`` without ``metric`` asks for the
service's metrics (the planner knows their names). Writing and reading are exact inverses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from diagnosis_server.conversions import JsonObject, JsonValue

_NEXT = re.compile(r"\(next:\s*((?:[^()\"]|\"(?:[^\"\\]|\\.)*\")*)\)")
_BARE = re.compile(r"[A-Za-z0-9_.:/@+*-]+")
_ARG = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)=(\"(?:[^\"\\]|\\.)*\"|[^\s;\"]+)")
_TOOL = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.-]*)")
_INTEGER_ARGUMENTS = frozenset({"limit", "tail_lines", "since_seconds"})


@dataclass(frozen=True, slots=True)
class NextCall:
    tool_name: str
    arguments: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, tool_name: str, **arguments: str | int | None) -> NextCall:
        return cls(tool_name, tuple((k, str(v)) for k, v in arguments.items() if v is not None))

    def argument(self, name: str) -> str | None:
        return next((value for key, value in self.arguments if key == name), None)

    def to_json(self) -> JsonObject:
        """The call as a structured ``next_calls`` item (``{"tool_name", "arguments"}``)."""
        arguments: JsonObject = {}
        for key, value in self.arguments:
            arguments[key] = int(value) if key in _INTEGER_ARGUMENTS and value.lstrip("-").isdigit() else value
        return {"tool_name": self.tool_name, "arguments": arguments}

    @classmethod
    def from_json(cls, value: JsonValue) -> NextCall | None:
        if not isinstance(value, dict) or not isinstance(value.get("tool_name"), str):
            return None
        arguments = value.get("arguments")
        pairs = tuple(
            (str(k), str(v))
            for k, v in (arguments.items() if isinstance(arguments, dict) else ())
            if isinstance(v, str | int) and not isinstance(v, bool)
        )
        return cls(str(value["tool_name"]), pairs)

    def render(self) -> str:
        parts = [self.tool_name]
        for key, value in self.arguments:
            parts.append(f"{key}={value if _BARE.fullmatch(value) else json.dumps(value)}")
        return " ".join(parts)


def format_next(calls: Iterable[NextCall]) -> str:
    """``(next: a; b)``, or the empty string when there is nothing to fetch."""
    unique = list(dict.fromkeys(calls))
    if not unique:
        return ""
    return "(next: " + "; ".join(call.render() for call in unique) + ")"


def strip_next(description: str) -> str:
    """The description without its ``(next: ...)`` part."""
    return _NEXT.sub("", description).strip().rstrip(":;,").strip()


def _parse_call(text: str) -> NextCall | None:
    tool = _TOOL.match(text)
    if tool is None:
        return None
    position = tool.end()
    arguments: list[tuple[str, str]] = []
    while position < len(text):
        if not text[position:].strip():
            break
        arg = _ARG.match(text, position)
        if arg is None:
            return None
        raw = arg.group(2)
        if raw.startswith('"'):
            try:
                value = json.loads(raw)
            except ValueError:
                return None
            if not isinstance(value, str):
                return None
        else:
            value = raw
        arguments.append((arg.group(1), value))
        position = arg.end()
    return NextCall(tool.group(1), tuple(arguments))


def _split(body: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    for char in body:
        if quoted:
            current.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
            current.append(char)
        elif char == ";":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def parse_next(description: str) -> list[NextCall]:
    """The calls named in every ``(next: ...)`` of a description, in order; unparseable calls are skipped."""
    calls: list[NextCall] = []
    for match in _NEXT.finditer(description):
        for part in _split(match.group(1)):
            call = _parse_call(part)
            if call is not None:
                calls.append(call)
    return calls


def arguments_json(call: NextCall, schema: Mapping[str, object] | None) -> dict[str, str | int]:
    """The call's arguments, integers where the tool's input schema says ``integer``."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    out: dict[str, str | int] = {}
    for key, value in call.arguments:
        spec = properties.get(key) if isinstance(properties, Mapping) else None
        if isinstance(spec, Mapping) and spec.get("type") == "integer" and value.lstrip("-").isdigit():
            out[key] = int(value)
        else:
            out[key] = value
    return out


# The live tools that answer what a built-in tool answers, when the run's environment has no built-in one.
_LOGS = "loki.query_range"
_POD_LOGS = "kubernetes.pod_logs"
_EVENTS = "kubernetes.events"
_ROLLOUTS = "kubernetes.rollouts"
_RANGE = "prometheus.query_range"
_LIVE_LIMIT = "200"


def _logql(service: str, query: str | None) -> str:
    selector = f'{{app="{service}"}}'
    return f"{selector} |= {json.dumps(query)}" if query else selector


def _live_equivalents(call: NextCall, tools: Collection[str]) -> list[NextCall]:
    service = call.argument("service")
    if call.tool_name == "logs.search" and service:
        if _LOGS in tools:
            return [NextCall.of(_LOGS, query=_logql(service, call.argument("query")), limit=_LIVE_LIMIT)]
        return []
    if call.tool_name == "k8s.events" and service and _EVENTS in tools:
        return [NextCall.of(_EVENTS, field_selector="type=Warning")]
    if call.tool_name == "deploys.list" and service and _ROLLOUTS in tools:
        return [NextCall.of(_ROLLOUTS, deployment=service)]
    if call.tool_name == "metrics.query" and _RANGE in tools:
        metric = call.argument("metric")
        if metric and _BARE.fullmatch(metric):
            return [NextCall.of(_RANGE, query=metric)]
    return []


# Arguments that scope a live read without changing what it asks (its namespace, span and size).
_SCOPE = frozenset({"namespace", "start", "end", "time", "limit"})


def live_key(tool_name: str, arguments: Mapping[str, object]) -> str:
    """What a live call asks, its scope aside: a translated gap call the cycle already made is not named again."""
    kept = {k: str(v) for k, v in arguments.items() if k not in _SCOPE}
    return tool_name + json.dumps(kept, sort_keys=True)


def for_run_tools(
    calls: Iterable[NextCall], tools: Collection[str], made: Collection[str] = ()
) -> tuple[NextCall, ...]:
    """The calls a gap names, in the run's own tools: a call of a tool the run has stands; one of a built-in tool
    the run's environment lacks becomes its live equivalent (``logs.search service=X`` -> ``loki.query_range``,
    ``k8s.events`` -> ``kubernetes.events``, ``deploys.list`` -> ``kubernetes.rollouts``, a named metric ->
    ``prometheus.query_range``), or is dropped: a gap never names a tool the retry cannot call, nor a live
    equivalent the cycle already made (``made``: their ``live_key``; the built-in call asked for what was not read).
    """
    out: list[NextCall] = []
    for call in calls:
        if call.tool_name in tools:
            out.append(call)
            continue
        live = _live_equivalents(call, tools)
        out += [c for c in live if live_key(c.tool_name, dict(c.arguments)) not in made]
    return tuple(dict.fromkeys(out))
