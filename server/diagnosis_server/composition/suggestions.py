"""Next steps from structured suggestions, rendered by template (R-A-2, R-A-3).

A next step is a call an agent suggested to close a gap (``SuggestedCall``: a tool and its arguments), or
a fixed template ("Look for direct evidence of c5"). A suggested call becomes a step only when

- its tool is one of the run's tools (when the run's tools are known),
- the run did not already make it with the same arguments (``RecordedCall``),
- every string argument is grounded: the same value (normalized) as one the run knows (the question, the
  allowed statements and their quotes, the run's own recorded arguments, the environment's names and the
  tools' enumerated values), or an identifier-like value found in those texts; never text that reads as an
  instruction. An argument that is not grounded drops the call: an agent cannot name through a next step
  what the evidence does not hold.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from google.protobuf import timestamp_pb2

from diagnosis.v1 import contracts_pb2
from diagnosis_server.conversions import JsonObject, JsonValue, from_struct, value_text
from diagnosis_server.text.language import finds_nothing, reads_as_instruction
from diagnosis_server.text.normalize import compact, displayable, normalize

MAX_STEPS = 8
MAX_VALUE_CHARS = 200
_IDENTIFIER_LIKE = re.compile(r"[\w.:/@+=,*-]{1,128}")
_BARE = re.compile(r"[A-Za-z0-9_.:/@+*-]+")
# An argument's key as a tool names it ("service", "label_selector", "since.minutes").
_ARGUMENT_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_MAX_ARGUMENT_DEPTH = 3
_TOOL = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_MAX_ABS_NUMBER = 1e15

COLLECT_MORE = (
    "Collect more evidence (logs, metrics, recent deployments and configuration changes) and run the diagnosis again."
)
CHECK_SYMPTOMS = "Keep watching the confirmed symptoms; run the diagnosis again if they persist."


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """What the answer may know of one recorded tool call: never its output."""

    invocation_id: str
    tool_name: str
    arguments: JsonObject
    started_at: timestamp_pb2.Timestamp | None
    status: int

    @classmethod
    def of(cls, invocation: contracts_pb2.ToolInvocation) -> RecordedCall:
        started = timestamp_pb2.Timestamp()
        started.CopyFrom(invocation.started_at)
        return cls(
            invocation_id=invocation.invocation_id,
            tool_name=invocation.tool_name,
            arguments=from_struct(invocation.arguments),
            started_at=started if invocation.HasField("started_at") else None,
            status=invocation.status,
        )


class GapLike(Protocol):
    @property
    def gap_id(self) -> str: ...

    @property
    def claim_id(self) -> str: ...

    @property
    def calls(self) -> tuple[contracts_pb2.SuggestedCall, ...]: ...


class ClaimLike(Protocol):
    @property
    def claim_id(self) -> str: ...

    @property
    def statement(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Suggestion:
    step_id: str
    text: str
    call: contracts_pb2.SuggestedCall | None = None
    claim_ids: tuple[str, ...] = ()
    # The gap the call would close, and the call's phrase without its machine form.
    gap_id: str = ""
    phrase: str = ""


_SPAN = frozenset({"start", "end", "time"})


def _spanless(arguments: JsonObject) -> JsonObject:
    return {k: v for k, v in arguments.items() if k not in _SPAN}


def _key(tool_name: str, arguments: JsonObject) -> str:
    return tool_name + json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)


def json_strings(value: JsonValue) -> Iterator[str]:
    """Every string in a JSON value: its scalars and the values of its objects, never their keys."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


class Grounding:
    """The values and texts a suggested argument may come from."""

    def __init__(self, texts: Iterable[str]) -> None:
        kept = [t for t in texts if t]
        self._exact = {normalize(t) for t in kept}
        self._haystack = "\x00".join(compact(t) for t in kept)

    def holds(self, value: str) -> bool:
        text = value.strip()
        if not text or len(text) > MAX_VALUE_CHARS or reads_as_instruction(text):
            return False
        if normalize(text) in self._exact:
            return True
        return _IDENTIFIER_LIKE.fullmatch(text) is not None and compact(text) in self._haystack


