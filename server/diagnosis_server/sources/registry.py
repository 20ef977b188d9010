"""The environment registry: each configured environment's sources opened, its toolset, its planner context.

``EnvironmentRegistry.open(environments)`` opens each environment's sections, source by source in the order of
``kinds.SOURCES``: first every section's secrets are read (the environment's redactor removes them wherever its
sources answer), then each section opens into its tools (one HTTP client a Prometheus and a Loki, a loaded
Kubernetes configuration), and what starts later (the MCP servers) starts once every environment is open, all
at once, each bounded by its ``startup_timeout_s``; ``aclose()`` closes them all. An MCP server that cannot be
had is logged and left out (its allow-listed tools stay and fail when called); anything else that is wrong is
one ``EnvironmentsError`` naming the file, the environment and the key. ``tools_for(name)`` is what a run gets.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import structlog

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.graph.context import ToolEnvironment
from diagnosis_server.sources.arguments import rfc3339
from diagnosis_server.sources.config import EnvironmentConfig, Environments
from diagnosis_server.sources.source import Closer, LaterStart, Opening, Prepared, SourceInfo
from diagnosis_server.text.redaction import Redactor
from diagnosis_server.tools.base import Tool, Toolset

log = structlog.get_logger(__name__)

__all__ = ["EnvironmentRegistry", "OpenEnvironment", "SourceInfo", "UnknownEnvironment"]


@dataclass(slots=True)
class OpenEnvironment:
    name: str
    is_default: bool
    toolset: Toolset
    sources: list[SourceInfo]
    context: JsonObject
    closers: list[Closer] = field(default_factory=list)
    # What starts once every environment is open (an MCP server's connection).
    later: list[LaterStart] = field(default_factory=list)
    # The alert labels that send an alert to this environment (``alert_labels`` in the file).
    alert_labels: dict[str, str] = field(default_factory=dict)

    def tool_environment(self) -> ToolEnvironment:
        """The run's tools and what its planner may know up front (the sources, the namespaces, the time)."""
        return ToolEnvironment(toolset=self.toolset, context={**self.context, "now": rfc3339(time.time())})


class UnknownEnvironment(KeyError):
    pass


class EnvironmentRegistry:
    def __init__(self, environments: dict[str, OpenEnvironment]) -> None:
        self._environments = environments
        self._closed = False

    @classmethod
    def empty(cls) -> EnvironmentRegistry:
        return cls({})

    @classmethod
    async def open(
        cls,
        config: Environments,
        *,
        only: Collection[str] | None = None,
        for_tool: str | None = None,
    ) -> EnvironmentRegistry:
        """Opens the environments of ``config`` (those named in ``only``, when given), starting what starts later
        (an MCP server; only what serves ``for_tool``, when given: ``tools call`` starts the server of the tool
        called, none for another source's tool)."""
        opened: dict[str, OpenEnvironment] = {}
        try:
            for name, env_config in config.environments.items():
                if only is None or name in only:
                    opened[name] = await _open_environment(config, name, env_config)
            pending = [
                part for env in opened.values() for part in env.later if for_tool is None or part.serves(for_tool)
            ]
            await asyncio.gather(*(part.open() for part in pending))
            for env in opened.values():
                for part in env.later:
                    env.toolset = Toolset([*env.toolset.as_mapping().values(), *part.tools()])
        except BaseException:
            await _close_all(opened.values())
            raise
        log.info("environments_opened", environments={n: len(e.toolset.names) for n, e in opened.items()})
        return cls(opened)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._environments)

    @property
    def default(self) -> str | None:
        return next((name for name, env in self._environments.items() if env.is_default), None)

    def for_alert_labels(self, labels: Mapping[str, str]) -> str | None:
        """The first environment (file order) whose ``alert_labels`` the labels all carry; None when none."""
        for name, env in self._environments.items():
            if env.alert_labels and all(labels.get(key) == value for key, value in env.alert_labels.items()):
                return name
        return None

    def get(self, name: str) -> OpenEnvironment:
        try:
            return self._environments[name]
        except KeyError:
            raise UnknownEnvironment(name) from None

    def tools_for(self, name: str) -> ToolEnvironment:
        return self.get(name).tool_environment()

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await _close_all(self._environments.values())


async def _close_all(environments: Collection[OpenEnvironment]) -> None:
    closers = [closer for env in environments for closer in env.closers]
    results = await asyncio.gather(*(closer() for closer in closers), return_exceptions=True)
    for result in results:
        if isinstance(result, Exception):
            log.warning("source_close_failed", error=type(result).__name__)


async def _open_environment(config: Environments, name: str, env: EnvironmentConfig) -> OpenEnvironment:
    opening = Opening(config, name)
    # Every section's secrets first: a missing one fails the environment before anything is opened.
    prepared: list[Prepared] = [
        kind.prepare(section, opening, key) for kind in config.sources for key, section in env.sections(kind)
    ]
    redactor = Redactor([secret for part in prepared for secret in part.secrets])

    tools: list[Tool] = []
    sources: list[SourceInfo] = []
    context: JsonObject = {"environment": name}
    opened = OpenEnvironment(name, env.default, Toolset([]), sources, context)
    opened.alert_labels = dict(env.alert_labels)
    try:
        for part in prepared:
            source = await part.open(redactor)
            opened.closers += source.closers
            opened.later += source.later
            tools += source.tools
            sources += source.sources
            context.update(source.context)
    except BaseException:
        await _close_all([opened])
        raise
    opened.toolset = Toolset(tools)
    sources_json: list[JsonValue] = [{"kind": s.kind, "name": s.name, "endpoint": s.endpoint} for s in sources]
    context["sources"] = sources_json
    return opened
