"""Tools: the interface, the recording runner, and the built-in toolset over bundled incident scenarios."""

from __future__ import annotations

from diagnosis_server.tools.base import Tool, ToolError, Toolset
from diagnosis_server.tools.builtin import TOOL_NAMES, builtin_toolset, scenario_context
from diagnosis_server.tools.runner import ToolBlockedError, ToolCallResult, ToolRunner
from diagnosis_server.tools.scenario import (
    Scenario,
    ScenarioError,
    default_scenario_name,
    get_scenario,
    load_scenario,
    load_scenarios,
)

__all__ = [
    "TOOL_NAMES",
    "Scenario",
    "ScenarioError",
    "Tool",
    "ToolBlockedError",
    "ToolCallResult",
    "ToolError",
    "ToolRunner",
    "Toolset",
    "builtin_toolset",
    "default_scenario_name",
    "get_scenario",
    "load_scenario",
    "load_scenarios",
    "scenario_context",
]
