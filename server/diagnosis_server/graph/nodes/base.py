"""What every node is: an explicit input projection, a run over it, an outcome and explicit writes (R-S-2)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import structlog
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

log = structlog.get_logger(__name__)

# The reason code of an attempt whose model endpoint failed (could not be reached, answered an error).
MODEL_ENDPOINT_FAILED = "MODEL_ENDPOINT_FAILED"
MAX_FAILURE_CHARS = 500


def clip_text(text: str, limit: int = MAX_FAILURE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


def with_outcome(step: run_pb2.NodeStep, outcome: int) -> run_pb2.NodeStep:
    step.outcome = outcome  # type: ignore[assignment]
    return step
