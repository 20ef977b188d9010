"""Reading an agent's input projection: canonical JSON bytes in, checked values out (clear errors, no crash)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from diagnosis_server.agents.base import AgentNonRetryableError
from diagnosis_server.conversions import JsonObject


def load_input(raw: bytes, role: str) -> JsonObject:
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise AgentNonRetryableError(f"the {role} input is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise AgentNonRetryableError(f"the {role} input is not a JSON object")
    return value


@dataclass(frozen=True, slots=True)
class Step:
    tool_name: str
    arguments: JsonObject


def plan_steps(payload: JsonObject) -> list[Step]:
    """The plan's steps: ``{"plan": {"steps": [{"tool_name", "arguments", "purpose"}]}}``."""
    plan = payload.get("plan")
    steps = plan.get("steps") if isinstance(plan, dict) else None
    if not isinstance(steps, list):
        raise AgentNonRetryableError("the executor input has no plan.steps list")
    out: list[Step] = []
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("tool_name"), str):
            raise AgentNonRetryableError(f"plan.steps[{index}] has no tool_name")
        arguments = step.get("arguments", {})
        if not isinstance(arguments, dict):
            raise AgentNonRetryableError(f"plan.steps[{index}].arguments is not an object")
        out.append(Step(str(step["tool_name"]), arguments))
    return out
