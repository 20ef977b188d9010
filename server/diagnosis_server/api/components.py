"""What the server is built from besides gRPC: the agent provider by name and the built-in tools."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from diagnosis_server.agents.base import AgentProvider
from diagnosis_server.agents.registry import UnknownProviderError, create_provider
from diagnosis_server.graph.context import ToolEnvironment
from diagnosis_server.settings import SettingsError, env_name
from diagnosis_server.sources.packs import pack_context, pack_toolset
from diagnosis_server.tools.builtin import builtin_toolset, scenario_context
from diagnosis_server.tools.scenario import Scenario

ToolsFor = Callable[[str], ToolEnvironment]


def load_provider(name: str) -> AgentProvider:
    """The agent provider called ``name``; SettingsError (naming agent_provider) when it cannot be had."""
    where = f"setting agent_provider ({env_name('agent_provider')})"
    try:
        return create_provider(name)
    except UnknownProviderError as exc:
        raise SettingsError(f"{where}: {exc}") from exc
    except ImportError as exc:
        raise SettingsError(f"{where}: provider {name!r} needs a missing package: {exc.name or exc}") from exc
    except (AttributeError, ValueError, RuntimeError, OSError) as exc:
        raise SettingsError(f"{where}: provider {name!r} cannot start: {exc}") from exc


def builtin_tools_for(scenarios: Mapping[str, Scenario]) -> ToolsFor:
    """The five built-in tools over a bundled scenario, and what a planner may know of it."""
    packs = dict(scenarios)

    def tools_for(name: str) -> ToolEnvironment:
        scenario = packs[name]
        return ToolEnvironment(toolset=builtin_toolset(scenario), context=scenario_context(scenario))

    return tools_for


def pack_tools_for(scenarios: Mapping[str, Scenario]) -> ToolsFor:
    """A pack's tools: the five built-in ones and the live tools its data can answer (``sources.packs``)."""
    packs = dict(scenarios)
    # A pack does not change, nor does what a planner may know of it: both are made once, not per run.
    environments = {
        name: ToolEnvironment(toolset=pack_toolset(scenario), context=pack_context(scenario))
        for name, scenario in packs.items()
    }

    def tools_for(name: str) -> ToolEnvironment:
        return environments[name]

    return tools_for
