"""The `scripted` provider: replays given raw outputs per agent, attempt by attempt (tests and evals).

``"!timeout"`` stands for a timeout (RETRYABLE_FAILED) and ``"!refuse"`` for a refusal
(NON_RETRYABLE_FAILED). The scripted Executor first records its cycle's tool invocations through the
tool runner's recording path, then returns its raw output, as a real Executor would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import (
    AGENT_ROLES,
    Agent,
    AgentNonRetryableError,
    AgentReply,
    AgentRequest,
    AgentRetryableError,
    AgentRole,
)

TIMEOUT = "!timeout"
REFUSE = "!refuse"


class ScriptedAgent:
    def __init__(
        self,
        role: AgentRole,
        outputs: Sequence[str],
        invocations_by_cycle: Mapping[int, Sequence[contracts_pb2.ToolInvocation]],
    ) -> None:
        self._role = role
        self._outputs = list(outputs)
        self._invocations_by_cycle = invocations_by_cycle
        self._next = 0
        self._recorded_cycles: set[int] = set()

    @property
    def calls(self) -> int:
        return self._next

    async def run(self, request: AgentRequest) -> AgentReply:
        if self._role == "executor" and request.tools is not None and request.cycle not in self._recorded_cycles:
            self._recorded_cycles.add(request.cycle)
            for invocation in self._invocations_by_cycle.get(request.cycle, ()):
                await request.tools.record(invocation)
        if self._next >= len(self._outputs):
            raise AgentNonRetryableError(f"scripted {self._role} has no output for call {self._next + 1}")
        text = self._outputs[self._next]
        self._next += 1
        if text == TIMEOUT:
            raise AgentRetryableError(f"scripted {self._role} timed out")
        if text == REFUSE:
            raise AgentNonRetryableError(f"scripted {self._role} refused")
        return AgentReply(text=text, model="scripted")


class ScriptedProvider:
    """Raw outputs per agent role; each call takes the next one."""

    name = "scripted"

    def __init__(
        self,
        outputs: Mapping[AgentRole, Sequence[str]],
        *,
        invocations_by_cycle: Mapping[int, Sequence[contracts_pb2.ToolInvocation]] | None = None,
    ) -> None:
        invocations = invocations_by_cycle or {}
        self._agents: dict[AgentRole, ScriptedAgent] = {
            role: ScriptedAgent(role, outputs.get(role, ()), invocations) for role in AGENT_ROLES
        }

    def agent(self, role: AgentRole) -> Agent:
        return self._agents[role]

    def calls(self, role: AgentRole) -> int:
        return self._agents[role].calls
