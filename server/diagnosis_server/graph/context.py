"""What a run's nodes may use besides the state: the agents, the tools, the store (its invocation rows)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from diagnosis_server.agents.base import AgentProvider
from diagnosis_server.agents.prompts import PromptCatalog
from diagnosis_server.conversions import JsonObject
from diagnosis_server.store.base import RunStore
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.runner import InvocationIds


@dataclass(frozen=True, slots=True)
class ToolEnvironment:
    """A run's tools and what a planner may know up front about the system they observe."""

    toolset: Toolset
    context: JsonObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Limits:
    recursion_limit: int = 25
    max_events: int = 64
    agent_timeout_s: float = 60.0
    # The Executor's attempt covers its whole tool-calling loop, so it gets a longer bound.
    executor_timeout_s: float = 300.0
    tool_timeout_s: float = 10.0
    max_tool_output_bytes: int = 256 * 1024
    max_tool_calls: int = 64
    # The first technical retry's backoff after a transient failure (doubling, jittered, at least any
    # Retry-After, at most the node's timeout); 0 retries at once. The server sets it from its settings.
    retry_backoff_s: float = 0.0


@dataclass(frozen=True, slots=True)
class RunContext:
    run_id: str
    provider: AgentProvider
    catalog: PromptCatalog
    tools: ToolEnvironment
    invocations: RunStore
    limits: Limits = Limits()
    allowed_tools: Sequence[str] | None = None
    # The run's invocation ids: one counter for all its Executor attempts and cycles.
    invocation_ids: InvocationIds = field(default_factory=InvocationIds)
