"""The tool interface: a name, a description, a JSON input schema, and an async call returning JSON."""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterable, Mapping
from typing import Protocol, runtime_checkable

from diagnosis_server.conversions import JsonObject, JsonValue


class ToolError(Exception):
    """A tool rejected its arguments or could not produce output (recorded as an ERROR invocation)."""


class SourceUnreachable(ToolError):
    """The tool's source did not answer: refused, unreachable, or no answer in time (its breaker opens)."""


# When the tool call being made must end (time.monotonic()): the runner sets it around each call, so a source
# can tell whether a wait it is asked for (Retry-After) fits in what the call has left.
CALL_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("diagnosis_call_deadline", default=None)


def call_time_left() -> float | None:
    """Seconds the current tool call has left (None: not inside a runner's call)."""
    deadline = CALL_DEADLINE.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


@runtime_checkable
class Tool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> JsonObject:
        """JSON Schema (draft 2020-12 subset: type, properties, required, enum) of the arguments."""
        ...

    async def call(self, arguments: JsonObject) -> JsonValue: ...


@runtime_checkable
class PhrasedTool(Tool, Protocol):
    """A tool that says in words what a call of it does: the next step an answer shows for a suggested call of a
    tool the fixed phrases do not know (``composition.suggestions``), e.g. "Read the status page's components"."""

    def next_step(self, arguments: Mapping[str, JsonValue]) -> str: ...


class Toolset:
    """Tools by name, in a stable order."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def specs(self) -> list[JsonObject]:
        """What an agent is told about each tool (never its implementation): its name, description and schema."""
        return [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in self._tools.values()
        ]

    def next_step(self, name: str, arguments: Mapping[str, JsonValue]) -> str | None:
        """The tool's own phrase for a call of it with these arguments; None when it has none."""
        tool = self._tools.get(name)
        return tool.next_step(arguments) if isinstance(tool, PhrasedTool) else None

    def as_mapping(self) -> Mapping[str, Tool]:
        return dict(self._tools)
