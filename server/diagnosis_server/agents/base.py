"""One interface for the four agents; providers plug in by name.

An agent receives its node's serialized input projection (canonical JSON bytes) and returns raw text.
The node's protocol parser judges that text; the agent never decides an outcome. A typed failure maps
to a node outcome: ``AgentRetryableError`` (timeouts, connection errors, 429/5xx) -> RETRYABLE_FAILED,
``AgentNonRetryableError`` (refusals, other 4xx) -> NON_RETRYABLE_FAILED.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from google.protobuf.message import Message

from diagnosis_server.conversions import JsonObject, JsonValue

if TYPE_CHECKING:
    from diagnosis.v1 import contracts_pb2
    from diagnosis_server.tools.runner import ToolCallResult

AgentRole = Literal["planner", "executor", "verifier", "composer"]
AGENT_ROLES: tuple[AgentRole, ...] = ("planner", "executor", "verifier", "composer")


class AgentError(Exception):
    """Base of an agent's typed failures.

    ``failure_class`` names the failure for operators ("timeout", "connection_refused", "http_503", ...);
    ``endpoint`` says the model endpoint itself failed (it could not be reached or answered with an
    error), as opposed to the agent's own refusal; ``retry_after_s`` is the wait the endpoint asked for.
    The message is safe to log and store: no secret, no prompt.
    """

    def __init__(
        self,
        message: str = "",
        *,
        failure_class: str = "",
        endpoint: bool = False,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.failure_class = failure_class
        self.endpoint = endpoint
        self.retry_after_s = retry_after_s


class AgentRetryableError(AgentError):
    """A failure worth one technical retry (timeout, connection error, rate limit, server error)."""


class AgentNonRetryableError(AgentError):
    """A failure no retry will fix (refusal, bad request, missing configuration)."""


class ToolCaller(Protocol):
    """What an Executor may do with tools: call them through the run's tool runner (recorded, allow-listed)."""

    async def call(self, tool_name: str, arguments: JsonObject) -> ToolCallResult: ...

    async def call_many(self, calls: Sequence[tuple[str, JsonObject]]) -> list[ToolCallResult]:
        """Independent calls run concurrently; their results in plan order, each recorded before it is returned."""
        ...

    async def record(self, recorded: contracts_pb2.ToolInvocation) -> None:
        """Record an invocation made elsewhere as a tool_invocation of this run (scripted replays)."""
        ...

    async def earlier(self) -> list[ToolCallResult]:
        """What the run's earlier cycles read (an evidence retry's Executor reads it beside its own calls)."""
        ...


@dataclass(frozen=True, slots=True)
class AgentRequest:
    role: AgentRole
    # The node's input projection, canonical JSON bytes: the same input gives the same bytes.
    input_bytes: bytes
    run_id: str
    attempt: int
    cycle: int
    prompt_name: str
    prompt_version: str
    # The rendered prompt text (providers that talk to a model use it; never persisted).
    prompt_text: str = ""
    # Only the Executor gets tools.
    tools: ToolCaller | None = None
    # The message ``input_bytes`` were serialized from, when the node has one (the Verifier's input): an
    # in-process agent may read it instead of parsing the bytes back. The bytes stay the agent's input.
    input_message: Message | None = None


@dataclass(slots=True)
class AgentReply:
    text: str
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Anything else worth keeping in the node's step record (never prompt text or reasoning).
    extra: dict[str, JsonValue] = field(default_factory=dict)


class Agent(Protocol):
    async def run(self, request: AgentRequest) -> AgentReply: ...


class AgentProvider(Protocol):
    """A named source of the four agents."""

    @property
    def name(self) -> str: ...

    def agent(self, role: AgentRole) -> Agent: ...
