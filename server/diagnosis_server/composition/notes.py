"""What a fallback says happened, from the run's own record (R-A-4, R-A-5, R-P-6).

A fallback never guesses: the notes come from the reason code that routed the run to it, the Executor's
parse (how many claims), the Gatekeeper's result (how many bindings failed which rules), the recorded tool
calls (which failed) and the Composer's refusal (which rules). No agent-written text is quoted: reason
codes, rule ids, tool names and counts only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from diagnosis.v1 import contracts_pb2
from diagnosis_server.composition.suggestions import RecordedCall
from diagnosis_server.conversions import EnumType, enum_short_name

_STATUS: EnumType = cast(Any, contracts_pb2.ToolInvocationStatus)


@dataclass(frozen=True, slots=True)
class RunRecord:
    """The parts of a run's record a fallback may speak of."""

    # Why the run came to the fallback (PLANNER_FAILED, GATEKEEPER_REJECT, ...).
    reason_code: str
    # The reason code of the attempt that routed it there (e.g. VERIFIER_TIMEOUT, COMPOSER_GUARD_REJECTED).
    last_reason: str = ""
    executor_parse_status: int = contracts_pb2.PARSE_STATUS_NOT_RUN
    claims: int = 0
    gatekeeper: contracts_pb2.GatekeeperResult | None = None
    calls: tuple[RecordedCall, ...] = ()
    calls_known: bool = False
    composer_refusal: tuple[str, ...] = ()
    # Names the question gives that the Executor found in no output; and those the fallback checked so.
    asked_about: tuple[str, ...] = ()
    no_data_about: tuple[str, ...] = ()


def _why(reason: str) -> str:
    upper = reason.upper()
    if "MODEL_ENDPOINT" in upper:
        return "the model endpoint failed"
    if "TIMEOUT" in upper:
        return "it timed out"
    if "INVALID_OUTPUT" in upper or "GUARD" in upper:
        return "its reply was not valid"
    if "NON_RETRYABLE" in upper or "REFUS" in upper:
        return "it refused or failed for good"
    if "RETRYABLE" in upper:
        return "it failed twice"
    return "it failed"


def _gatekeeper_note(record: RunRecord) -> str:
    result = record.gatekeeper
    if record.claims == 0:
        return "The Executor returned no claims, so there was nothing to verify."
    if result is None:
        return "The Executor's claims were not checked."
    pairs = len(result.checked_bindings)
    failed = sum(1 for b in result.checked_bindings if not b.passed)
    rules = ", ".join(result.failed_rules) or "none"
    if result.severity == contracts_pb2.GATEKEEPER_SEVERITY_REJECT and "schema.executor_v2" in result.failed_rules:
        return (
            f"The Executor's {record.claims} claim(s) broke the evidence contract (failed rules: {rules}), "
            "so none of them could be verified."
        )
    if pairs == 0:
        return f"None of the Executor's {record.claims} claim(s) pointed at recorded tool output."
    return (
        f"{failed} of {pairs} evidence binding(s) of the Executor's {record.claims} claim(s) failed the Gatekeeper "
        f"(failed rules: {rules}), so no claim could be verified."
    )


# The reason code of a first plan of no step: the run's tools hold none the Planner can call.
NOTHING_TO_CALL = "PLANNER_NOTHING_TO_CALL"


def _step_note(record: RunRecord) -> str:
    code = record.reason_code.strip().upper()
    if code == "PLANNER_FAILED" and record.last_reason == NOTHING_TO_CALL:
        return (
            "No tool of this run is one the Planner can call (the heuristic provider calls an MCP tool only when the "
            "rules file maps it to what it answers), so no tool was called and nothing was observed."
        )
    if code == "PLANNER_FAILED":
        return f"The Planner did not return a usable plan ({_why(record.last_reason)}), so no tool was called."
    if code in ("EXECUTOR_INVALID_OUTPUT",):
        return "The Executor's output was not a valid executor_evidence_v2 result, so none of its claims was checked."
    if code == "EXECUTOR_FAILED":
        return f"The Executor did not return claims ({_why(record.last_reason)})."
    if code == "TOOL_BLOCKED":
        return "The Executor asked for a tool that is not allowed in this run, so the investigation stopped."
    if code in ("GATEKEEPER_REJECT", "NO_VERIFIED_EVIDENCE"):
        return _gatekeeper_note(record)
    if code == "VERIFIER_FAILED":
        return f"The Verifier did not complete ({_why(record.last_reason)}), so no claim could be classified."
    if code == "RECURSION_LIMIT":
        return "The diagnosis reached its step limit before it finished."
    if code.startswith("MODEL_ENDPOINT"):
        return (
            "The model endpoint failed (the agents could not reach it, or it answered with an error), "
            "so the investigation could not go on."
        )
    return "An internal step of the diagnosis did not complete."


def _calls_note(calls: Sequence[RecordedCall]) -> str:
    if not calls:
        return "No tool call was recorded."
    statuses = Counter(enum_short_name(_STATUS, c.status, lower=True) for c in calls)
    failed = sorted({c.tool_name for c in calls if c.status != contracts_pb2.TOOL_INVOCATION_STATUS_OK})
    text = f"{len(calls)} tool call(s) were recorded (" + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    text += ")"
    if failed:
        text += f"; without usable output: {', '.join(failed)}"
    return text + "."


def pre_verification_notes(record: RunRecord) -> list[str]:
    notes = [_step_note(record)]
    if record.calls_known:
        notes.append(_calls_note(record.calls))
    return notes


def post_verification_notes(record: RunRecord) -> list[str]:
    if record.composer_refusal:
        rules = ", ".join(sorted(set(record.composer_refusal)))
        first = f"The Composer's answer was refused ({rules})"
    else:
        first = f"The Composer did not return an answer ({_why(record.last_reason)})"
    return [first + "; this answer was rendered by the service from the verified material alone."]