def shows_as_given(value: JsonValue, depth: int = 0) -> bool:
    """Whether a suggested call's arguments pass the display check as they are: every key a plain name, every
    string one clean line (``displayable``), every number finite and of a plausible size, nesting shallow. A
    call that does not is never shown (a key with a line break could forge a line of the answer)."""
    if isinstance(value, str):
        return displayable(value)
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int | float):
        return math.isfinite(value) and abs(value) <= _MAX_ABS_NUMBER
    if depth >= _MAX_ARGUMENT_DEPTH:
        return False
    if isinstance(value, list):
        return all(shows_as_given(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(
            _ARGUMENT_KEY.fullmatch(key) is not None and shows_as_given(item, depth + 1) for key, item in value.items()
        )
    return False


def _argument_text(value: JsonValue) -> str:
    """A bare word as is, any other string quoted, any other value as compact JSON (``value_text``)."""
    if isinstance(value, str) and not _BARE.fullmatch(value):
        return json.dumps(value, ensure_ascii=False)
    return value_text(value)


def call_text(call: contracts_pb2.SuggestedCall) -> str:
    """The machine form of a call: ``tool key=value ...`` (values quoted when they hold spaces)."""
    arguments = from_struct(call.arguments)
    parts = [call.tool_name, *(f"{k}={_argument_text(v)}" for k, v in sorted(arguments.items()))]
    return " ".join(parts)


def _arg(arguments: Mapping[str, JsonValue], *names: str) -> str:
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    return ""


# A tool's own phrase for a call of it (``Toolset.next_step``: a source's tool that says what it does), asked
# only for a tool the fixed phrases below do not know; None: it has none, and the step reads "Call TOOL".
OwnPhrase = Callable[[str, Mapping[str, JsonValue]], str | None]
_MAX_OWN_PHRASE = 200


def _phrase(tool: str, a: Mapping[str, JsonValue], own: OwnPhrase | None = None) -> str:
    service = _arg(a, "service") or "the affected service"
    namespace = _arg(a, "namespace")
    where = f" in namespace {namespace}" if namespace else ""
    if tool == "logs.search":
        query, level = _arg(a, "query"), _arg(a, "level")
        return (
            f"Search {service}'s logs"
            + (f" for {json.dumps(query)}" if query else "")
            + (f" at {level} and above" if level else "")
        )
    if tool == "metrics.query":
        metric = _arg(a, "metric")
        return f"Read {service}'s {metric} metric" if metric else f"Read {service}'s saturation and health metrics"
    if tool == "deploys.list":
        return f"List the recent deploys of {service}" if _arg(a, "service") else "List the recent deploys"
    if tool == "k8s.events":
        return f"List the Kubernetes events of {service}"
    if tool == "topology.dependencies":
        return f"Describe {service}'s dependencies"
    if tool == "kubernetes.pods":
        selector = _arg(a, "label_selector")
        return "List the pods" + where + (f" matching {selector}" if selector else "")
    if tool == "kubernetes.events":
        return "List the Kubernetes events" + where
    if tool == "kubernetes.pod_logs":
        pod, container = _arg(a, "pod"), _arg(a, "container")
        previous = a.get("previous") is True
        return (
            ("Read the previous container's logs of " if previous else "Read the logs of ")
            + (f"pod {pod}" if pod else "the failing pod")
            + (f" (container {container})" if container else "")
            + where
        )
    if tool == "kubernetes.rollouts":
        deployment = _arg(a, "deployment", "name")
        return (
            f"List the rollouts of deployment {deployment}{where}" if deployment else "List the recent rollouts" + where
        )
    if tool.startswith("prometheus."):
        return "Query Prometheus"
    if tool.startswith("loki."):
        return "Query Loki"
    given = " ".join((own(tool, a) or "").split())[:_MAX_OWN_PHRASE] if own is not None else ""
    return given or f"Call {tool}"


def render_call(call: contracts_pb2.SuggestedCall, own: OwnPhrase | None = None) -> str:
    """A next step's text: a fixed phrase per tool (else the tool's own, ``own``), then the call itself."""
    return f"{_phrase(call.tool_name, from_struct(call.arguments), own)} ({call_text(call)})."


def suggestions_for(
    *,
    verdict: int,
    gaps: Sequence[GapLike],
    causes: Sequence[ClaimLike],
    directions: Sequence[ClaimLike],
    recorded_calls: Sequence[RecordedCall],
    known_values: Iterable[str],
    tool_names: Collection[str] | None,
    label: Callable[[str], str] = str,
    own_phrase: OwnPhrase | None = None,
) -> list[Suggestion]:
    """The next steps an answer may show, in order: the gaps' grounded new calls, then a look for direct
    evidence of each possible direction, then (PASS) acting on the likely cause; a fixed step when there is
    none."""
    made = {_key(call.tool_name, call.arguments) for call in recorded_calls}
    # A call made over the run's window (its span filled in by the runner) is the call suggested without one.
    made |= {_key(call.tool_name, _spanless(call.arguments)) for call in recorded_calls}
    recorded_values = [v for call in recorded_calls for v in json_strings(call.arguments)]
    grounding = Grounding([*known_values, *recorded_values])
    steps: list[Suggestion] = []
    seen: set[str] = set()
    for gap in gaps:
        gap_claim = gap.claim_id
        for call in gap.calls:
            arguments = from_struct(call.arguments)
            key = _key(call.tool_name, arguments)
            if key in made or key in seen:
                continue
            if tool_names is not None and call.tool_name not in tool_names:
                continue
            if not _TOOL.fullmatch(call.tool_name) or not shows_as_given(arguments):
                continue
            if not all(grounding.holds(value) for value in json_strings(arguments)):
                continue
            seen.add(key)
            copy = contracts_pb2.SuggestedCall()
            copy.CopyFrom(call)
            phrase = _phrase(call.tool_name, arguments, own_phrase)
            steps.append(
                Suggestion(
                    f"s{len(steps) + 1}",
                    render_call(call, own_phrase),
                    copy,
                    (label(gap_claim),) if gap_claim else (),
                    gap_id=gap.gap_id,
                    phrase=phrase[:1].lower() + phrase[1:],
                )
            )
    if verdict != contracts_pb2.VERDICT_REJECT:
        for claim in directions:
            shown = label(claim.claim_id)
            text = f"Look for evidence that directly shows {shown}, or rules it out."
            steps.append(Suggestion(f"s{len(steps) + 1}", text, None, (shown,)))
    real = [c for c in causes if not finds_nothing(c.statement)]
    if verdict == contracts_pb2.VERDICT_PASS and real:
        cause = label(real[0].claim_id)
        text = f"Address the likely cause ({cause}) and check that the symptoms clear."
        steps.append(Suggestion(f"s{len(steps) + 1}", text, None, (cause,)))
    if not steps:
        text = CHECK_SYMPTOMS if verdict == contracts_pb2.VERDICT_PASS else COLLECT_MORE
        steps.append(Suggestion("s1", text))
    return steps[:MAX_STEPS]
