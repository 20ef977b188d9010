"""The tool interface: a name, a description, a JSON input schema, and an async call returning JSON."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, runtime_checkable

from diagnosis_server.conversions import JsonObject, JsonValue


class ToolError(Exception):
    """A tool rejected its arguments or could not produce output (recorded as an ERROR invocation)."""


class SourceUnreachable(ToolError):
    """The tool's source did not answer: refused, unreachable, or no answer in time (its breaker opens)."""


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

    def as_mapping(self) -> Mapping[str, Tool]:
        return dict(self._tools)
