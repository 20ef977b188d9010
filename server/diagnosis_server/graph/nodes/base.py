"""What every node is: an explicit input projection, a run over it, an outcome and explicit writes (R-S-2)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import structlog
from google.protobuf.message import Message

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.agents.base import (
    AgentError,
    AgentNonRetryableError,
    AgentReply,
    AgentRequest,
    AgentRetryableError,
    AgentRole,
    ToolCaller,
)
from diagnosis_server.conversions import JsonObject, JsonValue, canonical_json_bytes, message_to_dict
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.spec import GRAPH
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.protocols.planner import PlannerMode

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

log = structlog.get_logger(__name__)

# The reason code of an attempt whose model endpoint failed (could not be reached, answered an error).
MODEL_ENDPOINT_FAILED = "MODEL_ENDPOINT_FAILED"
MAX_FAILURE_CHARS = 500


def clip_text(text: str, limit: int = MAX_FAILURE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


InputT = TypeVar("InputT")
ProjectionT = TypeVar("ProjectionT", bound="DataclassInstance")


@dataclass(frozen=True, slots=True)
class NodeResult:
    outcome: int
    reason_code: str = ""
    updates: Mapping[str, Any] = field(default_factory=dict)
    step: run_pb2.NodeStep | None = None


class Node(Protocol, Generic[InputT]):
    @property
    def name(self) -> int: ...

    def project(self, state: DiagnosisState) -> InputT:
        """The node's explicit input projection: nothing else of the state reaches it."""
        ...

    async def run(self, inputs: InputT, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult: ...


def projection(kind: type[ProjectionT], state: DiagnosisState, **derived: object) -> ProjectionT:
    """A node's input ``kind``: each field given in ``derived``, every other one the state's field of its name."""
    fields = {f.name: getattr(state, f.name) for f in dataclasses.fields(kind) if f.name not in derived}
    return kind(**fields, **derived)


@dataclass(frozen=True, slots=True)
class CycleInput:
    """What the Planner and the Executor are both told of the cycle they work in."""

    question: str
    scenario: str
    cycle: int
    mode: PlannerMode
    retry_context: contracts_pb2.RetryContext | None

    def payload(self, ctx: RunContext, **more: JsonValue) -> JsonObject:
        """The agent's input: the question, the cycle and its mode, the tools, any retry context, and ``more``."""
        payload: JsonObject = {
            "question": self.question,
            "scenario": self.scenario,
            "cycle": self.cycle,
            "mode": self.mode,
            "tools": list[JsonValue](ctx.tools.toolset.specs()),
            **more,
        }
        if self.retry_context is not None:
            payload["retry_context"] = message_to_dict(self.retry_context)
        return payload


class ProjectedNode(Generic[ProjectionT]):
    """A node whose input is its type parameter (``ProjectedNode[GatekeeperInput]``), every field the state's
    field of the same name; ``input_type`` is that parameter, read once from the class's declaration."""

    input_type: type[ProjectionT]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            if typing.get_origin(base) is ProjectedNode:
                (cls.input_type,) = typing.get_args(base)

    def project(self, state: DiagnosisState) -> ProjectionT:
        return projection(self.input_type, state)


def attempt_step(
    ctx: RunContext, *, node: int, attempt: int, cycle: int, outcome: int, elapsed_s: float, **fields: Any
) -> run_pb2.NodeStep:
    """The step record of one attempt of ``node`` that took ``elapsed_s`` and ends now."""
    step = run_pb2.NodeStep(
        run_id=ctx.run_id,
        node=node,  # type: ignore[arg-type]
        attempt=attempt,
        cycle=cycle,
        provider=ctx.provider.name,
        outcome=outcome,  # type: ignore[arg-type]
        latency_ms=int(elapsed_s * 1000),
        **fields,
    )
    step.started_at.FromNanoseconds(time.time_ns() - int(elapsed_s * 1e9))
    return step


@dataclass(frozen=True, slots=True)
class AgentCall:
    """One agent attempt: its reply, or the failure outcome it maps to; and its step record."""

    reply: AgentReply | None
    outcome: int
    reason: str
    step: run_pb2.NodeStep


async def call_agent(
    ctx: RunContext,
    *,
    node: int,
    role: AgentRole,
    input_bytes: bytes,
    attempt: int,
    cycle: int,
    tools: ToolCaller | None = None,
    input_message: Message | None = None,
) -> AgentCall:
    """Run one agent attempt, mapping typed failures to outcomes (timeouts are retryable).

    A failed attempt's step records its failure class and message; a failure of the model endpoint itself
    (unreachable, an HTTP error) has the reason code MODEL_ENDPOINT_FAILED and is logged as such.
    """
    prompt = ctx.catalog.prompt(role)
    request = AgentRequest(
        role=role,
        input_bytes=input_bytes,
        run_id=ctx.run_id,
        attempt=attempt,
        cycle=cycle,
        prompt_name=prompt.name,
        prompt_version=prompt.version,
        prompt_text=prompt.render(input_bytes.decode("utf-8")),
        tools=tools,
        input_message=input_message,
    )
    started = time.time()
    reply: AgentReply | None = None
    outcome, reason = run_pb2.NODE_OUTCOME_OK, ""
    failure: AgentError | None = None
    limit = ctx.limits.executor_timeout_s if role == "executor" else ctx.limits.agent_timeout_s
    try:
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation of this task.
        async with asyncio.timeout(limit):
            reply = await ctx.provider.agent(role).run(request)
    except TimeoutError:
        outcome, reason = run_pb2.NODE_OUTCOME_RETRYABLE_FAILED, f"{role.upper()}_TIMEOUT"
        failure = AgentRetryableError(f"no answer within {limit:g}s", failure_class="timeout")
    except AgentRetryableError as exc:
        outcome, reason, failure = run_pb2.NODE_OUTCOME_RETRYABLE_FAILED, f"{role.upper()}_RETRYABLE_FAILED", exc
    except AgentNonRetryableError as exc:
        outcome, reason, failure = (
            run_pb2.NODE_OUTCOME_NON_RETRYABLE_FAILED,
            f"{role.upper()}_NON_RETRYABLE_FAILED",
            exc,
        )
    except AgentError as exc:
        outcome, reason, failure = run_pb2.NODE_OUTCOME_NON_RETRYABLE_FAILED, f"{role.upper()}_FAILED", exc
    if failure is not None and failure.endpoint:
        reason = MODEL_ENDPOINT_FAILED
    step = attempt_step(
        ctx,
        node=node,
        attempt=attempt,
        cycle=cycle,
        outcome=outcome,
        elapsed_s=time.time() - started,
        model=reply.model if reply else "",
        prompt_tokens=reply.prompt_tokens if reply else 0,
        completion_tokens=reply.completion_tokens if reply else 0,
    )
    if failure is not None:
        step.failure_class = failure.failure_class or type(failure).__name__
        step.failure = clip_text(str(failure) or type(failure).__name__)
        if failure.retry_after_s is not None:
            step.retry_after_ms = int(failure.retry_after_s * 1000)
        log.warning(
            "model_endpoint_failed" if failure.endpoint else "agent_failed",
            run_id=ctx.run_id,
            role=role,
            attempt=attempt,
            failure_class=step.failure_class,
            error=step.failure,
        )
    calls = reply.extra.get("endpoint_calls") if reply else None
    if isinstance(calls, int) and not isinstance(calls, bool):
        step.endpoint_calls = calls
    return AgentCall(reply=reply, outcome=outcome, reason=reason, step=step)


async def ask_agent(
    ctx: RunContext, node: int, payload: JsonObject, *, attempt: int, cycle: int, tools: ToolCaller | None = None
) -> AgentCall:
    """One attempt of ``node``'s agent (the role the graph specification gives it) on ``payload``."""
    role = GRAPH.node(node).role
    if role is None:
        raise ValueError(f"{GRAPH.node(node).label} has no agent")
    return await call_agent(
        ctx, node=node, role=role, input_bytes=canonical_json_bytes(payload), attempt=attempt, cycle=cycle, tools=tools
    )


def with_outcome(step: run_pb2.NodeStep, outcome: int) -> run_pb2.NodeStep:
    step.outcome = outcome  # type: ignore[assignment]
    return step
