"""What the heuristic Executor saw: one recorded tool call and typed views of its JSON output.

Every piece of evidence is a ``Binding`` made from an observation: an RFC 6901 JSON Pointer into that
invocation's output and the text found there, copied verbatim (a string as is, any other value as its
compact JSON text: the number ``0.312`` binds as ``"0.312"``), exactly as the Gatekeeper reads it back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar, cast

from diagnosis_server.agents.heuristic.shapes import is_object_name, is_token_name
from diagnosis_server.agents.heuristic.workloads import STREAM_LABELS, workload_of_pod
from diagnosis_server.conversions import JsonObject, JsonValue, value_text
from diagnosis_server.text.language import reads_as_instruction
from diagnosis_server.text.matching import MAX_MATCHED_CHARS


class BindingError(ValueError):
    """A pointer that does not resolve, or a text that is not at the pointer (a detector bug)."""


@dataclass(frozen=True, slots=True)
class Binding:
    invocation_id: str
    tool_name: str
    raw_path: str
    matched_text: str

    def to_json(self) -> JsonObject:
        return {
            "source_invocation_ids": [self.invocation_id],
            "tool_name": self.tool_name,
            "raw_path": self.raw_path,
            "matched_text": self.matched_text,
        }


def pointer(*tokens: str | int) -> str:
    """An RFC 6901 JSON Pointer from reference tokens (``~`` and ``/`` escaped)."""
    return "".join("/" + str(token).replace("~", "~0").replace("/", "~1") for token in tokens)


def parse_ts(text: object) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        ts = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)


def number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def label_number(text: object) -> float | None:
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    if not isinstance(text, str):
        return None
    try:
        return float(text.strip())
    except ValueError:
        return None


_Made = TypeVar("_Made")


def walk(value: JsonValue, tokens: Iterable[str | int]) -> JsonValue:
    """The value at ``tokens`` (object keys and array indexes) under ``value``; None where there is none."""
    for token in tokens:
        if isinstance(value, dict) and isinstance(token, str):
            value = value.get(token)
        elif isinstance(value, list) and isinstance(token, int) and 0 <= token < len(value):
            value = value[token]
        else:
            return None
    return value


@dataclass(frozen=True, slots=True)
class Observation:
    """One successful tool call of this cycle: its plan position, call and JSON object output."""

    step: int
    tool_name: str
    arguments: JsonObject
    invocation_id: str
    output: JsonObject
    # What analyzers derive from the output alone (a listing's item views), made once per observation.
    derived: dict[str, object] = field(default_factory=dict, compare=False, repr=False)
    # The output was trimmed to the output bound (TRUNCATED): a List holds part of its items.
    truncated: bool = False
    # The tool that was called, when it is read as another (an MCP tool answering in Loki's shape is read as
    # loki.query_range): bindings name the tool called.
    bound_as: str = ""

    def get(self, *tokens: str | int) -> JsonValue:
        return walk(self.output, tokens)

    def once(self, key: str, make: Callable[[Observation], list[_Made]]) -> list[_Made]:
        """What ``make`` derives from this output (a listing's item views, an answer's series), made on first use
        and kept in ``derived`` under ``key``: several analyzers read it, some once per item."""
        made = self.derived.get(key)
        if not isinstance(made, list):
            made = self.derived[key] = make(self)
        return cast(list[_Made], made)

    def bind(self, *tokens: str | int, text: str | None = None) -> Binding:
        """A binding to the value at ``tokens``: all of its text, or the given substring of it."""
        value = self.get(*tokens)
        if value is None:
            raise BindingError(f"{pointer(*tokens)} does not resolve in {self.invocation_id}")
        full = value_text(value)
        if text is not None and (not text or text not in full):
            raise BindingError(f"{text!r} is not at {pointer(*tokens)} in {self.invocation_id}")
        return Binding(
            self.invocation_id, self.bound_as or self.tool_name, pointer(*tokens), full if text is None else text
        )

    def text(self, *tokens: str | int) -> str:
        value = self.get(*tokens)
        return "" if value is None else value_text(value)

    @property
    def service(self) -> str:
        for value in (self.output.get("service"), self.arguments.get("service")):
            if isinstance(value, str) and value:
                return value
        return ""


# ------------------------------------------------------------------------------------------ views
@dataclass(frozen=True, slots=True)
class Point:
    index: int
    ts_text: str
    value: float

    @property
    def ts(self) -> datetime:
        parsed = parse_ts(self.ts_text)
        return parsed if parsed is not None else datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Series:
    """A metrics.query output: ``{metric, service, unit, labels, points, summary}``."""

    obs: Observation
    metric: str
    service: str
    unit: str
    labels: dict[str, str]
    points: tuple[Point, ...]

    @classmethod
    def of(cls, obs: Observation) -> Series | None:
        if obs.tool_name != "metrics.query":
            return None
        metric, service = obs.get("metric"), obs.get("service")
        raw_points = obs.get("points")
        if not isinstance(metric, str) or not isinstance(service, str):
            return None
        labels_value = obs.get("labels")
        labels = {k: v for k, v in labels_value.items() if isinstance(v, str)} if isinstance(labels_value, dict) else {}
        points: list[Point] = []
        for index, item in enumerate(raw_points if isinstance(raw_points, list) else []):
            if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str):
                value = number(item[1])
                if value is not None:
                    points.append(Point(index, item[0], value))
        unit = obs.get("unit")
        return cls(obs, metric, service, unit if isinstance(unit, str) else "", labels, tuple(points))

    def summary(self, key: str) -> float | None:
        return number(self.obs.get("summary", key))

    def bind_summary(self, key: str) -> Binding:
        return self.obs.bind("summary", key)

    def bind_point(self, point: Point, part: int) -> Binding:
        return self.obs.bind("points", point.index, part)

    def bind_label(self, key: str) -> Binding:
        return self.obs.bind("labels", key)

    def summary_text(self, key: str) -> str:
        return self.obs.text("summary", key)

    def point_ts(self, point: Point) -> str:
        return self.obs.text("points", point.index, 0)


@dataclass(frozen=True, slots=True)
class LogLine:
    """One log line of any log source: a pack's ``logs.search``, ``kubernetes.pod_logs``, ``loki.query_range``."""

    obs: Observation
    index: int
    service: str
    ts: datetime | None
    level: str
    message: str
    # Where the message is, where the service's name is, and the part of that value that is the name.
    message_path: tuple[str | int, ...] = ()
    service_path: tuple[str | int, ...] = ("service",)
    service_text: str | None = None

    def __post_init__(self) -> None:
        # Every analysis of a line reads its first MAX_MATCHED_CHARS characters only (a 12 KB crafted line costs
        # what a 4 KB one does); a quote from them is still part of the recorded value.
        if len(self.message) > MAX_MATCHED_CHARS:
            object.__setattr__(self, "message", self.message[:MAX_MATCHED_CHARS])

    def bind_message(self, text: str | None = None) -> Binding:
        return self.obs.bind(*(self.message_path or ("lines", self.index, "message")), text=text)

    def bind_service(self) -> Binding:
        return self.obs.bind(*self.service_path, text=self.service_text)


