"""The Planner protocol parser: a bounded list of allowed tool steps; reasoning is dropped (R-VI-2, R-S-2)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diagnosis_server.protocols.planner import PlanStep, parse_planner_output, plan_to_json

TOOLS = frozenset({"get_logs", "get_metrics", "get_deploys"})


def step(tool: str = "get_logs", **extra: Any) -> dict[str, Any]:
    return {"tool_name": tool, "arguments": {"service": "checkout", "limit": 50}, "purpose": "look for 500s", **extra}


def plan(*steps: Any, **extra: Any) -> str:
    return json.dumps({"steps": list(steps), **extra})


def test_well_formed_plan_parses_in_order() -> None:
    result = parse_planner_output(plan(step(), step("get_metrics", arguments={})), allowed_tools=TOOLS)
    assert result.ok, result.error
    assert result.steps == (
        PlanStep("get_logs", {"service": "checkout", "limit": 50}, "look for 500s"),
        PlanStep("get_metrics", {}, "look for 500s"),
    )
    assert result.error == ""


@pytest.mark.requirement("R-VI-2")
def test_reasoning_is_dropped() -> None:
    secret = "I think the database is the culprit"
    result = parse_planner_output(plan(step(), reasoning=secret), allowed_tools=TOOLS)
    assert result.ok
    assert secret not in repr(result)
    assert secret not in json.dumps(plan_to_json(result.steps))


def test_purpose_is_optional() -> None:
    raw = json.dumps({"steps": [{"tool_name": "get_logs", "arguments": {}}]})
    result = parse_planner_output(raw, allowed_tools=TOOLS)
    assert result.ok
    assert result.steps[0].purpose == ""


def test_fenced_plan_is_accepted() -> None:
    result = parse_planner_output("  ```json\n" + plan(step()) + "\n```  ", allowed_tools=TOOLS)
    assert result.ok, result.error


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("", "empty"),
        ("steps: get_logs", "not valid JSON"),
        ('["get_logs"]', "not an object"),
        ("{}", "steps: missing"),
        (json.dumps({"steps": "get_logs"}), "steps: expected an array, got string"),
        (json.dumps({"steps": []}), "steps: expected at least 1 item"),
        (plan("get_logs"), "steps[0]: expected an object, got string"),
        (plan(step("rm_rf")), "not an allowed tool"),
        (plan(step(""), step()), "tool_name"),
        (plan({"arguments": {}}), "tool_name"),
        (plan(step(arguments=["service"])), "steps[0].arguments: expected an object, got array"),
        (plan({"tool_name": "get_logs"}), "steps[0].arguments: missing"),
        (plan(step(purpose=3)), "steps[0].purpose: expected a string, got number"),
        (plan(step(timeout=5)), "steps[0].timeout: unknown field"),
        (plan(step(), notes="x"), "notes: unknown field"),
        (plan(step(), reasoning=["x"]), "reasoning: expected a string, got array"),
        (plan(*[step()] * 49), "over the limit of 48"),
    ],
)
def test_malformed_plan_is_invalid_output(raw: str, fragment: str) -> None:
    result = parse_planner_output(raw, allowed_tools=TOOLS)
    assert not result.ok
    assert result.steps == ()
    assert fragment in result.error


def test_max_steps_is_configurable() -> None:
    assert parse_planner_output(plan(step(), step()), allowed_tools=TOOLS, max_steps=2).ok
    assert not parse_planner_output(plan(step(), step(), step()), allowed_tools=TOOLS, max_steps=2).ok


def test_plan_to_json_round_trips() -> None:
    result = parse_planner_output(plan(step(), step("get_deploys", purpose="recent deploys")), allowed_tools=TOOLS)
    again = parse_planner_output(json.dumps(plan_to_json(result.steps)), allowed_tools=TOOLS)
    assert again.steps == result.steps
    assert set(plan_to_json(result.steps)) == {"steps"}


@settings(max_examples=200, deadline=None)
@given(raw=st.text(max_size=300))
def test_any_text_gives_a_result_never_an_exception(raw: str) -> None:
    result = parse_planner_output(raw, allowed_tools=TOOLS)
    assert result.ok == bool(result.steps)
    assert all(s.tool_name in TOOLS for s in result.steps)
