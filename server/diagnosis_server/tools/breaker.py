"""A run's per-source breaker: once a source timed out or refused, its remaining calls fail at once."""

from __future__ import annotations

from dataclasses import dataclass

from diagnosis_server.tools.base import Tool

MCP_PREFIX = "mcp."


def source_of(tool_name: str, tool: Tool | None = None) -> str:
    """The source a tool's calls go to: the tool's own ``source`` when it names one, else the tool name's
    first part (``prometheus``, ``kubernetes``, ``loki``; ``mcp.SERVER`` for an MCP server's tools)."""
    named = getattr(tool, "source", None)
    if isinstance(named, str) and named:
        return named
    if tool_name.startswith(MCP_PREFIX):
        server = tool_name[len(MCP_PREFIX) :].split(".", 1)[0]
        return f"{MCP_PREFIX}{server}"
    return tool_name.split(".", 1)[0]


@dataclass(frozen=True, slots=True)
class Tripped:
    """Why a source's breaker is open: its first failed call and what it said."""

    source: str
    invocation_id: str
    error: str

    def message(self) -> str:
        return (
            f"not called: source {self.source!r} failed earlier in this run ({self.invocation_id}: {self.error[:200]})"
        )


class SourceBreaker:
    """One run's breakers, one a source: open after the source's first timeout or refusal, for the rest of the
    run (every Executor attempt and cycle), so a source that never answers costs one wait, not one a call."""

    def __init__(self) -> None:
        self._open: dict[str, Tripped] = {}

    def tripped(self, source: str) -> Tripped | None:
        return self._open.get(source)

    def trip(self, source: str, invocation_id: str, error: str) -> None:
        """Opens ``source``'s breaker (the first failure stands: later ones do not replace it)."""
        self._open.setdefault(source, Tripped(source, invocation_id, error))

    @property
    def open_sources(self) -> tuple[str, ...]:
        return tuple(self._open)