_LEVEL = re.compile(
    r"\b(FATAL|CRITICAL|PANIC|ERROR|ERR|WARN(?:ING)?|INFO|DEBUG|TRACE)\b"
    r"|\blevel\s*[=:]\s*\"?(fatal|critical|panic|error|err|warn(?:ing)?|info|debug|trace)\b"
    r"|\"(?:level|severity|lvl)\"\s*:\s*\"(fatal|critical|panic|error|err|warn(?:ing)?|info|debug|trace)\"",
    re.IGNORECASE,
)
_LEVELS = {"CRITICAL": "FATAL", "PANIC": "FATAL", "ERR": "ERROR", "WARNING": "WARN", "TRACE": "DEBUG"}
# zerolog's console writer writes a level as three capitals ("2025-06-10T09:00:00Z INF main.go:38 > ..."), never in
# lower case (so "+Inf" is no level).
_SHORT_LEVEL = re.compile(r"(?<![\w+-])(TRC|DBG|INF|WRN|FTL|PNC)(?![\w-])")
_SHORT_LEVELS = {"TRC": "DEBUG", "DBG": "DEBUG", "INF": "INFO", "WRN": "WARN", "FTL": "FATAL", "PNC": "FATAL"}


# klog/glog's "E0211 06:52:01.123456" and .NET's console "fail: " start a line; pino and bunyan write a number.
_PREFIX = re.compile(r"^(?:(?P<klog>[EFWI])\d{4} \d\d:\d\d:\d\d\.\d+|(?P<dotnet>fail|crit|warn|info|dbug|trce): )")
_PREFIXES = {
    **{"E": "ERROR", "F": "FATAL", "W": "WARN", "I": "INFO"},
    **{"fail": "ERROR", "crit": "FATAL", "warn": "WARN", "info": "INFO", "dbug": "DEBUG", "trce": "DEBUG"},
}
_NUMERIC = re.compile(r"\"level\"\s*:\s*([1-6]0)\b")
_NUMBERS = {"60": "FATAL", "50": "ERROR", "40": "WARN", "30": "INFO", "20": "DEBUG", "10": "DEBUG"}


def line_level(message: str) -> str:
    """A raw line's severity, as the line writes it (``ERROR``, ``level=error``, ``"level":"error"``, klog's
    ``E0211 ...``, .NET's ``fail:``, pino's ``"level":50``); '' if none."""
    prefix = _PREFIX.match(message)
    if prefix is not None:
        return _PREFIXES[prefix.group("klog") or prefix.group("dotnet")]
    number = _NUMERIC.search(message[:200])
    if number is not None:
        return _NUMBERS[number.group(1)]
    match = _LEVEL.search(message[:200])
    short = _SHORT_LEVEL.search(message[:200])
    if short is not None and (match is None or short.start() < match.start()):
        return _SHORT_LEVELS[short.group(1)]
    if match is None:
        return ""
    word = next(g for g in match.groups() if g).upper()
    return _LEVELS.get(word, word)


