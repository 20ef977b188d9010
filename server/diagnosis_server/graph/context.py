"""What a run's nodes may use besides the state: the agents, the tools, the store's invocation rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import AgentProvider
from diagnosis_server.agents.prompts import PromptCatalog
from diagnosis_server.conversions import JsonObject
from diagnosis_server.limits import DEFAULT_LIMITS, Limits
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.runner import InvocationIds

__all__ = ["InvocationStore", "Limits", "RunContext", "ToolEnvironment"]


class InvocationStore(Protocol):
    """The part of the repository the nodes use: this run's tool_invocation rows."""

    async def add_tool_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None: ...

    async def list_tool_invocations(self, run_id: str) -> list[contracts_pb2.ToolInvocation]: ...


@dataclass(frozen=True, slots=True)
class ToolEnvironment:
    """A run's tools and what a planner may know up front about the system they observe."""

    toolset: Toolset
    context: JsonObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunContext:
    run_id: str
    provider: AgentProvider
    catalog: PromptCatalog
    tools: ToolEnvironment
    invocations: InvocationStore
    limits: Limits = DEFAULT_LIMITS
    allowed_tools: Sequence[str] | None = None
    # The run's invocation ids: one counter for all its Executor attempts and cycles.
    invocation_ids: InvocationIds = field(default_factory=InvocationIds)
