"""JSON schemas of the four agent contracts, for the endpoint's ``response_format``.

They describe the shapes the protocol parsers accept (``diagnosis_server.protocols``); the parsers stay
the judges. Executor, Verifier and Composer schemas are *strict* (every object closed and every
property required, as OpenAI's strict structured output demands; optional parts become required empty
lists or strings, which the parsers read as absent). The Planner schema is not strict: a step's
``arguments`` is a free-form object, which strict mode cannot express. For the same reason the strict
schemas leave out the gaps' optional ``next_calls`` (free-form arguments): a model under ``json_schema``
states gaps without suggested calls, and the answer's next steps then come from templates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from diagnosis_server.agents.base import AgentRole
from diagnosis_server.conversions import JsonObject, JsonValue

ResponseFormatKind = Literal["json_schema", "json_object", "none"]

CLASSIFICATIONS = (
    "direct_observation",
    "reasonable_inference",
    "overstated",
    "unsupported",
    "external_unknown",
    "contradicted",
)
VERDICTS = ("PASS", "LOW_CONFID", "REJECT")
CLAIM_STATUSES = ("confirmed", "hypothesis")

SCHEMA_NAMES: dict[AgentRole, str] = {
    "planner": "planner_plan",
    "executor": "executor_evidence_v2",
    "verifier": "verifier_claim_checks",
    "composer": "composer_answer",
}


def _string(enum: Sequence[str] = ()) -> JsonObject:
    schema: JsonObject = {"type": "string"}
    if enum:
        schema["enum"] = list(enum)
    return schema


def _closed(properties: JsonObject, required: Sequence[str] | None = None) -> JsonObject:
    names: list[JsonValue] = list(required if required is not None else properties)
    return {"type": "object", "properties": properties, "required": names, "additionalProperties": False}


def _array(items: JsonObject) -> JsonObject:
    return {"type": "array", "items": items}


_BOOL: JsonObject = {"type": "boolean"}


def planner_schema(tool_names: Sequence[str] = ()) -> JsonObject:
    step = _closed({"tool_name": _string(tool_names), "arguments": {"type": "object"}, "purpose": _string()})
    return _closed({"steps": _array(step)})


def executor_schema(tool_names: Sequence[str] = ()) -> JsonObject:
    binding = _closed(
        {
            "source_invocation_ids": _array(_string()),
            "tool_name": _string(tool_names),
            "raw_path": _string(),
            "matched_text": _string(),
        }
    )
    claim = _closed(
        {
            "claim_id": _string(),
            "statement": _string(),
            "critical": _BOOL,
            "status": _string(CLAIM_STATUSES),
            "evidence_bindings": _array(binding),
        }
    )
    gap = _closed({"description": _string(), "critical": _BOOL})
    return _closed(
        {"contract": _string(["executor_evidence_v2"]), "claims": _array(claim), "evidence_gaps": _array(gap)}
    )


def verifier_schema() -> JsonObject:
    ref = _closed(
        {"claim_id": _string(), "source_invocation_id": _string(), "tool_name": _string(), "raw_path": _string()}
    )
    check = _closed(
        {
            "claim_id": _string(),
            "classification": _string(CLASSIFICATIONS),
            "critical": _BOOL,
            "evidence_refs": _array(ref),
            "rationale": _string(),
        }
    )
    gap = _closed({"claim_id": _string(), "description": _string(), "critical": _BOOL})
    return _closed(
        {
            "claim_checks": _array(check),
            "verdict": _string(VERDICTS),
            "groundedness_score": {"type": "number"},
            "rationale": _string(),
            "evidence_gaps": _array(gap),
        }
    )


def composer_schema() -> JsonObject:
    item = _closed({"text": _string(), "claim_ids": _array(_string())})
    choice = _closed({"text": _string(), "claim_ids": _array(_string()), "ref": _string()})
    return _closed(
        {
            "summary": _string(),
            "headline": _string(),
            "confirmed_facts": _array(item),
            "possible_directions": _array(item),
            "evidence_gaps": _array(choice),
            "next_steps": _array(choice),
        }
    )


def contract_schema(role: AgentRole, tool_names: Sequence[str] = ()) -> tuple[JsonObject, bool]:
    """The role's contract schema and whether it is strict."""
    if role == "planner":
        return planner_schema(tool_names), False
    if role == "executor":
        return executor_schema(tool_names), True
    if role == "verifier":
        return verifier_schema(), True
    return composer_schema(), True


def response_format(role: AgentRole, kind: ResponseFormatKind, tool_names: Sequence[str] = ()) -> JsonObject | None:
    """The ``response_format`` request field for ``kind``; None when none is sent."""
    if kind == "none":
        return None
    if kind == "json_object":
        return {"type": "json_object"}
    schema, strict = contract_schema(role, tool_names)
    return {"type": "json_schema", "json_schema": {"name": SCHEMA_NAMES[role], "schema": schema, "strict": strict}}
