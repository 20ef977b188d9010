"""What every node is: an explicit input projection, a run over it, an outcome and explicit writes (R-S-2)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from google.protobuf import timestamp_pb2
from google.protobuf.message import Message

from diagnosis.v1 import run_pb2
from diagnosis_server.agents.base import (
    AgentError,
    AgentNonRetryableError,
    AgentReply,
    AgentRequest,
    AgentRetryableError,
    AgentRole,
    ToolCaller,
)
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.state import DiagnosisState

InputT = TypeVar("InputT")
InputT_contra = TypeVar("InputT_contra", contravariant=True)


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
    """Run one agent attempt, mapping typed failures to outcomes (timeouts are retryable)."""
    import asyncio

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
    try:
        limit = ctx.limits.executor_timeout_s if role == "executor" else ctx.limits.agent_timeout_s
        reply = await asyncio.wait_for(ctx.provider.agent(role).run(request), timeout=limit)
    except TimeoutError:
        outcome, reason = run_pb2.NODE_OUTCOME_RETRYABLE_FAILED, f"{role.upper()}_TIMEOUT"
    except AgentRetryableError:
        outcome, reason = run_pb2.NODE_OUTCOME_RETRYABLE_FAILED, f"{role.upper()}_RETRYABLE_FAILED"
    except AgentNonRetryableError:
        outcome, reason = run_pb2.NODE_OUTCOME_NON_RETRYABLE_FAILED, f"{role.upper()}_NON_RETRYABLE_FAILED"
    except AgentError:
        outcome, reason = run_pb2.NODE_OUTCOME_NON_RETRYABLE_FAILED, f"{role.upper()}_FAILED"
    ts = timestamp_pb2.Timestamp()
    ts.FromNanoseconds(int(started * 1e9))
    step = run_pb2.NodeStep(
        run_id=ctx.run_id,
        node=node,  # type: ignore[arg-type]
        attempt=attempt,
        cycle=cycle,
        provider=ctx.provider.name,
        model=reply.model if reply else "",
        outcome=outcome,
        latency_ms=int((time.time() - started) * 1000),
        prompt_tokens=reply.prompt_tokens if reply else 0,
        completion_tokens=reply.completion_tokens if reply else 0,
        started_at=ts,
    )
    calls = reply.extra.get("endpoint_calls") if reply else None
    if isinstance(calls, int) and not isinstance(calls, bool):
        step.endpoint_calls = calls
    return AgentCall(reply=reply, outcome=outcome, reason=reason, step=step)


def with_outcome(step: run_pb2.NodeStep, outcome: int) -> run_pb2.NodeStep:
    step.outcome = outcome  # type: ignore[assignment]
    return step
