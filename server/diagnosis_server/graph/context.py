"""What a run's nodes may use besides the state: the agents, the tools, the store (its invocation rows)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import AgentProvider
from diagnosis_server.agents.prompts import PromptCatalog
from diagnosis_server.conversions import JsonObject
from diagnosis_server.limits import DEFAULT_LIMITS, Limits
from diagnosis_server.store.base import RunStore
from diagnosis_server.tools.base import Toolset
from diagnosis_server.tools.breaker import SourceBreaker
from diagnosis_server.tools.runner import InvocationIds, ProgressSink

__all__ = ["Limits", "RunContext", "ToolEnvironment"]


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
    invocations: RunStore
    limits: Limits = DEFAULT_LIMITS
    allowed_tools: Sequence[str] | None = None
    # The run's invocation ids: one counter for all its Executor attempts and cycles.
    invocation_ids: InvocationIds = field(default_factory=InvocationIds)
    # The run's per-source breakers: a source that timed out or refused is not called again in the run.
    breaker: SourceBreaker = field(default_factory=SourceBreaker)
    # Hears each tool call start and end (the run's progress stream); None: nobody listens.
    on_tool_call: ProgressSink | None = None
    # Sees each tool call once it is recorded, or once its recording failed (metrics).
    on_invocation: Callable[[contracts_pb2.ToolInvocation], None] | None = None

    async def record_invocation(self, invocation: contracts_pb2.ToolInvocation) -> None:
        """Records one tool call of the run (R-C-2), and shows it to ``on_invocation``."""
        try:
            await self.invocations.add_tool_invocation(invocation)
        finally:
            if self.on_invocation is not None:
                self.on_invocation(invocation)
