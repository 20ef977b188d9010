"""Planner protocol: raw Planner text -> a bounded list of tool steps.

Pinned shape: ``{"steps": [{"tool_name", "arguments": {...}, "purpose"}], "reasoning"}``.
``reasoning`` is optional and dropped here: it never becomes control state and is never persisted
(R-VI-2, R-S-2). Anything else is INVALID_OUTPUT (``ok`` False, ``error`` says why).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from diagnosis_server.conversions import JsonObject, JsonValue
from diagnosis_server.protocols.json_text import parse_json_object

DEFAULT_MAX_STEPS = 32

_TOP_KEYS = frozenset({"steps", "reasoning"})
_STEP_KEYS = frozenset({"tool_name", "arguments", "purpose"})


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


def _parse_step(index: int, item: JsonValue, allowed_tools: Collection[str]) -> PlanStep | str:
    where = f"steps[{index}]"
    if not isinstance(item, dict):
        return f"{where} is not an object"
    unknown = sorted(set(item) - _STEP_KEYS)
    if unknown:
        return f"{where} has unknown keys: {', '.join(unknown)}"
    tool_name = item.get("tool_name")
    if not isinstance(tool_name, str) or not tool_name.strip():
        return f"{where}.tool_name is missing or not a non-empty string"
    if tool_name not in allowed_tools:
        return f"{where}.tool_name {tool_name!r} is not an allowed tool"
    if "arguments" not in item:
        return f"{where}.arguments is missing"
    arguments = item["arguments"]
    if not isinstance(arguments, dict):
        return f"{where}.arguments is not an object"
    purpose = item.get("purpose", "")
    if not isinstance(purpose, str):
        return f"{where}.purpose is not a string"
    return PlanStep(tool_name=tool_name, arguments=arguments, purpose=purpose)


def parse_planner_output(
    raw: str, *, allowed_tools: Collection[str], max_steps: int = DEFAULT_MAX_STEPS
) -> PlannerParse:
    """Parse and validate a Planner reply; any deviation from the pinned shape is INVALID_OUTPUT."""
    obj, error = parse_json_object(raw)
    if obj is None:
        return _invalid(error)
    unknown = sorted(set(obj) - _TOP_KEYS)
    if unknown:
        return _invalid(f"unknown keys: {', '.join(unknown)}")
    if "reasoning" in obj and not isinstance(obj["reasoning"], str):
        return _invalid("reasoning is not a string")
    if "steps" not in obj:
        return _invalid("steps is missing")
    steps = obj["steps"]
    if not isinstance(steps, list):
        return _invalid("steps is not a list")
    if not steps:
        return _invalid("steps is empty")
    if len(steps) > max_steps:
        return _invalid(f"{len(steps)} steps, over the limit of {max_steps}")
    parsed: list[PlanStep] = []
    for index, item in enumerate(steps):
        step = _parse_step(index, item, allowed_tools)
        if isinstance(step, str):
            return _invalid(step)
        parsed.append(step)
    return PlannerParse(ok=True, steps=tuple(parsed), error="")


def plan_to_json(steps: Sequence[PlanStep]) -> JsonObject:
    """The plan as JSON, without reasoning: ``{"steps": [{"tool_name", "arguments", "purpose"}]}``."""
    return {
        "steps": [
            {"tool_name": step.tool_name, "arguments": dict(step.arguments), "purpose": step.purpose} for step in steps
        ]
    }
