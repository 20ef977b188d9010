"""Planner protocol: raw Planner text -> a bounded list of tool steps.

Pinned shape: ``{"steps": [{"tool_name", "arguments": {...}, "purpose"}], "reasoning"}``.
``reasoning`` is optional and dropped here: it never becomes control state and is never persisted
(R-VI-2, R-S-2). The shape is ``PlannerReply`` (``protocols.shapes``); anything else is INVALID_OUTPUT
(``ok`` False, ``error`` says why).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field, ValidationInfo, field_validator

from diagnosis_server.conversions import JsonObject
from diagnosis_server.protocols import shapes
from diagnosis_server.protocols.json_text import parse_json_object
from diagnosis_server.protocols.shapes import NonBlank, Shape

# A FULL plan: the built-in and live reads (32) and the cluster analyzers' object reads (heuristic.cluster_plan); with
# the Executor's follow-ups within the run's 64 tool calls, each output within its 256 KiB bound.
DEFAULT_MAX_STEPS = 48


class PlannerMode(StrEnum):
    """What a cycle's Planner (and Executor) is asked for: the ``mode`` of its input, these same strings."""

    # The first cycle: the calls the question needs.
    FULL = "FULL"
    # An evidence retry: only the calls the retry context's gaps name (R-R-4).
    EVIDENCE_GAP_ONLY = "EVIDENCE_GAP_ONLY"


class PlanStepShape(Shape):
    tool_name: Annotated[NonBlank, Field(json_schema_extra={shapes.TOOL_NAMES: True})]
    arguments: dict[str, Any]
    purpose: str = ""

    @field_validator("tool_name")
    @classmethod
    def _allowed(cls, tool_name: str, info: ValidationInfo) -> str:
        allowed: Collection[str] = info.context or ()
        if tool_name not in allowed:
            raise shapes.invalid(f"{shapes.shown(tool_name)} is not an allowed tool")
        return tool_name


class PlannerReply(Shape):
    """The plan; the optional ``reasoning`` is read (a string) and dropped before it (R-VI-2)."""

    steps: Annotated[list[PlanStepShape], Field(min_length=1)]


@dataclass(frozen=True, slots=True)
class PlanStep:
    tool_name: str
    arguments: JsonObject
    purpose: str


@dataclass(frozen=True, slots=True)
class PlannerParse:
    ok: bool
    steps: tuple[PlanStep, ...]
    error: str


def _invalid(error: str) -> PlannerParse:
    return PlannerParse(ok=False, steps=(), error=error)


def parse_planner_output(
    raw: str, *, allowed_tools: Collection[str], max_steps: int = DEFAULT_MAX_STEPS
) -> PlannerParse:
    """Parse and validate a Planner reply; any deviation from the pinned shape is INVALID_OUTPUT."""
    obj, error = parse_json_object(raw)
    if obj is None:
        return _invalid(error)
    reasoning = obj.pop("reasoning", "")
    if not isinstance(reasoning, str):
        return _invalid(f"reasoning: expected a string, got {shapes.kind(reasoning)}")
    steps = obj.get("steps")
    if isinstance(steps, list) and len(steps) > max_steps:
        return _invalid(f"steps: {len(steps)} steps, over the limit of {max_steps}")
    reply = shapes.validate(PlannerReply, obj, context=allowed_tools)
    if isinstance(reply, str):
        return _invalid(reply)
    return PlannerParse(
        ok=True,
        steps=tuple(PlanStep(s.tool_name, s.arguments, s.purpose) for s in reply.steps),
        error="",
    )


def plan_to_json(steps: Sequence[PlanStep]) -> JsonObject:
    """The plan as JSON, without reasoning: ``{"steps": [{"tool_name", "arguments", "purpose"}]}``."""
    return {
        "steps": [
            {"tool_name": step.tool_name, "arguments": dict(step.arguments), "purpose": step.purpose} for step in steps
        ]
    }