def _pack_lines(obs: Observation) -> list[LogLine]:
    lines = obs.get("lines")
    out: list[LogLine] = []
    for index, item in enumerate(lines if isinstance(lines, list) else []):
        if isinstance(item, dict) and isinstance(item.get("message"), str):
            level = item.get("level")
            out.append(
                LogLine(obs, index, obs.service, parse_ts(item.get("ts")), str(level or ""), str(item["message"]))
            )
    return out


def _pod_lines(obs: Observation) -> list[LogLine]:
    pod = obs.get("pod")
    lines = obs.get("lines")
    if not is_object_name(pod) or not isinstance(lines, list):
        return []  # (a pod "name" that is not one is never a workload's name in a sentence)
    workload = workload_of_pod(pod)
    out: list[LogLine] = []
    for index, line in enumerate(lines):
        if isinstance(line, str) and line.strip():
            out.append(
                LogLine(obs, index, workload, None, line_level(line), line, ("lines", index), ("pod",), workload)
            )
    return out


def _loki_lines(obs: Observation) -> list[LogLine]:
    result = obs.get("data", "result")
    out: list[LogLine] = []
    for s, stream in enumerate(result if isinstance(result, list) else []):
        labels = stream.get("stream") if isinstance(stream, dict) else None
        values = stream.get("values") if isinstance(stream, dict) else None
        if not isinstance(labels, dict) or not isinstance(values, list):
            continue
        # Only a label whose value has a name's shape names the line's workload (Loki label values may be anything).
        key = next((k for k in STREAM_LABELS if is_token_name(labels.get(k))), "")
        service = str(labels[key]) if key else ""
        if key == "pod":
            service = workload_of_pod(service)
        level = labels.get("level") if isinstance(labels.get("level"), str) else ""
        for v, value in enumerate(values):
            if not (isinstance(value, list) and len(value) == 2 and isinstance(value[1], str)):
                continue
            ts = None
            if isinstance(value[0], str) and value[0].isdigit():
                ts = datetime.fromtimestamp(int(value[0]) / 1e9, tz=UTC)
            message = value[1]
            out.append(
                LogLine(
                    obs,
                    v,
                    service,
                    ts,
                    str(level).upper() or line_level(message),
                    message,
                    ("data", "result", s, "values", v, 1),
                    ("data", "result", s, "stream", key),
                    service if key == "pod" else None,
                )
            )
    return out


def log_lines(obs: Observation) -> list[LogLine]:
    """Every line of a log output, whichever source answered, but a line that addresses the diagnosis: it observes
    nothing, and no claim binds it (R-GK-5). Read once an output (the follow-ups, the detectors and the analyzers
    each ask)."""
    return list(obs.once("log_lines", _log_lines))


def _log_lines(obs: Observation) -> list[LogLine]:
    if obs.tool_name == "logs.search":
        lines = _pack_lines(obs)
    elif obs.tool_name == "kubernetes.pod_logs":
        lines = _pod_lines(obs)
    elif obs.tool_name == "loki.query_range":
        lines = _loki_lines(obs)
    else:
        return []
    return [line for line in lines if not reads_as_instruction(line.message)]


@dataclass(frozen=True, slots=True)
class Record:
    """One item of a list output (an event of k8s.events, a deploy of deploys.list)."""

    obs: Observation
    key: str
    index: int
    data: JsonObject

    def text(self, field: str) -> str:
        value = self.data.get(field)
        return value if isinstance(value, str) else ""

    @property
    def ts(self) -> datetime | None:
        return parse_ts(self.data.get("ts"))

    def bind(self, field: str, text: str | None = None) -> Binding:
        return self.obs.bind(self.key, self.index, field, text=text)


@dataclass(frozen=True, slots=True)
class ItemView:
    """One item of a Kubernetes list output's ``items`` (a pod, a ReplicaSet): its values and bindings."""

    obs: Observation
    index: int

    def get(self, *path: str | int) -> JsonValue:
        return self.obs.get("items", self.index, *path)

    def text(self, *path: str | int) -> str:
        value = self.get(*path)
        return value if isinstance(value, str) else ""

    def bind(self, *path: str | int, text: str | None = None) -> Binding:
        return self.obs.bind("items", self.index, *path, text=text)


def records(obs: Observation, key: str) -> list[Record]:
    items = obs.get(key)
    if not isinstance(items, list):
        return []
    return [Record(obs, key, index, item) for index, item in enumerate(items) if isinstance(item, dict)]
