"""The deterministic fallbacks: they always produce a safe answer and end the run (R-A-4, R-A-5).

Each says what happened from the run's own record (``composition.notes``): which step failed and why, how
many bindings failed which rules, which tool calls failed, which Composer rules refused its reply.

When the Executor reports that the question's workload is in no output (an evidence gap with a ``subject``), the
pre-verification fallback says there is no data about it (R-A-2) only after checking it itself: the name is
written in the question, no recorded output of the run mentions it, and no call of the run failed (a failed call
may have held it). Otherwise the gap's subject is ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from google.protobuf.json_format import MessageToDict

from diagnosis.v1 import contracts_pb2, run_pb2
from diagnosis_server.composition.material import AllowedMaterial
from diagnosis_server.composition.notes import RunRecord, post_verification_notes, pre_verification_notes
from diagnosis_server.composition.render import render_pre_verification_fallback, render_verified
from diagnosis_server.composition.suggestions import RecordedCall
from diagnosis_server.graph.context import RunContext
from diagnosis_server.graph.nodes.base import NodeResult
from diagnosis_server.graph.source_report import source_failed
from diagnosis_server.graph.spec import GRAPH
from diagnosis_server.graph.standing import retry_failed, standing_answer
from diagnosis_server.graph.state import DiagnosisState
from diagnosis_server.text.literal import literal_between

_AGENT_FAILURES = (
    run_pb2.NODE_OUTCOME_INVALID_OUTPUT,
    run_pb2.NODE_OUTCOME_RETRYABLE_FAILED,
    run_pb2.NODE_OUTCOME_NON_RETRYABLE_FAILED,
)


def fallback_reason(event: run_pb2.OrchestrationEvent | None) -> str:
    """Why the run came to the pre-verification fallback, in a stable reason code."""
    if event is None:
        return "UNKNOWN"
    if event.reason_code == "MODEL_ENDPOINT_FAILED":  # the answer says the model endpoint failed
        return event.reason_code
    node = GRAPH.get(event.node)
    if node is not None and node.exhausted_reason and event.outcome in _AGENT_FAILURES:
        return node.exhausted_reason
    return event.reason_code or "UNKNOWN"


@dataclass(frozen=True, slots=True)
class PreFallbackInput:
    record: RunRecord
    # What an earlier cycle's Verifier allowed: only its gaps and calls are shown (never a claim).
    known: AllowedMaterial | None
    # An evidence retry failed before completing its own verification: the cycle verified before it is still
    # the run's answer (graph/standing.py), and the Composer answers from it.
    earlier_verified: bool = False


MAX_SUBJECTS = 3
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")


def asked_subjects(state: DiagnosisState) -> tuple[str, ...]:
    """The Executor's no-data subjects that are names written in the question (not yet checked against the
    outputs)."""
    parse = state.executor_parse
    output = parse.output if parse is not None else None
    if output is None:
        return ()
    question = state.question.lower()
    found: list[str] = []
    for gap in output.evidence_gaps:
        subject = gap.subject.strip().lower()
        if not _NAME.fullmatch(subject) or subject in found:
            continue
        if literal_between(subject, r"(?<![a-z0-9._-])", r"(?![a-z0-9_-])").search(question):
            found.append(subject)
    return tuple(found[:MAX_SUBJECTS])


def unmentioned(subjects: Sequence[str], outputs: Sequence[str]) -> tuple[str, ...]:
    """The subjects no output text names (case-insensitively)."""
    lowered = [o.lower() for o in outputs]
    return tuple(s for s in subjects if not any(s in o for o in lowered))


def _record(state: DiagnosisState, reason_code: str) -> RunRecord:
    parse = state.executor_parse
    output = parse.output if parse is not None else None
    gatekeeper = state.gatekeeper_result if state.executor_parse_status == contracts_pb2.PARSE_STATUS_OK else None
    event = state.routed_by
    return RunRecord(
        reason_code=reason_code,
        last_reason=event.reason_code if event is not None else "",
        executor_parse_status=state.executor_parse_status,
        claims=len(output.claims) if output is not None else 0,
        gatekeeper=gatekeeper,
        calls=state.recorded_calls,
        calls_known=gatekeeper is not None,
        composer_refusal=state.composer_refusal,
        asked_about=asked_subjects(state),
    )


class PreVerificationFallbackNode:
    """No Executor claim reaches this answer at all: it reads the run's record, never a statement."""

    name = run_pb2.NODE_NAME_PRE_VERIFICATION_FALLBACK

    def project(self, state: DiagnosisState) -> PreFallbackInput:
        return PreFallbackInput(
            record=_record(state, fallback_reason(state.routed_by)),
            known=state.allowed_material,
            earlier_verified=retry_failed(state),
        )

    async def run(self, inputs: PreFallbackInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        record = inputs.record
        if inputs.earlier_verified:
            return NodeResult(
                run_pb2.NODE_OUTCOME_EARLIER_VERIFIED,
                f"RETRY_{record.reason_code}",
                updates={"retry_failure": record.reason_code},
            )
        if not record.calls_known:
            record = await _with_calls(record, ctx)
        if record.asked_about:
            record = await _checked_subjects(record, ctx)
        output = render_pre_verification_fallback(
            pre_verification_notes(record), known=inputs.known, no_data_about=record.no_data_about
        )
        return NodeResult(
            run_pb2.NODE_OUTCOME_OK,
            record.reason_code,
            updates={"pre_fallback_output": output, "fallback_reason": record.reason_code},
        )


async def _checked_subjects(record: RunRecord, ctx: RunContext) -> RunRecord:
    """The asked-about subjects that no recorded output of this run mentions; none when the store cannot be read
    (the answer then says nothing of them)."""
    try:
        invocations = await ctx.invocations.list_tool_invocations(ctx.run_id)
    except Exception:  # the fallback must answer whatever the store does
        return replace(record, asked_about=())
    mine = [i for i in invocations if i.run_id in ("", ctx.run_id)]
    # A call that failed may have held it: "no data about X" is said only when every call answered.
    if not mine or any(source_failed(i) for i in mine):
        return replace(record, asked_about=())
    # Outputs only: a call's arguments name what was asked for, and an error what was not found.
    outputs = [json.dumps(MessageToDict(i.output)) for i in mine]
    return replace(record, no_data_about=unmentioned(record.asked_about, outputs))


async def _with_calls(record: RunRecord, ctx: RunContext) -> RunRecord:
    """The record with this run's recorded calls read from the store; as it was when that read fails."""
    try:
        invocations = await ctx.invocations.list_tool_invocations(ctx.run_id)
    except Exception:  # the fallback must answer whatever the store does
        return record
    calls = tuple(RecordedCall.of(i) for i in invocations if i.run_id in ("", ctx.run_id))
    return replace(record, calls=calls, calls_known=True)


@dataclass(frozen=True, slots=True)
class PostFallbackInput:
    material: AllowedMaterial | None
    record: RunRecord


class PostVerificationFallbackNode:
    """Renders the Verifier-allowed material alone; never raw Executor or tool output."""

    name = run_pb2.NODE_NAME_POST_VERIFICATION_FALLBACK

    def project(self, state: DiagnosisState) -> PostFallbackInput:
        answer = standing_answer(state)
        material = answer.allowed_material if answer is not None else None
        return PostFallbackInput(material=material, record=_record(state, "COMPOSER_FAILED"))

    async def run(self, inputs: PostFallbackInput, ctx: RunContext, *, attempt: int, cycle: int) -> NodeResult:
        if inputs.material is None:
            raise RuntimeError("the post-verification fallback runs only after the Verifier")
        output = render_verified(inputs.material, notes=post_verification_notes(inputs.record))
        return NodeResult(run_pb2.NODE_OUTCOME_OK, "COMPOSER_FAILED", updates={"post_fallback_output": output})
