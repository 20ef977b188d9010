"""Function names, response-format schemas and prompts: each agrees with the contracts the parsers pin."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diagnosis.v1 import contracts_pb2
from diagnosis_server.agents.base import AGENT_ROLES
from diagnosis_server.agents.openai.functions import function_name, function_table, guess_tool_name
from diagnosis_server.agents.openai.schemas import SCHEMA_NAMES, contract_schema, response_format
from diagnosis_server.agents.prompts import PLACEHOLDER, default_catalog
from diagnosis_server.protocols.composer import parse_composer_output
from diagnosis_server.protocols.executor import parse_executor_output
from diagnosis_server.protocols.planner import parse_planner_output
from diagnosis_server.protocols.verifier import parse_verifier_output
from diagnosis_server.tools.builtin import TOOL_NAMES

FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


# ------------------------------------------------------------------------------ function names
def test_builtin_tool_names_map_to_legal_function_names_and_back() -> None:
    table = function_table({"name": n, "description": n, "input_schema": {"type": "object"}} for n in TOOL_NAMES)
    names = [d["function"]["name"] for d in table.definitions]  # type: ignore[index, call-overload]
    assert names == ["logs__search", "metrics__query", "deploys__list", "k8s__events", "topology__dependencies"]
    assert all(FUNCTION_NAME.match(n) for n in names)
    assert [table.tool_name(n) for n in names] == list(TOOL_NAMES)


@given(st.lists(st.text(min_size=1, max_size=90), min_size=1, max_size=8, unique=True))
def test_any_tool_names_map_to_distinct_legal_function_names_reversibly(tools: list[str]) -> None:
    table = function_table({"name": t, "description": "", "input_schema": {}} for t in tools if t.strip())
    names = list(table.tool_by_function)
    assert len(set(names)) == len(names)
    assert all(FUNCTION_NAME.match(n) for n in names)
    assert [table.tool_name(n) for n in names] == [t for t in tools if t.strip()]


def test_an_unknown_function_name_turns_back_by_the_dot_rule() -> None:
    table = function_table([{"name": "logs.search"}])
    assert table.tool_name("shell__exec") == "shell.exec"
    assert guess_tool_name(function_name("a.b.c")) == "a.b.c"


def test_a_spec_without_a_schema_gets_an_open_object() -> None:
    table = function_table([{"name": "x.y", "description": 3, "input_schema": "nope"}, {"description": "no name"}])
    assert table.definitions == [
        {
            "type": "function",
            "function": {"name": "x__y", "description": "", "parameters": {"type": "object", "properties": {}}},
        }
    ]


# ------------------------------------------------------------------------------ schemas
def _objects(schema: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        if schema.get("type") == "object" and "properties" in schema:
            found.append(schema)
        for value in schema.values():
            found.extend(_objects(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(_objects(value))
    return found


def test_strict_schemas_close_every_object_and_require_every_property() -> None:
    """OpenAI strict structured output demands it; a schema breaking it would be refused by the endpoint."""
    for role in AGENT_ROLES:
        schema, strict = contract_schema(role)
        for obj in _objects(schema):
            assert obj["additionalProperties"] is False
            if strict:
                assert sorted(obj["required"]) == sorted(obj["properties"]), (role, obj)
    assert contract_schema("planner")[1] is False  # a step's arguments is a free-form object


def test_response_formats_by_kind() -> None:
    assert response_format("verifier", "none") is None
    assert response_format("verifier", "json_object") == {"type": "json_object"}
    fmt = response_format("executor", "json_schema", ["k8s.events"])
    assert fmt is not None and fmt["type"] == "json_schema"
    spec: Any = fmt["json_schema"]  # the JSON Schema sent, navigated as such
    assert isinstance(spec, dict)
    assert spec["name"] == SCHEMA_NAMES["executor"] and spec["strict"] is True
    binding = spec["schema"]["properties"]["claims"]["items"]["properties"]["evidence_bindings"]["items"]
    assert binding["properties"]["tool_name"]["enum"] == ["k8s.events"]
    assert all(re.match(r"^[a-zA-Z0-9_-]{1,64}$", name) for name in SCHEMA_NAMES.values())


def _sample(schema: dict[str, Any]) -> Any:
    """The smallest document a schema describes: one item per array, the first enum word, filler strings."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {key: _sample(sub) for key, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [_sample(schema["items"])]
    return {"string": "x1", "boolean": True, "number": 0.5}.get(str(kind), "x1")


def test_a_document_shaped_by_each_schema_is_legal_for_its_parser() -> None:
    """The schemas describe what the parsers accept (the parsers stay the judges)."""
    planner = _sample(contract_schema("planner", ["k8s.events"])[0])
    assert parse_planner_output(json.dumps(planner), allowed_tools=["k8s.events"]).ok

    executor = _sample(contract_schema("executor", ["k8s.events"])[0])
    executor["claims"][0]["evidence_bindings"][0]["raw_path"] = "/events/0/reason"
    parsed = parse_executor_output(json.dumps(executor))
    assert parsed.ok and not parsed.forbidden_fields and not parsed.schema_issues

    verifier = _sample(contract_schema("verifier")[0])
    verifier_input = contracts_pb2.VerifierInput()
    verifier_input.verified_executor_output.claims.add(claim_id="x1", statement="s", critical=True)
    assert parse_verifier_output(json.dumps(verifier), verifier_input).ok

    composer = _sample(contract_schema("composer")[0])
    assert parse_composer_output(json.dumps(composer)).ok


# ------------------------------------------------------------------------------ prompts
@pytest.mark.requirement("R-P-3")
def test_every_prompt_has_one_input_placeholder_and_states_its_contract() -> None:
    catalog = default_catalog()
    for role in AGENT_ROLES:
        prompt = catalog.prompt(role)
        assert prompt.text.count(PLACEHOLDER) == 1, role
        assert prompt.version != "1", f"{role}: the prompt changed, its version must too"
        schema, _ = contract_schema(role)
        for key in schema["properties"]:  # type: ignore[union-attr]
            assert f'"{key}"' in prompt.text, f"{role} prompt does not show the contract key {key!r}"
        assert "Return exactly one JSON object" in prompt.text


def test_verifier_and_composer_prompts_state_their_rules() -> None:
    catalog = default_catalog()
    verifier = catalog.prompt("verifier").text
    for word in ("direct_observation", "reasonable_inference", "overstated", "unsupported", "external_unknown"):
        assert f"`{word}`" in verifier
    assert "groundedness_score >= 0.5" in verifier  # R-V-1
    assert "never direct_observation" in verifier  # R-V-5
    assert "Never exceed the ceiling" in verifier  # R-V-7
    composer = catalog.prompt("composer").text
    assert "cannot support a reliable conclusion" in composer  # R-A-3
    assert "Never present a possible direction as confirmed" in composer  # R-A-2
    executor = catalog.prompt("executor").text
    assert "logs__search" in executor  # the function-name mapping the provider uses
